"""Python int literals and the integer JAX arrays they bound, for JAX503: with x64 off JAX computes integers in
int32, so a result the literals prove to lie outside int32 wraps around, and a Python int outside int32 given
to JAX raises OverflowError (`semantics.library.INT_CONVERSIONS`, `INT_FILLS`, `NARROW_INT_DTYPES`).

Only literals count: `2 ** 40`, `3_000_000_000`, `1 << 40`, a name bound once to one, and the standard library's
int constants (`sys.maxsize`: `semantics.library.INT_CONSTANTS`); `jnp.arange(100)` (values
0 to 99), `jnp.array(7)`, `jnp.array([1, 2, 3])`, `jnp.full(n, 5)`. Anything else is unknown and proves nothing.
"""

from __future__ import annotations

import libcst as cst

from ..context import RuleContext
from ..kinds import ARRAY
from ..semantics.library import INT_CONSTANTS, INT_CONVERSIONS, INT_FILLS, NARROW_INT_DTYPES

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
# A literal of more bits than this is not computed (`10 ** 10 ** 10`): such values are unknown.
_MAX_BITS = 4096
_MAX_DEPTH = 4

_LITERAL_OPS: dict[type, object] = {
    cst.Add: lambda a, b: a + b,
    cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b if b else None,
    cst.Modulo: lambda a, b: a % b if b else None,
    cst.Power: lambda a, b: _power(a, b),
    cst.LeftShift: lambda a, b: a << b if 0 <= b <= _MAX_BITS else None,
}


def fits_int32(value: int) -> bool:
    return INT32_MIN <= value <= INT32_MAX


def _power(base: int, exponent: int) -> int | None:
    if exponent < 0:
        return None  # a float
    if abs(base) > 1 and max(base.bit_length(), 1) * exponent > _MAX_BITS:
        return None
    return base**exponent


def literal_int(node: cst.BaseExpression, ctx: RuleContext, depth: int = 0) -> int | None:
    """The value of a Python int literal expression (`2 ** 40`, `-(1 << 31)`), or of a name bound once to one."""
    if depth > _MAX_DEPTH:
        return None
    if type(node) is cst.Integer:
        return int(node.value.replace("_", ""), 0)
    if type(node) is cst.UnaryOperation:
        value = literal_int(node.expression, ctx, depth + 1)
        if value is None:
            return None
        if type(node.operator) is cst.Minus:
            return -value
        return value if type(node.operator) is cst.Plus else None
    if type(node) is cst.BinaryOperation:
        op = _LITERAL_OPS.get(type(node.operator))
        if op is None:
            return None
        left = literal_int(node.left, ctx, depth + 1)
        right = literal_int(node.right, ctx, depth + 1) if left is not None else None
        if left is None or right is None:
            return None
        result = op(left, right)  # type: ignore[operator]
        return result if isinstance(result, int) and result.bit_length() <= _MAX_BITS else None
    if type(node) is cst.Name:
        bound = _bound_once(node, ctx)
        if bound is None:
            return INT_CONSTANTS.get(ctx.qualname(node) or "")  # `from sys import maxsize`
        return literal_int(bound, ctx, depth + 1)
    if type(node) is cst.Attribute:
        return INT_CONSTANTS.get(ctx.qualname(node) or "")  # `sys.maxsize`
    return None


def literal_ints(node: cst.BaseExpression, ctx: RuleContext) -> list[int] | None:
    """An int literal, or a flat list/tuple display of them: their values."""
    if type(node) is cst.List or type(node) is cst.Tuple:
        values = []
        for element in node.elements:
            value = literal_int(element.value, ctx) if type(element) is cst.Element else None
            if value is None:
                return None
            values.append(value)
        return values or None
    value = literal_int(node, ctx)
    return None if value is None else [value]


def int_bounds(node: cst.BaseExpression, ctx: RuleContext, depth: int = 0) -> tuple[int, int] | None:
    """(least, greatest) value of an int32 JAX array the literals build: `jnp.arange` of int literals,
    `jnp.array`/`jnp.asarray` of int literals, `jnp.full(shape, int literal)`; none given a dtype."""
    if depth > _MAX_DEPTH:
        return None
    if type(node) is cst.Name:
        bound = _bound_once(node, ctx)
        return int_bounds(bound, ctx, depth + 1) if bound is not None else None
    if type(node) is not cst.Call or any(a.star or a.keyword is not None for a in node.args):
        return None  # a dtype, or anything by keyword: not judged
    name = ctx.qualname(node.func)
    args = [a.value for a in node.args]
    if name == "jax.numpy.arange" and 1 <= len(args) <= 3:
        found = [literal_int(a, ctx) for a in args]
        ints = [v for v in found if v is not None]
        if len(ints) != len(found):
            return None
        start, stop, step = (0, ints[0], 1) if len(ints) == 1 else (*ints, 1)[:3]
        if step == 0 or len(range(start, stop, step)) == 0:
            return None
        last = range(start, stop, step)[-1]
        return min(start, last), max(start, last)
    if name in INT_CONVERSIONS and len(args) == 1:
        listed = literal_ints(args[0], ctx)
        if listed is None or not all(fits_int32(v) for v in listed):
            return None
        return min(listed), max(listed)
    position = INT_FILLS.get(name or "")
    if position is not None and len(args) == position + 1:
        fill = literal_int(args[position], ctx)
        return (fill, fill) if fill is not None and fits_int32(fill) else None
    return None


def narrow_int_array(node: cst.BaseExpression, ctx: RuleContext, depth: int = 0) -> bool:
    """A JAX array of at most 32-bit integers: bounded by literals (`int_bounds`), built by a `jnp` function
    with such a `dtype=`, or `x.astype(jnp.int32)` of a JAX array."""
    if depth > _MAX_DEPTH:
        return False
    if int_bounds(node, ctx) is not None:
        return True
    if type(node) is cst.Name:
        value = _bound_once(node, ctx)
        return value is not None and narrow_int_array(value, ctx, depth + 1)
    if type(node) is not cst.Call:
        return False
    func = node.func
    if type(func) is cst.Attribute and func.attr.value == "astype" and len(node.args) == 1:
        return bool(ctx.flags(func.value) & ARRAY) and _narrow_dtype(node.args[0].value, ctx)
    name = ctx.qualname(func)
    if name is None or not name.startswith("jax.numpy."):
        return False
    dtype = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "dtype"), None)
    return dtype is not None and _narrow_dtype(dtype, ctx)


def _narrow_dtype(dtype: cst.BaseExpression, ctx: RuleContext) -> bool:
    if type(dtype) is cst.SimpleString:
        return dtype.evaluated_value in NARROW_INT_DTYPES
    return ctx.qualname(dtype) in NARROW_INT_DTYPES


def _bound_once(name: cst.Name, ctx: RuleContext) -> cst.BaseExpression | None:
    """The value of a name bound once by `name = value`, in this function or (not local here) the module."""
    unit = ctx.unit
    if unit is not ctx.index.root and name.value in unit.local_names:
        return unit.single_assignment(name.value)
    return ctx.index.root.single_assignment(name.value)
