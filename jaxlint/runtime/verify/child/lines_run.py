"""Which lines of one file ran while a block was active: line events from `sys.monitoring` on Python
3.12+ (the other files' code is switched off after its first event, so the cost is near zero), and
`sys.settrace` before (a local tracer only for frames of that file)."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any


class SameFile:
    """Whether a code object's file name is the module's file, answered once per name (asked on every call)."""

    def __init__(self, path: str) -> None:
        self.path = os.path.realpath(path)
        self._known: dict[str, bool] = {}

    def __call__(self, filename: str) -> bool:
        known = self._known.get(filename)
        if known is None:
            known = self._known[filename] = os.path.realpath(filename) == self.path
        return known


class LinesRun:
    def __init__(self, path: str, active: bool = True) -> None:
        self.active = active  # off: no cost at all (a global tracer slows every call on 3.11)
        self._ours = SameFile(path)
        self.lines: set[int] = set()
        self._tool: int | None = None
        self._previous: Any = None

    def __enter__(self) -> LinesRun:
        if not self.active:
            return self
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None:
            for tool in range(5, -1, -1):  # the highest free id: debuggers and profilers take the low ones
                if monitoring.get_tool(tool) is None:
                    self._tool = tool
                    break
        if self._tool is not None:
            assert monitoring is not None
            monitoring.use_tool_id(self._tool, "jaxlint-verify")
            monitoring.register_callback(self._tool, monitoring.events.LINE, self._on_line)
            monitoring.set_events(self._tool, monitoring.events.LINE)
            monitoring.restart_events()
        else:
            self._previous = sys.gettrace()
            sys.settrace(self._on_call)
            threading.settrace(self._on_call)
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.active:
            return
        if self._tool is not None:
            monitoring = sys.monitoring  # type: ignore[attr-defined]
            monitoring.set_events(self._tool, 0)
            monitoring.register_callback(self._tool, monitoring.events.LINE, None)
            monitoring.free_tool_id(self._tool)
        else:
            sys.settrace(self._previous)
            threading.settrace(self._previous)  # type: ignore[arg-type]

    # sys.monitoring (3.12+)
    def _on_line(self, code: Any, line: int) -> Any:
        if self._ours(code.co_filename):
            self.lines.add(line)
            return None
        return sys.monitoring.DISABLE  # type: ignore[attr-defined]

    # sys.settrace (3.10, 3.11)
    def _on_call(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and self._ours(frame.f_code.co_filename):
            return self._on_local
        return None

    def _on_local(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self._on_local

    def ran(self, span: tuple[int, int]) -> bool:
        return any(span[0] <= line <= span[1] for line in self.lines)
