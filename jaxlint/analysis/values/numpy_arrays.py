"""Is this expression a NumPy array? (A concrete host array: indexing it with a tracer fails.)

Only what the code shows for sure: a NumPy constructor call, a name bound once, in the scope it resolves
to, to such a call, or a name or entry whose value in the flow walk is a NumPy array (`values.abstract.Value` of kind
"numpy_array": bound to such a call on every path, a dict entry holding one). Anything else is "not known to
be a NumPy array".
"""

from __future__ import annotations

import libcst as cst

from ..context import RuleContext
from ..semantics.namespaces import NUMPY_ARRAYS

_CONSTRUCTORS = NUMPY_ARRAYS - {"numpy.meshgrid"}  # meshgrid gives a list of arrays


def is_numpy_array(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """Whether `node` is an array built by a NumPy constructor (directly, or through a name bound once)."""
    if isinstance(node, cst.Call):
        return ctx.qualname(node.func) in _CONSTRUCTORS
    if ctx.value(node).kind == "numpy_array":
        return True
    if not isinstance(node, cst.Name):
        return False
    frame: RuleContext | None = ctx
    while frame is not None and frame.own_names is not None:
        if node.value in frame.own_names:
            return False  # a comprehension variable
        frame = frame.parent
    unit = ctx.unit
    while unit.parent is not None and node.value not in unit.local_names:
        unit = unit.parent
    value = unit.single_assignment(node.value)
    return isinstance(value, cst.Call) and ctx.index.qualname(value.func, unit) in _CONSTRUCTORS
