"""Which callables are jitted (or otherwise transformed), and how their call arguments map to parameters.

- `compiling_transform(func, ctx)`: whether an expression is `jax.jit`/`pmap`/`filter_jit`/`nnx.jit`
  (possibly through `partial` or a module alias), with its keywords;
- `decorator_transforms(def, unit, index)`: the transformations among a def's decorators;
- `jitted_callable(func, ctx)`: the same-module function, static spec and call offset behind a callable known
  to be jitted (decorated def, `f = jax.jit(g, ...)`, `jax.jit(g, ...)` itself, a jitted method, `partial` of
  one with leading arguments bound);
- `is_jax_callable(func, ctx)`: a callable known to run any JAX transformation (`jax_callable_in`: read in
  any def of the module).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

from ...syntax import argument, dotted_name, parameter_names, source_of
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import Application, StaticSpec, positional_params, static_spec
from ..context import RuleContext
from ..objects.held import held_value
from ..objects.instances import jitted_apply
from ..semantics.library import CONTROL_FLOW, JIT, STATIC_KEYWORDS, TRANSFORMATIONS
from .function_values import PARTIAL

# Transformations that compile, and so cache by function identity (the library table's `compiling`).
COMPILING = frozenset(name for name, t in TRANSFORMATIONS.items() if t.compiling)
_JIT = frozenset({JIT})
# Transformations that read every leaf of the arguments they trace as an array (the table's `array_leaves`).
_ARRAY_LEAVES = frozenset(name for name, t in TRANSFORMATIONS.items() if t.array_leaves)


def compiling_transform(func: cst.BaseExpression, ctx: RuleContext) -> tuple[str, list[cst.Arg]] | None:
    """`jax.jit` and the other compiling transformations, bare, through `partial` or a module alias.

    User wrappers named in the configuration are left out: they may cache their results themselves.
    """
    found = ctx.index.transform_of(func, ctx.unit)
    if found is None or found[0] not in COMPILING:
        return None
    jit_decorators = ctx.index.jit_decorators
    if jit_decorators and dotted_name(func) in jit_decorators and ctx.qualname(func) not in COMPILING:
        return None
    return found


def decorator_transforms(
    node: cst.FunctionDef, unit: Unit, index: ModuleIndex
) -> list[tuple[str, list[cst.Arg], cst.Decorator]]:
    """The transformations among a def's decorators, outermost first."""
    scope = unit.parent or index.root
    found = []
    for decorator in node.decorators:
        transform = index.transform_of(decorator.decorator, scope)
        if transform is not None:
            found.append((transform[0], transform[1], decorator))
    return found


@dataclasses.dataclass(frozen=True)
class Jitted:
    """A callable known to be jitted, and how call arguments map to its function's parameters."""

    unit: Unit
    spec: StaticSpec
    offset: int  # call position i is parameter i + offset of the def
    label: str  # for messages: the name called
    # static_argnums index i is parameter i + argnums_offset of the def (None: the same as `offset`). A jit
    # decorator on a method counts `self` as argument 0, while `self.step(x)` passes `x` at position 0.
    argnums_offset: int | None = None

    @property
    def params(self) -> cst.Parameters:
        assert type(self.unit.node) is cst.FunctionDef  # only defs are ever Jitted
        return self.unit.node.params

    def static_parameters(self) -> tuple[set[int], set[str]]:
        """(parameter indices, parameter names) that are static, following JAX's inference rules."""
        names = [p.name.value for p in positional_params(self.params)]
        base = self.offset if self.argnums_offset is None else self.argnums_offset
        count = len(names) - base
        indices = {base + (i + count if i < 0 else i) for i in self.spec.argnums}
        indices = {i for i in indices if 0 <= i < len(names)}
        static_names = set(self.spec.argnames)
        if self.spec.argnums and not self.spec.argnames:
            static_names |= {names[i] for i in indices}
        elif self.spec.argnames and not self.spec.argnums:
            indices |= {i for i, n in enumerate(names) if n in static_names}
        return indices, static_names

    def arguments(self, call: cst.Call) -> list[tuple[cst.Arg, str, bool]]:
        """(argument, parameter name, whether static) for each argument of a call up to the first `*`/`**`;
        a positional argument beyond the def's parameters is named by its index."""
        indices, names = self.static_parameters()
        positional_names = [p.name.value for p in positional_params(self.params)]
        out = []
        position = 0
        for arg in call.args:
            if arg.star:
                break
            if arg.keyword is None:
                index = position + self.offset
                position += 1
                param = positional_names[index] if index < len(positional_names) else str(index)
                out.append((arg, param, index in indices))
            else:
                out.append((arg, arg.keyword.value, arg.keyword.value in names))
        return out


def _from_application(target: Unit, app: Application, label: str, call_offset: int) -> Jitted | None:
    if type(target.node) is not cst.FunctionDef or app.spec.unknown:
        return None
    offset = app.bound_positional + (1 if target.is_method and app.bound_self else 0)
    return Jitted(target, app.spec, offset + call_offset, label)


def static_arguments_possible(index: ModuleIndex) -> bool:
    """Whether some call of the module (a decorator's, a `partial`'s included: the index records them all) passes
    `static_argnums`/`static_argnames`: where none does, no jitted callable of the module has a static
    parameter. A cheap gate for checks of static arguments, kept with the module."""
    memo = index.root.memo
    if "static_arguments" not in memo:
        memo["static_arguments"] = any(
            arg.keyword is not None and arg.keyword.value in STATIC_KEYWORDS
            for call, _, _ in index._sites
            for arg in call.args
        )
    return memo["static_arguments"]


def jitted_callable(
    func: cst.BaseExpression, ctx: RuleContext, transforms: frozenset[str] = _JIT
) -> Jitted | None:
    """The jitted same-module function that calling `func` runs, or None when unknown or not jitted (by one of
    `transforms`: `jax.jit`, or `semantics.library.SCALAR_TRACING` where a call's scalar arguments matter). Rules and
    the flow walk ask for the same call in turn: the answer is kept per (node, unit, the scope a name's
    `name = jax.jit(...)` binding is read from, transforms), all it depends on besides the index (static after
    its pass)."""
    index, unit = ctx.index, ctx.unit
    owner = _binding_owner(func.value, ctx) if type(func) is cst.Name else None
    memo = index.root.memo.get("jitted_callable")
    if memo is None:
        memo = index.root.memo["jitted_callable"] = {}
    key = (id(func), id(unit), id(owner), transforms)
    entry = memo.get(key)
    if entry is None:  # the node is kept in the entry, so its id cannot be reused while the entry lives
        entry = memo[key] = (func, _jitted_callable(func, ctx, owner, transforms))
    return entry[1]


def _jitted_callable(
    func: cst.BaseExpression, ctx: RuleContext, owner: Unit | None, transforms: frozenset[str]
) -> Jitted | None:
    index = ctx.index
    if type(func) is cst.Call and func.args and index.qualname(func.func, ctx.unit) == PARTIAL:
        # `partial(f, a, b)(...)` of a jitted `f`: call position i is `f`'s position i + 2
        first, given = func.args[0], func.args[1:]
        if first.keyword is not None or any(a.star for a in given):
            return None
        inner = jitted_callable(first.value, ctx, transforms)
        if inner is None:
            return None
        positional = sum(1 for a in given if a.keyword is None)
        base = (
            inner.offset if inner.argnums_offset is None else inner.argnums_offset
        )  # argnums count from here
        return dataclasses.replace(
            inner, offset=inner.offset + positional, argnums_offset=base, label=f"partial({inner.label}, ...)"
        )
    if type(func) is cst.Call:  # `jax.jit(f, static_argnums=1)(...)`
        transform = compiling_transform(func.func, ctx)
        if (
            transform is None
            or transform[0] not in transforms
            or not func.args
            or func.args[0].keyword is not None
        ):
            return None
        found = index.applications(func, ctx.unit)
        if not found:
            return _jitted_apply(func, ctx.unit, index, "apply")
        return (
            _from_application(*found[0], dotted_name(func.args[0].value) or "<function>", 0)
            if found
            else None
        )
    if type(func) is cst.Name and owner is not None:
        bound = _jit_binding(func.value, owner, ctx.unit, index, transforms)
        if bound is not None:
            return bound
    held = (  # only a transformation's application can be a held jitted function: asked first, it is cheap
        held_value(
            index,
            func,
            ctx.unit,
            lambda value, owner: (
                type(value) is cst.Call and index.transform_of(value.func, owner) is not None
            ),
        )
        if type(func) is cst.Attribute
        else None
    )
    if held is not None:  # `self._f(x)` with `self._f = jax.jit(g, ...)` in the constructor
        return _held_jit(held[0], held[1], index, transforms, dotted_name(func) or "<function>")
    targets = index.resolve_function(func, ctx.unit)
    if len(targets) > 1:  # several defs may be live here (`if`/`else`, a method defined twice): unknown
        return None
    for target, bound_self in targets:
        if type(target.node) is not cst.FunctionDef:
            continue
        spec = _jit_decorator(target, index, transforms)
        if spec is None:
            return None
        offset = 1 if target.is_method and bound_self else 0
        return Jitted(target, spec, offset, target.name, argnums_offset=0)
    return None


def jitted_def(unit: Unit, index: ModuleIndex, transforms: frozenset[str] = _JIT) -> Jitted | None:
    """A top-level def as a call of its name runs it when the def is the name's last binding (what another
    module imports): jitted when its one decorator is `jax.jit` (or one of `transforms`)."""
    if type(unit.node) is not cst.FunctionDef:
        return None
    spec = _jit_decorator(unit, index, transforms)
    return Jitted(unit, spec, 0, unit.name, argnums_offset=0) if spec is not None else None


def _jit_decorator(unit: Unit, index: ModuleIndex, transforms: frozenset[str] = _JIT) -> StaticSpec | None:
    """The static spec of a def whose one decorator is `jax.jit` (or one of `transforms`), else None (kept
    with the unit: a jitted function is called many times)."""
    node = unit.node
    assert type(node) is cst.FunctionDef
    if not node.decorators:
        return None
    memo = unit.memo
    key = "jit_decorator" if transforms is _JIT else f"jit_decorator {sorted(transforms)}"
    if key in memo:
        return memo[key]
    chain = decorator_transforms(node, unit, index)
    spec = None
    # Other decorators may change the signature that static_argnums counts in.
    if len(chain) == 1 and chain[0][0] in transforms and len(node.decorators) == 1:
        spec = static_spec(chain[0][1], chain[0][0])
        if spec.unknown:
            spec = None
    memo[key] = spec
    return spec


def _binding_owner(name: str, ctx: RuleContext) -> Unit | None:
    """Where `name` read here is bound: this function, the module (a global here), or neither (a closure)."""
    unit = ctx.unit
    if unit is not ctx.index.root and name in unit.local_names:
        return unit
    return ctx.index.root if ctx.is_module_global(name) else None


def _jit_binding(
    name: str, owner: Unit, unit: Unit, index: ModuleIndex, transforms: frozenset[str] = _JIT
) -> Jitted | None:
    """`name = jax.jit(f, ...)` (or one of `transforms`) in `owner`: this function, or the module when the
    name is global here."""
    key = "jit_bindings" if transforms is _JIT else f"jit_bindings {sorted(transforms)}"
    table = owner.memo.get(key)
    if table is None:
        table = owner.memo[key] = _jit_bindings(owner, index, transforms)
    found = table.get(name)
    node = unit.node
    if found is not None and owner is unit and (type(node) is cst.FunctionDef or type(node) is cst.Lambda):
        if name in parameter_names(node.params):
            return None  # a parameter rebound to `jax.jit(...)` would have two bindings anyway
    return found


def _jit_bindings(unit: Unit, index: ModuleIndex, transforms: frozenset[str]) -> dict[str, Jitted | None]:
    """Names bound exactly once in `unit`'s own statements, by `name = jax.jit(...)` (None: other or many)."""
    table: dict[str, Jitted | None] = {}
    for name in unit.bindings:
        value = jit_call(unit, name, index, transforms)
        jitted = None
        if value is not None:
            found = index.applications(value, unit)
            if not found:
                jitted = _jitted_apply(value, unit, index, name)
            elif len(found) == 1:
                jitted = _from_application(*found[0], name, 0)
                if jitted is not None:
                    jitted = dataclasses.replace(jitted, label=name)
        table[name] = jitted
    return table


def jit_call(unit: Unit, name: str, index: ModuleIndex, transforms: frozenset[str] = _JIT) -> cst.Call | None:
    """The `jax.jit(f, ...)` call (or one of `transforms`) that `name` is bound to, once, in `unit`'s own
    statements; else None."""
    value = unit.single_assignment(name)
    if type(value) is not cst.Call or not value.args or value.args[0].keyword is not None:
        return None
    transform = index.transform_of(value.func, unit)
    return value if transform is not None and transform[0] in transforms else None


def _held_jit(
    value: cst.BaseExpression, owner: Unit, index: ModuleIndex, transforms: frozenset[str], label: str
) -> Jitted | None:
    """The jitted function an attribute holds: `jax.jit(...)` (one of `transforms`) read in `owner`, the
    constructor that binds it."""
    if type(value) is not cst.Call or not value.args or value.args[0].keyword is not None:
        return None
    transform = index.transform_of(value.func, owner)
    if transform is None or transform[0] not in transforms:
        return None
    found = index.applications(value, owner)
    if not found:
        return _jitted_apply(value, owner, index, label)
    jitted = _from_application(*found[0], label, 0) if len(found) == 1 else None
    return dataclasses.replace(jitted, label=label) if jitted is not None else None


def _jitted_apply(call: cst.Call, unit: Unit, index: ModuleIndex, label: str) -> Jitted | None:
    """`jax.jit(model.apply)`: the Module's `__call__`, call position i its parameter i (0 is `self`, and
    the variables take call position 0)."""
    found = jitted_apply(index, call, unit)
    return Jitted(found[0], found[1], 0, label, argnums_offset=0) if found is not None else None


def is_jax_callable(func: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A callable known to run JAX transformations: a transformed def of the module, a name bound to
    `jax.jit(...)`/`vmap`/`grad`/..., a transformed method of `self`, or `jax.jit(f)` itself."""
    return jax_callable_in(func, ctx.index, ctx.unit, ctx.is_module_global)


def jax_callable_in(
    func: cst.BaseExpression, index: ModuleIndex, unit: Unit, is_global: Callable[[str], bool] | None = None
) -> bool:
    """`is_jax_callable` for an expression read in `unit` (any def of the module, not only the one a rule is
    visiting); `is_global` answers whether a name refers to the module's binding (default: not bound in
    `unit`)."""
    if type(func) is cst.Call:
        return index.transform_of(func.func, unit) is not None and bool(func.args)
    if type(func) is cst.Name:
        scope = None
        if unit is not index.root and func.value in unit.local_names:
            scope = unit
        elif is_global(func.value) if is_global is not None else func.value not in unit.local_names:
            scope = index.root
        if scope is not None:
            value = scope.single_assignment(func.value)
            if type(value) is cst.Call and value.args and index.transform_of(value.func, scope) is not None:
                return True
    held = held_value(index, func, unit) if type(func) is cst.Attribute else None
    if held is not None:  # `self._f(x)` with `self._f = jax.jit(g)` in the constructor
        return jax_callable_in(held[0], index, held[1])
    targets = index.resolve_function(func, unit)
    if not targets:
        return False
    for target, _ in targets:
        node = target.node
        if type(node) is not cst.FunctionDef or not decorator_transforms(node, target, index):
            return False
    return True


def array_leaf_arguments(call: cst.Call, ctx: RuleContext) -> tuple[str, list[tuple[cst.Arg, str]]] | None:
    """For a call whose every leaf of some arguments must be a JAX type: the label of what reads them and
    those (argument, parameter name). The carry of a lax loop (the table's `array_carry`); the arguments the
    outermost transformation of the callable traces, where that one reads leaves as arrays (`array_leaves`:
    `jax.jit(f)(...)`, `g(...)` with `g = jax.grad(f)`, a def whose outermost decorator is one): not the
    static ones, under grad only the differentiated positions, under vmap not the `in_axes=None` ones. None
    when unknown (options not literals, another decorator outside)."""
    index, unit = ctx.index, ctx.unit
    flow = CONTROL_FLOW.get(ctx.qualname(call.func) or "")
    if flow is not None:
        carry = argument(call, *flow.init) if flow.array_carry and flow.init is not None else None
        return (flow.label.replace(" body", ""), [(carry, flow.init[1])]) if carry is not None else None  # type: ignore[index]
    func = call.func
    if type(func) is cst.Name:
        owner = _binding_owner(func.value, ctx)
        bound = jit_call(owner, func.value, index, _ARRAY_LEAVES) if owner is not None else None
        func = bound if bound is not None else func
    jitted: Jitted | None = None
    if type(func) is cst.Call:  # `jax.jit(f, ...)(...)`
        found = index.transform_of(func.func, unit)
        if (
            found is None
            or found[0] not in _ARRAY_LEAVES
            or not func.args
            or func.args[0].keyword is not None
        ):
            return None
        name = found[0]
        spec = static_spec([*found[1], *func.args[1:]], name)
        label = dotted_name(func.args[0].value) or source_of(func.args[0].value, 20)
        applied = index.applications(func, unit)
        if len(applied) == 1:
            jitted = _from_application(applied[0][0], dataclasses.replace(applied[0][1], spec=spec), label, 0)
    else:
        targets = index.resolve_function(func, unit)
        if len(targets) != 1:
            return None
        target, bound_self = targets[0]
        node = target.node
        if type(node) is not cst.FunctionDef:
            return None
        chain = decorator_transforms(node, target, index)
        if not chain or chain[0][2] is not node.decorators[0] or chain[0][0] not in _ARRAY_LEAVES:
            return None
        name, label = chain[0][0], target.name
        spec = static_spec(chain[0][1], name)
        jitted = Jitted(target, spec, 1 if target.is_method and bound_self else 0, label, argnums_offset=0)
    if spec.unknown or (spec.argnames and jitted is None):
        return None
    if jitted is not None:
        arguments = jitted.arguments(call)
    else:  # the function is not known here: positions only
        arguments = []
        for position, arg in enumerate(a for a in call.args if a.keyword is None):
            if arg.star:
                break
            arguments.append((arg, str(position), position in spec.argnums))
    traced = []
    position = -1
    for arg, param, static in arguments:
        position += arg.keyword is None
        if static:
            continue
        if spec.differentiated is not None and (
            arg.keyword is not None or position not in spec.differentiated
        ):
            continue  # grad: only the differentiated positions
        if arg.keyword is None and position in spec.unbatched:
            continue
        traced.append((arg, param))
    return f"{TRANSFORMATIONS[name].label.rsplit('-', 1)[0]} '{label}'", traced


def compiled_function(func: cst.BaseExpression, ctx: RuleContext) -> tuple[cst.CSTNode, str] | None:
    """What a call of `func` keeps its compiled code with, and a label: a def whose outermost decorator is a
    compiling transformation (`@eqx.filter_jit` over `@eqx.filter_grad`), or the `jax.jit(f)` call a name is
    bound to once. Calls given the same answer share one cache."""
    index, unit = ctx.index, ctx.unit
    if type(func) is cst.Name:
        owner = _binding_owner(func.value, ctx)
        bound = jit_call(owner, func.value, index, COMPILING) if owner is not None else None
        if bound is not None:
            return bound, func.value
    targets = index.resolve_function(func, unit)
    if len(targets) != 1 or type(targets[0][0].node) is not cst.FunctionDef:
        return None
    target = targets[0][0]
    node = target.node
    chain = decorator_transforms(node, target, index)  # type: ignore[arg-type]
    if not chain or chain[0][2] is not node.decorators[0] or chain[0][0] not in COMPILING:  # type: ignore[attr-defined]
        return None
    return node, target.name


# Compiling transformations that keep a Module's non-array leaves static and compare them by equality to find
# the compiled code (equinox's filter_jit): a leaf equal only to itself (a jax.jit wrapper) misses the cache.
_FILTERING_COMPILING = frozenset(
    name for name, t in TRANSFORMATIONS.items() if t.compiling and t.filtering and not t.scalars
)


def rebuilt_for_filtered_call(index: ModuleIndex, class_name: str) -> cst.Call | None:
    """`for ...: model = Cls(...); step(model, ...)` with `step` compiled by a filtering transformation
    (`eqx.filter_jit`): the construction of the module's class `class_name` in a loop whose instance a call of
    such a function in the same loop is given, else None."""
    sites = index._sites
    for call, unit, _ in sites:
        if type(call.func) is not cst.Name or call.func.value != class_name:
            continue
        loops = {id(loop) for loop in unit.loops_of(call)}
        bound = next((n for n, bs in unit.bindings.items() if any(b.value is call for b in bs)), None)
        if not loops or bound is None:
            continue
        for other, other_unit, _ in sites:
            if other_unit is not unit or not loops & {id(loop) for loop in unit.loops_of(other)}:
                continue
            if any(type(a.value) is cst.Name and a.value.value == bound for a in other.args) and (
                _filtering_compiled(other.func, unit, index)
            ):
                return call
    return None


def _filtering_compiled(func: cst.BaseExpression, unit: Unit, index: ModuleIndex) -> bool:
    """A def whose outermost decorator is a filtering compiling transformation, or a name bound once to one
    applied to a function (`step = eqx.filter_jit(step_fn)`)."""
    if type(func) is cst.Name:
        value = unit.single_assignment(func.value) or index.root.single_assignment(func.value)
        if type(value) is cst.Call and value.args:
            found = index.transform_of(value.func, unit)
            return found is not None and found[0] in _FILTERING_COMPILING
    targets = index.resolve_function(func, unit)
    if len(targets) != 1 or type(targets[0][0].node) is not cst.FunctionDef:
        return False
    target = targets[0][0]
    node = target.node
    chain = decorator_transforms(node, target, index)  # type: ignore[arg-type]
    return bool(chain) and chain[0][2] is node.decorators[0] and chain[0][0] in _FILTERING_COMPILING  # type: ignore[attr-defined]
