"""JAX106 discarded-functional-update."""

from __future__ import annotations

import libcst as cst

from ..analysis import ARRAY, COPYING_INPLACE_METHODS, NONE, TRACED, NameUsage, RuleContext
from ..fix import UNSAFE, replace
from ..syntax import source_of
from .base import Rule

# The `.at[...]` methods that return an updated copy (`get` reads, and discarding a read loses nothing).
UPDATE_METHODS = frozenset(
    {"set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "apply"}
)


def functional_update(node: cst.BaseExpression) -> tuple[cst.BaseExpression, str] | None:
    """`x.at[i].set(v)` -> (`x`, "set"); None for anything else."""
    if type(node) is not cst.Call or type(node.func) is not cst.Attribute:
        return None
    method = node.func.attr.value
    indexed = node.func.value
    if method not in UPDATE_METHODS or type(indexed) is not cst.Subscript:
        return None
    at = indexed.value
    if type(at) is not cst.Attribute or at.attr.value != "at":
        return None
    return at.value, method


class DiscardedFunctionalUpdate(Rule):
    code = "JAX106"
    name = "discarded-functional-update"
    summary = "`x.at[i].set(v)` or `x.sort()` as a bare statement: the updated array is thrown away"
    confirmable = True
    fix_safety = "unsafe"
    doc = """
## What it does
Flags an expression statement that is a functional array update — `x.at[i].set(v)`, `.add`, `.subtract`,
`.multiply`, `.divide`, `.power`, `.min`, `.max`, `.apply` — whose result is not used. It is flagged anywhere
in a module that imports JAX, jitted or not. It also flags `x.sort()` as a statement on a JAX array (made by
`jnp`/`lax`/`jax.random`, or a traced parameter the function only uses as an array): NumPy's `sort` method
sorts in place, JAX's returns a sorted copy.

## Why is this bad
JAX arrays are immutable: `x.at[i].set(v)` does not change `x`, it returns a new array. As a bare statement
the new array is discarded and the line does nothing, so `x` keeps its old values and nothing fails to tell
you. The same holds for `x.sort()`: on a JAX array it returns the sorted array (verified on jax 0.10.2), so
code ported from NumPy that sorts in place silently keeps the unsorted order.

## Example
```python
def reset_first(x):
    x.at[0].set(0.0)
    return x
```

## Use instead
```python
def reset_first(x):
    x = x.at[0].set(0.0)
    return x
```

## Fix safety
When `x` is a plain name, the fix assigns the result back: `x = x.at[i].set(v)`, `x = x.sort()`. It is **unsafe**: from that
line on `x` names the updated array, which is almost always what was meant, but code that relied on `x`
keeping its old value (or another reference to the old array) behaves differently. There is no fix when `x` is
an attribute, an item or a call, or a name the function only reads from an enclosing scope (assigning it would
make it local), or a `global`/`nonlocal` name in traced code (assigning the traced result to it would leak a
tracer: JAX105).

## References
- https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#in-place-updates
"""

    def __init__(self) -> None:
        self._usage: dict[int, NameUsage] = {}  # id of a unit's node -> how its body uses names

    def visit_Expr(self, node: cst.Expr, ctx: RuleContext) -> None:
        found = functional_update(node.value)
        if found is None:
            self._copying_method(node, ctx)
            return
        base, method = found
        name = source_of(base, 20)
        advice = f"assign the new array: {name} = {name}.at[...].{method}(...)"
        if ctx.kind > NONE and type(base) is cst.Name and base.value in ctx.declared_global:
            advice = f"return the new array (stored in the global '{name}', a tracer would leak)"
        ctx.report(
            self,
            node.value,
            f"Result of '{name}.at[...].{method}(...)' is discarded: JAX arrays are immutable, so '{name}' is "
            f"unchanged; {advice}",
            fix=self._fix(node, base, ctx),
        )

    def _copying_method(self, node: cst.Expr, ctx: RuleContext) -> None:
        """`x.sort()` as a statement on a JAX array: NumPy sorts in place, JAX returns a sorted copy."""
        call = node.value
        if type(call) is not cst.Call or type(call.func) is not cst.Attribute:
            return
        method = call.func.attr.value
        base = call.func.value
        if method not in COPYING_INPLACE_METHODS or not self._array_value(base, ctx):
            return
        name = source_of(base, 20)
        ctx.report(
            self,
            call,
            f"Result of '{name}.{method}(...)' is discarded: on a JAX array it returns a new array and leaves "
            f"'{name}' unchanged (NumPy's works in place); assign it: {name} = {name}.{method}(...)",
            fix=self._fix(node, base, ctx),
        )

    def _array_value(self, base: cst.BaseExpression, ctx: RuleContext) -> bool:
        """A JAX array: flagged as one, or a traced parameter this function uses only as an array (a list
        parameter's `.sort()` works in place)."""
        flags = ctx.flags(base)
        if flags & ARRAY:
            return True
        if not flags & TRACED or type(base) is not cst.Name:
            return False
        usage = self._usage.get(id(ctx.unit.node))
        if usage is None:
            usage = self._usage[id(ctx.unit.node)] = NameUsage(ctx.unit.node)
        return usage.is_array(base.value)

    @staticmethod
    def _fix(node: cst.Expr, base: cst.BaseExpression, ctx: RuleContext):
        if type(base) is not cst.Name or base.lpar:
            return None
        if ctx.own_names is not None:
            return None  # a class body
        if ctx.unit is not ctx.index.root and base.value not in ctx.unit.local_names:
            if base.value not in ctx.declared_global:
                return None  # read from an enclosing scope: assigning it would make it local
            if ctx.kind > NONE:
                return None  # a `global`/`nonlocal` in traced code: assigning the traced result leaks it
        new = cst.Assign(targets=[cst.AssignTarget(target=base)], value=node.value, semicolon=node.semicolon)
        return replace(node, new, UNSAFE)
