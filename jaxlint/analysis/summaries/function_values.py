"""What a call runs when its function is a value rather than a def's name, and with which arguments:

- `partial(f, a, k=v)(x)`, or `g(x)` with `g` bound once to such a partial: `f(a, x, k=v)`;
- `OPS["f"](x)`, `OPS[0](x)`: an item of a dict, list or tuple of functions bound once at module level (the
  item the literal key names; every item for another key);
- `Ops.run(x)`: a class attribute bound to a function (`run = staticmethod(f)` or `run = f`);
- `fn(x)` in a function whose parameter `fn` a caller passes one of this module's functions (higher-order:
  `call_with(f, x)`), as the flow walk records at that call (`note_function_arguments`).

The flow walk applies the arguments to the functions found as it does for a direct call (`flow/calls.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params
from ..semantics.library import PARTIAL

_FUNCTION_ARGS = "function_args"  # Unit.memo key: parameter name -> the functions callers pass it


def called_value(
    index: ModuleIndex, call: cst.Call, unit: Unit
) -> tuple[list[tuple[Unit, bool]], list[cst.Arg]] | None:
    """The functions `call` runs and the arguments they receive, for a function given as a value; None when
    the call's function is no such value of this module."""
    func = call.func
    if isinstance(func, cst.Name):
        passed = _parameter_functions(func.value, unit)
        if passed:
            return passed, list(call.args)
        bound = _single_value(func.value, unit)
        if isinstance(bound, cst.Call) and index.qualname(bound.func, unit) == PARTIAL:
            return _partial(index, bound, call.args, unit)
        return None
    if isinstance(func, cst.Call) and index.qualname(func.func, unit) == PARTIAL:
        return _partial(index, func, call.args, unit)
    if isinstance(func, (cst.Subscript, cst.Attribute)):
        found = _looked_up(index, func, unit)
        return (found, list(call.args)) if found else None
    return None


def note_function_arguments(
    index: ModuleIndex, callee: Unit, bound_self: bool, args: Sequence[cst.Arg], unit: Unit
) -> bool:
    """Record which of the callee's parameters receive one of this module's functions at this call; True when
    that is news (the callee's body must be walked again)."""
    params = positional_params(callee.params)
    if callee.is_method and bound_self:
        params = params[1:]
    by_name = {p.name.value for p in [*params, *callee.params.kwonly_params]}
    changed = False
    position = 0
    for arg in args:
        if arg.star:
            break
        if arg.keyword is None:
            name = params[position].name.value if position < len(params) else None
            position += 1
        else:
            name = arg.keyword.value if arg.keyword.value in by_name else None
        if name is None:
            continue
        functions = index.resolve_function(arg.value, unit)
        if not functions:
            continue
        known = callee.memo.setdefault(_FUNCTION_ARGS, {}).setdefault(name, [])
        for found in functions:
            if all(found[0] is not k[0] for k in known):
                known.append(found)
                changed = True
    return changed


def _parameter_functions(name: str, unit: Unit) -> list[tuple[Unit, bool]]:
    """The functions callers pass the parameter `name` of `unit` (none when the body rebinds it)."""
    passed = unit.memo.get(_FUNCTION_ARGS)
    if not passed or name not in passed or name in unit.bindings:
        return []
    return [(found, False) for found, _ in passed[name]]


def _single_value(name: str, unit: Unit) -> cst.BaseExpression | None:
    """The value of the one plain binding of `name` in the scope that binds it, seen from `unit`."""
    scope: Unit | None = unit
    while scope is not None:
        if name in scope.bindings:
            return scope.single_assignment(name)
        if name in scope.local_names and scope.parent is not None:
            return None
        scope = scope.parent
    return None


def _partial(
    index: ModuleIndex, partial: cst.Call, args: Sequence[cst.Arg], unit: Unit
) -> tuple[list[tuple[Unit, bool]], list[cst.Arg]] | None:
    if not partial.args or partial.args[0].keyword is not None or any(a.star for a in partial.args[1:]):
        return None  # `partial(f, *args)`: which parameters are bound is unknown
    functions = index.resolve_function(partial.args[0].value, unit)
    if not functions:
        return None
    bound = partial.args[1:]
    positional = [a for a in bound if a.keyword is None]
    keywords = [a for a in bound if a.keyword is not None]
    return list(functions), [*positional, *args, *keywords]


def _looked_up(index: ModuleIndex, node: cst.BaseExpression, unit: Unit) -> list[tuple[Unit, bool]]:
    if isinstance(node, cst.Subscript):
        base = node.value
        if not isinstance(base, cst.Name) or len(node.slice) != 1:
            return []
        container = _single_value(base.value, unit)
        items: list[tuple[cst.BaseExpression, cst.BaseExpression]]
        if isinstance(container, cst.Dict):
            items = [(e.key, e.value) for e in container.elements if isinstance(e, cst.DictElement)]
        elif isinstance(container, (cst.List, cst.Tuple)):
            items = [
                (cst.Integer(str(k)), e.value)
                for k, e in enumerate(container.elements)
                if isinstance(e, cst.Element)
            ]
        else:
            return []
        index_node = node.slice[0].slice
        key = index_node.value if isinstance(index_node, cst.Index) else None
        chosen = [value for k, value in items if key is not None and _same_literal(k, key)]
        found: list[tuple[Unit, bool]] = []
        for value in chosen or [value for _, value in items]:
            found += [(f, False) for f, _ in index.resolve_function(value, unit)]
        return found
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        owner = node.value.value
        if owner in unit.local_names and unit is not index.root:
            return []
        cls = index.classes.get(owner)
        if cls is None:
            return []
        held = _class_attribute(cls, node.attr.value)
        if (
            isinstance(held, cst.Call)
            and isinstance(held.func, cst.Name)
            and held.func.value == "staticmethod"
        ):
            held = held.args[0].value if held.args else None
        if held is None:
            return []
        return [(f, False) for f, _ in index.resolve_function(held, index.root)]
    return []


def _class_attribute(cls: cst.ClassDef, name: str) -> cst.BaseExpression | None:
    """The value of `name = value`, the class body's only binding of `name`."""
    found = []
    for statement in cls.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets
                ):
                    found.append(small.value)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value == name:
            return None
    return found[0] if len(found) == 1 else None


def _same_literal(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    if isinstance(a, cst.SimpleString) and isinstance(b, cst.SimpleString):
        return a.evaluated_value == b.evaluated_value
    if isinstance(a, cst.Integer) and isinstance(b, cst.Integer):
        return a.evaluated_value == b.evaluated_value
    return False
