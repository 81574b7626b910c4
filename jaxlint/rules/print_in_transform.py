"""JAX201 print-in-transform."""

from __future__ import annotations

import libcst as cst

from ..analysis import DEBUG_PRINT, STR_CONVERSIONS, STRICT, RuleContext
from ..fix import replace
from .base import Rule
from .common import culprit, moved_values_safety, per_run, shows_tracer, values_format_at_run_time
from .edits import Piece, quote_of, reference_to, string_literal, string_pieces, template


def _unwrap_str(value: cst.BaseExpression, ctx: RuleContext) -> Piece:
    """`str(x)` prints as `{}` with `x`, `repr(x)` as `{!r}`: the conversion then happens at run time."""
    if (
        isinstance(value, cst.Call)
        and len(value.args) == 1
        and not value.args[0].keyword
        and not value.args[0].star
    ):
        name = ctx.qualname(value.func)
        if name in STR_CONVERSIONS:
            return Piece(value=value.args[0].value, conversion=STR_CONVERSIONS[name])
    return Piece(value=value)


class PrintInTransform(Rule):
    code = "JAX201"
    name = "print-in-transform"
    summary = (
        "`print(...)` of a traced value inside a transformation: runs once at trace time and shows a tracer"
    )
    confirmable = True
    fix_safety = "safe"
    doc = """
## What it does
Flags `print(...)` calls that show a traced value (directly, in an f-string, through `str()`/`repr()`,
`.format()` or `%`) inside `jax.jit`, `vmap`, `pmap`, `checkpoint` or a `lax` control-flow body, and in the
helpers those call with traced arguments. A flax.linen Module's `__call__` counts where a jitted apply of it
is seen (`jax.jit(model.apply)`, a `TrainState`'s `apply_fn` in a jitted step, `nn.jit`, `model.apply`
inside a jitted function): there its inputs, its parameters (`self.param(...)`) and what its layers return on
them (`nn.Dense(3)(x)`) are tracers. A Module applied only eagerly prints values and is not flagged.

Not flagged: `print` outside transformations; in `jax.debug.callback`, `jax.pure_callback` and
`jax.io_callback` targets (they run on the host with real values); prints that show only static values
(`print("compiling", x.shape)` is a deliberate trace-time message); and prints under `jax.grad` alone, which
runs the Python function on every call, so the print does run each time and shows the value (as
`GradTracer(primal=[1. 1.], ...)`: noisy, but not wrong). Under `jit(grad(f))` it is flagged.

## Why is this bad
Under `jit` Python runs only while JAX traces the function: the print fires once per compilation, not on
every call, and what it prints is an abstract tracer such as `Traced<ShapedArray(float32[3])>`, not the
numbers. In a `lax.scan` or `fori_loop` body it prints once, not once per iteration.

## Example
```python
@jax.jit
def step(x):
    print("x =", x)
    return x * 2
```

## Use instead
```python
@jax.jit
def step(x):
    jax.debug.print("x = {}", x)
    return x * 2
```
`jax.debug.print` is staged into the computation and prints the runtime value on every call.

## Fix safety
The fix rewrites the call to `jax.debug.print` with one `{}` placeholder per positional argument, joined by
`sep` (string literals and f-string text are folded into the template, f-string fields become placeholders
with their conversion and format spec). It is **safe** when every value it passes is traced (or a literal):
the output changes from a tracer to the value, which is what the print was for. It is **unsafe** when a value
of unknown type is passed (older JAX releases accept only arrays and scalars as `jax.debug.print`
arguments). There is no fix with `file=`, `flush=`, a non-literal `sep`, an `end` other than a newline,
`*args`, or when the module has no top-level `import jax` (or `from jax import debug`) to refer to.

## References
- https://docs.jax.dev/en/latest/debugging/print_breakpoint.html
- https://docs.jax.dev/en/latest/_autosummary/jax.debug.print.html
"""

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.kind != STRICT or ctx.qualname(node.func) != "builtins.print":
            return
        for arg in node.args:
            if arg.keyword is not None:
                continue
            shown = shows_tracer(arg.value, ctx)
            if shown is not None:
                break
        else:
            return
        ctx.report(
            self,
            node,
            f"print() of traced value {culprit(shown, ctx)} inside {ctx.context}: runs once while JAX traces "
            f"the function, not on every {per_run(ctx)}, and shows a tracer instead of the value; "
            "use jax.debug.print",
            fix=self._fix(node, ctx),
        )

    @staticmethod
    def _fix(node: cst.Call, ctx: RuleContext):
        sep = " "
        positional: list[cst.BaseExpression] = []
        for arg in node.args:
            if arg.keyword is None:
                if arg.star:
                    return None
                positional.append(arg.value)
                continue
            key, value = arg.keyword.value, arg.value
            literal = value.evaluated_value if isinstance(value, cst.SimpleString) else None
            is_none = isinstance(value, cst.Name) and value.value == "None"
            if key == "sep" and (isinstance(literal, str) or is_none):
                sep = literal if isinstance(literal, str) else " "
            elif key != "end" or not (literal == "\n" or is_none):
                return None  # file=, flush=, or a sep/end that jax.debug.print cannot express
        pieces: list[Piece] = []
        for i, value in enumerate(positional):
            if i:
                pieces.append(Piece(text=sep))
            literal_pieces = string_pieces(value)
            if literal_pieces is not None:
                pieces.extend(literal_pieces)
            elif isinstance(value, (cst.FormattedString, cst.ConcatenatedString)):
                return None  # an f-string we cannot take apart
            else:
                pieces.append(_unwrap_str(value, ctx))
        if not values_format_at_run_time(pieces, ctx):
            return None
        # Literal braces before the first field become a string argument, not `{{`: jax.debug.print (0.10)
        # formats only if the template's first chunk ends in a field, so "a {{}} b {}" prints as written.
        first = next((i for i, p in enumerate(pieces) if p.value is not None), len(pieces))
        pieces = [
            Piece(value=cst.SimpleString(repr(p.text))) if i < first and set(p.text or "") & {"{", "}"} else p
            for i, p in enumerate(pieces)
        ]
        debug_print = reference_to(DEBUG_PRINT, ctx)
        if debug_print is None:
            return None
        text, values = template(pieces)
        literal = string_literal(text, quote_of(positional[0] if positional else None))
        args = [cst.Arg(cst.SimpleString(literal))] + [cst.Arg(v) for v in values]
        new = node.with_changes(func=debug_print, args=args, whitespace_before_args=cst.SimpleWhitespace(""))
        return replace(node, new, moved_values_safety(values, ctx))
