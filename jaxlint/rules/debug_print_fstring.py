"""JAX203 debug-print-fstring."""

from __future__ import annotations

import libcst as cst

from ..analysis import DEBUG_PRINT, STRICT, RuleContext
from ..fix import replace
from .base import Rule
from .common import culprit, moved_values_safety, shows_tracer, values_format_at_run_time
from .edits import quote_of, string_literal, string_pieces, template

_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _format_argument(node: cst.Call) -> cst.Arg | None:
    """The `fmt` argument of a jax.debug.print call."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "fmt":
            return arg
    positional = [a for a in node.args if a.keyword is None]
    return positional[0] if positional and not positional[0].star else None


class DebugPrintFstring(Rule):
    code = "JAX203"
    name = "debug-print-fstring"
    summary = '`jax.debug.print(f"{x}")`: the f-string formats the tracer at trace time'
    confirmable = True
    fix_safety = "safe"
    doc = """
## What it does
Flags `jax.debug.print` calls inside `jax.jit`, `vmap`, `pmap`, `checkpoint` or a `lax` body whose format
string is already formatted in Python with a traced value: an f-string field, `"...".format(x)` or
`"..." % x`. Static fields (`f"layer {i}: {{}}"` with a Python `i`) are fine and not flagged.

## Why is this bad
The f-string is evaluated when Python runs the function, that is while JAX traces it, so it formats the
tracer's text (`Traced<ShapedArray(float32[])>`) into a constant string. `jax.debug.print` then prints that
constant on every call: the values never show. `jax.debug.print` formats its own arguments at run time;
that is what the `{}` placeholders are for.

## Example
```python
@jax.jit
def step(x):
    jax.debug.print(f"x = {x}")
    return x * 2
```

## Use instead
```python
@jax.jit
def step(x):
    jax.debug.print("x = {}", x)
    return x * 2
```

## Fix safety
For f-strings (and implicit concatenations with them) the fix turns every field into a `{}` placeholder,
keeping its conversion and format spec (`{x!r}`, `{x:.3f}`, `{x=}`), and passes the field's expression as an
argument; for `"...".format(a, b)` it passes the format's arguments to `jax.debug.print` directly. It is
**safe** when every value moved is traced or a literal, **unsafe** when a static value of unknown type is
moved (older JAX releases accept only arrays and scalars as `jax.debug.print` arguments). There is no fix
when the call already has other arguments (besides `ordered=`), when the f-string's literal text contains
braces, for nested format specs, and for `%` formatting.

## References
- https://docs.jax.dev/en/latest/debugging/print_breakpoint.html
- https://docs.jax.dev/en/latest/_autosummary/jax.debug.print.html
"""

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.kind != STRICT or ctx.qualname(node.func) != DEBUG_PRINT:
            return
        fmt = _format_argument(node)
        if fmt is None:
            return
        shown = self._formatted_tracer(fmt.value, ctx)
        if shown is None:
            return
        ctx.report(
            self,
            fmt.value,
            f"jax.debug.print format string built in Python from traced value {culprit(shown, ctx)} inside "
            f"{ctx.context}: it is formatted at trace time and prints the tracer, not the value; pass the "
            "value as an argument with a {} placeholder",
            fix=self._fix(node, fmt, ctx),
        )

    @staticmethod
    def _formatted_tracer(node: cst.BaseExpression, ctx: RuleContext) -> cst.BaseExpression | None:
        """The traced value that Python formats into the format string, if any."""
        if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
            return shows_tracer(node, ctx)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value == "format" and isinstance(node.func.value, _STRINGS):
                return shows_tracer(node, ctx)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            if isinstance(node.left, _STRINGS):
                return shows_tracer(node, ctx)
        return None

    @staticmethod
    def _fix(node: cst.Call, fmt: cst.Arg, ctx: RuleContext):
        others = [a for a in node.args if a is not fmt]
        if any(a.keyword is None or a.keyword.value != "ordered" for a in others):
            return None  # existing arguments: their placeholders would mix with the moved ones
        value = fmt.value
        if isinstance(value, cst.Call):  # "...".format(a, b): hand a, b to jax.debug.print
            if not isinstance(value.func, cst.Attribute) or not isinstance(
                value.func.value, cst.SimpleString
            ):
                return None
            if any(a.keyword is not None or a.star for a in value.args):
                return None
            values = [a.value for a in value.args]
            head = cst.Arg(value.func.value)
        else:
            pieces = string_pieces(value)
            if pieces is None or any(p.text is not None and ("{" in p.text or "}" in p.text) for p in pieces):
                return None
            if not values_format_at_run_time(pieces, ctx):
                return None
            text, values = template(pieces)
            head = cst.Arg(cst.SimpleString(string_literal(text, quote_of(value))))
        if fmt.keyword is not None:
            return None  # fmt=f"..." with values after it would be positional-after-keyword
        args = (
            [head]
            + [cst.Arg(v) for v in values]
            + [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in others]
        )
        new = node.with_changes(args=args)
        return replace(node, new, moved_values_safety(values, ctx))
