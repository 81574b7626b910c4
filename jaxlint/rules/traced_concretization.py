"""JAX102 traced-concretization."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    ARRAY,
    CONVERTING_BUILTINS,
    GRAD,
    HOLDS_TRACED,
    LIST,
    MATH,
    NUMPY,
    NUMPY_DELEGATING,
    NUMPY_DTYPE,
    NUMPY_JNP_NAMESAKES,
    NUMPY_RANDOM,
    NUMPY_SHAPE_ONLY,
    STATIC_INT_METHODS,
    STATIC_INTS,
    STRICT,
    TRACED,
    RuleContext,
    display_name,
    is_numpy_array,
)
from ..fix import UNSAFE, replace
from .base import Rule
from .common import culprit
from .edits import name_is_free, reference_to

# The library table's parameters JAX reads as Python ints, and NumPy functions that accept tracers.
_STATIC_INTS, _STATIC_INT_METHODS, _NUMPY_SAFE = STATIC_INTS, STATIC_INT_METHODS, NUMPY_SHAPE_ONLY


class TracedConcretization(Rule):
    code = "JAX102"
    trace_error = True
    name = "traced-concretization"
    summary = "A traced value converted to a Python or NumPy value (`float()`, `int()`, `.item()`, `np.asarray`, `range()`)"
    confirmable = True
    fix_safety = UNSAFE
    doc = """
## What it does
Flags conversions of traced values to concrete Python or NumPy values inside transformed code:
`float()`, `int()`, `complex()`, `.item()`, `.tolist()`, `np.asarray()`/`np.array()` and other NumPy functions,
`math.*` functions, `range()` with a traced bound, and indexing a Python list or a NumPy array (a name bound
to a NumPy constructor once or on every path, or a dict entry holding one) with a traced index. NumPy functions that call the array's own method
(`np.sum(x)` runs `x.sum()`: `sum`, `mean`, `max`, `argmax`, `reshape`, `transpose`, ...) work on tracers and
are not flagged; on a list or tuple display of tracers (`np.array([[a, b]])`, `np.stack([d[k] for k in names])`)
NumPy converts each item, and that is flagged.
A call of a same-module helper (or a method on `self`, or in project mode another module's helper) counts as
traced when every `return` of the helper gives a `jnp`/`jax.nn`/`jax.random` result (directly, by arithmetic
or array methods, or through another such helper): under `jit` those are tracers even on constants, so
`float(loss_fn(params, x))` raises too; a helper whose every `return` is a tuple of such results gives tracers
to `a, b = helper(x)`. Helpers that are decorated or sometimes return Python values are not judged.

It also flags traced values where JAX needs a static Python int: the shape of `jnp.zeros`/`ones`/`full`/
`empty`/`eye`/`identity`, the bounds of `jnp.arange`, `num` of `linspace`, the new shape of `reshape` (function
and method) and `broadcast_to`, `tile` reps, `repeat` counts without `total_repeat_length`, `split` sections,
`segment_sum` `num_segments`, `jax.nn.one_hot` `num_classes`, `lax.top_k` `k`, and slice bounds (`x[:n]`,
`x.at[i:i + 2]`). These fail for every kind of traced value, array or pytree, so a bare traced parameter is
flagged too. They live here rather than in JAX104 (dynamic-shape) because the error is the same as for
`int()`: a concrete value was needed and a tracer came.

## Why is this bad
A tracer has no value during tracing, so each of these raises: `ConcretizationTypeError` (`float`, `int`,
`.item()`, `.tolist()`), `TracerArrayConversionError` (NumPy functions) or `TracerIntegerConversionError`
(`range`, list indexing). Shapes and sizes raise `TypeError: Shapes must be 1D sequences of concrete values`
or `ConcretizationTypeError`, traced slice bounds `IndexError: Slice entries must be static integers`.
Under `jax.grad` alone the primal is concrete, so only `float()`, `complex()`,
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
Make sizes static (`static_argnums`, or derive them from `x.shape`), use `lax.dynamic_slice(x, (i,), (2,))`
for a window at a traced offset, and `jnp.where(jnp.arange(len(x)) < n, x, 0)` for a traced length.

## Fix safety
A NumPy function whose `jax.numpy` namesake computes the same values (`np.exp(x)`, `np.maximum(x, 0)`,
`np.concatenate([a, b])`: the library table's `NUMPY_JNP_NAMESAKES`) is replaced by it, through the module's
own import of `jax.numpy` (`jnp.exp(x)`), else of `jax` (`jax.numpy.exp(x)`), else with `import jax.numpy as
jnp` added after the module's imports (when the name `jnp` is used nowhere in the module). It is **unsafe**:
where the function also runs outside the trace, on NumPy inputs, it now returns a JAX array (32-bit unless x64
is enabled, on the default device) instead of a NumPy one. The other conversions have no automatic fix.

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
        fix: object = None,
    ) -> None:
        ctx.report(
            self,
            node,
            f"{what} on traced value {culprit(value, ctx)} inside {ctx.context}: raises {error}; {advice}",
            fix=fix,
        )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.kind < GRAD:
            return
        name = ctx.qualname(node.func)
        if ctx.kind >= STRICT:
            self._static_ints(node, name, ctx)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if name in CONVERTING_BUILTINS and positional:
            what, error, advice, under_grad = CONVERTING_BUILTINS[name]
            traced = [v for v in positional if ctx.traced(v)]
            if traced and (ctx.kind >= STRICT or under_grad):
                self._report(node, traced[0], what, error, advice, ctx)
            return
        if name is not None and (name.startswith(NUMPY) or name.startswith(MATH)):
            if name in _NUMPY_SAFE or name.startswith((NUMPY_RANDOM, NUMPY_DTYPE)):
                return
            traced = [t for t in (_traced_or_item(v, ctx) for v in positional) if t is not None]
            if not traced or (name in NUMPY_DELEGATING and traced[0] is positional[0]):
                return
            short = display_name(name)
            if name.startswith(MATH):
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
                    fix=_jnp_namesake(node, name, ctx),
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

    def _static_ints(self, node: cst.Call, name: str | None, ctx: RuleContext) -> None:
        """A traced value where JAX needs a Python int (a shape, size or count)."""
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if name in _STATIC_INTS:
            error, params, unless = _STATIC_INTS[name]
            if unless in keywords:
                return
            short = display_name(name)
            for position, keyword in params:
                value = keywords.get(keyword, positional[position] if position < len(positional) else None)
                traced = self._traced_int(value, ctx) if value is not None else None
                if traced is not None:
                    self._report_static(node, short, keyword, traced, error, ctx)
                    return
            return
        if type(node.func) is cst.Attribute and node.func.attr.value in _STATIC_INT_METHODS:
            error, unless = _STATIC_INT_METHODS[node.func.attr.value]
            if unless in keywords or not ctx.flags(node.func.value) & (TRACED | ARRAY):
                return  # only arrays' methods: another object's `.reshape` is its own business
            for value in [*positional, *(v for k, v in keywords.items() if k in ("shape", "repeats"))]:
                traced = self._traced_int(value, ctx)
                if traced is not None:
                    what = "new shape" if node.func.attr.value == "reshape" else "repeats"
                    self._report_static(node, f".{node.func.attr.value}", what, traced, error, ctx)
                    return

    @staticmethod
    def _traced_int(value: cst.BaseExpression, ctx: RuleContext) -> cst.BaseExpression | None:
        """The traced part of a size argument: the value itself, or an item of a shape tuple."""
        if ctx.traced(value):
            return value
        if isinstance(value, (cst.Tuple, cst.List)):
            return next(
                (e.value for e in value.elements if isinstance(e, cst.Element) and ctx.traced(e.value)), None
            )
        return None

    def _report_static(
        self,
        node: cst.CSTNode,
        what: str,
        param: str,
        value: cst.BaseExpression,
        error: str,
        ctx: RuleContext,
    ) -> None:
        ctx.report(
            self,
            node,
            f"{what}() needs a static {param}, got traced value {culprit(value, ctx)} inside {ctx.context}: "
            f"raises {error}; make it static (static_argnums, or derive it from .shape)",
        )

    def visit_Subscript(self, node: cst.Subscript, ctx: RuleContext) -> None:
        if ctx.kind < STRICT:
            return
        for element in node.slice:
            bounds = element.slice
            if isinstance(bounds, cst.Slice):
                for bound in (bounds.lower, bounds.upper, bounds.step):
                    if bound is not None and ctx.traced(bound):
                        ctx.report(
                            self,
                            node,
                            f"Slice bound on traced value {culprit(bound, ctx)} inside {ctx.context}: raises "
                            "IndexError (TracerIntegerConversionError on a list); use lax.dynamic_slice with a "
                            "static size, or jnp.where with a mask",
                        )
                        return
        if is_numpy_array(node.value, ctx):
            index = _traced_index(node, ctx)
            if index is not None:
                self._report(
                    node,
                    index,
                    "Indexing a NumPy array",
                    "TracerArrayConversionError",
                    "make the table a jnp array (jnp.asarray) and index that",
                    ctx,
                )
            return
        base = ctx.flags(node.value)
        if not base & LIST or base & (ARRAY | TRACED):
            return
        index = _traced_index(node, ctx)
        if index is not None:
            self._report(
                node,
                index,
                "Indexing a Python list",
                "TracerIntegerConversionError",
                "stack the list into an array (jnp.stack) and index that",
                ctx,
            )


def _traced_or_item(node: cst.BaseExpression, ctx: RuleContext) -> cst.BaseExpression | None:
    """The traced value NumPy would convert: the argument itself, or an item of a list or tuple display (at
    any depth: `np.array([[a, b]])`) or a list comprehension that holds tracers (`np.stack([d[k] for k in
    names])`): NumPy converts each item. A dict or another object holding tracers is not converted item by
    item (`np.array(d)` makes an object array)."""
    if ctx.traced(node):
        return node
    if type(node) is cst.List or type(node) is cst.Tuple:
        for element in node.elements:
            if type(element) is cst.Element:
                found = _traced_or_item(element.value, ctx)
                if found is not None:
                    return found
        return None
    if type(node) is cst.ListComp and ctx.flags(node) & HOLDS_TRACED:
        return node
    return None


def _traced_index(node: cst.Subscript, ctx: RuleContext) -> cst.BaseExpression | None:
    """The first plain (non-slice) index of the subscript that is traced."""
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Index) and ctx.traced(index.value):
            return index.value
    return None


def _jnp_namesake(node: cst.Call, name: str, ctx: RuleContext) -> object:
    """`np.exp(x)` -> `jnp.exp(x)` when jnp's namesake takes these arguments alike (positional only, no more
    than the table says), through the module's import of jax.numpy; None otherwise."""
    if name not in NUMPY_JNP_NAMESAKES or any(a.keyword is not None or a.star for a in node.args):
        return None
    most = NUMPY_JNP_NAMESAKES[name]
    if most is not None and len(node.args) > most:
        return None
    function = reference_to("jax." + name, ctx, nearest=True)
    if function is not None:
        return replace(node, node.with_changes(func=function), UNSAFE)
    if not name_is_free("jnp", ctx):
        return None
    function = cst.Attribute(cst.Name("jnp"), cst.Name(name.removeprefix("numpy.")))
    return replace(node, node.with_changes(func=function), UNSAFE, imports=("import jax.numpy as jnp",))
