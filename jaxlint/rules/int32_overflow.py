"""JAX503 int32-overflow."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    INT32_MAX,
    INT32_MIN,
    INT_BOUNDS,
    INT_CONVERSIONS,
    INT_FILLS,
    INT_OPERANDS,
    RuleContext,
    enables_x64,
    fits_int32,
    int_bounds,
    is_program,
    literal_int,
    literal_ints,
    narrow_int_array,
)
from ..syntax import argument, source_of
from .base import Rule

# Operators whose Python-int operand JAX converts to int32 (outside it: OverflowError).
_CONVERTING_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Power)
# Operators whose result can leave the operands' range.
_GROWING_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.Power)
_ADVICE = 'enable x64 (jax.config.update("jax_enable_x64", True)) or compute in a float dtype'


class Int32Overflow(Rule):
    code = "JAX503"
    name = "int32-overflow"
    summary = (
        "Integer values the literals prove outside int32 in a module that never enables x64: wraps or raises"
    )
    severity = "warning"
    doc = """
## What it does
In a program that never enables x64 (the same programs as JAX501: scripts, notebooks, `__main__` modules),
flags integer JAX computations whose literals prove a value outside int32 (-2**31 to 2**31-1):
- a Python int outside int32 converted by `jnp.array`, `jnp.asarray` or `jnp.int32` (no `dtype=`);
- the same as the fill value of `jnp.full(shape, value)` (no `dtype=`);
- the same as a bound of `jax.random.randint` (`minval`, `maxval`; no `dtype=`);
- the same as an operand of an elementwise `lax` or `jnp` operation (`lax.neg(OFFSET)` with `OFFSET = 1 << 32`,
  `jnp.add(x, 2**40)`), which converts it to int32 first;
- the same combined (`+ - * // % **`) with an integer JAX array of at most 32 bits: `jnp.arange` of int
  literals, `jnp.array` of int literals, a `jnp` function given `dtype=jnp.int32` (or another narrow int),
  `x.astype(jnp.int32)`;
- arithmetic (`+ - * **`) with an int literal on such an array whose values the literals bound
  (`jnp.arange(100) ** 10`: up to 99**10), when the result leaves int32.
Only literals prove anything (and `sys.maxsize`, 2**63 - 1 wherever JAX runs): `jnp.arange(n) ** 10` with `n`
unknown, float literals and float arrays are not flagged.

## Why is this bad
With x64 off (JAX's default), integer arrays are int32. A Python int outside int32 cannot be converted:
`jnp.array(2**40)` and `jnp.arange(5) * 2**40` raise `OverflowError`; as a fill value it is weakly typed and
silently wraps (`jnp.full(3, 2**40)` is zeros). Arithmetic that leaves int32 silently wraps around:
`jnp.arange(100) ** 10` ends in 1426853353, not 99**10 (all verified on jax 0.10.2, eagerly and under jit).

## Example
```python
import jax.numpy as jnp

powers = jnp.arange(100) ** 10  # wraps around past 2**31 - 1
```

## Use instead
```python
import jax

jax.config.update("jax_enable_x64", True)  # at program start: integers are int64
powers = jnp.arange(100) ** 10
```
or compute in floating point (`jnp.arange(100.0) ** 10`) when exact integers are not needed.

## Fix safety
No automatic fix: enabling x64 changes every default dtype in the program.

## References
- https://docs.jax.dev/en/latest/default_dtypes.html
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#double-64bit-precision
"""

    def __init__(self) -> None:
        self._checked: bool | None = None

    def _checks(self, ctx: RuleContext) -> bool:
        """A program that never mentions x64 (library code leaves x64 to the application, as JAX501 does)."""
        if self._checked is None:
            module = ctx.index.module
            self._checked = not enables_x64(ctx) and is_program(module, ctx)
        return self._checked

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualname(node.func)
        if name in INT_BOUNDS:
            self._bounds(node, name, ctx)
            return
        if name in INT_OPERANDS:
            self._operands(node, ctx)
            return
        if name not in INT_CONVERSIONS and name not in INT_FILLS:
            return
        if any(a.star or a.keyword is not None for a in node.args):
            return  # a dtype (or anything by keyword) decides otherwise
        args = [a.value for a in node.args]
        if name in INT_CONVERSIONS:
            if len(args) != 1:
                return
            values = literal_ints(args[0], ctx)
            outside = next((v for v in values or () if not fits_int32(v)), None)
            if outside is not None and self._checks(ctx):
                ctx.report(
                    self,
                    node,
                    f"Python int {_show(outside)} is outside int32, and this module never enables x64: "
                    f"{source_of(node.func)}(...) raises OverflowError; {_ADVICE}",
                )
            return
        position = INT_FILLS[name]
        if len(args) != position + 1:
            return
        value = literal_int(args[position], ctx)
        if value is not None and not fits_int32(value) and self._checks(ctx):
            ctx.report(
                self,
                args[position],
                f"fill value {_show(value)} is outside int32, and this module never enables x64: "
                f"{source_of(node.func)}(...) silently wraps it around ({_wrap(value)}); {_ADVICE}",
            )

    def _operands(self, node: cst.Call, ctx: RuleContext) -> None:
        """`lax.neg(OFFSET)` with `OFFSET = 1 << 32`: an operand JAX converts to int32 first."""
        for arg in node.args:
            if arg.star or arg.keyword is not None:
                continue
            value = literal_int(arg.value, ctx)
            if value is not None and not fits_int32(value) and self._checks(ctx):
                ctx.report(
                    self,
                    arg.value,
                    f"Python int {_show(value)} is outside int32, and this module never enables x64: "
                    f"{source_of(node.func)}(...) converts it to int32 and raises OverflowError; {_ADVICE}",
                )
                return

    def _bounds(self, node: cst.Call, name: str, ctx: RuleContext) -> None:
        if any(a.star or (a.keyword is not None and a.keyword.value == "dtype") for a in node.args):
            return  # a dtype decides otherwise
        for position, keyword in INT_BOUNDS[name]:
            found = argument(node, position, keyword)
            value = literal_int(found.value, ctx) if found is not None else None
            if found is not None and value is not None and not fits_int32(value) and self._checks(ctx):
                ctx.report(
                    self,
                    found.value,
                    f"{keyword} {_show(value)} is outside int32, and this module never enables x64: "
                    f"{source_of(node.func)}(...) converts its bounds to int32 and raises OverflowError; keep them "
                    "within int32 (at most 2**31 - 1) or enable x64",
                )

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx: RuleContext) -> None:
        op = type(node.operator)
        if not issubclass(op, _CONVERTING_OPS):
            return
        left = literal_int(node.left, ctx)
        right = literal_int(node.right, ctx)
        if (left is None) == (right is None):
            return  # two literals is Python arithmetic; no literal proves nothing
        literal, array = (left, node.right) if left is not None else (right, node.left)
        assert literal is not None
        if not fits_int32(literal):
            if narrow_int_array(array, ctx) and self._checks(ctx):
                ctx.report(
                    self,
                    node,
                    f"Python int {_show(literal)} is outside int32, and this module never enables x64: combined "
                    f"with the int32 array `{source_of(array, 30)}` it raises OverflowError; {_ADVICE}",
                )
            return
        if not issubclass(op, _GROWING_OPS):
            return
        bounds = int_bounds(array, ctx)
        if bounds is None:
            return
        reached = _extreme(op, bounds, literal, literal_on_left=left is not None)
        if reached is not None and not fits_int32(reached) and self._checks(ctx):
            ctx.report(
                self,
                node,
                f"`{source_of(node, 40)}` reaches {_show(reached)}, outside int32, and this module never enables "
                f"x64: JAX computes it in int32 and the result silently wraps around; {_ADVICE}",
            )


def _extreme(op: type, bounds: tuple[int, int], literal: int, literal_on_left: bool) -> int | None:
    """The value of the result farthest outside int32 (None when unknown: a negative power, a huge one)."""
    lo, hi = bounds
    if op is cst.Power:
        if literal_on_left or literal < 0:
            return None
        if max(abs(lo), abs(hi)) > 1 and max(abs(lo), abs(hi)).bit_length() * literal > 4096:
            return 2**4096  # far outside
        candidates = [lo**literal, hi**literal]
    elif op is cst.Add:
        candidates = [lo + literal, hi + literal]
    elif op is cst.Multiply:
        candidates = [lo * literal, hi * literal]
    elif literal_on_left:  # literal - array
        candidates = [literal - lo, literal - hi]
    else:
        candidates = [lo - literal, hi - literal]
    return max(candidates, key=lambda v: max(v - INT32_MAX, INT32_MIN - v))


def _show(value: int) -> str:
    if abs(value) < 10**15:
        return f"{value:,}".replace(",", "_")
    if value.bit_length() > 1000:
        return "more than 2**1000" if value > 0 else "less than -2**1000"
    return f"{float(value):.3g}"


def _wrap(value: int) -> str:
    wrapped = (value - INT32_MIN) % 2**32 + INT32_MIN
    return f"to {wrapped:,}".replace(",", "_")
