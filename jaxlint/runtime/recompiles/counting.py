"""`count_compiles()`: trace and compile counts of a block of code, for assertions in users' tests.

from jaxlint.runtime import count_compiles

with count_compiles() as counts:
    step(params, batch)
    step(params, batch)
assert counts.compiles_of(step) == 1, counts.report()
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from .function_record import FunctionRecord
from .recorder import Recorder


class CompileCounts:
    """What happened inside a `count_compiles()` block; it keeps counting until the block ends."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder

    @property
    def functions(self) -> list[FunctionRecord]:
        """Your jitted functions, most compiles first (JAX's own functions are left out)."""
        return sorted(self._recorder.functions.values(), key=lambda s: (-s.compiles, -s.traces, s.key))

    @property
    def compiles(self) -> int:
        """XLA compiles of your jitted functions."""
        return sum(s.compiles for s in self._recorder.functions.values())

    @property
    def traces(self) -> int:
        """Traces (Python body executions) of your jitted functions, nested ones included."""
        return sum(s.traces for s in self._recorder.functions.values())

    @property
    def all_compiles(self) -> int:
        """Every compile, JAX's eager op-by-op dispatch included."""
        return self._recorder.compiles_total

    def stats(self, fn: Any) -> FunctionRecord | None:
        """The counts of one function: the jitted function itself, its Python function, or a name.

        A name is a qualname (`step`, `Model.apply`, `train.<locals>.<lambda>`) or `module:qualname`.
        """
        matches = [s for s in self._recorder.functions.values() if _matches(s, fn)]
        if not matches:
            return None
        if len(matches) > 1:
            raise LookupError(f"{fn!r} names {len(matches)} functions; use 'module:qualname'")
        return matches[0]

    def compiles_of(self, fn: Any) -> int:
        stats = self.stats(fn)
        return stats.compiles if stats else 0

    def traces_of(self, fn: Any) -> int:
        stats = self.stats(fn)
        return stats.traces if stats else 0

    def report(self) -> str:
        """A few lines per function: counts, signatures and retrace reasons, for assertion messages."""
        lines = []
        for s in self.functions:
            lines.append(f"{s.name} ({s.path}:{s.line}): {s.compiles} compiles, {s.traces} traces")
            lines.extend(f"    {sig}" for sig in s.signatures)
            lines.extend(f"    retrace {r['trace']}: {r['reason']}" for r in s.reasons)
        return "\n".join(lines) or "no jitted function was traced or compiled"

    def __repr__(self) -> str:
        return (
            f"CompileCounts(compiles={self.compiles}, traces={self.traces}, functions={len(self.functions)})"
        )


def _matches(stats: FunctionRecord, fn: Any) -> bool:
    info = stats
    if isinstance(fn, str):
        return fn in (info.qualname, f"{info.module}:{info.qualname}")
    target = fn
    for _ in range(8):  # a jitted function wraps the Python function it compiles
        code = getattr(target, "__code__", None)
        if code is not None:
            return (
                os.path.abspath(code.co_filename) == info.path
                and code.co_firstlineno == info.first_line
                and getattr(target, "__qualname__", info.qualname) == info.qualname
            )
        target = getattr(target, "__wrapped__", None) or getattr(target, "__func__", None)
        if target is None:
            return False
    return False


@contextlib.contextmanager
def count_compiles() -> Iterator[CompileCounts]:
    """Count traces and compiles of jitted functions inside the block (this thread and others)."""
    from .jax_hooks import install

    bus = install()
    recorder = Recorder()
    bus.subscribe(recorder)
    try:
        yield CompileCounts(recorder)
    finally:
        bus.unsubscribe(recorder)
