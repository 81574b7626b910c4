"""Values inside a flax.linen Module's methods when a jitted `apply` runs them (the method's unit is traced
only where such an application is seen): `self.param(...)` returns the parameter, a tracer, and a layer
called on tracers (`nn.Dense(3)(x)`, a Module class of this project) returns tracers (library.py, run in
tests/analysis/test_library_semantics.py)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..kinds import GRAD, HOLDS_TRACED, LINEN, STRICT, TRACED
from ..semantics.library import LINEN_CONCRETE_VARIABLES, LINEN_LAYERS_PREFIX, LINEN_PARAM_METHODS
from .instances import linen_apply, module_class_kind


def param_flags(func: cst.Attribute, scope: Any) -> int:
    """`self.param(...)` in a traced method of a linen Module class: TRACED; else 0."""
    unit = scope.unit
    if (
        func.attr.value not in LINEN_PARAM_METHODS
        or scope.kind < STRICT
        or not scope.staged
        or type(func.value) is not cst.Name
        or not unit.is_method
    ):
        return 0
    params = unit.params
    positional = [*params.posonly_params, *params.params]
    if not positional or positional[0].name.value != func.value.value or unit.class_node is None:
        return 0
    if unit.class_node is not scope.index.classes.get(unit.class_node.name.value):
        return 0  # a class nested in a function: not followed
    if any(label in unit.context for label in LINEN_CONCRETE_VARIABLES):
        return 0
    kind = module_class_kind(scope.index, cst.Name(unit.class_node.name.value))
    return TRACED if kind == LINEN else 0


def layer_flags(inner: cst.Call, args: int, scope: Any) -> int:
    """`Layer(...)(x)` on tracers (`args`: the flags of the outer call's arguments): TRACED when `Layer` is a
    flax.linen class or a linen Module class of the project; else 0."""
    if scope.kind < STRICT or not args & TRACED:
        return 0
    name = scope.qualname(inner.func)
    if name is not None and name.startswith(LINEN_LAYERS_PREFIX):
        last = name.rsplit(".", 1)[1]
        return TRACED if last[:1].isupper() else 0
    return TRACED if module_class_kind(scope.index, inner.func, scope.unit) == LINEN else 0


def apply_flags(call: cst.Call, args: int, scope: Any) -> int:
    """`model.apply(variables, x)` of a flax.linen Module instance in traced code (`args`: the flags of the
    call's arguments): what the Module computes, traced when the variables or the inputs are (or the code is
    staged out) as a layer's output is (TRACED: an array or a pytree of them); else 0."""
    if scope.kind < GRAD or not (args & (TRACED | HOLDS_TRACED) or scope.kind >= STRICT and scope.staged):
        return 0
    return TRACED if linen_apply(scope.index, call, scope.unit) is not None else 0
