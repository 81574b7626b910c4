"""A compiled function reading a variable that its enclosing scope rebinds between two calls of it (jax-1426).

`jax.jit` (and every compiling transformation: `semantics.transformations`, `compiling`) traces a function on its
first call and caches the result by the function and the arguments' shapes: what the function reads from its
enclosing scope is baked in as the value it had then. A scope that binds `g = jax.jit(f)`, calls `g`, rebinds a
variable `f` reads (`a = 20.0`) and calls `g` again gets the first value back, silently. Found only where the
code shows all of it in one scope (the function's own or the module): the compiled name bound once, then a call
before the rebinding and one after in source order, or a call inside a loop (bound outside it) that rebinds the
variable on every iteration (`for lr in rates: lr_step(params)`).
"""

from __future__ import annotations

import libcst as cst

from ...syntax import bound_names, own_nodes
from ..binding.index import Binding, ModuleIndex, Unit
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
    local: set[str] = set()  # what comprehensions bind inside: their own names, not the scope's
    for node in own_nodes(unit.node):
        if type(node) is cst.CompFor:
            local.update(bound_names(node.target))
        elif type(node) is cst.Attribute:
            skipped.add(id(node.attr))
        elif type(node) is cst.Arg and node.keyword is not None:
            skipped.add(id(node.keyword))
        elif type(node) is cst.Name:
            names.append(node)
    for node in names:
        name = node.value
        if id(node) in skipped or name in unit.local_names or name in local or name not in scope.local_names:
            continue
        for compiled_name, binding in compiled:
            if _rebound_between_calls(scope, index, name, compiled_name, binding):
                found.append((node, compiled_name))
                break
    return found


def _compiled_names(unit: Unit, scope: Unit, index: ModuleIndex) -> list[tuple[str, Binding]]:
    """The names `scope` binds once to a compiling transformation of `unit` (`g = jax.jit(jax.grad(f))`, or
    `f` itself decorated `@jax.jit`), with the binding."""
    out = []
    if type(unit.node) is cst.FunctionDef and any(
        _compiling(d.decorator, scope, index) for d in unit.node.decorators
    ):
        bindings = scope.bindings.get(unit.node.name.value, [])
        if len(bindings) == 1:
            out.append((unit.node.name.value, bindings[0]))
    for name, bindings in scope.bindings.items():
        if len(bindings) != 1 or not bindings[0].plain:
            continue
        value = bindings[0].value
        if type(value) is not cst.Call or not _compiling(value, scope, index):
            continue
        if any(target is unit for target, _ in index.applications(value, scope)):
            out.append((name, bindings[0]))
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


def _rebound_between_calls(scope: Unit, index: ModuleIndex, name: str, compiled: str, bound: Binding) -> bool:
    sites = [(order, call) for call, unit, order in index.sites_calling(compiled) if unit is scope]
    sites = sorted((order, call) for order, call in sites if order > bound.order)
    if not sites:
        return False
    outside = set(scope.loops_of(bound.node))  # loops around the binding: it is made again in each
    for _, call in sites:
        if any(loop not in outside and name in scope.varying(loop) for loop in scope.loops_of(call)):
            return True  # the loop calling it rebinds the variable on every iteration
    first, last = sites[0][0], sites[-1][0]
    return any(
        first < binding.order < last and not scope.loops_of(binding.node)
        for binding in scope.bindings.get(name, [])
    )
