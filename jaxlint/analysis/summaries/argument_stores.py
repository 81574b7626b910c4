"""An item store into a parameter of a transformed function that its caller expects to see (jax-17415).

A transformation (`jax.vmap(f)(pair)`, `jax.jit`, `jax.grad`) flattens its arguments and calls the function with
new containers rebuilt from the leaves: `pair[0] = ...` in `f` changes JAX's copy, never the caller's list. Found
where the code shows the caller relying on it: a call through the transformation passes a name that the calling
scope reads again after the call (a later statement of its body), with no rebinding of the name in between. A
store into a container the function only uses itself (`p[0] = p[0] * 2; return p[0] + p[1]`) is left alone.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import walk
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params


def lost_argument_store(target: cst.BaseExpression, unit: Unit, index: ModuleIndex) -> str | None:
    """For `p[k] = v` in `unit`, `p` a parameter never rebound and `unit` transformed: the caller's name that a
    call through the transformation passes there and reads after it; else None."""
    if type(target) is not cst.Subscript or type(target.value) is not cst.Name or not unit.is_target:
        return None
    node = unit.node
    name = target.value.value
    if type(node) is not cst.FunctionDef or unit.is_method or name in unit.bindings:
        return None
    params = [p.name.value for p in positional_params(node.params)]
    if name not in params:
        return None
    position = params.index(name)
    for call, scope in _transformed_calls(unit, index):
        args = call.args
        if any(a.star for a in args[: position + 1]):
            continue
        given = next((a.value for a in args if a.keyword is not None and a.keyword.value == name), None)
        if given is None and position < len(args) and args[position].keyword is None:
            given = args[position].value
        if type(given) is cst.Name and _read_after(scope, call, given.value):
            return given.value
    return None


def _transformed_calls(unit: Unit, index: ModuleIndex) -> list[tuple[cst.Call, Unit]]:
    """The module's calls that run `unit` through a transformation: `jax.vmap(f)(x)`, `g(x)` with `g` bound once
    to `jax.jit(f)`, `f(x)` of a decorated `f`."""
    found = unit.memo.get("transformed_calls")
    if found is not None:
        return found
    found = unit.memo["transformed_calls"] = []
    node = unit.node
    decorated = type(node) is cst.FunctionDef and any(
        index.transform_of(d.decorator, unit.parent or index.root) is not None for d in node.decorators
    )
    for call, scope, _ in index._sites:
        func = call.func
        if type(func) is cst.Call and func.args and func.args[0].keyword is None:
            if index.transform_of(func.func, scope) is None:
                continue
            targets = index.resolve_function(func.args[0].value, scope)
        elif type(func) is cst.Name:
            bound = scope.single_assignment(func.value) if func.value in scope.local_names else None
            bound = bound if bound is not None else index.root.single_assignment(func.value)
            if type(bound) is cst.Call and index.transform_of(bound.func, scope) is not None:
                targets = [(t, app.bound_self) for t, app in index.applications(bound, scope)]
            elif decorated:
                targets = index.resolve_function(func, scope)
            else:
                continue
        else:
            continue
        if any(target is unit and not bound_self for target, bound_self in targets):
            found.append((call, scope))
    return found


def _read_after(scope: Unit, call: cst.Call, name: str) -> bool:
    """Whether a statement of `scope`'s body after the one holding `call` reads `name` before rebinding it."""
    node: Any = scope.node  # the Module or a FunctionDef (a lambda's body is an expression: no statements)
    body = node.body if type(node) is cst.Module else getattr(node.body, "body", ())
    seen = False
    for statement in body:
        if not seen:
            holder = next(
                (n for n in walk(statement) if type(n) is cst.SimpleStatementLine and _holds(n, call)), None
            )
            seen = holder is not None
            if holder is not None and _rebinds(holder, name):
                return False  # `pair = f(pair)`, `out, pair = f(pair)`: the caller takes what it returns
            continue
        names = [n for n in walk(statement) if type(n) is cst.Name and n.value == name]
        if not names:
            continue
        line = statement.body[0] if type(statement) is cst.SimpleStatementLine and statement.body else None
        if type(line) is cst.Assign and any(id(n) in {id(t.target) for t in line.targets} for n in names):
            # `pair = ...` rebinds it: read only if the value reads the old one
            return any(type(n) is cst.Name and n.value == name for n in walk(line.value))
        return True
    return False


def _rebinds(statement: cst.CSTNode, name: str) -> bool:
    """Whether a simple statement line assigns `name` (alone or in a tuple target)."""
    if type(statement) is not cst.SimpleStatementLine:
        return False
    for line in statement.body:
        targets = [t.target for t in line.targets] if type(line) is cst.Assign else []
        if type(line) in (cst.AnnAssign, cst.AugAssign):
            targets = [line.target]  # type: ignore[attr-defined]
        if any(type(n) is cst.Name and n.value == name for t in targets for n in walk(t)):
            return True
    return False


def _holds(node: cst.CSTNode, call: cst.Call) -> bool:
    return any(n is call for n in walk(node))
