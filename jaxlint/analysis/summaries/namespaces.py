"""Array namespaces chosen at run time from the arrays: `xp = array_namespace(x)`, then `xp.any(...)`.

A getter of the library table (`semantics/array_api.py`) answers `jax.numpy` for JAX arrays, traced or not. A
project's own getter qualifies when it dispatches on the array type itself: every `return` gives the JAX or
the NumPy module (`jnp if isinstance(x, jax.Array) else np`, or in `if` branches) or a table getter of its
parameters, and its body tests `isinstance(<parameter>, jax.Array)`. The flow walk binds the name to the
`jax.numpy` module where the arguments are JAX arrays (`values/flags.py`), so calls through it are `jnp`
calls (`flow.frame.Frame.qualname`); NumPy arrays, or arguments it knows nothing of, leave it unknown.
In project mode the module's summary says which of its top-level functions are getters (`Export.namespace`).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import children
from ..semantics.array_api import CHOSEN_NAMESPACES, JAX_NAMESPACE, NAMESPACE_GETTERS
from ..semantics.library import ARRAY_TYPES
from .returns import _return_values

_MEMO = "chooses_namespace"
_GETTER = "getter"


def is_namespace_getter(name: str | None, index: Any) -> bool:
    """Whether the function qualified `name` is a table getter or another project module's getter (its export)."""
    if name is None:
        return False
    if name in NAMESPACE_GETTERS:
        return True
    project = getattr(index, "project", None)
    found = project.exports.get(name) if project is not None else None
    return found is not None and found.namespace


def chooses_namespace(unit: Any, index: Any) -> bool:
    """Whether the function `unit` answers the array namespace of its arguments (`jax.numpy` for a JAX array)."""
    memo = unit.memo
    if _MEMO not in memo:
        memo[_MEMO] = _chooses(unit, index)
    return bool(memo[_MEMO])


def _chooses(unit: Any, index: Any) -> bool:
    node = unit.node
    if type(node) is not cst.FunctionDef or node.asynchronous is not None:
        return False
    values = _return_values(node)
    params = {
        p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
    }
    if type(node.params.star_arg) is cst.Param:
        params.add(node.params.star_arg.name.value)
    if values is None or not params:
        return False
    chosen: set[str] = set()
    for value in values:
        if not _namespaces(value, unit, index, params, chosen):
            return False
    if chosen == {_GETTER}:
        return True  # `return array_api_compat.array_namespace(*arrays)`: a wrapper of a table getter
    return JAX_NAMESPACE in chosen and _tests_array_type(node, unit, index, params)


def _namespaces(value: cst.BaseExpression, unit: Any, index: Any, params: set[str], chosen: set[str]) -> bool:
    """Add what `value` may give (modules by name, or `getter`); False when it may give anything else."""
    if type(value) is cst.IfExp:
        if _array_type_test(value.test, unit, index, params) and index.qualname(value.body, unit) == "numpy":
            return False  # `np if isinstance(x, jax.Array) else jnp`: not the namespace of x
        return _namespaces(value.body, unit, index, params, chosen) and _namespaces(
            value.orelse, unit, index, params, chosen
        )
    if type(value) is cst.Call:
        if not value.args or not all(
            type(a.value) is cst.Name and a.value.value in params and a.keyword is None for a in value.args
        ):
            return False
        if index.qualname(value.func, unit) not in NAMESPACE_GETTERS:
            return False
        chosen.add(_GETTER)
        return True
    if type(value) is not cst.Name and type(value) is not cst.Attribute:
        return False
    name = index.qualname(value, unit)
    if name not in CHOSEN_NAMESPACES:
        return False
    chosen.add(name)
    return True


def _tests_array_type(node: cst.FunctionDef, unit: Any, index: Any, params: set[str]) -> bool:
    """Whether the body tests `isinstance(p, jax.Array)` (or `jnp.ndarray`) of a parameter `p`."""
    stack: list[cst.CSTNode] = [node.body]
    while stack:
        current = stack.pop()
        if _array_type_test(current, unit, index, params):
            return True
        stack.extend(children(current))
    return False


def _array_type_test(node: cst.CSTNode, unit: Any, index: Any, params: set[str]) -> bool:
    """Whether `node` is `isinstance(p, jax.Array)` (or `jnp.ndarray`, or a tuple naming one) of a parameter."""
    if not (
        type(node) is cst.Call
        and len(node.args) == 2
        and type(node.args[0].value) is cst.Name
        and node.args[0].value.value in params
        and index.qualname(node.func, unit) == "builtins.isinstance"
    ):
        return False
    kinds = node.args[1].value
    options = [e.value for e in kinds.elements] if type(kinds) is cst.Tuple else [kinds]
    return any(index.qualname(option, unit) in ARRAY_TYPES for option in options)
