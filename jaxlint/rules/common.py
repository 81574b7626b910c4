"""Message phrasing and judgments shared by several rules: naming the culprit, what a print shows.

Only rule modules import this; it holds no rule. Facts about the code belong in `jaxlint.analysis`.
"""

from __future__ import annotations

import libcst as cst

from ..analysis import CONTROL_FLOW, HOLDS_TRACED, STR_BUILTINS, TRACED, RuleContext, shows_fields
from ..fix import SAFE, UNSAFE
from ..syntax import source_of
from .edits import Piece


def culprit(node: cst.BaseExpression, ctx: RuleContext) -> str:
    """Name the traced value in an expression: the first traced name, else the expression's source.

    Only traced parts are entered: in `y.shape[0] // n` the culprit is `n`, not `y` (its shape is static)."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if (
            current is not node
            and isinstance(current, cst.BaseExpression)
            and not ctx.flags(current) & TRACED
        ):
            continue
        if isinstance(current, cst.Name) and ctx.flags(current) & TRACED:
            return f"'{current.value}'"
        if isinstance(current, cst.Attribute):
            stack.append(current.value)
        elif isinstance(current, cst.Call):
            stack.extend(reversed([a.value for a in current.args]))
            if isinstance(current.func, cst.Attribute):
                stack.append(current.func.value)
        elif isinstance(current, (cst.BinaryOperation, cst.BooleanOperation)):
            stack.extend([current.right, current.left])
        elif isinstance(current, cst.Comparison):
            stack.extend(reversed([current.left, *[c.comparator for c in current.comparisons]]))
        elif isinstance(current, cst.UnaryOperation):
            stack.append(current.expression)
        elif isinstance(current, cst.Subscript):
            stack.append(current.value)
    return f"`{source_of(node)}`"


def shows_tracer(node: cst.BaseExpression, ctx: RuleContext) -> cst.BaseExpression | None:
    """The traced expression whose text `node` would show when formatted at trace time, if any."""
    flags = ctx.flags(node)
    if flags & (TRACED | HOLDS_TRACED):
        if not flags & TRACED:
            value = ctx.value(node)
            if value.kind == "object" and not shows_fields(ctx.index, value.definition):
                return (
                    None  # an object built from tracers whose text shows no field: `<Report object at ...>`
                )
        return node
    if isinstance(node, cst.FormattedString):
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                found = shows_tracer(part.expression, ctx)
                if found is not None:
                    return found
        return None
    if isinstance(node, cst.ConcatenatedString):
        return shows_tracer(node.left, ctx) or shows_tracer(node.right, ctx)
    if isinstance(node, cst.Call):
        formats = ctx.qualname(node.func) in STR_BUILTINS or (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "format"
            and isinstance(node.func.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
        )
        if formats:
            for arg in node.args:
                found = shows_tracer(arg.value, ctx)
                if found is not None:
                    return found
        return None
    if isinstance(node, cst.BinaryOperation) and _is_text(node, ctx):
        return shows_tracer(node.left, ctx) or shows_tracer(node.right, ctx)
    return None


def _is_text(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """Whether `node` is a str built in Python: a literal, `str()`, `.format()`, `"%s" % x`, `"a" + b`."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return not isinstance(node, cst.SimpleString) or isinstance(node.evaluated_value, str)
    if isinstance(node, cst.Call):
        if ctx.qualname(node.func) in STR_BUILTINS:
            return True
        return (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "format"
            and _is_text(node.func.value, ctx)
        )
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.Modulo):
            return _is_text(node.left, ctx)
        if isinstance(node.operator, cst.Add):
            return _is_text(node.left, ctx) or _is_text(node.right, ctx)
    return False


_ITERATING_BODIES = tuple(flow.label for flow in CONTROL_FLOW.values() if flow.iterates)


def per_run(ctx: RuleContext) -> str:
    """What the traced code runs once per, from the user's side: a loop body's iteration or a call."""
    return "iteration" if any(body in ctx.context for body in _ITERATING_BODIES) else "call"


def values_format_at_run_time(pieces: list[Piece], ctx: RuleContext) -> bool:
    """False when a value handed over would still be formatted in Python (`"%s" % x`, `str(x) + "!"`)."""
    for piece in pieces:
        value = piece.value
        if value is None:
            continue
        if _is_text(value, ctx) or not ctx.flags(value) & (TRACED | HOLDS_TRACED):
            if shows_tracer(value, ctx) is not None:
                return False
    return True


def moved_values_safety(values: list[cst.BaseExpression], ctx: RuleContext) -> str:
    """SAFE when every value handed to jax.debug.print is traced or a literal, else UNSAFE.

    jax.debug.print formats non-array arguments as static values on current JAX; older releases accepted
    only arrays and Python scalars there, so an argument of unknown type makes the fix unsafe.
    """
    for value in values:
        if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
            continue
        if not ctx.flags(value) & (TRACED | HOLDS_TRACED):
            return UNSAFE
    return SAFE


_CONTAINERS: dict[type, str] = {
    cst.List: "a list",
    cst.Tuple: "a tuple",
    cst.Dict: "a dict",
    cst.Set: "a set",
    cst.ListComp: "a list comprehension",
    cst.SetComp: "a set comprehension",
    cst.DictComp: "a dict comprehension",
    cst.GeneratorExp: "a generator expression",
}


def describe_sequence(value: cst.BaseExpression) -> str | None:
    """'a list', 'a dict comprehension', ... for a container display or comprehension; None for anything else."""
    return _CONTAINERS.get(type(value))
