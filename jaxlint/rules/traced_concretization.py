"""JAX102 traced-concretization."""

from __future__ import annotations

import libcst as cst

from ..analysis import ARRAY, GRAD, LIST, STRICT, TRACED
from ..analysis.context import RuleContext
from .base import Rule
from .common import culprit

# NumPy functions that only read `.shape`/`.dtype`, so they accept tracers.
_NUMPY_SAFE = frozenset(
    "numpy." + n
    for n in (
        "shape ndim size result_type dtype issubdtype iscomplexobj isrealobj isscalar promote_types can_cast "
        "broadcast_shapes finfo iinfo"
    ).split()
)
# (what, exception, advice, still raises under grad alone)
_CONVERSIONS = {
    "builtins.float": (
        "float()",
        "ConcretizationTypeError",
        "use x.astype(jnp.float32) and keep it an array",
        True,
    ),
    "builtins.complex": ("complex()", "ConcretizationTypeError", "use x.astype(jnp.complex64)", True),
    "builtins.int": ("int()", "ConcretizationTypeError", "use x.astype(jnp.int32), or make it static", False),
    "builtins.range": (
        "range()",
        "TracerIntegerConversionError",
        "use lax.fori_loop, or make the bound static",
        False,
    ),
    "operator.index": ("operator.index()", "TracerIntegerConversionError", "make the value static", False),
}


class TracedConcretization(Rule):
    code = "JAX102"
    name = "traced-concretization"
    summary = "A traced value converted to a Python or NumPy value (`float()`, `int()`, `.item()`, `np.asarray`, `range()`)"
    confirmable = True
    doc = """
## What it does
Flags conversions of traced values to concrete Python or NumPy values inside transformed code:
`float()`, `int()`, `complex()`, `.item()`, `.tolist()`, `np.asarray()`/`np.array()` and other NumPy functions,
`math.*` functions, `range()` with a traced bound, and indexing a Python list with a traced index.

## Why is this bad
A tracer has no value during tracing, so each of these raises: `ConcretizationTypeError` (`float`, `int`,
`.item()`, `.tolist()`), `TracerArrayConversionError` (NumPy functions) or `TracerIntegerConversionError`
(`range`, list indexing). Under `jax.grad` alone the primal is concrete, so only `float()`, `complex()`,
`.tolist()`, NumPy and `math` calls fail there; `int()` and `.item()` silently cut the gradient instead.

## Example
```python
@jax.jit
def scale(x, n):
    total = 0.0
    for i in range(n):
        total += float(x[i])
    return total
```

## Use instead
```python
@partial(jax.jit, static_argnums=1)
def scale(x, n):
    return jnp.sum(x[:n])
```

## Fix safety
No automatic fix.

## References
- https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerIntegerConversionError
"""

    def _report(
        self,
        node: cst.CSTNode,
        value: cst.BaseExpression,
        what: str,
        error: str,
        advice: str,
        ctx: RuleContext,
    ) -> None:
        ctx.report(
            self,
            node,
            f"{what} on traced value {culprit(value, ctx)} inside {ctx.context}: raises {error}; {advice}",
        )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.kind < GRAD:
            return
        name = ctx.qualname(node.func)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if name in _CONVERSIONS and positional:
            what, error, advice, under_grad = _CONVERSIONS[name]
            traced = [v for v in positional if ctx.traced(v)]
            if traced and (ctx.kind >= STRICT or under_grad):
                self._report(node, traced[0], what, error, advice, ctx)
            return
        if name is not None and (name.startswith("numpy.") or name.startswith("math.")):
            if name in _NUMPY_SAFE or name.startswith(("numpy.random.", "numpy.dtype")):
                return
            traced = [v for v in positional if ctx.traced(v)]
            if not traced:
                return
            short = name.replace("numpy.", "np.", 1)
            if name.startswith("math."):
                self._report(
                    node, traced[0], f"{short}()", "ConcretizationTypeError", "use the jnp equivalent", ctx
                )
            else:
                jnp_name = "jnp." + name.split(".", 1)[1]
                self._report(
                    node,
                    traced[0],
                    f"{short}()",
                    "TracerArrayConversionError",
                    f"use {jnp_name} instead",
                    ctx,
                )
            return
        if isinstance(node.func, cst.Attribute) and not node.args:
            method = node.func.attr.value
            receiver = node.func.value
            if method == "tolist" or (method == "item" and ctx.kind >= STRICT):
                if ctx.traced(receiver):
                    self._report(
                        node,
                        receiver,
                        f".{method}()",
                        "ConcretizationTypeError",
                        "keep the value an array",
                        ctx,
                    )

    def visit_Subscript(self, node: cst.Subscript, ctx: RuleContext) -> None:
        if ctx.kind < STRICT:
            return
        base = ctx.flags(node.value)
        if not base & LIST or base & (ARRAY | TRACED):
            return
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and ctx.traced(index.value):
                self._report(
                    node,
                    index.value,
                    "Indexing a Python list",
                    "TracerIntegerConversionError",
                    "stack the list into an array (jnp.stack) and index that",
                    ctx,
                )
                return
