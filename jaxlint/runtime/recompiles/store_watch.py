"""The statements that could leak a tracer into a module global (store_candidates.py), watched while JAX
traces: one whose global holds a tracer right after the statement ran that it did not hold right before
leaked it (JAX105, found by running: the record is an observation of kind `leak`).

Python 3.12's `sys.monitoring` gives line and return events of the candidates' own functions only, so the
rest of the trace runs at full speed (a `sys.settrace` hook, called on every Python call JAX's tracing
makes, made tracing 1.7 times slower). Before 3.12 nothing is watched. Events are switched on for the
outermost traces only, and off when the last ends.

Nothing here imports jax.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from typing import Any

from .evidence import LEAK
from .leaks import global_tracers, place_text

TOOL_NAME = "jaxlint-leaks"


def store_watch(statements: list[dict[str, Any]], on_seen: Any) -> StoreWatch | None:
    """A watch of `statements`, or None: none given, Python before 3.12, or no monitoring tool id free."""
    monitoring = getattr(sys, "monitoring", None)
    if not statements or monitoring is None:
        return None
    for tool in (4, 3):  # the ids no standard tool claims (debugger 0, coverage 1, profiler 2, optimizer 5)
        try:
            monitoring.use_tool_id(tool, TOOL_NAME)
        except ValueError:
            continue
        return StoreWatch(statements, on_seen, tool)
    return None


class StoreWatch:
    def __init__(self, statements: list[dict[str, Any]], on_seen: Any, tool: int) -> None:
        self.on_seen = on_seen
        self.tool = tool
        self.by_file: dict[str, list[dict[str, Any]]] = {}
        for statement in statements:
            self.by_file.setdefault(os.path.realpath(statement["path"]), []).append(statement)
        self.codes: dict[types.CodeType, list[dict[str, Any]]] = {}  # a function's code -> its candidates
        self._modules_seen = -1
        self._active = 0  # outermost traces in progress, over all threads
        self._lock = threading.Lock()
        self._local = threading.local()
        self._reported: set[tuple[str, int]] = set()
        events = sys.monitoring.events
        self.events = events.LINE | events.PY_RETURN
        sys.monitoring.register_callback(tool, events.LINE, self._on_line)
        sys.monitoring.register_callback(tool, events.PY_RETURN, self._on_return)

    # -- one outermost trace -------------------------------------------------------------------
    def begin(self) -> bool:
        self._find_codes()
        if not self.codes:
            return False
        self._local.tracing = True
        self._local.pending = {}
        with self._lock:
            self._active += 1
            if self._active == 1:
                for code in self.codes:
                    sys.monitoring.set_local_events(self.tool, code, self.events)
        return True

    def end(self) -> None:
        self._local.tracing = False
        for entry in list(getattr(self._local, "pending", {}).values()):
            self._settle(entry)
        self._local.pending = {}
        with self._lock:
            self._active -= 1
            if self._active == 0:
                for code in self.codes:
                    sys.monitoring.set_local_events(self.tool, code, 0)

    # -- the events ----------------------------------------------------------------------------
    def _on_line(self, code: types.CodeType, line: int) -> Any:
        if not getattr(self._local, "tracing", False):
            return None
        frame = sys._getframe(1)
        pending = self._local.pending
        entry = pending.get(id(frame))
        if entry is not None:
            first, last = entry[0]["span"]
            if first < line <= last:
                return None  # still inside the statement (a call over several lines)
            self._settle(pending.pop(id(frame)))
        for statement in self.codes.get(code, ()):
            if statement["span"][0] == line:
                place = statement["stores"][0]
                pending[id(frame)] = (statement, frame.f_globals, global_tracers(place, frame.f_globals))
                break
        return None

    def _on_return(self, code: types.CodeType, offset: int, value: Any) -> Any:
        if getattr(self._local, "tracing", False):
            entry = self._local.pending.pop(id(sys._getframe(1)), None)
            if entry is not None:
                self._settle(entry)
        return None

    def _settle(self, entry: tuple[dict[str, Any], dict, set[int]]) -> None:
        statement, frame_globals, before = entry
        place = statement["stores"][0]
        try:
            gained = global_tracers(place, frame_globals) - before
        except Exception:
            return
        key = (statement["path"], statement["span"][0])
        if gained and key not in self._reported:
            self._reported.add(key)
            self.on_seen(
                {
                    "kind": LEAK,
                    "path": statement["path"],
                    "line": statement["span"][0],
                    "text": f"left a tracer in {place_text(place)} after the trace",
                }
            )

    # -- the candidates' code objects -----------------------------------------------------------
    def _find_codes(self) -> None:
        """The code objects of the candidates' functions, in the modules imported so far."""
        if len(sys.modules) == self._modules_seen:
            return
        self._modules_seen = len(sys.modules)
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if not isinstance(filename, str):
                continue
            statements = self.by_file.get(os.path.realpath(filename))
            if statements:
                for code in _codes_of(module, filename):
                    lines = {line for _, _, line in code.co_lines() if line}
                    found = [s for s in statements if s["span"][0] in lines]
                    if found and code not in self.codes:
                        self.codes[code] = found


def _codes_of(module: types.ModuleType, filename: str) -> list[types.CodeType]:
    """Every code object of the module's functions, classes' methods and the functions nested in them."""
    real = os.path.realpath(filename)
    stack: list[Any] = list(vars(module).values())
    seen: set[int] = set()
    codes: list[types.CodeType] = []
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, types.CodeType):
            if os.path.realpath(value.co_filename) == real:
                codes.append(value)
                stack.extend(c for c in value.co_consts if isinstance(c, types.CodeType))
            continue
        if isinstance(value, type) and value.__module__ == module.__name__:
            stack.extend(vars(value).values())
            continue
        if not callable(value) or isinstance(value, types.ModuleType):
            continue
        for attribute in ("__code__", "__wrapped__", "__func__", "func"):  # jit wrappers, partials
            try:
                inner = getattr(value, attribute, None)
            except Exception:
                inner = None
            if inner is not None:
                stack.append(inner)
    return codes
