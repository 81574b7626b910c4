"""Python int counters a filter_jit function increments and returns: a new cache key on every call.

equinox's `filter_jit` traces the array leaves of its arguments and keeps every other leaf static, part of the
cache key. A pytree class's field annotated `int` (an eqx.Module's `iteration: int`, a flax.struct dataclass's
`step: int`) holding a Python int is such a leaf; a step function that returns the pytree with that field
incremented (`state.replace(step=state.step + 1)`, `FitState(..., state.iteration + 1)`) hands back a new
Python int, so the next call with the returned state misses the cache and traces and compiles again
(equinox 0.13.8, jax 0.10.2: one compile per step). Under `jax.jit` the field is a traced leaf and the count an
array: no recompile. The finding is the increment: the line to change.

Only what is sure: the function carries a filtering compiling transformation (the library table's `compiling`,
`filtering`, not `scalars`), returns (directly, through one local, or in a tuple) a constructor call of the
module's record class or `replace` of an instance of it (`x.replace(...)` of flax.struct, `dataclasses.replace`),
itself or through one method of that class called on a parameter (`state.apply_gradients(grads)`), and the
field's new value is the same field read plus an int literal.
"""

from __future__ import annotations

import libcst as cst

from ...syntax import argument, own_nodes
from ..binding.index import ModuleIndex, Unit
from ..semantics.library import TRANSFORMATIONS
from .instances import local_method_units
from .pytrees import pytree_model
from .receivers import parameter_class
from .records import constructor

# The labels of the applications that keep non-array leaves static and compile (equinox's filter_jit).
_STATIC_LEAVES = frozenset(
    t.label for t in TRANSFORMATIONS.values() if t.compiling and t.filtering and not t.scalars
)
_REPLACE = "dataclasses.replace"
_MEMO = "static counters"


def static_counters(index: ModuleIndex) -> dict[int, tuple[cst.BaseExpression, str, str, str]]:
    """id(the call building the returned pytree) -> (the increment, class name, field, the filter_jit function's
    name), kept with the module."""
    memo = index.root.memo
    if _MEMO not in memo:
        memo[_MEMO] = _counters(index) if _candidates(index) else {}
    return memo[_MEMO]


def _candidates(index: ModuleIndex) -> dict[str, set[str]]:
    """The module's record classes (eqx.Module, flax.struct dataclass) -> their data fields annotated `int`."""
    found: dict[str, set[str]] = {}
    if not index.classes:
        return found
    for cls in pytree_model(index).by_node.values():
        ints = {f for f, t in cls.field_types.items() if t == "int" and cls.is_static(f) is False}
        if ints and cls.name in index.classes:
            found[cls.name] = ints
    return found


def _counters(index: ModuleIndex) -> dict[int, tuple[cst.BaseExpression, str, str, str]]:
    classes = _candidates(index)
    found: dict[int, tuple[cst.BaseExpression, str, str, str]] = {}
    for unit in index.units.values():
        if type(unit.node) is not cst.FunctionDef or not any(
            a.label in _STATIC_LEAVES for a in unit.applications
        ):
            continue
        for value in _returned(unit):
            for call, where in _built(value, unit, index, classes, 0):
                for increment, field in _increments(call, where, index, classes):
                    found.setdefault(id(call), (increment, where, field, unit.name))
    return found


def _returned(unit: Unit) -> list[cst.BaseExpression]:
    """What `unit`'s own returns give: each element of a returned tuple, a local bound once read through."""
    out: list[cst.BaseExpression] = []
    for node in own_nodes(unit.node):
        if type(node) is not cst.Return or node.value is None:
            continue
        values = [e.value for e in node.value.elements] if type(node.value) is cst.Tuple else [node.value]
        for value in values:
            if type(value) is cst.Name:
                value = unit.single_assignment(value.value) or value
            out.append(value)
    return out


def _built(
    value: cst.BaseExpression, unit: Unit, index: ModuleIndex, classes: dict[str, set[str]], depth: int
) -> list[tuple[cst.Call, str]]:
    """The calls building a record of `classes` that `value` is: (call, class name)."""
    if type(value) is not cst.Call:
        return []
    func = value.func
    if type(func) is cst.Name and func.value in classes and func.value not in unit.local_names:
        return [(value, func.value)]
    if index.qualname(func, unit) == _REPLACE and value.args:
        cls = _class_of(value.args[0].value, unit, index)
        return [(value, cls)] if cls in classes else []
    if type(func) is not cst.Attribute:
        return []
    cls = _class_of(func.value, unit, index)
    if func.attr.value == "replace":
        return [(value, cls)] if cls in classes else []
    if depth > 0:
        return []
    if cls is None and type(func.value) is cst.Name and func.value.value in _parameters(unit):
        cls = _only_definer(func.attr.value, index)  # `state.apply_gradients(g)`, `state` rebound by the loop
    if cls not in classes:
        return []
    out = []
    for method in local_method_units(index, cls, func.attr.value, exact=True):  # `state.apply_gradients(g)`
        for returned in _returned(method):
            out += _built(returned, method, index, classes, depth + 1)
    return out


def _class_of(receiver: cst.BaseExpression, unit: Unit, index: ModuleIndex) -> str | None:
    """The module class `receiver` is an instance of: `self` in its methods, a parameter by its annotation or
    by what the module's calls pass it."""
    if type(receiver) is not cst.Name:
        return None
    node = unit.node
    if unit.is_method and unit.class_node is not None and type(node) is cst.FunctionDef:
        params = [*node.params.posonly_params, *node.params.params]
        if params and params[0].name.value == receiver.value and receiver.value not in unit.bindings:
            return unit.class_node.name.value
    found = parameter_class(index, receiver, unit)
    if found is None or type(found[0]) is not cst.Name:
        return None
    return found[0].value


def _parameters(unit: Unit) -> set[str]:
    """The parameters of a def that its body never rebinds."""
    params = unit.node.params  # type: ignore[attr-defined]
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    return {n for n in names if n not in unit.bindings}


def _only_definer(method: str, index: ModuleIndex) -> str | None:
    """The one class of the module that defines `method` in its body, None when none or several do."""
    found = [
        name
        for name, node in index.classes.items()
        if node is not None
        and any(type(s) is cst.FunctionDef and s.name.value == method for s in node.body.body)
    ]
    return found[0] if len(found) == 1 else None


def _increments(
    call: cst.Call, cls: str, index: ModuleIndex, classes: dict[str, set[str]]
) -> list[tuple[cst.BaseExpression, str]]:
    """(value, field) for each `int` field of `cls` that `call` sets to that field read plus an int literal."""
    out = []
    node = index.classes.get(cls)
    made = constructor(index, node) if type(call.func) is cst.Name and node is not None else None
    for field in sorted(classes[cls]):
        if made is not None:
            params = [p for f, p in made.fields if f == field]
            if len(params) != 1:
                continue
            position = made.positional.index(params[0]) if params[0] in made.positional else None
            given = argument(call, position, params[0])
        elif type(call.func) is cst.Name:
            continue  # a constructor whose parameters are not known
        else:
            given = argument(call, None, field)  # `replace` takes keywords only
        if given is not None and not given.star and _incremented(given.value, field):
            out.append((given.value, field))
    return out


def _incremented(value: cst.BaseExpression, field: str) -> bool:
    """`x.field + 1`, `1 + x.field`."""
    if type(value) is not cst.BinaryOperation or type(value.operator) is not cst.Add:
        return False
    for read, step in ((value.left, value.right), (value.right, value.left)):
        if type(step) is cst.Integer and type(read) is cst.Attribute and read.attr.value == field:
            return type(read.value) is cst.Name
    return False
