"""What calls on instances run, and which classes are flax Modules, in this module and across modules.

- flax.linen: `model.init(key, x)` draws the parameters from `key` (JAX301, `keys/dataflow.py`); `model.apply(variables,
  x, train, method=...)` runs `__call__` (or the method) with `x, train` under the caller's transformation.
- haiku: `hk.transform(f).init(rng, x)` draws from `rng`; `.apply(params, rng, x)` runs `f(x)`
  (`without_apply_rng` and `transform_with_state` change the leading arguments; checked on haiku 0.0.17).
- any project class: `obj.m(x)`, `obj(x)`, `Block(...)(x)` run the method, for an object built right there or
  bound once to `Cls(...)`.
Another module's class is known only in project mode, through the kinds its summary gives
(`analysis.project`, read from `index.project`); one file alone leaves it unknown, and silent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

from ...syntax import argument
from ..binding.index import ModuleIndex, Unit, written_false
from ..binding.transforms import Application, StaticSpec, library_application, static_spec
from ..kinds import ARRAYS_ONLY, HAIKU, LINEN, NNX, STATIC_FIELD, STRICT, TRACED
from ..project import CallFact
from ..semantics.library import (
    APPLY_FN_FACTORIES,
    CONSTRUCTORS,
    HAIKU_APPLY_KEYWORDS,
    HAIKU_APPLY_LEADING,
    HAIKU_NO_RNG,
    LINEN_APPLY_KEYWORDS,
    LINEN_INIT_METHODS,
    LINEN_MODULE_BASES,
    NNX_CLASSES,
    PARAMS_CONCRETE,
    TRACING_APIS,
    TRANSFORMATIONS,
)
from .classes import self_writes
from .pytrees import pytree_kind, pytree_model
from .receivers import module_instance as module_instance  # re-exported: keys.py reads it from here
from .receivers import parameter_class
from .train_states import holds_state

# -- flax.linen Module classes, across modules ------------------------------------------------------------

# Methods whose calls on an instance depend on what the class is (project mode sends the class facts only to
# modules calling them).
MODULE_METHODS = LINEN_INIT_METHODS | {"apply"}


def top_level_class_facts(
    index: ModuleIndex, project_name: Callable[[str], bool]
) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, kind, imported bases) for the module's top-level classes that are flax.linen Modules or pytrees
    (`objects.pytrees.pytree_kind`: their static fields), or whose
    bases (directly or through the module's own classes) include classes imported from other project modules
    (`project_name` says which qualified names those are): what another module needs to know their kind.
    Module-level haiku transformations are listed too."""
    out = []
    pytrees = pytree_model(index)
    for name, node in index.classes.items():
        if node is None:
            continue
        kind, bases = _local_kind(index, node, project_name, 0)
        if not kind and id(node) in pytrees.by_node:
            kind = pytree_kind(pytrees.by_node[id(node)])  # its static fields, for the modules importing it
        if kind or bases:
            out.append((name, kind, tuple(sorted(bases))))
    # Module-level static field makers: the modules importing them declare static fields with them.
    out.extend(
        (name, STATIC_FIELD, ()) for name in sorted(pytrees.static_makers) if name not in index.classes
    )
    # Module-level haiku transformations of the module's functions (`net = hk.transform(forward)`), as
    # "haiku:<arguments apply takes before the function's>:<function>".
    for name, bindings in index.root.bindings.items():
        if name in index.classes or len(bindings) != 1:
            continue
        value = index.root.single_assignment(name)  # what `haiku_transformed` of the name reads first
        if type(value) is not cst.Call:
            continue
        found = haiku_transformed(index, value, index.root)
        if found is not None and isinstance(found[0], cst.Name) and found[0].value in index.root.defs:
            out.append((name, f"{HAIKU}:{found[1]}:{found[0].value}", ()))
    return sorted(out)


def _local_kind(
    index: ModuleIndex, node: cst.ClassDef, project_name: Callable[[str], bool], depth: int
) -> tuple[str, set[str]]:
    imported: set[str] = set()
    for base in node.bases:
        if base.keyword is not None:
            continue
        qualname = index.qualname(base.value)
        if qualname in LINEN_MODULE_BASES:
            return LINEN, set()
        if qualname is not None and qualname.startswith(NNX_CLASSES):
            return NNX, set()
        if type(base.value) is cst.Name and qualname is None and depth < _MAX_DEPTH:
            parent = index.classes.get(base.value.value)
            if parent is not None and parent is not node:
                kind, more = _local_kind(index, parent, project_name, depth + 1)
                if kind:
                    return kind, set()
                imported |= more
        elif qualname is not None and project_name(qualname):
            imported.add(qualname)
    return "", imported


def wanted_classes(index: ModuleIndex, project_name: Callable[[str], bool]) -> set[str]:
    """The qualified names of the other project modules' classes whose kinds matter here: the module calls
    `init`/`apply` on an instance of one (`MLP().init(...)`, `model = model_lib.MLP(); model.apply(...)`), or
    of its own class deriving from one."""
    wanted: set[str] = set()
    if not imports_project_names(index, project_name):
        return wanted  # every name wanted is a qualified name the imports give, and none is the project's
    # Only a call of a transformed function of the module passes instances on to a trace.
    transformed = any(unit.is_target for unit in index.units.values())
    # One pass over every call of the module: plain loops, no list or generator made per call.
    for call, unit, _ in index._sites:
        func, args = call.func, call.args
        if type(func) is cst.Attribute and func.attr.value in MODULE_METHODS:
            wanted |= _wanted_class(index, func.value, unit, project_name)
        # `jax.jit(model.apply)`, `TrainState.create(apply_fn=model.apply)`, `jax.eval_shape(model.init, ...)`:
        # the class's `apply` (or `init`) is passed on
        for arg in args:
            value = arg.value
            if type(value) is cst.Attribute and value.attr.value in MODULE_METHODS:
                wanted |= _wanted_class(index, value.value, unit, project_name)
        if not transformed or not args:
            continue
        # `tick(model)` with `tick` transformed: whether `model`'s class is an nnx one (`objects/nnx.py`)
        for callee, _ in index.resolve_function(func, unit):
            if callee.is_target:
                for arg in args:
                    built = module_instance(index, arg.value, unit)
                    qualname = index.qualname(built.func, unit) if built is not None else None
                    if qualname is not None and project_name(qualname):
                        wanted.add(qualname)
                break
    for unit in index.units.values():  # `def tick(model: Counter)` transformed: the annotation's class
        node = unit.node
        if unit.is_target and type(node) is cst.FunctionDef:
            for param in [*node.params.params, *node.params.kwonly_params]:
                annotation = param.annotation.annotation if param.annotation is not None else None
                qualname = index.qualname(annotation, unit.parent or index.root) if annotation else None
                if qualname is not None and project_name(qualname):
                    wanted.add(qualname)
    return wanted


def imports_project_names(index: ModuleIndex, project_name: Callable[[str], bool]) -> bool:
    """Whether some name the module's imports give (or a builtin's) can be a project name. `index.qualname`
    answers only with those, each under the head its import gives it (`binding.names.canonical` keeps heads): where
    this is False, no qualified name in the module is the project's."""
    return project_name("builtins") or any(project_name(q) for q in index.imports.names.values())


def _wanted_class(
    index: ModuleIndex, receiver: cst.BaseExpression, unit: Unit, project_name: Callable[[str], bool]
) -> set[str]:
    """The other project modules' classes `receiver.init(...)` / `receiver.apply` needs the kinds of."""
    built = module_instance(index, receiver, unit)
    if built is None:  # `net.init(...)` of an imported haiku transformation
        qualname = index.qualname(receiver, unit)
        return {qualname} if qualname is not None and project_name(qualname) else set()
    if type(built.func) is cst.Name and index.classes.get(built.func.value) is not None:
        node = index.classes[built.func.value]
        assert node is not None
        return _local_kind(index, node, project_name, 0)[1]
    qualname = index.qualname(built.func, unit)
    return {qualname} if qualname is not None and project_name(qualname) else set()


def module_class_kind(index: ModuleIndex, func: cst.BaseExpression, unit: Unit | None = None) -> str | None:
    """What class `func` in `func(...)` builds: LINEN for a flax.linen Module class of this module (directly
    or through its own or imported project bases) or one imported from another project module (project mode:
    `index.project` holds the kinds the other modules' summaries give); None when unknown."""
    project = index.project
    known = project.classes if project is not None else {}
    if type(func) is cst.Name:
        in_function = unit is not None and unit is not index.root and func.value in unit.local_names
        node = None if in_function else index.classes.get(func.value)
        if node is not None:
            kind, bases = _local_kind(index, node, lambda q: q in known, 0)
            if kind == LINEN or any(known.get(q) == LINEN for q in bases):
                return LINEN
            return None
    qualname = index.qualname(func, unit)
    return known.get(qualname) if qualname is not None else None


def linen_possible(index: ModuleIndex) -> bool:
    """Whether `module_class_kind` can answer LINEN anywhere in the module: it imports flax (a linen base), or
    the project knows a linen class (project mode). A cheap gate for checks that would ask it on every call."""
    memo = index.root.memo
    if "linen_possible" not in memo:
        known = index.project.classes if index.project is not None else {}
        memo["linen_possible"] = any(kind == LINEN for kind in known.values()) or any(
            qualname == "flax" or qualname.startswith("flax.") for qualname in index.imports.names.values()
        )
    return memo["linen_possible"]


_MAX_DEPTH = 8


# -- flax.linen Module.apply: which method runs, with which arguments --------------------------------------


@dataclasses.dataclass
class AppliedMethod:
    """`model.apply(variables, x, train, method=...)` of a flax.linen Module: the method it runs (this module's
    units, bound to the instance, or another project module's `target` "model.MLP.__call__") and the
    arguments the method receives. Also `net.apply(params, rng, x)` of `net = hk.transform(f)`: `f(x)`, and
    `obj.m(x)` on an instance of a project class: `m(x)`."""

    units: list[Unit]
    target: str | None
    args: list[cst.Arg]
    bound: bool = True  # a method bound to the instance (haiku's function: not)
    receiver: cst.BaseExpression | None = None  # the instance `obj(x)` / `obj.m(x)` runs the method on


def module_apply(index: ModuleIndex, call: cst.Call, unit: Unit) -> AppliedMethod | None:
    """What `x.apply(...)` runs when `x` is a flax.linen Module or a haiku transformation, and what
    `obj.m(...)` / `obj(...)` / `Block(...)(...)` run on an instance of a project class."""
    return (
        linen_apply(index, call, unit) or haiku_apply(index, call, unit) or instance_method(index, call, unit)
    )


def instance_method(index: ModuleIndex, call: cst.Call, unit: Unit) -> AppliedMethod | None:
    """`obj.m(x)` / `obj(x)` with `obj` built from a project class right there or bound once to `Cls(...)`
    (in this function or at module level): the class's method, bound to the instance; for a class imported
    from another project module, its `target` ("model.Block.__call__")."""
    func = call.func
    method = "__call__"
    if type(func) is cst.Attribute:
        method, func = func.attr.value, func.value
    # flax/haiku `init`/`apply` are handled above, or unknown; a plain class of this module that defines a
    # method of that name runs it (decided by the class, not by the name).
    flax_name = method in MODULE_METHODS
    built = module_instance(index, func, unit)
    # An object built inside the function lives only as long as the trace: its methods may store tracers on
    # it (evojax's `game = Game(state); game.setRightAction(action)`). Such a class is followed only when
    # none of its methods but the constructors assigns to `self`; a flax Module may not assign at all.
    shared = type(func) is cst.Name and unit.single_assignment(func.value) is None
    exact, scope = True, unit
    if built is not None:
        cls = built.func
    else:  # a parameter: its annotation, or what every caller passes (`step(model, x)`, a scanned Module)
        found = parameter_class(index, func, unit)
        if found is None:
            return None
        ref, scope, exact = found
        if isinstance(ref, str):  # another module's caller passes an instance of this class (project mode)
            return None if flax_name else AppliedMethod([], f"{ref}.{method}", list(call.args), receiver=func)
        cls = ref
    if type(cls) is cst.Name and not (scope is not index.root and cls.value in scope.local_names):
        node = index.classes.get(cls.value)
        if node is not None:
            linen = module_class_kind(index, cls, scope) == LINEN
            if not shared and _sets_attributes(index, node) and not linen:
                return None
            methods = (
                class_methods(index, cls.value, method)
                if exact
                else local_method_units(index, cls.value, method)
            )
            if flax_name and (linen or not methods):
                return None
            return AppliedMethod(methods, None, list(call.args), receiver=func)
    if flax_name:
        return None  # another module's class: whether its `apply` is flax's is not known here
    qualname = index.qualname(cls, scope)
    project = index.project
    if qualname is None or project is None or not project.records(qualname):
        return None
    if not shared and module_class_kind(index, cls, scope) != LINEN:
        return None  # another module's class built here: whether its methods store on `self` is unknown
    return AppliedMethod([], f"{qualname}.{method}", list(call.args), receiver=func)


def _sets_attributes(index: ModuleIndex, node: cst.ClassDef) -> bool:
    """Whether a method of the class other than the constructors assigns to an attribute of `self`."""
    key = f"sets_attributes {id(node)}"
    found = index.root.memo.get(key)
    if found is None:
        found = index.root.memo[key] = _assigns_self(node)
    return found


def _assigns_self(node: cst.ClassDef) -> bool:
    return any(
        self_writes(statement.body, "self", nested=True)
        for statement in node.body.body
        if type(statement) is cst.FunctionDef and statement.name.value not in CONSTRUCTORS
    )


def linen_apply(index: ModuleIndex, call: cst.Call, unit: Unit) -> AppliedMethod | None:
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    if func.attr.value in _APPLY_FN_FIELDS:
        # `state.apply_fn(variables, x)`: the module's one TrainState model, when `state` is shown to be a state
        built = applied_module(index) if holds_state(index, func.value, unit) else None
    elif func.attr.value == "apply":
        built = module_instance(index, func.value, unit)
    else:
        return None
    if built is None or module_class_kind(index, built.func, unit) != LINEN:
        return None
    method = "__call__"
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "method":
            named = _method_name(arg.value)
            if named is None:
                return None  # a lambda or a function: not followed
            method = named
        if arg.star:
            return None
    positional = [a for a in call.args if a.keyword is None]
    if not positional:
        return None
    args = positional[1:] + [
        a for a in call.args if a.keyword is not None and a.keyword.value not in LINEN_APPLY_KEYWORDS
    ]
    if type(built.func) is cst.Name and index.classes.get(built.func.value) is not None:
        return AppliedMethod(class_methods(index, built.func.value, method), None, args)
    qualname = index.qualname(built.func, unit)
    return AppliedMethod([], f"{qualname}.{method}", args) if qualname is not None else None


_APPLY_FN_FIELDS = frozenset(field for _, field in APPLY_FN_FACTORIES.values())
_APPLIES = _APPLY_FN_FIELDS | {"apply"} | LINEN_INIT_METHODS


def applied_module(index: ModuleIndex) -> cst.Call | None:
    """The `Model(...)` whose `apply` the module's `TrainState.create(apply_fn=model.apply)` calls give (the
    library table's APPLY_FN_FACTORIES), when they all give one class's instance; None otherwise."""
    memo = index.root.memo
    if "applied_module" in memo:
        return memo["applied_module"]
    found: cst.Call | None = None
    classes: set[str] = set()
    for call, unit, _ in index._sites:
        factory = APPLY_FN_FACTORIES.get(index.qualname(call.func, unit) or "")
        if factory is None:
            continue
        given = argument(call, None, factory[0])
        value = given.value if given is not None else None
        built = (
            module_instance(index, value.value, unit)
            if type(value) is cst.Attribute and value.attr.value == "apply"
            else None
        )
        if built is None or type(built.func) not in (cst.Name, cst.Attribute):
            classes.add("")  # unknown: `state.apply_fn` may be anything
            continue
        classes.add(index.qualname(built.func, unit) or index.module.code_for_node(built.func))
        found = built
    memo["applied_module"] = found = found if len(classes) == 1 else None
    return found


def transformed_applies(index: ModuleIndex) -> None:
    """`jax.jit(model.apply)` (and any transformation of a linen Module's `apply` or `init`, or of a
    TrainState's `apply_fn`): `__call__` runs under it, bound to the instance, with the transformation's argument 0 (the
    variables) in front of its own parameters."""
    if index.root.memo.get("transformed_applies"):
        return
    index.root.memo["transformed_applies"] = True
    applied_any = False
    for call, unit, _ in index._sites:
        target = call.args[0].value if call.args and call.args[0].keyword is None else None
        if type(target) is not cst.Attribute or target.attr.value not in _APPLIES:
            continue  # the cheap test first: most calls are not `T(x.apply)`
        found = index.transform_of(call.func, unit)
        if found is None:
            continue
        name, keywords = found
        spec = static_spec([*keywords, *call.args[1:]], name)
        kind, label = TRANSFORMATIONS[name].kind, TRANSFORMATIONS[name].label
        # `jax.eval_shape(model.init, key, x)`: `init(rngs, x)` runs `__call__(x)` as `apply(variables, x)` does
        applied_func = (
            cst.Attribute(target.value, cst.Name("apply"))
            if target.attr.value in LINEN_INIT_METHODS
            else target
        )
        applied = linen_apply(index, cst.Call(func=applied_func, args=[cst.Arg(cst.Name("variables"))]), unit)
        if applied is not None:
            for method in applied.units:
                method.apply(Application(kind, label, _after_leading(spec, 1), bound_self=True))
                applied_any = True
            if applied.target is not None:  # another module's class: a fact for its module (project mode)
                context = f"{label} '{index.module.code_for_node(target)}'"
                record_transformed(index, applied.target, kind, context, _after_leading(spec, 1))
            continue
        # `jax.jit(hk.transform(f).apply)`: `apply(params, rng, *args)` runs `f(*args)`
        haiku = haiku_transformed(index, target.value, unit) if target.attr.value == "apply" else None
        if haiku is not None:
            for function, _ in index.resolve_function(haiku[0], unit):
                function.apply(Application(kind, label, _after_leading(spec, haiku[1])))
                applied_any = True
    applied_any |= _transformed_methods(index)
    lifted_classes(index)
    if applied_any:  # a `jax.grad` inside the `__call__` now made traced runs under its trace too
        index.promote_nested_transforms()


def _transformed_methods(index: ModuleIndex) -> bool:
    """`jax.jit(model.step)` (any transformation) with `model` an instance of a project class (built in place,
    `jax.jit(Model(...).step)`, bound once to `Model(...)`, or a parameter annotated with the class), and
    `jax.vmap(model)` of such an instance (its `__call__`): the method runs under it, bound to the instance.
    Whether any of this module's methods became traced."""
    applied_any = False
    for call, unit in index.method_transforms:
        target = call.args[0].value
        if type(target) is cst.Name:  # `jax.vmap(fitness)` of a callable instance runs its `__call__`
            target = cst.Attribute(value=target, attr=cst.Name("__call__"))
        assert type(target) is cst.Attribute
        found = index.transform_of(call.func, unit)
        # A linen or haiku `apply` is transformed_applies' above: `method_call` knows no `apply` (MODULE_METHODS).
        called = method_call(index, target, unit) if found is not None else None
        if found is None or called is None:
            continue
        name, keywords = found
        spec = static_spec([*keywords, *call.args[1:]], name)
        kind, label = TRANSFORMATIONS[name].kind, TRANSFORMATIONS[name].label
        for method in called.units:
            method.apply(Application(kind, label, spec, bound_self=True))
            applied_any = True
        if called.target is not None:  # another module's class: a fact for its module (project mode)
            context = f"{label} '{index.module.code_for_node(target)}'"
            record_transformed(index, called.target, kind, context, spec)
    return applied_any


def lifted_classes(index: ModuleIndex) -> None:
    """`nn.jit(MLP)` (a flax lifted transformation, library.py's `Api.method`) of another project module's
    class: its method runs under the transformation; `NUTS(model)`, `optax.sgd(schedule)` (any API of the
    table that traces a function) of another project module's function: the function runs under the API's
    trace. A fact for the class's or function's module (project mode). The module's own classes and functions
    are the index pass's (`ModuleIndex._resolve_sites`)."""
    project = index.project
    if project is None or TRACING_APIS.keys().isdisjoint(index.callee_names):
        return  # a site's callee is in `callee_names` whatever its scope: no tracing API called, no site to read
    for call, unit, _ in index._sites:
        api = TRACING_APIS.get(index.qualname(call.func, unit) or "")
        if api is None or api.eager_keyword and written_false(argument(call, None, api.eager_keyword)):
            continue  # `BFGS(fun, jit=False)`: the objective runs eagerly
        for position, keyword in api.traces:
            found = argument(call, position, keyword)
            if found is None or type(found.value) is cst.Name and found.value.value in index.classes:
                continue
            qualname = index.qualname(found.value, unit)
            if qualname is None or not project.records(qualname):
                continue
            options = [a for a in call.args if a is not found]
            app = Application(STRICT, api.label, StaticSpec(), bound_self=not api.self_counted)
            spec = library_application(api, app, options).spec
            if api.self_counted:
                spec = _after_leading(spec, 1)  # argument 0 is the Module itself
            context = f"{api.label} '{index.module.code_for_node(found.value)}'"
            target = f"{qualname}.{api.method}" if api.method else qualname
            if api.params == PARAMS_CONCRETE:  # traced code whose own parameters stay what the caller gave
                project.outgoing.add(CallFact(target, STRICT, context, ()))
            else:
                record_transformed(index, target, STRICT, context, spec)


def foreign_transformed(
    index: ModuleIndex, func: cst.BaseExpression, unit: Unit
) -> tuple[str, str, str, StaticSpec, int] | None:
    """`jax.jit(step, ...)` (any transformation) of another project module's function, or of `model.apply` of
    another module's linen Module, called here directly or through a name bound once to it: (the function's
    or method's qualified name, the transformation, the context for messages, its spec as the function's
    parameters read it, the leading arguments that are not its parameters: `apply`'s variables); None
    otherwise."""
    project = index.project
    if project is None:
        return None
    call: cst.BaseExpression | None = func
    if type(func) is cst.Name:
        owner = unit if unit is not index.root and func.value in unit.local_names else index.root
        call = owner.single_assignment(func.value)
        unit = owner
    # `jax.jit(jax.grad(step))`: transformations outermost first, as `ModuleIndex._combine` reads a same-module
    # chain (the strictest names the kind and the context; the static options merged)
    chain: list[tuple[str, list[cst.Arg]]] = []
    target: cst.BaseExpression | None = call
    while type(target) is cst.Call:
        if not target.args or target.args[0].keyword is not None:
            return None
        found = index.transform_of(target.func, unit)
        if found is None:
            return None
        chain.append((found[0], [*found[1], *target.args[1:]]))
        target = target.args[0].value
    if not chain or (type(target) is not cst.Name and type(target) is not cst.Attribute):
        return None
    kind = max(TRANSFORMATIONS[n].kind for n, _ in chain)
    name = next(n for n, _ in chain if TRANSFORMATIONS[n].kind == kind)
    spec = static_spec(chain[0][1], chain[0][0])
    for other, keywords in chain[1:]:
        spec = spec.merged(static_spec(keywords, other))
    context = f"{TRANSFORMATIONS[name].label} '{index.module.code_for_node(target)}'"
    if type(target) is cst.Attribute and target.attr.value in _APPLIES:
        # `jax.eval_shape(model.init, key, x)`: `init(rngs, x)` runs `__call__(x)` as `apply(variables, x)` does
        applied_func = (
            cst.Attribute(target.value, cst.Name("apply"))
            if target.attr.value in LINEN_INIT_METHODS
            else target
        )
        applied = linen_apply(index, cst.Call(func=applied_func, args=[cst.Arg(cst.Name("variables"))]), unit)
        if applied is None or applied.target is None:
            return None
        return applied.target, name, context, _after_leading(spec, 1), 1
    qualname = index.qualname(target, unit)
    if not project.records(qualname) or index.resolve_function(target, unit):
        return None
    assert qualname is not None
    return qualname, name, context, spec, 0


def record_transformed(index: ModuleIndex, target: str, kind: int, context: str, spec: StaticSpec) -> None:
    """Record that a transformation under `kind` traces another module's method `target` ("model.MLP.__call__",
    bound to an instance): every parameter but the static ones of `spec` holds a tracer (static positions
    counted from the end are resolved by the callee: `static_tail`), only the array-annotated ones under
    equinox's filtering (`ARRAYS_ONLY`), only the differentiated positions under grad alone. A spec the fact
    cannot state (unknown, vmap's limits, differentiated positions counted from the end) records nothing: a
    miss rather than a guess."""
    project = index.project
    if project is None or not project.records(target):
        return
    if spec.unknown or spec.unbatched:
        return
    keywords = tuple(sorted((name, 0) for name in spec.argnames))
    if spec.differentiated is not None:  # grad alone: the other arguments stay the Python values they are
        if not spec.differentiated or any(i < 0 for i in spec.differentiated):
            return
        width = max(spec.differentiated) + 1
        positional = tuple(TRACED if i in spec.differentiated else 0 for i in range(width))
        project.outgoing.add(CallFact(target, kind, context, positional, keywords, True))
        return
    if spec.filtering:  # no static options: which arguments are arrays decides
        project.outgoing.add(CallFact(target, kind, context, (), keywords, True, TRACED | ARRAYS_ONLY))
        return
    width = max((i for i in spec.argnums if i >= 0), default=-1) + 1
    positional = tuple(0 if i in spec.argnums else TRACED for i in range(width))
    tail = tuple(sorted(i for i in spec.argnums if i < 0))
    project.outgoing.add(
        CallFact(target, kind, context, positional, keywords, True, TRACED, static_tail=tail)
    )


def jitted_apply(index: ModuleIndex, call: cst.Call, unit: Unit) -> tuple[Unit, StaticSpec] | None:
    """`jax.jit(model.apply, ...)` of a linen Module (or of a TrainState's `apply_fn`): the one `__call__` it
    runs, and the static spec as jit reads it (argument 0 the variables, argument i the method's parameter i
    counting `self`)."""
    found = index.transform_of(call.func, unit) if call.args and call.args[0].keyword is None else None
    target = call.args[0].value if found is not None else None
    if found is None or found[0] != "jax.jit" or type(target) is not cst.Attribute:
        return None
    if target.attr.value not in _APPLIES:
        return None
    applied = linen_apply(index, cst.Call(func=target, args=[cst.Arg(cst.Name("variables"))]), unit)
    if applied is None or len(applied.units) != 1:
        return None
    spec = static_spec([*found[1], *call.args[1:]], found[0])
    return (applied.units[0], spec) if not spec.unknown else None


def _after_leading(spec: StaticSpec, leading: int) -> StaticSpec:
    """A spec of `apply`'s arguments as one of the function's: the first `leading` (the variables; haiku's
    params and rng) are not its parameters."""

    def shift(positions: frozenset[int]) -> frozenset[int]:
        return frozenset(i - leading if i > 0 else i for i in positions if not 0 <= i < leading)

    differentiated = None if spec.differentiated is None else shift(spec.differentiated)
    return dataclasses.replace(
        spec, argnums=shift(spec.argnums), unbatched=shift(spec.unbatched), differentiated=differentiated
    )


def _method_name(node: cst.BaseExpression) -> str | None:
    """`method=MLP.encode` / `method=model.encode` / `method="encode"`."""
    if type(node) is cst.Attribute:
        return node.attr.value
    if type(node) is cst.SimpleString and isinstance(node.evaluated_value, str):
        return node.evaluated_value if node.evaluated_value.isidentifier() else None
    return None


def class_methods(index: ModuleIndex, class_name: str, method: str, depth: int = 0) -> list[Unit]:
    """The units of a top-level class's method `method`, its own or inherited from this module's classes."""
    node = index.classes.get(class_name)
    if node is None or depth > _MAX_DEPTH:
        return []
    own = index.class_methods.get(id(node), {}).get(method)
    if own:
        return list(own)
    for base in node.bases:
        if base.keyword is None and type(base.value) is cst.Name:
            found = class_methods(index, base.value.value, method, depth + 1)
            if found:
                return found
    return []


# -- haiku: `hk.transform(f)` and what its `init`/`apply` run ----------------------------------------------


def haiku_transformed(
    index: ModuleIndex, receiver: cst.BaseExpression, unit: Unit
) -> tuple[cst.BaseExpression, int] | None:
    """`net` bound once to `hk.transform(f)` (or `transform_with_state`, optionally inside
    `without_apply_rng`), or such a call written in place: (the function `f`, how many positional arguments
    `apply` takes before `f`'s own)."""
    built = module_instance(index, receiver, unit)
    if built is None or not built.args:
        return None
    receiver, name = built, index.qualname(built.func, unit)
    no_rng = name == HAIKU_NO_RNG
    if no_rng:
        inner = receiver.args[0].value
        if type(inner) is not cst.Call or not inner.args:
            return None
        receiver, name = inner, index.qualname(inner.func, unit)
    leading = HAIKU_APPLY_LEADING.get(name or "")
    first = receiver.args[0]
    if leading is None or (first.keyword is not None and first.keyword.value != "f"):
        return None
    return first.value, leading - no_rng


def haiku_apply(index: ModuleIndex, call: cst.Call, unit: Unit) -> AppliedMethod | None:
    """`net.apply(params, rng, x)` of a haiku transformation: `f(x)` (another module's `f`: its target)."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "apply":
        return None
    found = haiku_transformed(index, func.value, unit)
    imported = imported_haiku(index, func.value, unit) if found is None else None
    if found is None and imported is None or any(arg.star for arg in call.args):
        return None
    leading = found[1] if found is not None else imported[0]  # type: ignore[index]
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    if len(positional) < leading or any(
        a.keyword.value in HAIKU_APPLY_KEYWORDS for a in keywords if a.keyword
    ):
        return None  # `apply(params, rng=rng, x)`-style spellings: not followed
    if found is None:
        assert imported is not None
        return AppliedMethod([], imported[1], positional[leading:] + keywords, bound=False)
    units = index.resolve_function(found[0], unit)
    if not units:
        return None
    return AppliedMethod([u for u, _ in units], None, positional[leading:] + keywords, bound=False)


def imported_haiku(index: ModuleIndex, receiver: cst.BaseExpression, unit: Unit) -> tuple[int, str] | None:
    """`net` imported from another project module that binds it to a haiku transformation (project mode):
    (the arguments `apply` takes before the function's, the function's qualified name)."""
    project = index.project
    qualname = index.qualname(receiver, unit) if project is not None else None
    kind = project.classes.get(qualname, "") if qualname is not None else ""
    parts = kind.split(":")
    if len(parts) != 3 or parts[0] != HAIKU or not parts[1].isdigit():
        return None
    return int(parts[1]), parts[2]


# -- which method `receiver.m(...)` runs, for the key dataflow -------------------------------------------


@dataclasses.dataclass
class MethodCall:
    """What `receiver.m(...)` may run: this module's candidate units (the class's own or inherited method, and
    where the receiver may be an instance of a subclass, each same-module subclass's override), or another
    project module's method by its `target` ("envs.Env.reset"), whose export already accounts for the
    overrides its own module defines."""

    units: list[Unit]
    target: str | None = None


def method_call(index: ModuleIndex, func: cst.Attribute, unit: Unit) -> MethodCall | None:
    """`self.m(...)`, `env.m(...)` with `env = Env(...)` bound once (here or at module level) or built in place,
    or `env.m(...)` with `env` a parameter annotated with a project class: what it may run; None when the
    receiver's class is unknown (`self.env.reset`, `super().m`, a library object), or `m` is not found in the
    class and its same-module bases (it may come from a library base)."""
    method, receiver = func.attr.value, func.value
    if method in MODULE_METHODS or (method.startswith("__") and method != "__call__"):
        return None
    if type(receiver) is not cst.Name and type(receiver) is not cst.Call:
        return None  # `self.env.reset`, `a[0].m`: no class `_receiver_class` can name
    if type(receiver) is cst.Name and receiver.value in ("self", "cls"):
        owner: Unit | None = unit
        while owner is not None and owner.class_node is None:
            owner = owner.parent
        if owner is None or not owner.is_method:
            return None
        node = owner.class_node
        assert node is not None
        if index.classes.get(node.name.value) is node:
            return _local_methods(index, node.name.value, method, exact=False)
        own = index.class_methods.get(id(node), {}).get(method)
        return MethodCall(own[-1:]) if own else None  # a nested class: its own methods, nothing inherited
    cls, exact = _receiver_class(index, receiver, unit)
    if cls is None:
        return None
    if type(cls) is cst.Name and not (unit is not index.root and cls.value in unit.local_names):
        if index.classes.get(cls.value) is not None:
            return _local_methods(index, cls.value, method, exact)
    qualname = index.qualname(cls, unit)
    project = index.project
    if qualname is None or project is None or not project.records(qualname):
        return None
    return MethodCall([], f"{qualname}.{method}")


def parameter_method_call(index: ModuleIndex, func: cst.Attribute, unit: Unit) -> MethodCall | None:
    """`dist.sample(key)` with `dist` a parameter that every caller gives an instance of one class
    (`receivers.parameter_class`: this module's callers, or, project mode, other modules' recorded calls): what it
    may run, as `method_call` answers for a receiver of a known class."""
    method, receiver = func.attr.value, func.value
    if (
        method in MODULE_METHODS
        or (method.startswith("__") and method != "__call__")
        or type(receiver) is not cst.Name
    ):
        return None
    found = parameter_class(index, receiver, unit)
    if found is None:
        return None
    ref, scope, exact = found
    project = index.project
    if isinstance(ref, str):
        return MethodCall([], f"{ref}.{method}") if project is not None and project.records(ref) else None
    if type(ref) is cst.Name and not (scope is not index.root and ref.value in scope.local_names):
        if index.classes.get(ref.value) is not None:
            return _local_methods(index, ref.value, method, exact)
    qualname = index.qualname(ref, scope)
    if qualname is None or project is None or not project.records(qualname):
        return None
    return MethodCall([], f"{qualname}.{method}")


def built_class(index: ModuleIndex, receiver: cst.BaseExpression, unit: Unit) -> str | None:
    """The name of the module's top-level class that `receiver` is an instance of, when it is built by calling
    the class right there or bound once to `Cls(...)` (here or at module level)."""
    if type(receiver) is cst.Name and receiver.value in ("self", "cls"):
        return None
    cls, exact = _receiver_class(index, receiver, unit)
    if not exact or type(cls) is not cst.Name:
        return None
    if unit is not index.root and cls.value in unit.local_names:
        return None  # a local class, or a local name shadowing the module's class
    return cls.value if index.classes.get(cls.value) is not None else None


def _receiver_class(
    index: ModuleIndex, receiver: cst.BaseExpression, unit: Unit
) -> tuple[cst.BaseExpression | None, bool]:
    """The expression naming the receiver's class, and whether the receiver is exactly an instance of it
    (built by calling it) rather than possibly of a subclass (an annotated parameter)."""
    if type(receiver) is cst.Name and unit is not index.root and receiver.value not in unit.bindings:
        annotations = _parameter_annotations(unit)
        if receiver.value in annotations:
            annotation = annotations[receiver.value]
            if type(annotation) in (cst.Name, cst.Attribute):
                return annotation, False
            return None, False
    built = module_instance(index, receiver, unit)
    if built is None or type(built.func) not in (cst.Name, cst.Attribute):
        return None, False
    return built.func, True


def _parameter_annotations(unit: Unit) -> dict[str, cst.BaseExpression | None]:
    """A def's named parameters (not `*args`, `**kwargs`) and their annotations (None where there is none), kept
    with the unit: every attribute call on a parameter asks. Empty for a lambda."""
    found = unit.memo.get("parameter_annotations")
    if found is None:
        found = unit.memo["parameter_annotations"] = {}
        node = unit.node
        if type(node) is cst.FunctionDef:
            params = node.params
            for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
                annotation = param.annotation  # the first of a repeated name, as Python would refuse it
                found.setdefault(param.name.value, annotation.annotation if annotation is not None else None)
    return found


def _local_methods(index: ModuleIndex, class_name: str, method: str, exact: bool) -> MethodCall | None:
    units = local_method_units(index, class_name, method, exact)
    return MethodCall(units) if units else None


def local_method_units(index: ModuleIndex, class_name: str, method: str, exact: bool = False) -> list[Unit]:
    """The def of `method` that the module's top-level class runs (own or inherited from the module's classes;
    the last def of the name) and, unless the instance is exactly of that class, the overrides of the module's
    subclasses of it. Empty when the class does not define or inherit it here."""
    found = class_methods(index, class_name, method)
    if not found:
        return []
    units = found[-1:]
    if not exact:
        for name in subclasses(index, class_name):
            node = index.classes.get(name)
            own = index.class_methods.get(id(node), {}).get(method) if node is not None else None
            if own:
                units.append(own[-1])
    return units


def subclasses(index: ModuleIndex, class_name: str) -> list[str]:
    """The module's top-level classes deriving (through the module's own classes) from `class_name`."""
    table = index.root.memo.get("subclasses")
    if table is None:
        parents: dict[str, set[str]] = {}
        for name, node in index.classes.items():
            if node is not None:
                parents[name] = {
                    b.value.value for b in node.bases if b.keyword is None and type(b.value) is cst.Name
                }
        table = {}
        for name in parents:
            seen: set[str] = set()
            stack = list(parents[name])
            while stack:
                base = stack.pop()
                if base in seen or base == name:
                    continue
                seen.add(base)
                stack.extend(parents.get(base, ()))
            for base in seen:
                table.setdefault(base, []).append(name)
        index.root.memo["subclasses"] = table
    return table.get(class_name, [])


def subclass_bases(index: ModuleIndex, class_name: str) -> list[str]:
    """The module's top-level classes that `class_name` derives from (through the module's classes), nearest
    first (depth first, as `class_methods` looks methods up)."""
    out: list[str] = []
    stack = [class_name]
    while stack and len(out) < _MAX_DEPTH:
        node = index.classes.get(stack.pop())
        if node is None:
            continue
        names = [b.value.value for b in node.bases if b.keyword is None and type(b.value) is cst.Name]
        for name in reversed(names):
            if name not in out and name != class_name and index.classes.get(name) is not None:
                out.append(name)
                stack.append(name)
    return out
