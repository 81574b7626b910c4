"""JAX402 unhashable-static-arg."""

from __future__ import annotations

import libcst as cst

from ..analysis import ARRAY, LIST, TRACED
from ..analysis.classes import unhashable_class
from ..analysis.context import RuleContext
from ..analysis.fresh_objects import built_anew, changed_since_use, identity_hashed
from ..analysis.jit import COMPILING, Jitted, jitted_callable, static_arguments_possible
from ..analysis.library import (
    CONCRETE_JAX_FUNCTIONS,
    CONCRETE_JAX_PREFIXES,
    FLOAT_GRIDS,
    STATIC_STATE_ARGUMENTS,
    UNHASHABLE_BUILTINS,
)
from ..analysis.loops import loop_targets
from ..analysis.namespaces import ARRAY_BUILDING_NAMESPACES, NUMPY_ARRAYS
from ..analysis.numpy_arrays import is_numpy_array
from ..analysis.receivers import module_instance
from ..syntax import argument, children, own_nodes, source_of
from .base import Rule
from .common import describe_sequence

# Displays that build a list, dict or set: never hashable (compared by type identity: no subclasses).
# The transformations that key their cache on an nnx object's static state (its graph def).
_STATIC_STATE_TRANSFORMS = frozenset({"flax.nnx.jit"})
_UNHASHABLE_DISPLAYS = frozenset({cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp})


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
`@dataclass` that is not frozen (built at the call, or bound once to a name first). It also flags a float static argument that takes a new value on every
iteration of a loop (`for lr in np.linspace(...)`, `step * 0.1`), and a static value that compares by identity —
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
compiles again. An object compared by identity is a new cache key each time it is built, however alike:
every new one compiles again (two `optax.adam(1e-3)` are unequal: a NamedTuple of closures made per call;
verified on optax 0.2.8 and flax 0.12.8). JAX's rule for positions and names is followed: with only `static_argnums`, the same parameters
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

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if not node.args:
            return
        self._static_state(node, ctx)
        if not static_arguments_possible(ctx.index):
            return  # no argument to be static (`Jitted.arguments` maps only the call's own), or no static parameter
        jitted = jitted_callable(node.func, ctx) or _through_transform(node.func, ctx)
        if jitted is None:
            return
        indices, names = jitted.static_parameters()
        if not indices and not names:
            return
        for arg, param, static in jitted.arguments(node):
            if static:
                self._check(arg.value, param, jitted, node, ctx)

    def _check(
        self, value: cst.BaseExpression, param: str, jitted: Jitted, call: cst.Call, ctx: RuleContext
    ) -> None:
        what = self._unhashable(value, ctx)
        if what is not None:
            ctx.report(
                self,
                value,
                f"{what} passed to static argument '{param}' of jitted '{jitted.label}': static arguments must be "
                "hashable, so this raises at the call (ValueError: Non-hashable static arguments); "
                "pass a tuple or frozen dataclass, or make the argument non-static",
            )
            return
        if self._fresh(value, call, ctx, f"static argument '{param}' of jitted '{jitted.label}'"):
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
                    f"'{jitted.label}': its cache key stays the same, so the call reuses what the old contents "
                    "compiled to (a stale result); pass it as an ordinary (traced) argument",
                )
                return
        loop = self._varying_float(value, call, ctx)
        if loop is not None:
            ctx.report(
                self,
                value,
                f"float static argument '{param}' of jitted '{jitted.label}' takes a new value on every iteration: "
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
