"""Haiku's implicit state used from inside a raw trace (JAX105).

A haiku transformation (`hk.transform(f)`) runs `f` in a frame that keeps its parameters, state and rng
sequence; `hk.get_parameter`, `hk.next_rng_key()`, `hk.set_state` and a haiku module's call store into it from
wherever they run (`semantics.haiku_state`). Inside a function a raw JAX transformation or lax control flow
stages out (`jax.lax.scan(step, ...)` in `f`), what they store is a tracer of that trace: it leaks into the
frame (UnexpectedTracerError when init's parameters are used) and an rng key drawn there is the same in every
iteration. haiku's own `hk.scan`, `hk.jit`, ... are not raw: they thread the frame. A function that a frame
transformation runs (`hk.transform(inner)` inside the body) has its own frame, inside the trace.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import argument, own_nodes, source_of, walk
from ..binding.index import ModuleIndex, Unit
from ..kinds import STRICT
from ..semantics.library import HAIKU_FRAMES, HAIKU_MODULE, HAIKU_PARAMETER_MODULES, HAIKU_STATE_CALLS
from .held import held_value
from .instances import subclass_bases

_DEPTH = 3  # helpers and module classes followed into: `layer(x)` -> `Block()(x)` -> `hk.Linear(3)(x)`
_PARAMETERS = "creates Haiku parameters"


def haiku_state_in_trace(call: cst.Call, ctx: Any) -> tuple[str, str, str] | None:
    """(the call's text, what it stores, the raw trace's context) for a call storing into a haiku frame from a
    function a raw transformation or control flow stages out, the frame being outside that trace; else None."""
    if ctx.kind < STRICT or not ctx.staged:
        return None
    index = ctx.index
    if not _haiku_imported(index):
        return None
    boundary = _staging_boundary(ctx)
    if boundary is None:
        return None
    stores = _stores(call, ctx.unit, index, boundary, 0)
    if stores is None:
        return None
    return source_of(call, 40), stores, boundary.context


def _haiku_imported(index: ModuleIndex) -> bool:
    """Whether the module calls anything of haiku (asked of every call in staged code: kept)."""
    found = index.root.memo.get("haiku_called")
    if found is None:
        found = index.root.memo["haiku_called"] = any(n.startswith("haiku.") for n in index.callee_names)
    return found


def _staging_boundary(ctx: Any) -> Unit | None:
    """The nearest enclosing function (this one included) that a raw transformation or control flow stages out,
    when no function between it and here runs in a frame of its own (`hk.transform(inner)`)."""
    frames = _frame_functions(ctx.index)
    frame = ctx
    while frame is not None:
        unit = frame.unit
        if unit is ctx.index.root or id(unit) in frames:
            return None
        if frame.own_names is None and unit.is_target and frame.staged:
            if any(app.kind >= STRICT for app in unit.applications):
                return unit
        frame = frame.parent
    return None


def _frame_functions(index: ModuleIndex) -> set[int]:
    """The module's functions a haiku frame transformation is given (by id of their unit)."""
    found = index.root.memo.get("haiku_frames")
    if found is None:
        found = index.root.memo["haiku_frames"] = set()
        for (call, unit, _), callee in zip(index._sites, index.site_callees, strict=True):
            given = argument(call, 0, "f") if callee in HAIKU_FRAMES else None
            if given is not None:
                found.update(id(target) for target, _ in index.resolve_function(given.value, unit))
    return found


def _stores(call: cst.Call, unit: Unit, index: ModuleIndex, boundary: Unit, depth: int) -> str | None:
    """What calling `call` in `unit` stores into the frame: a frame-state function, a haiku module (built there or
    held by a name or `self` attribute), or a helper of the module defined outside the traced function."""
    name = index.qualname(call.func, unit)
    if name in HAIKU_STATE_CALLS:
        return HAIKU_STATE_CALLS[name]
    built = _instance(call.func, unit, index)
    if built is not None:
        constructor, scope = built
        return _PARAMETERS if _makes_parameters(constructor, scope, index, depth) else None
    if depth >= _DEPTH:
        return None
    for target, _ in index.resolve_function(call.func, unit):
        if not _inside(target, boundary) and _function_stores(target, index, depth + 1):
            return "stores into Haiku's frame"
    return None


def _instance(func: cst.BaseExpression, unit: Unit, index: ModuleIndex) -> tuple[cst.Call, Unit] | None:
    """The constructor call of the object `func` calls: `hk.Linear(3)(x)` built in place, a name bound once to
    one (in the nearest scope binding it, which does not also call it: an instance called there first has
    created its parameters already), `self.cell` bound once by the constructor."""
    if type(func) is cst.Call:
        return func, unit
    if type(func) is cst.Attribute:
        held = held_value(index, func, unit)
        return (held[0], held[1]) if held is not None and type(held[0]) is cst.Call else None
    if type(func) is not cst.Name:
        return None
    scope: Unit | None = unit
    while scope is not None and scope is not index.root and func.value not in scope.local_names:
        scope = scope.parent
    scope = scope or index.root
    value = scope.single_assignment(func.value)
    if type(value) is not cst.Call:
        return None
    if scope is not unit and any(
        type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == func.value
        for node in own_nodes(scope.node)
    ):
        return None
    return value, scope


def _makes_parameters(constructor: cst.Call, scope: Unit, index: ModuleIndex, depth: int) -> bool:
    """A library module that creates parameters, or a module class of this module deriving from hk.Module whose
    methods store into the frame."""
    name = index.qualname(constructor.func, scope)
    if name in HAIKU_PARAMETER_MODULES:
        return True
    func = constructor.func
    if type(func) is not cst.Name or index.classes.get(func.value) is None or depth >= _DEPTH:
        return False
    classes = [func.value, *subclass_bases(index, func.value)]
    nodes = [index.classes.get(c) for c in classes]
    if not any(
        index.qualname(base.value, index.root) == HAIKU_MODULE
        for node in nodes
        if node is not None
        for base in node.bases
    ):
        return False
    return any(
        _function_stores(method, index, depth + 1)
        for node in nodes
        if node is not None
        for methods in index.class_methods.get(id(node), {}).values()
        for method in methods
    )


def _function_stores(target: Unit, index: ModuleIndex, depth: int) -> bool:
    """Whether a function's body (nested functions included) calls a frame-state function or builds a module that
    creates parameters (building one is for calling it)."""
    key = f"haiku_stores {id(target)}"
    found = index.root.memo.get(key)
    if found is not None:
        return found
    index.root.memo[key] = False  # a recursive helper: not through itself
    result = False
    for node in walk(target.node):
        if type(node) is cst.Call:
            if index.qualname(node.func, target) in HAIKU_STATE_CALLS or _makes_parameters(
                node, target, index, depth
            ):
                result = True
                break
    index.root.memo[key] = result
    return result


def _inside(unit: Unit, outer: Unit) -> bool:
    scope: Unit | None = unit
    while scope is not None:
        if scope is outer:
            return True
        scope = scope.parent
    return False
