"""JAX101 traced-control-flow."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    ARRAY,
    COMPARING_BUILTINS,
    STRICT,
    TRACED,
    RuleContext,
    display_name,
    pytree_data_field,
    tracer_check,
)
from .base import Rule
from .common import culprit


class TracedControlFlow(Rule):
    code = "JAX101"
    trace_error = True
    name = "traced-control-flow"
    summary = (
        "Python control flow (`if`, `while`, `assert`, ternary, `and`/`or`/`not`, `bool()`) on a traced value"
    )
    confirmable = True
    doc = """
## What it does
Flags Python `if`/`elif`/`while`/`assert`, conditional expressions, `and`/`or`/`not` and `bool()` whose
condition is a traced value inside `jax.jit`, `vmap`, `pmap`, `checkpoint` or a `lax` control-flow body,
and the builtins that test truth or compare behind the scenes: `max`/`min` of traced values (several, or the
items of one traced array), `sorted`, `any` and `all`, and a chained comparison (`lo < x <= hi`) whose
earlier links compare traced arrays, wherever it is used.

## Why is this bad
Under these transformations arrays are abstract tracers: their values do not exist yet when Python runs
the function. Python needs a concrete `True`/`False`, so JAX raises `TracerBoolConversionError` (a
`ConcretizationTypeError`) the first time the function is traced. Conditions on static values — shapes,
dtypes, `static_argnums` parameters, `x is None` — are fine, and so is control flow under `jax.grad` alone,
whose primal values are concrete. `max(a, b)` runs `b > a` and keeps the winner, `sorted` compares pairs and
`any`/`all` call `bool()` on each item, so each raises the same error; `sum` only adds and is fine. A chain
`lo < x <= hi` is `(lo < x) and (x <= hi)`: the truth of each link but the last is tested, even in
`mask = lo < x <= hi`. Under `jit` an operation on a JAX array closed over (a module-level `jnp` constant)
is staged out too: `if np.all(c < 0):` raises. A call
with `key=` is not flagged (the key may be static), nor a bare parameter that may be a pytree, nor code in a
`try` whose handler catches the error (`except jax.errors.ConcretizationTypeError:`, `TypeError`, `Exception`).

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
parameters with `static_argnums`/`static_argnames`; a flag that selects behaviour (`train`, `deterministic`,
`is_training`, ...) gets that advice instead of `jnp.where`: make it static, or a Module field. Functions a
library runs under its trace are checked there too (the library table, `analysis/semantics/library.py`): optax
schedules, numpyro models (sample sites are tracers; the model's own arguments stay concrete), objectives of
`jax.scipy.optimize.minimize`, `jax.jit(model.apply)` of a flax Module, a TrainState's `apply_fn`, and
`jax.jit(hk.transform(f).apply)`. For the builtins: `jnp.maximum`/`jnp.minimum` (two values),
`jnp.max`/`jnp.min`, `jnp.sort`, `jnp.any`, `jnp.all`.

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
        "chained comparison": "write each comparison apart and combine them with jnp.logical_and",
    }

    def __init__(self) -> None:
        self._covered: set[int] = set()
        self._elifs: set[int] = set()
        # id of a comprehension's element -> the builtin that tests it (`any(v > 0 for v in xs)`)
        self._items: dict[int, str] = {}

    def _check(self, test: cst.BaseExpression, what: str, ctx: RuleContext) -> None:
        # A bare traced parameter may be a pytree (`if params:` is legal); only arrays are flagged.
        if ctx.kind < STRICT or ctx.flags(test) & (TRACED | ARRAY) != TRACED | ARRAY:
            return
        if tracer_check(test, ctx) is not None:
            return  # `_is_tracer(x) or x`: decided by what a tracer is, the traced part is never tested
        self._cover(test)
        ctx.report(
            self,
            test,
            f"Python '{what}' on traced value {culprit(test, ctx)} inside {ctx.context}: "
            f"raises TracerBoolConversionError; "
            f"{_flag_advice(test) or _field_advice(test, ctx) or self._ADVICE[what]}",
        )

    def _cover(self, test: cst.BaseExpression) -> None:
        """The statement-level report covers `and`/`or`/`not` inside the condition."""
        stack: list[cst.CSTNode] = [test]
        while stack:
            node = stack.pop()
            if type(node) is cst.Comparison:
                self._covered.add(id(node))
            elif type(node) is cst.BooleanOperation or type(node) is cst.UnaryOperation:
                self._covered.add(id(node))
                stack.extend(
                    [node.left, node.right] if isinstance(node, cst.BooleanOperation) else [node.expression]
                )

    def visit_If(self, node: cst.If, ctx: RuleContext) -> None:
        if type(node.orelse) is cst.If:
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
            what = "and" if type(node.operator) is cst.And else "or"
            self._cover(node)
            ctx.report(
                self,
                node.left,
                f"Python '{what}' on traced value {culprit(node.left, ctx)} inside {ctx.context}: "
                f"raises TracerBoolConversionError; {_flag_advice(node.left) or self._ADVICE[what]}",
            )

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx: RuleContext) -> None:
        if type(node.operator) is cst.Not and id(node) not in self._covered:
            self._check(node.expression, "not", ctx)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if id(node) in self._items:
            self._item(node, ctx)
        if not node.args:
            return
        name = ctx.qualname(node.func)
        if name == "builtins.bool":
            self._check(node.args[0].value, "bool()", ctx)
        elif name in COMPARING_BUILTINS:
            self._builtin(node, name, ctx)

    def visit_Comparison(self, node: cst.Comparison, ctx: RuleContext) -> None:
        if id(node) in self._items:
            self._item(node, ctx)
        if len(node.comparisons) > 1 and ctx.kind >= STRICT and id(node) not in self._covered:
            self._chain(node, ctx)

    def _chain(self, node: cst.Comparison, ctx: RuleContext) -> None:
        """`lo < x <= hi` used as a value: Python tests the truth of each link but the last (`lo < x and x <=
        hi`), which raises for a traced array whatever the chain is used for."""
        left = node.left
        for link in node.comparisons[:-1]:
            pair = cst.Comparison(left=left, comparisons=[link])
            if ctx.flags(pair) & (TRACED | ARRAY) == TRACED | ARRAY:
                self._covered.add(id(node))
                ctx.report(
                    self,
                    node,
                    f"Python chained comparison on traced value {culprit(pair, ctx)} inside {ctx.context}: "
                    f"tests the truth of each link but the last, and raises TracerBoolConversionError; "
                    f"{self._ADVICE['chained comparison']}",
                )
                return
            left = link.comparator

    def _builtin(self, node: cst.Call, name: str, ctx: RuleContext) -> None:
        if ctx.kind < STRICT or any(a.star or a.keyword is not None for a in node.args):
            return  # `key=` may map items to static values; `*xs` is unknown
        what = display_name(name) + "()"
        several, one = COMPARING_BUILTINS[name]
        values = [a.value for a in node.args]
        if len(values) > 1:
            if several is None:
                return
            traced = [v for v in values if self._is_traced_array(v, ctx)]
            if traced:
                self._report_builtin(node, traced[0], what, "compares", several, ctx)
            return
        items = values[0]
        if type(items) is cst.GeneratorExp or type(items) is cst.ListComp or type(items) is cst.SetComp:
            self._items[id(items.elt)] = name  # judged when the walk reaches the element, in its own scope
            return
        if type(items) is cst.List or type(items) is cst.Tuple or type(items) is cst.Set:
            traced = [e.value for e in items.elements if self._is_traced_array(e.value, ctx)]
            if traced:
                self._report_builtin(node, traced[0], what, self._verb(name), one, ctx)
        elif self._is_traced_array(items, ctx):
            # Iterating a traced array gives traced rows: comparing or testing them needs their values.
            self._report_builtin(node, items, what, self._verb(name), one, ctx)

    def _item(self, node: cst.BaseExpression, ctx: RuleContext) -> None:
        name = self._items.pop(id(node))
        if ctx.kind >= STRICT and self._is_traced_array(node, ctx):
            what = display_name(name) + "()"
            self._report_builtin(node, node, what, self._verb(name), COMPARING_BUILTINS[name][1], ctx)

    @staticmethod
    def _verb(name: str) -> str:
        return "tests the truth of" if name in ("builtins.any", "builtins.all") else "compares"

    @staticmethod
    def _is_traced_array(node: cst.BaseExpression, ctx: RuleContext) -> bool:
        return ctx.flags(node) & (TRACED | ARRAY) == TRACED | ARRAY

    def _report_builtin(
        self,
        node: cst.CSTNode,
        value: cst.BaseExpression,
        what: str,
        verb: str,
        advice: str,
        ctx: RuleContext,
    ) -> None:
        ctx.report(
            self,
            node,
            f"Python '{what}' {verb} traced value {culprit(value, ctx)} inside {ctx.context}: "
            f"raises TracerBoolConversionError; {advice}",
        )


# Parameter names that select behaviour (a training/evaluation switch): the fix is to make them static, not
# to compute both branches with jnp.where.
_MODE_FLAGS = frozenset(
    "train training is_training is_train deterministic eval is_eval evaluate inference use_running_average".split()
)


def _field_advice(test: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """`if self.enabled:` on a data field of a traced pytree (an equinox Module's `enabled: bool`): the field is
    traced with the instance; declared static, it stays the Python value it is."""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    if not pytree_data_field(test, ctx):
        return None
    return f"{culprit(test, ctx)} is a data field of a traced pytree: declare it a static field of its class"


def _flag_advice(test: cst.BaseExpression) -> str | None:
    """`if train:` / `if not deterministic:` on a traced mode flag: advice to make it static."""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    if type(test) is not cst.Name or test.value not in _MODE_FLAGS:
        return None
    name = test.value
    return (
        f"'{name}' selects behaviour: make it static (`static_argnames=(\"{name}\",)` on the jit, "
        f"`nn.jit(..., static_argnums=...)`, or a Module field)"
    )
