"""Objects that hash by identity, and code that builds one anew each time it runs.

A static argument of a jitted function, or the static state of an `nnx.Optimizer` given to `nnx.jit`, is part
of the compilation cache key. An object that hashes by identity is a new key each time it is built, however
alike: the function is traced and compiled again. What hashes by identity is a library result
(`library.IDENTITY_HASHED`: optax's transformations) or an instance of a plain class of the module that
defines neither `__eq__` nor `__hash__` (`classes.identity_hashed_class`). Built anew means: in a loop that
also runs the use, or in a function that the module calls in a loop. A value built once (at module level, or
in a function called once) and reused is fine, and so is anything not known to be one of these.
"""

from __future__ import annotations

import libcst as cst

from ..syntax import source_of
from .classes import identity_hashed_class
from .index import ModuleIndex, Unit
from .library import IDENTITY_HASHED


def identity_hashed(value: cst.BaseExpression, index: ModuleIndex, unit: Unit) -> tuple[cst.Call, str] | None:
    """The call that builds `value` (itself, or the one binding of a name of `unit`) when what it builds hashes
    by identity, with words for it; else None. A name bound elsewhere (a global read in a function) is
    not followed: it is built where the module runs it, once."""
    call = value
    if type(value) is cst.Name:
        if unit is not index.root and value.value not in unit.local_names:
            return None
        call = unit.single_assignment(value.value)
    if type(call) is not cst.Call:
        return None
    name = index.qualname(call.func, unit)
    if name in IDENTITY_HASHED:
        return call, f"`{source_of(call.func)}(...)` (an optax transformation: it compares by identity)"
    if (
        type(call.func) is cst.Name
        and (unit is index.root or call.func.value not in unit.local_names)
        and identity_hashed_class(index, call.func.value)
    ):
        return call, f"an instance of '{call.func.value}' (no __eq__ or __hash__: it compares by identity)"
    return None


def built_anew(built: cst.CSTNode, use: cst.CSTNode, unit: Unit, index: ModuleIndex) -> str | None:
    """Where `built` (code of `unit`) runs again before each `use` (code of `unit` too): "on every iteration
    of its loop" when a loop runs both, "on every call of 'f' (called in a loop)" when `unit` is a function
    the module calls in a loop; else None."""
    loops = unit.loops_of(built)
    used_in = unit.loops_of(use)
    if any(any(loop is other for other in used_in) for loop in loops):
        return "on every iteration of its loop"
    if loops or unit is index.root or type(unit.node) is not cst.FunctionDef:
        return None
    return f"on every call of '{unit.name}' (called in a loop)" if _called_in_loop(unit, index) else None


def _called_in_loop(unit: Unit, index: ModuleIndex) -> bool:
    """Whether the module calls the function `unit` by its name inside a loop."""
    for call, site, _ in index.sites_calling(unit.name):
        if site.loops_of(call) and any(target is unit for target, _ in index.resolve_function(call.func, site)):
            return True
    return False
