"""Wall-clock timers: the clocks, and the user's context managers that read one around their body.

`with timer("fwd"): y = f(x)` times its body when `timer` is a `@contextmanager` generator of this module that
reads a clock before its `yield` and after it, or a class of this module whose `__enter__` and `__exit__`
each read one. A timer that waits for JAX work itself (`block_until_ready`, `effects_barrier`) is not one
that measures dispatch only, and is not reported as a timer.
"""

from __future__ import annotations

import libcst as cst

from ...syntax import own_nodes, source_of
from ..binding.index import ModuleIndex, Unit
from ..semantics.library import CLOCKS, CONTEXT_MANAGERS, WAITS

# The modules the clocks live in: a module importing none of them times nothing by a clock.
CLOCK_MODULES = frozenset(name.split(".")[0] for name in CLOCKS)


def timer_manager(item: cst.BaseExpression, index: ModuleIndex, unit: Unit) -> str | None:
    """What `with item:` is, when it times its body by a clock ("a @contextmanager timer", "a timer class"),
    else None. Another project module's timer (either) is known by the export its module gives (project
    mode)."""
    if type(item) is not cst.Call or type(item.func) not in (cst.Name, cst.Attribute):
        return None
    defs = index.resolve_function(item.func, unit)
    if not defs:
        project = index.project
        qualname = index.qualname(item.func, unit) if project is not None else None
        found = project.exports.get(qualname) if qualname is not None else None
        if qualname is not None and found is not None and found.timer:
            return f"{source_of(item.func)}(), a timer of module {qualname.rpartition('.')[0]}"
    if type(item.func) is not cst.Name:
        return None
    name = item.func.value
    if len(defs) == 1:
        return f"{name}(), a @contextmanager timer" if context_timer(defs[0][0], index) else None
    if defs or not timer_class(name, index):
        return None
    return f"{name}, a timer class"


def timer_class(name: str, index: ModuleIndex) -> bool:
    """Whether the module's top-level class `name` is a timer: its `__enter__` and `__exit__` each read a clock
    and neither waits for JAX work."""
    class_node = index.classes.get(name)
    if class_node is None:
        return False
    methods = index.class_methods.get(id(class_node), {})
    enter, leave = methods.get("__enter__", []), methods.get("__exit__", [])
    if len(enter) != 1 or len(leave) != 1:
        return False
    return all(_clock_only(m, index) for m in (enter[0], leave[0]))


def context_timer(unit: Unit, index: ModuleIndex) -> bool:
    """Whether a def is a `@contextmanager` generator that reads a clock before its `yield` and after it, and
    never waits for JAX work."""
    function = unit.node
    if type(function) is not cst.FunctionDef or not any(
        index.qualname(d.decorator, unit.parent) in CONTEXT_MANAGERS for d in function.decorators
    ):
        return False
    before, after, seen_yield = False, False, False
    for node in _in_order(function):
        if type(node) is cst.Yield:
            seen_yield = True
        elif type(node) is cst.Call and _reads_clock(node, index, unit):
            after = after or seen_yield
            before = before or not seen_yield
        elif _waits(node):
            return False
    return before and after


def _clock_only(method: Unit, index: ModuleIndex) -> bool:
    """Whether a method reads a clock and never waits for JAX work."""
    clock = False
    for node in own_nodes(method.node):
        if _waits(node):
            return False
        if type(node) is cst.Call and _reads_clock(node, index, method):
            clock = True
    return clock


def _reads_clock(call: cst.Call, index: ModuleIndex, unit: Unit) -> bool:
    return index.qualname(call.func, unit) in CLOCKS


def _waits(node: cst.CSTNode) -> bool:
    return type(node) is cst.Name and node.value in WAITS


def _in_order(function: cst.FunctionDef) -> list[cst.CSTNode]:
    """A def's own nodes in source order (own_nodes walks last child first)."""
    return list(own_nodes(function))[::-1]
