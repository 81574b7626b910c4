"""JAX402 unhashable-static-arg."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    ARRAY,
    ARRAY_BUILDING_NAMESPACES,
    COMPILING,
    CONCRETE_JAX_FUNCTIONS,
    CONCRETE_JAX_PREFIXES,
    FLOAT_GRIDS,
    LIST,
    NUMPY_ARRAYS,
    SAME_CLASS_RESULTS,
    STATIC_STATE_ARGUMENTS,
    TRACED,
    TRANSFORMATIONS,
    UNHASHABLE_BUILTINS,
    Jitted,
    RuleContext,
    built_anew,
    changed_since_use,
    compiled_function,
    identity_hashed,
    imported_jit,
    is_numpy_array,
    jitted_callable,
    loop_targets,
    module_instance,
    pytree_model,
    static_arguments_possible,
    static_counters,
    unhashable_class,
)
from ..syntax import argument, children, own_nodes, source_of
from .base import Rule
from .common import describe_sequence

# The transformations that key their cache on an nnx object's static state (its graph def).
_STATIC_STATE_TRANSFORMS = frozenset({"flax.nnx.jit"})
# Displays that build a list, dict or set: never hashable (compared by type identity: no subclasses).
_UNHASHABLE_DISPLAYS = frozenset({cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp})
# Compiling transformations that keep every non-array argument static (equinox's filter_jit): a Python float
# argument is a cache key, as at jax.jit's static_argnums.
_STATIC_NON_ARRAYS = frozenset(
    name for name, t in TRANSFORMATIONS.items() if t.compiling and t.filtering and not t.scalars
)


class UnhashableStaticArg(Rule):
    code = "JAX402"
    name = "unhashable-static-arg"
    summary = (
        "A list, dict, set, array or mutable dataclass passed to a static argument of a jitted function, or an "
        "identity-hashed object built anew for each call"
    )
    confirmable = True
    doc = """
## What it does
Flags calls to a jitted function of the same module — `@jax.jit`/`@partial(jax.jit, static_argnums=...)`
functions, names bound to `jax.jit(f, static_argnames=...)`, `jax.jit(f, ...)(...)` itself — that pass an
unhashable value at a `static_argnums`/`static_argnames` position: a list, dict or set (literal,
comprehension or a local name bound to a list), a `jnp`/`np` array, or an instance of a same-module
`@dataclass` that is not frozen (built at the call, or bound once to a name first), or of a same-module
`equinox.Module`/`flax.struct` dataclass (hashed by its fields) with a field annotated as a dict, list or set
(or an array), or the part `eqx.partition`/`eqx.filter` makes of one (the static half keeps the dict). It also
flags a float static argument that takes a new value on every iteration of a loop (`for lr in
np.linspace(...)`, `step * 0.1`), and a Python float that does so given to an `eqx.filter_jit` function, which
keeps every non-array argument static (a NumPy scalar counts as an array there), and, at the increment, a
pytree field annotated `int` (an `eqx.Module`'s, a `flax.struct` dataclass's) that an `eqx.filter_jit` function
increments and returns (`state.replace(step=state.step + 1)`, also through a method of the state): each new
count is a new static leaf. It flags a compiled function
(`jax.jit`, `eqx.filter_jit`) given a second instance of a pytree class whose static field
(`eqx.field(static=True)`, `flax.struct.field(pytree_node=False)`) is annotated as an array. And it flags a static
value that compares by identity —
an optax transformation (`optax.adam(1e-3)`), an instance of a plain class of the module without `__eq__` or
`__hash__` — built anew on every iteration of a loop that makes the call, or in a function the module calls in
a loop; likewise the transformation of an `nnx.Optimizer` built in the loop that gives the optimizer to an
`nnx.jit` function (it is static state of the optimizer's graph, part of `nnx.jit`'s cache key); and such an
instance (a plain class's) whose attributes the code assigns between two calls that pass it statically, or in a
loop that makes the call: its key is unchanged, so the call returns what the old contents compiled to.

## Why is this bad
JAX keys its compilation cache on the values of static arguments, so they must be hashable: an unhashable one
raises `ValueError: Non-hashable static arguments are not supported` at the call (verified for lists,
dicts, sets, `jnp`/`np` arrays, tuples holding a list and plain `@dataclass` instances on jax 0.10.2).
A float that changes every iteration is hashable but a new cache key each time, so every iteration traces and
compiles again. The static fields of a pytree argument are part of the cache key too, compared with `==`
against the last call's: for arrays that comparison raises `ValueError` (the truth value of an array is
ambiguous) as soon as a second instance is given (verified on equinox 0.13.8 and flax 0.12.8). An object
compared by identity is a new cache key each time it is built, however alike: every new one compiles again
(two `optax.adam(1e-3)` are unequal: a NamedTuple of closures made per call; verified on optax 0.2.8 and flax
0.12.8). JAX's rule for positions and names is followed: with only `static_argnums`, the same parameters
passed by keyword are static too (and vice versa); with both, exactly what is listed.

## Example
```python
@partial(jax.jit, static_argnames="layers")
def mlp(x, layers):
    ...

mlp(x, layers=[64, 64])
```

## Use instead
```python
mlp(x, layers=(64, 64))  # a tuple is hashable
```
Pass arrays and values that change as ordinary (traced) arguments; make configuration objects frozen
dataclasses or tuples.

## Fix safety
No automatic fix.

## References
- https://docs.jax.dev/en/latest/_autosummary/jax.jit.html (static_argnums)
- https://docs.jax.dev/en/latest/faq.html#how-to-use-jit-with-methods
"""

    def __init__(self) -> None:
        # (unit, compiled function) -> class name -> the instance an earlier call in the unit gave it
        self._instances: dict[tuple[int, int], dict[str, str]] = {}
        self._libraries: dict[
            frozenset[str], bool
        ] = {}  # transformations -> whether the module names their library

    def _imports_any(self, transforms: frozenset[str], ctx: RuleContext) -> bool:
        """Whether the module names the library of one of `transforms` (an import, a call's name): the cheap test
        before resolving every call against them."""
        found = self._libraries.get(transforms)
        if found is None:
            modules = {name.rpartition(".")[0] for name in transforms}
            names = {*ctx.index.imports.names.values(), *ctx.index.callee_names}
            found = self._libraries[transforms] = any(
                name == module or name.startswith(f"{module}.") or module.startswith(f"{name}.")
                for name in names
                for module in modules
            )
        return found

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if not node.args:
            return
        if self._imports_any(_STATIC_STATE_TRANSFORMS, ctx):
            self._static_state(node, ctx)
        if ctx.index.classes:  # the pytree classes are read only for a call of a compiled function
            self._array_static_instance(node, ctx)
        if self._imports_any(_STATIC_NON_ARRAYS, ctx):
            self._filtered_floats(node, ctx)
            self._static_counter(node, ctx)
        if not static_arguments_possible(ctx.index):
            # no argument to be static (`Jitted.arguments` maps only the call's own), or no static parameter
            self._imported(node, ctx)
            return
        jitted = jitted_callable(node.func, ctx) or _through_transform(node.func, ctx)
        if jitted is None:
            self._imported(node, ctx)
            return
        indices, names = jitted.static_parameters()
        if not indices and not names:
            return
        for arg, param, static in jitted.arguments(node):
            if static:
                self._check(arg.value, param, jitted.label, node, ctx)

    def _imported(self, call: cst.Call, ctx: RuleContext) -> None:
        """A jitted function of another module, or one a function of another module returns (project mode)."""
        found = imported_jit(call.func, ctx)
        if found is not None:
            for arg, param, static in found.arguments(call):
                if static:
                    self._check(arg.value, param, found.label, call, ctx)

    def _check(
        self, value: cst.BaseExpression, param: str, label: str, call: cst.Call, ctx: RuleContext
    ) -> None:
        what = self._unhashable(value, ctx)
        if what is not None:
            ctx.report(
                self,
                value,
                f"{what} passed to static argument '{param}' of jitted '{label}': static arguments must be "
                "hashable, so this raises at the call (ValueError: Non-hashable static arguments); "
                "pass a tuple or frozen dataclass, or make the argument non-static",
            )
            return
        if self._fresh(value, call, ctx, f"static argument '{param}' of jitted '{label}'"):
            return
        if type(value) is cst.Name:
            found = identity_hashed(value, ctx.index, ctx.unit)
            write = changed_since_use(value, call, ctx.unit, ctx.index) if found is not None else None
            if found is not None and write is not None:
                ctx.report(
                    self,
                    value,
                    f"'{value.value}', {found[1]} compares by identity and is changed in place "
                    f"(`{source_of(write).strip()}`) between calls as static argument '{param}' of jitted "
                    f"'{label}': its cache key stays the same, so the call reuses what the old contents "
                    "compiled to (a stale result); pass it as an ordinary (traced) argument",
                )
                return
        loop = self._varying_float(value, call, ctx)
        if loop is not None:
            ctx.report(
                self,
                value,
                f"float static argument '{param}' of jitted '{label}' takes a new value on every iteration: "
                "each value is a new cache key, so every iteration retraces and recompiles; pass it as a traced "
                "(non-static) argument",
            )

    # -- objects hashed by identity, built anew for each call ------------------------------------------------

    def _fresh(self, value: cst.BaseExpression, call: cst.Call, ctx: RuleContext, role: str) -> bool:
        """`train_step(optax.adam(1e-3), ...)` in a loop, or `opt = optax.adam(1e-3)` in a function the module
        calls in a loop: each call brings a new object that compares by identity, so a new cache key."""
        found = identity_hashed(value, ctx.index, ctx.unit)
        anew = built_anew(found[0], call, ctx.unit, ctx.index) if found is not None else None
        if found is None or anew is None:
            return False
        ctx.report(  # once per value: the walk reports a node once per rule
            self,
            value,
            f"{found[1]} compares by identity and is built anew {anew}: as {role}, each new object is a new "
            "cache key, so every call traces and compiles again; build it once and reuse it",
        )
        return True

    def _static_state(self, call: cst.Call, ctx: RuleContext) -> None:
        """`step(model, optimizer)` of an `nnx.jit` step, `optimizer = nnx.Optimizer(model, optax.adam(1e-3))`
        built in the same loop: the transformation is static state of the optimizer's graph, which `nnx.jit`
        keys its cache on."""
        jitted = jitted_callable(call.func, ctx, _STATIC_STATE_TRANSFORMS)
        if jitted is None:
            return
        unit = ctx.unit
        for arg, _param, _static in jitted.arguments(call):
            name = arg.value
            if type(name) is not cst.Name or (
                unit is not ctx.index.root and name.value not in unit.local_names
            ):
                continue
            holder = unit.single_assignment(name.value)
            if type(holder) is not cst.Call:
                continue
            slot = STATIC_STATE_ARGUMENTS.get(ctx.qualname(holder.func) or "")
            given = argument(holder, *slot) if slot is not None else None
            if slot is not None and given is not None and not given.star:
                role = f"static state '{slot[1]}' of the {source_of(holder.func)} given to jitted '{jitted.label}'"
                self._fresh(given.value, call, ctx, role)

    def _filtered_floats(self, call: cst.Call, ctx: RuleContext) -> None:
        """A float that changes every iteration given to a function compiled by a transformation keeping every
        non-array argument static (`eqx.filter_jit`): a new cache key each iteration."""
        jitted = jitted_callable(call.func, ctx, _STATIC_NON_ARRAYS)  # before the loops: cheaper, memoised
        if jitted is None:
            return
        loops = [loop for loop in ctx.unit.loops_of(call) if loop_targets(loop)]
        for arg, param, _ in jitted.arguments(call):
            if any(_python_float_varying(arg.value, loop, ctx) for loop in loops):
                ctx.report(
                    self,
                    arg.value,
                    f"float argument '{param}' of '{jitted.label}' takes a new value on every iteration, and "
                    "filter_jit keeps every non-array argument static: each value is a new cache key, so every "
                    "iteration retraces and recompiles; pass it as a JAX array (jnp.asarray(...))",
                )
                return

    def _static_counter(self, call: cst.Call, ctx: RuleContext) -> None:
        """`state.replace(step=state.step + 1)` returned by an `eqx.filter_jit` function, `step: int` a field:
        the returned Python int is a static leaf, a new cache key on the next call."""
        found = static_counters(ctx.index).get(id(call))
        if found is not None:
            increment, cls, field, function = found
            ctx.report(
                self,
                increment,
                f"'{cls}.{field}' is a Python int (annotated `int`) that filter_jit function '{function}' "
                "increments and returns: filter_jit keeps every non-array leaf static, so each new count is a new "
                "cache key and every call with the returned state retraces and recompiles; hold the counter as a "
                "JAX array (jnp.asarray(0))",
            )

    def _array_static_instance(self, call: cst.Call, ctx: RuleContext) -> None:
        """A compiled function given a second instance of a pytree class whose static field holds an array:
        its cache compares the static fields by `==`, and an array's `==` has no truth value (ValueError)."""
        compiled = compiled_function(call.func, ctx)
        if compiled is None:
            return
        classes = _array_static_classes(ctx)
        if not classes:
            return
        seen = self._instances.setdefault((id(ctx.unit), id(compiled[0])), {})
        for arg in call.args:
            if arg.star:
                return
            found = _instance_of(arg.value, ctx)
            if found is None or found[0] not in classes:
                continue
            name, instance = found
            earlier = seen.setdefault(name, instance)
            if earlier != instance:
                field = sorted(classes[name])[0]
                ctx.report(
                    self,
                    arg.value,
                    f"a second '{name}' instance given to compiled '{compiled[1]}': its static field '{field}' "
                    "holds an array, and the compiled function's cache compares static fields with `==` "
                    "(ValueError: the truth value of an array is ambiguous); make the field a pytree leaf, "
                    "or keep hashable values (tuples) in static fields",
                )
                return

    # -- unhashable values -----------------------------------------------------------------------------

    def _unhashable(self, value: cst.BaseExpression, ctx: RuleContext) -> str | None:
        if type(value) in _UNHASHABLE_DISPLAYS:
            return describe_sequence(value)
        if type(value) is cst.Tuple:
            for element in value.elements:
                if type(element) is not cst.StarredElement:
                    inner = self._unhashable(element.value, ctx)
                    if inner is not None:
                        return f"a tuple holding {inner}"
            return None
        if type(value) is cst.BinaryOperation and is_numpy_array(value, ctx):
            return f"a NumPy array ({source_of(value)})"
        if (type(value) is cst.Subscript or type(value) is cst.BinaryOperation) and ctx.flags(value) & ARRAY:
            return f"a JAX array ({source_of(value)})"  # `xs[0]`, `xs * 2` of a JAX array `xs`
        if type(value) is cst.Call:
            name = ctx.qualname(value.func)
            if name is None:
                return self._dataclass_instance(value, ctx)
            if name in NUMPY_ARRAYS:
                return f"a NumPy array ({source_of(value.func)}(...))"
            if (
                name.startswith(ARRAY_BUILDING_NAMESPACES)
                and name not in CONCRETE_JAX_FUNCTIONS
                and not name.startswith(CONCRETE_JAX_PREFIXES)
            ):
                return f"a JAX array ({source_of(value.func)}(...))"
            if name in UNHASHABLE_BUILTINS:
                return f"a {name.split('.')[1]}"
            return None
        if type(value) is cst.Name:
            flags = ctx.flags(value)
            if flags & (LIST | ARRAY | TRACED) == LIST:
                return f"list '{value.value}'"
            if flags & ARRAY:
                return f"array '{value.value}'"
            if is_numpy_array(value, ctx):  # `xs = np.linspace(...)`, `ys = 3.0 * xs + 0.5`
                return f"NumPy array '{value.value}'"
            built = module_instance(ctx.index, value, ctx.unit)  # `config = Config(...)`, bound once
            instance = self._dataclass_instance(built, ctx) if built is not None else None
            if instance is not None:
                return f"'{value.value}', {instance}"
            pytree = _unhashable_pytree(value, ctx)
            if pytree is not None:
                return f"'{value.value}', {pytree}"
        return None

    def _dataclass_instance(self, call: cst.Call, ctx: RuleContext) -> str | None:
        if type(call.func) is not cst.Name:
            return None
        if not ctx.is_module_global(call.func.value):
            return None
        cls = ctx.index.classes.get(call.func.value)
        why = unhashable_class(cls, ctx.index) if cls is not None else None
        if why is None:
            return None
        return f"an instance of '{call.func.value}' ({why}, so unhashable)"

    # -- floats that change every iteration ------------------------------------------------------------

    def _varying_float(
        self, value: cst.BaseExpression, call: cst.Call, ctx: RuleContext
    ) -> cst.CSTNode | None:
        for loop in reversed(ctx.unit.loops_of(call)):
            targets = loop_targets(loop)
            if not targets:
                continue
            assigned = _assigned_in(loop)
            if _float_varying(value, targets, assigned, loop, ctx, 0):
                return loop
        return None


def _through_transform(func: cst.BaseExpression, ctx: RuleContext) -> Jitted | None:
    """`jax.vmap(partial(f, a, b))(xs)`: a transformation that passes its positional arguments on to a jitted
    function as they are (vmap, grad, ...; not one that compiles, whose own static positions count)."""
    if type(func) is not cst.Call or not func.args or func.args[0].keyword is not None:
        return None
    found = ctx.index.transform_of(func.func, ctx.unit)
    if found is None or found[0] in COMPILING:
        return None
    return jitted_callable(func.args[0].value, ctx)


def _python_float_varying(value: cst.BaseExpression, loop: cst.CSTNode, ctx: RuleContext) -> bool:
    """Whether `value` is a Python float (not a NumPy scalar, which equinox counts as an array) that depends on
    the loop's iteration: arithmetic with a float literal or a division over the targets of a loop over
    `range(...)` or over Python numbers (`step * 0.5`, `i / 10`), `float(...)` of them, or a target of a loop
    over float literals; through one name assigned in the loop body."""
    targets = loop_targets(loop)
    assigned = _assigned_in(loop)
    numbers = targets if _iterates_python_numbers(loop, ctx) else set()
    if type(value) is cst.Name and value.value in assigned:
        value = assigned[value.value]
    if type(value) is cst.Name:
        return value.value in numbers and _iterates_floats(loop, ctx)
    if type(value) is cst.Call and ctx.qualname(value.func) == "builtins.float" and value.args:
        return _depends(value.args[0], targets, {})
    floaty = type(value) is cst.BinaryOperation and (
        _has_float_literal(value) or type(value.operator) is cst.Divide
    )
    return floaty and _python_number(value, numbers, ctx) and _depends(value, targets, {})


def _python_number(node: cst.BaseExpression, numbers: set[str], ctx: RuleContext) -> bool:
    """An expression of Python number literals and the names in `numbers` only (never an array)."""
    kind = type(node)
    if kind is cst.Integer or kind is cst.Float:
        return True
    if kind is cst.Name:
        return node.value in numbers  # type: ignore[attr-defined]
    if kind is cst.BinaryOperation:
        return _python_number(node.left, numbers, ctx) and _python_number(node.right, numbers, ctx)  # type: ignore[attr-defined]
    if kind is cst.UnaryOperation:
        return _python_number(node.expression, numbers, ctx)  # type: ignore[attr-defined]
    return False


def _iterates_python_numbers(loop: cst.CSTNode, ctx: RuleContext) -> bool:
    """`for i in range(...)`, `for lr in [0.1, 0.01]`: the loop variable is a Python number."""
    iterable = loop.iter if type(loop) is cst.For else getattr(getattr(loop, "for_in", None), "iter", None)
    if (type(iterable) is cst.List or type(iterable) is cst.Tuple) and iterable.elements:
        return all(
            type(e) is not cst.StarredElement and type(e.value) in (cst.Integer, cst.Float)
            for e in iterable.elements
        )
    return type(iterable) is cst.Call and ctx.qualname(iterable.func) == "builtins.range"


def _array_static_classes(ctx: RuleContext) -> dict[str, set[str]]:
    """The module's pytree classes with a static field annotated as an array: name -> those fields."""
    memo = ctx.index.root.memo
    if "array_static_classes" not in memo:
        if not ctx.index.classes:  # no class of its own: nothing to build the pytree model for
            memo["array_static_classes"] = {}
            return memo["array_static_classes"]
        model = pytree_model(ctx.index)
        memo["array_static_classes"] = {
            cls.name: cls.array_static for cls in model.by_node.values() if cls.array_static
        }
    return memo["array_static_classes"]


def _instance_of(value: cst.BaseExpression, ctx: RuleContext) -> tuple[str, str] | None:
    """(class name, which instance) for `Cls(...)` built right there (each call its own instance) or a name
    bound once to one, also by unpacking (`a, b = Cls(0), Cls(1)`)."""
    built: cst.BaseExpression | None = value
    key = ""
    if type(value) is cst.Name:
        key = value.value
        built = module_instance(ctx.index, value, ctx.unit) or _unpacked(value.value, ctx)
    if type(built) is not cst.Call or type(built.func) is not cst.Name:
        return None
    if not ctx.is_module_global(built.func.value):
        return None
    return built.func.value, key or f"@{id(built)}"


def _unhashable_pytree(name: cst.Name, ctx: RuleContext) -> str | None:
    """Why the pytree `name` holds is unhashable: an instance of a module's pytree class (an eqx.Module, a
    flax.struct dataclass: hashed by their fields) with a field annotated as a dict, list or set, built right
    there or a part `eqx.partition`/`eqx.filter` made of one (the static half keeps the dict)."""
    built = module_instance(ctx.index, name, ctx.unit)
    part = ""
    if built is None:
        found = _unpacked_call(name.value, ctx)
        if found is None:
            return None
        built, part = found
    tuple_result = SAME_CLASS_RESULTS.get(ctx.qualname(built.func) or "")
    if tuple_result is not None:
        if bool(part) != tuple_result or not built.args or built.args[0].keyword is not None:
            return None
        made = f"{ctx.qualname(built.func)}(...){part}"
        source = built.args[0].value
        built = module_instance(ctx.index, source, ctx.unit) if type(source) is cst.Name else None
        if built is None:
            return None
        part = made
    elif part:
        return None
    if type(built.func) is not cst.Name or not ctx.is_module_global(built.func.value):
        return None
    cls = pytree_model(ctx.index).class_named(built.func.value)
    if cls is None or ctx.index.classes.get(built.func.value) is None:
        return None
    unhashable = dict(cls.unhashable_fields)
    if not part:  # the whole instance holds its arrays too (a part made by a filter holds None there)
        unhashable |= {f: "an array" for f in cls.array_fields}
    if not unhashable:
        return None
    field = sorted(unhashable)[0]
    what = f"{part} of a '{cls.name}'" if part else f"a '{cls.name}'"
    return f"{what}, whose field '{field}' holds {unhashable[field]} (so its hash raises)"


def _one_assignment(name: str, ctx: RuleContext) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(target, value) of `name`'s one binding, a plain `target = value` (in the unit, else at module level)."""
    for scope in (ctx.unit, ctx.index.root):
        bindings = scope.bindings.get(name)
        if not bindings:
            continue
        node = bindings[0].node
        if len(bindings) != 1 or type(node) is not cst.Assign or len(node.targets) != 1:
            return None
        return node.targets[0].target, node.value
    return None


def _unpacked_call(name: str, ctx: RuleContext) -> tuple[cst.Call, str] | None:
    """`a, b = f(...)` binding `name` once: the call and which element (`[1]`)."""
    found = _one_assignment(name, ctx)
    if found is None:
        return None
    target, value = found
    if type(target) not in (cst.Tuple, cst.List) or type(value) is not cst.Call:
        return None
    elements = target.elements  # type: ignore[attr-defined]
    if any(type(e) is cst.StarredElement for e in elements):
        return None
    for position, element in enumerate(elements):
        if type(element.value) is cst.Name and element.value.value == name:
            return value, f"[{position}]"
    return None


def _unpacked(name: str, ctx: RuleContext) -> cst.BaseExpression | None:
    """The element `name` takes in its one binding `a, b = x, y` (in the unit, else at module level)."""
    found = _one_assignment(name, ctx)
    if found is None:
        return None
    target, value = found
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)):
        return None
    names = [e.value for e in target.elements]
    values = value.elements
    if len(names) != len(values) or any(type(e) is cst.StarredElement for e in [*target.elements, *values]):
        return None
    for element, given in zip(names, values, strict=True):
        if type(element) is cst.Name and element.value == name:
            return given.value
    return None


def _assigned_in(loop: cst.CSTNode) -> dict[str, cst.BaseExpression]:
    """`name = value` statements in a loop body (the last one wins), for one level of indirection."""
    found: dict[str, cst.BaseExpression] = {}
    body = getattr(loop, "body", None)
    if body is None:
        return found
    for node in own_nodes(body):
        if (
            type(node) is cst.Assign
            and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
        ):
            found[node.targets[0].target.value] = node.value
    return found


def _float_varying(
    value: cst.BaseExpression,
    targets: set[str],
    assigned: dict,
    loop: cst.CSTNode,
    ctx: RuleContext,
    depth: int,
) -> bool:
    """Whether `value` is a float that depends on the loop's iteration."""
    if depth > 2:
        return False
    if type(value) is cst.Name:
        if value.value in targets:
            return _iterates_floats(loop, ctx)
        if value.value in assigned:
            return _float_varying(assigned[value.value], targets, assigned, loop, ctx, depth + 1)
        return False
    if type(value) is cst.Call and ctx.qualname(value.func) == "builtins.float" and value.args:
        return _depends(value.args[0], targets, assigned)
    if type(value) is cst.BinaryOperation:
        floaty = _has_float_literal(value) or type(value.operator) is cst.Divide
        return floaty and _depends(value, targets, assigned)
    return False


def _depends(node: cst.CSTNode, targets: set[str], assigned: dict) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Attribute:
            stack.append(current.value)
            continue
        if type(current) is cst.Name and (current.value in targets or current.value in assigned):
            return True
        stack.extend(children(current))
    return False


def _has_float_literal(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Float:
            return True
        stack.extend(children(current))
    return False


def _iterates_floats(loop: cst.CSTNode, ctx: RuleContext) -> bool:
    """`for lr in [0.1, 0.01]`, `for lr in np.linspace(...)`: the loop variable is a float."""
    if type(loop) is cst.For:
        iterable = loop.iter
    else:
        for_in = getattr(loop, "for_in", None)
        if for_in is None:
            return False
        iterable = for_in.iter
    if (type(iterable) is cst.List or type(iterable) is cst.Tuple) and iterable.elements:
        return all(type(e.value) is cst.Float for e in iterable.elements if type(e) is not cst.StarredElement)
    if type(iterable) is cst.Call:
        return ctx.qualname(iterable.func) in FLOAT_GRIDS
    return False
