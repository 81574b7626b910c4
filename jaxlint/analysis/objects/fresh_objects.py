"""Objects that hash by identity, and code that builds one anew each time it runs.

A static argument of a jitted function, or the static state of an `nnx.Optimizer` given to `nnx.jit`, is part
of the compilation cache key. An object that hashes by identity is a new key each time it is built, however
alike: the function is traced and compiled again. What hashes by identity is a library result
(`semantics.library.IDENTITY_HASHED`: optax's transformations) or an instance of a plain class of the module that
defines neither `__eq__` nor `__hash__` (`objects.classes.identity_hashed_class`). Built anew means: in a loop that
also runs the use, or in a function that a loop of the module runs (`summaries.call_targets.looped_call`). A value built once (at module level, or
in a function called once) and reused is fine, and so is anything not known to be one of these.
"""

from __future__ import annotations

import libcst as cst

from ...syntax import own_nodes, source_of
from ..binding.index import ModuleIndex, Unit
from ..semantics.library import IDENTITY_HASHED
from ..summaries.call_targets import looped_call
from .classes import identity_hashed_class


def identity_hashed(value: cst.BaseExpression, index: ModuleIndex, unit: Unit) -> tuple[cst.Call, str] | None:
    """The call that builds `value` (itself, or the one binding of a name of `unit`) when what it builds hashes
    by identity, with words for it (to be followed by "compares by identity"); else None. A name bound
    elsewhere (a global read in a function) is not followed: it is built where the module runs it, once."""
    call: cst.BaseExpression | None = value
    if type(value) is cst.Name:
        if unit is not index.root and value.value not in unit.local_names:
            return None
        call = unit.single_assignment(value.value)
    if type(call) is not cst.Call:
        return None
    name = index.qualname(call.func, unit)
    if name in IDENTITY_HASHED:
        return call, f"`{source_of(call.func)}(...)`, an optax transformation,"
    if (
        type(call.func) is cst.Name
        and (unit is index.root or call.func.value not in unit.local_names)
        and identity_hashed_class(index, call.func.value)
    ):
        return call, f"an instance of '{call.func.value}' (no __eq__ or __hash__)"
    return None


def built_anew(built: cst.CSTNode, use: cst.CSTNode, unit: Unit, index: ModuleIndex) -> str | None:
    """Where `built` (code of `unit`) runs again before each `use` (code of `unit` too): "on every iteration
    of its loop" when a loop runs both, "on every call of 'f', ..." when a loop of the module runs the function
    `unit` (directly or through the calls `call_targets` follows); else None."""
    loops = unit.loops_of(built)
    used_in = unit.loops_of(use)
    if any(any(loop is other for other in used_in) for loop in loops):
        return "on every iteration of its loop"
    if loops or unit is index.root or type(unit.node) is not cst.FunctionDef:
        return None
    looped = looped_call(index, unit)
    if looped is None:
        return None
    call, caller = looped
    return f"on every call of '{unit.name}', which `{source_of(call.func)}(...)` in '{caller.name}' runs in a loop"


def changed_since_use(name: cst.Name, call: cst.Call, unit: Unit, index: ModuleIndex) -> cst.CSTNode | None:
    """`buffer.data += 1` (an attribute of the object `name` names assigned) between an earlier call of the
    same callable given `name` and `call`, or in a loop that also runs `call`: the statement, else None. An
    object keyed by identity still matches the cache entry its old contents compiled."""
    writes = []
    earlier = []
    text = source_of(call.func)
    for node in own_nodes(unit.node):
        kind = type(node)
        if kind is cst.Assign or kind is cst.AugAssign:
            targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]  # type: ignore[attr-defined]
            if any(
                type(t) is cst.Attribute and type(t.value) is cst.Name and t.value.value == name.value
                for t in targets
            ):
                writes.append(node)
        elif (
            kind is cst.Call
            and node is not call
            and source_of(node.func) == text  # type: ignore[attr-defined]
            and any(type(a.value) is cst.Name and a.value.value == name.value for a in node.args)  # type: ignore[attr-defined]
        ):
            earlier.append(node)
    if not writes:
        return None
    loops = {id(loop) for loop in unit.loops_of(call)}
    index.positions().resolve([call, *writes, *earlier])
    line = index.line_of(call)
    for write in writes:
        if loops & {id(loop) for loop in unit.loops_of(write)}:
            return write
        at = index.line_of(write)
        if at < line and any(index.line_of(c) < at for c in earlier):
            return write
    return None
