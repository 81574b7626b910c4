"""64-bit dtypes asked for by name, and the NumPy arrays built with one (JAX501): with x64 off (the default)
every `jnp` function converts such an array to 32 bits, silently (`np.ones(3, dtype=np.float64)` given to
`jnp.where` comes back float32). NumPy's own default float64 (`np.ones(3)`, `np.linspace(0, 1)`) is not
asked for by name and is not tracked: giving it to JAX is what almost every program does, on purpose.

A dtype expression is wide when it names `float64`/`complex128` (`np.float64`, `jnp.double`, `"f8"`,
`np.dtype("float64")`), or is a name bound to one (a `dtype` value: `values.abstract.Value(kind="dtype",
literal=width)`). A loop over a literal (`for dt in (jnp.float32, jnp.float64)`) binds its target to the
wide one: some iteration surely runs with it, as some path runs with any dtype JAX501 reads.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import argument, string_value
from ..semantics.library import DTYPE_CONSTRUCTORS, WIDE_DTYPES, WIDE_STRINGS
from .abstract import Value

_WIDER = ("complex128", "float64")  # the wider first: what mixing them with NumPy arrays gives


def dtype_width(expression: cst.BaseExpression, scope: Any) -> str | None:
    """The 64-bit dtype ("float64", "complex128") `expression` asks for by name; else None."""
    node: Any = expression  # the checker does not narrow on `type(node) is X`
    kind = type(node)
    if kind is cst.SimpleString:
        text = string_value(node)
        return WIDE_STRINGS.get(text) if isinstance(text, str) else None
    if kind is cst.Call:
        if len(node.args) == 1 and scope.qualname(node.func) in DTYPE_CONSTRUCTORS:
            return dtype_width(node.args[0].value, scope)
        return None
    if kind is not cst.Name and kind is not cst.Attribute:
        return None
    name = scope.qualname(node)
    if name is not None:
        return WIDE_DTYPES.get(name)
    if kind is cst.Name:
        held = scope.lookup_value(node.value)
        if held.kind == "dtype":
            return str(held.literal)
        if held.kind == "str" and isinstance(held.literal, str):
            return WIDE_STRINGS.get(held.literal)
    return None


def dtype_value(node: cst.BaseExpression, scope: Any) -> Value | None:
    """The structured value of a dtype expression asked for as 64-bit by name; None otherwise."""
    if type(node) is not cst.Attribute and type(node) is not cst.Call:
        return None  # a name has its own value; a string is a `str` value
    width = dtype_width(node, scope)
    return Value(0, "dtype", width) if width is not None else None


def requested_width(call: cst.Call, scope: Any, position: int | None = None) -> str | None:
    """The 64-bit dtype a NumPy call asks for by name in its `dtype=` (or argument `position`)."""
    given = argument(call, position, "dtype")
    return dtype_width(given.value, scope) if given is not None else None


def wider(widths: list[str | None]) -> str | None:
    """What NumPy's promotion gives an array computed from arrays of these dtypes (None: not asked for)."""
    return next((w for w in _WIDER if w in widths), None)


def loop_dtype(items: list[cst.BaseExpression], scope: Any) -> Value | None:
    """A loop target over literal items one of which asks for a 64-bit dtype: that dtype."""
    width = wider([dtype_width(item, scope) for item in items])
    return Value(0, "dtype", width) if width is not None else None
