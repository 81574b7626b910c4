"""JAX101 traced-control-flow."""

from __future__ import annotations

import libcst as cst

from ..analysis import ARRAY, STRICT, TRACED
from ..analysis.context import RuleContext
from .base import Rule
from .common import culprit


class TracedControlFlow(Rule):
    code = "JAX101"
    name = "traced-control-flow"
    summary = (
        "Python control flow (`if`, `while`, `assert`, ternary, `and`/`or`/`not`, `bool()`) on a traced value"
    )
    confirmable = True
    doc = """
## What it does
Flags Python `if`/`elif`/`while`/`assert`, conditional expressions, `and`/`or`/`not` and `bool()` whose
condition is a traced value inside `jax.jit`, `vmap`, `pmap`, `checkpoint` or a `lax` control-flow body.

## Why is this bad
Under these transformations arrays are abstract tracers: their values do not exist yet when Python runs
the function. Python needs a concrete `True`/`False`, so JAX raises `TracerBoolConversionError` (a
`ConcretizationTypeError`) the first time the function is traced. Conditions on static values — shapes,
dtypes, `static_argnums` parameters, `x is None` — are fine, and so is control flow under `jax.grad` alone,
whose primal values are concrete.

## Example
```python
@jax.jit
def relu(x):
    if x > 0:
        return x
    return 0.0
```

## Use instead
```python
@jax.jit
def relu(x):
    return jnp.where(x > 0, x, 0.0)
```
Use `jnp.where` or `lax.cond`/`lax.switch` for branches, `lax.while_loop` for loops, and mark truly static
parameters with `static_argnums`/`static_argnames`.

## Fix safety
No automatic fix: the right replacement depends on whether both branches can be computed.

## References
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError
- https://docs.jax.dev/en/latest/control-flow.html
"""

    _ADVICE = {
        "if": "use jnp.where or lax.cond",
        "elif": "use jnp.where, jnp.select or lax.switch",
        "while": "use lax.while_loop",
        "assert": "use checkify.check, or check outside the transformation",
        "conditional expression": "use jnp.where or lax.cond",
        "and": "use jnp.logical_and",
        "or": "use jnp.logical_or",
        "not": "use jnp.logical_not",
        "bool()": "keep it an array, or use lax.cond",
    }

    def __init__(self) -> None:
        self._covered: set[int] = set()
        self._elifs: set[int] = set()

    def _check(self, test: cst.BaseExpression, what: str, ctx: RuleContext) -> None:
        # A bare traced parameter may be a pytree (`if params:` is legal); only arrays are flagged.
        if ctx.kind < STRICT or ctx.flags(test) & (TRACED | ARRAY) != TRACED | ARRAY:
            return
        self._cover(test)
        ctx.report(
            self,
            test,
            f"Python '{what}' on traced value {culprit(test, ctx)} inside {ctx.context}: "
            f"raises TracerBoolConversionError; {self._ADVICE[what]}",
        )

    def _cover(self, test: cst.BaseExpression) -> None:
        """The statement-level report covers `and`/`or`/`not` inside the condition."""
        stack: list[cst.CSTNode] = [test]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.BooleanOperation, cst.UnaryOperation)):
                self._covered.add(id(node))
                stack.extend(
                    [node.left, node.right] if isinstance(node, cst.BooleanOperation) else [node.expression]
                )

    def visit_If(self, node: cst.If, ctx: RuleContext) -> None:
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))
        self._check(node.test, "elif" if id(node) in self._elifs else "if", ctx)

    def visit_While(self, node: cst.While, ctx: RuleContext) -> None:
        self._check(node.test, "while", ctx)

    def visit_Assert(self, node: cst.Assert, ctx: RuleContext) -> None:
        self._check(node.test, "assert", ctx)

    def visit_IfExp(self, node: cst.IfExp, ctx: RuleContext) -> None:
        self._check(node.test, "conditional expression", ctx)

    def visit_BooleanOperation(self, node: cst.BooleanOperation, ctx: RuleContext) -> None:
        if id(node) in self._covered or ctx.kind < STRICT:
            return
        # Only the left operand is converted to bool; the right one is returned as is.
        if ctx.flags(node.left) & (TRACED | ARRAY) == TRACED | ARRAY:
            what = "and" if isinstance(node.operator, cst.And) else "or"
            self._cover(node)
            ctx.report(
                self,
                node.left,
                f"Python '{what}' on traced value {culprit(node.left, ctx)} inside {ctx.context}: "
                f"raises TracerBoolConversionError; {self._ADVICE[what]}",
            )

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx: RuleContext) -> None:
        if isinstance(node.operator, cst.Not) and id(node) not in self._covered:
            self._check(node.expression, "not", ctx)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if node.args and ctx.qualname(node.func) == "builtins.bool":
            self._check(node.args[0].value, "bool()", ctx)
