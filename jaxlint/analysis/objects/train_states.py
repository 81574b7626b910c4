"""Whether an expression holds a TrainState-like object whose `apply_fn` field is a Module's `apply` (the
library table's APPLY_FN_FACTORIES): the evidence `state.apply_fn(...)` needs before it is read as the module's
`TrainState.create(apply_fn=model.apply)` model. A name is such a state when one of its bindings is
`Factory.create(...)`, `s.replace(...)` / `s.apply_gradients(...)` of a state, or a call of this module's
function that returns one; a parameter is one when a call of its function (directly or through its jitted
binding) passes a state there. Anything else (`self.state`, a look-alike with an `apply_fn` attribute) is not.
"""

from __future__ import annotations

import libcst as cst

from ...syntax import argument, own_nodes
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params
from ..semantics.library import APPLY_FN_FACTORIES

# Methods of a state that return the updated state (flax 0.12.8 `TrainState.replace`, `apply_gradients`).
_UPDATES = frozenset({"replace", "apply_gradients"})
_MAX_DEPTH = 4


def holds_state(index: ModuleIndex, node: cst.BaseExpression, unit: Unit, depth: int = 0) -> bool:
    """Whether `node`, read in `unit`, holds a state built by an APPLY_FN_FACTORIES factory."""
    if depth > _MAX_DEPTH:
        return False
    key = f"holds_state {id(node)} {id(unit)}"
    memo = index.root.memo
    if key not in memo:
        memo[key] = False  # a cycle (a step passing its own parameter on) gives no evidence
        memo[key] = _holds_state(index, node, unit, depth)
    return memo[key]


def _holds_state(index: ModuleIndex, node: cst.BaseExpression, unit: Unit, depth: int) -> bool:
    if type(node) is cst.Call:
        func = node.func
        if index.qualname(func, unit) in APPLY_FN_FACTORIES:
            return True
        if type(func) is cst.Attribute and func.attr.value in _UPDATES:
            return holds_state(index, func.value, unit, depth + 1)
        return any(_returns_state(index, callee, depth) for callee, _ in index.resolve_function(func, unit))
    if type(node) is not cst.Name:
        return False
    name = node.value
    scope = unit if unit is index.root or name in unit.local_names else index.root
    for binding in scope.bindings.get(name, ()):
        if (
            binding.plain
            and binding.value is not None
            and holds_state(index, binding.value, scope, depth + 1)
        ):
            return True
    return scope is unit and _passed_state(index, unit, name, depth)


def _returns_state(index: ModuleIndex, unit: Unit, depth: int) -> bool:
    """A same-module function that returns a state (`def create_state(...): return TrainState.create(...)`)."""
    if type(unit.node) is not cst.FunctionDef:
        return False
    return any(
        type(node) is cst.Return
        and node.value is not None
        and holds_state(index, node.value, unit, depth + 1)
        for node in own_nodes(unit.node)
    )


def _passed_state(index: ModuleIndex, unit: Unit, name: str, depth: int) -> bool:
    """`name` is a parameter of `unit`, and some call of `unit` in this module passes a state there."""
    if type(unit.node) is not cst.FunctionDef:
        return False
    params = positional_params(unit.node.params)
    position = next((i for i, p in enumerate(params) if p.name.value == name), None)
    if position is None:
        return False
    if unit.is_method:
        position -= 1  # called on an instance: `self` is not among the call's arguments
    for call, caller, _ in index._sites:
        if unit not in _called_units(index, call.func, caller):
            continue
        given = argument(call, position, name)
        if given is not None and holds_state(index, given.value, caller, depth + 1):
            return True
    return False


def _called_units(index: ModuleIndex, func: cst.BaseExpression, unit: Unit) -> list[Unit]:
    """The same-module functions a call of `func` runs: `f(...)`, `jax.jit(f)(...)`, `step(...)` with `step`
    bound to `jax.jit(f)`."""
    if type(func) is cst.Name:
        direct = [u for u, _ in index.resolve_function(func, unit)]
        if direct:
            return direct
        scope = unit if func.value in unit.local_names else index.root
        bound = scope.single_assignment(func.value)
        func = bound if bound is not None else func
    if type(func) is cst.Call and func.args and index.transform_of(func.func, unit) is not None:
        return [u for u, _ in index.resolve_function(func.args[0].value, unit)]
    return []
