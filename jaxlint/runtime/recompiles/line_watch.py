"""Flagged statements watched while JAX traces, in the command's processes (`--run`): a side effect that
runs while JAX traces a jitted function (JAX202: it runs once per compile, not per call), and a tracer
left, after the trace, in the global or `self.attr` the flagged statement stores into (JAX105).

The parent lists the statements (`statements.watch` in the reports folder: code, file, first and last line,
the places the statement stores into); with none listed nothing is hooked. Otherwise, for the outermost
trace of each jitted call only, a `sys.settrace` function is set that asks for line events in the listed
files alone; it is removed when the trace ends, and never set when another tracer (coverage, a debugger)
is active, so it never takes their place. Records are observations (observations.py) with kind
`runs-once` or `leak`; crossref.py matches them to the findings. The statements no finding flagged that
could leak into a global (`"unflagged"`, store_candidates.py) are store_watch.py's, with cheaper events.

Nothing here imports jax: where tracers sit is `leaks.py`'s walk, shared with the verify child.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

from .evidence import LEAK, RUNS_ONCE
from .leaks import holds_tracer, place_text

WATCH_FILE = "statements.watch"  # not *.json: the parent reads those as process reports


def write_watch(directory: str, statements: list[dict[str, Any]]) -> None:
    """`statements`: `{"code", "kind", "path", "span": [first, last], "stores": [...] | None}` each."""
    with open(os.path.join(directory, WATCH_FILE), "w", encoding="utf-8") as handle:
        json.dump(statements, handle)


def read_watch(directory: str) -> list[dict[str, Any]]:
    try:
        with open(os.path.join(directory, WATCH_FILE), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return []
    return [s for s in data if isinstance(s, dict)] if isinstance(data, list) else []


class LineWatch:
    def __init__(self, statements: list[dict[str, Any]], on_seen: Any) -> None:
        from .store_watch import store_watch

        self.on_seen = on_seen
        self.by_file: dict[str, list[dict[str, Any]]] = {}
        for statement in statements:
            if not statement.get("unflagged"):
                self.by_file.setdefault(os.path.realpath(statement["path"]), []).append(statement)
        # the statements no finding flagged, that could leak into a global (store_candidates.py)
        self.stores = store_watch([s for s in statements if s.get("unflagged")], on_seen)
        self._files: dict[str, list[dict[str, Any]] | None] = {}  # co_filename -> its statements, or None
        self._reported: set[tuple[str, str, int]] = set()
        self._local = threading.local()

    # -- one outermost trace -------------------------------------------------------------------
    def begin(self) -> bool:
        """Start watching; False when nothing is (none listed, or another trace function is set)."""
        stores = self.stores is not None and self.stores.begin()
        self._local.stores = stores
        self._local.settrace = bool(self.by_file) and sys.gettrace() is None
        if self._local.settrace:
            self._local.hits = []
            sys.settrace(self._on_call)
        return stores or self._local.settrace

    def end(self) -> None:
        if getattr(self._local, "stores", False):
            self.stores.end()  # type: ignore[union-attr]
        if not getattr(self._local, "settrace", False):
            return
        sys.settrace(None)
        hits, self._local.hits = getattr(self._local, "hits", []), []
        for statement, frame_globals, instance in hits:
            if statement["kind"] == RUNS_ONCE:
                self._report(
                    statement, RUNS_ONCE, "ran while JAX traced the function: once per compile, not per call"
                )
            elif statement["kind"] == LEAK:
                where = self._leaked_into(statement, frame_globals, instance)
                if where:
                    self._report(statement, LEAK, f"left a tracer in {where} after the trace")

    # -- the trace functions -------------------------------------------------------------------
    def _statements(self, filename: str) -> list[dict[str, Any]] | None:
        if filename not in self._files:
            self._files[filename] = self.by_file.get(os.path.realpath(filename))
        return self._files[filename]

    def _on_call(self, frame: Any, event: str, arg: Any) -> Any:
        statements = self._statements(frame.f_code.co_filename)
        if not statements:
            return None

        def on_line(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                line = frame.f_lineno
                for statement in statements:
                    first, last = statement["span"]
                    if first <= line <= last:
                        hits = self._local.hits
                        if len(hits) < 100:
                            hits.append((statement, frame.f_globals, frame.f_locals.get("self")))
            return on_line

        return on_line

    def _leaked_into(self, statement: dict[str, Any], frame_globals: dict, instance: Any) -> str:
        for place in statement.get("stores") or ():
            if holds_tracer(place, frame_globals, instance):
                return place_text(place)
        return ""

    def _report(self, statement: dict[str, Any], kind: str, text: str) -> None:
        key = (kind, statement["path"], statement["span"][0])
        if key in self._reported:
            return
        self._reported.add(key)
        self.on_seen({"kind": kind, "path": statement["path"], "line": statement["span"][0], "text": text})
