"""JAX104 dynamic-shape."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    BOOL,
    CONDITION_SIZED,
    ONE_ARGUMENT_VALUE_SIZED,
    STRICT,
    TRACED,
    VALUE_SIZED,
    RuleContext,
    display_name,
)
from ..syntax import source_of
from .base import Rule
from .common import culprit

# The library table's functions whose output size depends on values unless `size=` is given.
_VALUE_SIZED, _CONDITION_SIZED = VALUE_SIZED, CONDITION_SIZED


class DynamicShape(Rule):
    code = "JAX104"
    name = "dynamic-shape"
    summary = "Boolean-mask indexing or `nonzero`/`argwhere`/`unique`/one-argument `where` without `size=` on traced values"
    confirmable = True
    doc = """
## What it does
Inside `jit`, `vmap`, `pmap` and `lax` bodies, flags indexing with a traced boolean mask (`x[x > 0]`,
`x.at[mask]`) and calls to `jnp.nonzero`, `argwhere`, `flatnonzero`, `unique*` and one-argument `jnp.where`
on traced values without a static `size=`, and `jnp.compress`/`jnp.extract` with a traced condition and no
`size=`.

## Why is this bad
Every array shape must be known at trace time. The number of `True` entries of a traced mask is not, so
boolean indexing raises `NonConcreteBooleanIndexError`, the size-returning functions raise
`ConcretizationTypeError`, and `compress`/`extract` raise `TracerBoolConversionError`. Masks built from NumPy (`np.arange(n) < k` with static `n`, `k`) are concrete and fine.

## Example
```python
@jax.jit
def positive_sum(x):
    return x[x > 0].sum()
```

## Use instead
```python
@jax.jit
def positive_sum(x):
    return jnp.where(x > 0, x, 0).sum()
# or: jnp.nonzero(x > 0, size=3, fill_value=0)
```

## Fix safety
No automatic fix.

## References
- https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#dynamic-shapes
"""

    def visit_Subscript(self, node: cst.Subscript, ctx: RuleContext) -> None:
        if ctx.kind < STRICT:
            return
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and ctx.flags(index.value) & (TRACED | BOOL) == TRACED | BOOL:
                ctx.report(
                    self,
                    index.value,
                    f"Boolean mask `{source_of(index.value)}` is traced inside {ctx.context}: the result's shape "
                    "depends on its values (NonConcreteBooleanIndexError); use jnp.where(mask, x, fill)",
                )
                return

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.kind < STRICT:
            return
        name = ctx.qualname(node.func)
        positional = [a.value for a in node.args if a.keyword is None]
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
        if "size" in keywords or not positional:
            return
        if name in _CONDITION_SIZED:
            condition = next(
                (a.value for a in node.args if a.keyword and a.keyword.value == "condition"), None
            )
            condition = condition or positional[0]
            if ctx.traced(condition):
                short = display_name(name)
                ctx.report(
                    self,
                    node,
                    f"{short}() without size= on traced condition {culprit(condition, ctx)} inside {ctx.context}: "
                    "its output shape depends on values (TracerBoolConversionError); pass size= (and fill_value=), "
                    "or keep the shape with jnp.where(condition, x, fill)",
                )
            return
        if name in _VALUE_SIZED or (
            name in ONE_ARGUMENT_VALUE_SIZED and len(positional) == 1 and "x" not in keywords
        ):
            if ctx.traced(positional[0]):
                short = display_name(name)
                ctx.report(
                    self,
                    node,
                    f"{short}() without size= on traced value {culprit(positional[0], ctx)} inside {ctx.context}: "
                    f"its output shape depends on values (ConcretizationTypeError); pass size= (and fill_value=)",
                )
