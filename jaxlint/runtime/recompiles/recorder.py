"""Per-function trace and compile counts over a window (a process, a test, a `with` block).

A Recorder subscribes to the JAX hooks' events and aggregates them; several can listen at once (the
`--run` process report, the pytest plugin, `count_compiles()` blocks), each counting every event once.
Thread-safe: JAX traces and compiles on whatever thread calls the function.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from .events import CompileEvent, FunctionInfo, TraceEvent
from .function_record import FunctionRecord
from .signatures import render


class Recorder:
    """Counts what the hooks report while subscribed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.functions: dict[tuple[str, int, str], FunctionRecord] = {}
        self.internal_traces = 0
        self.internal_compiles = 0
        self.unattributed_compiles: dict[str, int] = {}
        self.compiles_total = 0
        self.version = 0  # bumped on every change; the process report writes only when it moved

    def on_trace(self, event: TraceEvent) -> None:
        with self._lock:
            self.version += 1
            if event.info.internal:
                self.internal_traces += 1
                return
            stats = self._stats(event.info)
            stats.traces += 1
            if event.signature:
                stats.add_signature(render(event.signature))
            if event.reason is not None or (stats.traces > 1 and event.jax_hint):
                reason = {
                    "trace": stats.traces,
                    "reason": event.reason or "unknown",
                    "callsite": event.callsite,
                    "jax_hint": event.jax_hint,
                }
                stats.add_reasons([reason])

    def on_compile(self, event: CompileEvent) -> None:
        with self._lock:
            self.version += 1
            self.compiles_total += 1
            if event.info is None:
                self.unattributed_compiles[event.name] = self.unattributed_compiles.get(event.name, 0) + 1
                return
            if event.info.internal:
                self.internal_compiles += 1
                return
            stats = self._stats(event.info)
            stats.compiles += 1
            stats.compile_seconds += event.seconds
            stats.add_compile_times([[round(time.time(), 3), round(event.seconds, 4)]])
            stats.persistent_cache_hits += event.persistent_cache_hit
            stats.max_compiles_in_process = stats.compiles

    def _stats(self, info: FunctionInfo) -> FunctionRecord:
        stats = self.functions.get(info.key)
        if stats is None:
            stats = FunctionRecord(info.module, info.qualname, info.path, info.line, info.first_line)
            self.functions[info.key] = stats
        return stats

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready copy: functions sorted by compiles, then traces."""
        with self._lock:
            functions = sorted(self.functions.values(), key=lambda s: (-s.compiles, -s.traces, s.key))
            return {
                "functions": [stats.to_dict() for stats in functions],
                "internal": {"traces": self.internal_traces, "compiles": self.internal_compiles},
                "unattributed_compiles": dict(self.unattributed_compiles),
                "compiles_total": self.compiles_total,
            }
