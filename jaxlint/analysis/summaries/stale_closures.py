"""A compiled function reading a variable that its enclosing scope rebinds between two calls of it (jax-1426).

`jax.jit` (and every compiling transformation: `semantics.transformations`, `compiling`) traces a function on its
first call and caches the result by the function and the arguments' shapes: what the function reads from its
enclosing scope is baked in as the value it had then. A scope that binds `g = jax.jit(f)`, calls `g`, rebinds a
variable `f` reads (`a = 20.0`) and calls `g` again gets the first value back, silently. Found only where the
code shows all of it in one scope (the function's own or the module), in source order: the compiled name bound
once, a call before the rebinding and one after.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import own_nodes
from ..binding.index import ModuleIndex, Unit
from ..semantics.library import TRANSFORMATIONS


def stale_closure_reads(unit: Unit, index: ModuleIndex) -> list[tuple[cst.Name, str]]:
    """The reads in `unit`'s own body of variables of the scope around it that the scope rebinds between two
    calls of a compiled `unit` bound there: (the name read, the compiled name the scope calls)."""
    scope = unit.parent
    if scope is None or type(unit.node) not in (cst.FunctionDef, cst.Lambda):
        return []
    found = unit.memo.get("stale_closure_reads")
    if found is not None:
        return found
    found = unit.memo["stale_closure_reads"] = []
    compiled = _compiled_names(unit, scope, index)
    if not compiled:
        return found
    skipped: set[int] = set()
    names: list[cst.Name] = []
    for node in own_nodes(unit.node):
        if type(node) is cst.Attribute:
            skipped.add(id(node.attr))
        elif type(node) is cst.Arg and node.keyword is not None:
            skipped.add(id(node.keyword))
        elif type(node) is cst.Name:
            names.append(node)
    for node in names:
        name = node.value
        if id(node) in skipped or name in unit.local_names or name not in scope.local_names:
            continue
        for compiled_name, bound_at in compiled:
            if _rebound_between_calls(scope, index, name, compiled_name, bound_at):
                found.append((node, compiled_name))
                break
    return found


def _compiled_names(unit: Unit, scope: Unit, index: ModuleIndex) -> list[tuple[str, int]]:
    """The names `scope` binds once to a compiling transformation of `unit` (`g = jax.jit(jax.grad(f))`, or
    `f` itself decorated `@jax.jit`), with the binding's place in source order."""
    out = []
    if type(unit.node) is cst.FunctionDef and any(
        _compiling(d.decorator, scope, index) for d in unit.node.decorators
    ):
        bindings = scope.bindings.get(unit.node.name.value, [])
        if len(bindings) == 1:
            out.append((unit.node.name.value, bindings[0].order))
    for name, bindings in scope.bindings.items():
        if len(bindings) != 1 or not bindings[0].plain:
            continue
        value = bindings[0].value
        if type(value) is not cst.Call or not _compiling(value, scope, index):
            continue
        if any(target is unit for target, _ in index.applications(value, scope)):
            out.append((name, bindings[0].order))
    return out


def _compiling(node: cst.BaseExpression, scope: Unit, index: ModuleIndex) -> bool:
    """Whether a transformation chain (`jax.jit(jax.grad(f))`, or a decorator `jax.jit`) compiles."""
    for _ in range(4):
        call = node if type(node) is cst.Call else None
        found = index.transform_of(call.func if call is not None else node, scope)
        if found is None:
            return False
        transformation = TRANSFORMATIONS.get(found[0])
        if transformation is not None and transformation.compiling:
            return True
        if call is None or not call.args or call.args[0].keyword is not None:
            return False
        node = call.args[0].value
    return False


def _rebound_between_calls(scope: Unit, index: ModuleIndex, name: str, compiled: str, bound_at: int) -> bool:
    calls = sorted(
        order for call, unit, order in index.sites_calling(compiled) if unit is scope and order > bound_at
    )
    if len(calls) < 2:
        return False
    return any(
        calls[0] < binding.order < calls[-1] and not _in_loop(scope, binding.node)
        for binding in scope.bindings.get(name, [])
    )


def _in_loop(scope: Unit, node: Any) -> bool:
    """A rebinding inside a loop of the scope: whether it falls between two calls is not read here."""
    return bool(scope.loops_of(node))
