"""Per-function trace and compile counts over a window (a process, a test, a `with` block).

A Recorder subscribes to the JAX hooks' events and aggregates them; several can listen at once (the
`--run` process report, the pytest plugin, `count_compiles()` blocks), each counting every event once.
Thread-safe: JAX traces and compiles on whatever thread calls the function.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from .events import CompileEvent, FunctionInfo, TraceEvent
from .signatures import Signature, render

SIGNATURE_LIMIT = 50  # distinct signatures kept per function; the rest are only counted
REASON_LIMIT = 50  # retrace reasons kept per function
SIGNATURE_TEXT_LIMIT = 2000  # characters of one rendered signature (a model's parameters can be thousands)


@dataclasses.dataclass
class FunctionStats:
    info: FunctionInfo
    traces: int = 0
    compiles: int = 0
    persistent_cache_hits: int = 0
    compile_seconds: float = 0.0
    signatures: list[Signature] = dataclasses.field(default_factory=list)
    signatures_dropped: int = 0
    reasons: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    reasons_dropped: int = 0

    def to_dict(self) -> dict[str, Any]:
        info = self.info
        return {
            "module": info.module,
            "qualname": info.qualname,
            "path": info.path,
            "line": info.line,
            "first_line": info.first_line,
            "traces": self.traces,
            "compiles": self.compiles,
            "persistent_cache_hits": self.persistent_cache_hits,
            "compile_seconds": round(self.compile_seconds, 6),
            "signatures": [_clip(render(sig)) for sig in self.signatures],
            "signatures_dropped": self.signatures_dropped,
            "reasons": list(self.reasons),
            "reasons_dropped": self.reasons_dropped,
        }


class Recorder:
    """Counts what the hooks report while subscribed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.functions: dict[tuple[str, int, str], FunctionStats] = {}
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
            if event.signature and event.signature not in stats.signatures:
                if len(stats.signatures) < SIGNATURE_LIMIT:
                    stats.signatures.append(event.signature)
                else:
                    stats.signatures_dropped += 1
            if event.reason is not None or (stats.traces > 1 and event.jax_hint):
                if len(stats.reasons) < REASON_LIMIT:
                    stats.reasons.append(
                        {
                            "trace": stats.traces,
                            "reason": event.reason or "unknown",
                            "callsite": event.callsite,
                            "jax_hint": event.jax_hint,
                        }
                    )
                else:
                    stats.reasons_dropped += 1

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
            stats.persistent_cache_hits += event.persistent_cache_hit

    def _stats(self, info: FunctionInfo) -> FunctionStats:
        stats = self.functions.get(info.key)
        if stats is None:
            stats = self.functions[info.key] = FunctionStats(info)
        return stats

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready copy: functions sorted by compiles, then traces."""
        with self._lock:
            functions = sorted(self.functions.values(), key=lambda s: (-s.compiles, -s.traces, s.info.key))
            return {
                "functions": [stats.to_dict() for stats in functions],
                "internal": {"traces": self.internal_traces, "compiles": self.internal_compiles},
                "unattributed_compiles": dict(self.unattributed_compiles),
                "compiles_total": self.compiles_total,
            }


def _clip(text: str) -> str:
    return text if len(text) <= SIGNATURE_TEXT_LIMIT else text[: SIGNATURE_TEXT_LIMIT - 1] + "…"
