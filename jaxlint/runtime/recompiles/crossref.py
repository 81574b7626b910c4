"""Static findings that a run proves: JAX401 (jit-in-loop) and JAX402 (unhashable static argument).

A finding is CONFIRMED by a function that was traced or compiled more than once, in the same file,
when the finding's line is the function's definition (decorators to `def`, or the `lambda` line), a
line from which a retrace was called, or when the finding names the function as its own.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from typing import Any

from ..confirmable import RECOMPILE_CODES
from .function_record import FunctionRecord


@dataclasses.dataclass(frozen=True)
class Verdict:
    finding: Any  # jaxlint.finding.Finding (duck-typed: path, line, column, code, name, function)
    function: FunctionRecord | None  # the function that confirms it, if any

    @property
    def confirmed(self) -> bool:
        return self.function is not None

    def to_dict(self) -> dict[str, Any]:
        f = self.finding
        data: dict[str, Any] = {
            "code": f.code,
            "path": f.path,
            "line": f.line,
            "column": f.column,
            "status": "CONFIRMED" if self.function else "NOT OBSERVED",
        }
        if self.function is not None:
            data.update(
                qualname=self.function.qualname, traces=self.function.traces, compiles=self.function.compiles
            )
        return data


def cross_reference(findings: Iterable[Any] | None, functions: list[FunctionRecord]) -> list[Verdict]:
    verdicts = []
    for finding in findings or ():
        if getattr(finding, "code", None) not in RECOMPILE_CODES:
            continue
        matches = [fn for fn in functions if fn.retraced and _matches(finding, fn)]
        best = max(matches, key=lambda fn: (fn.compiles, fn.traces), default=None)
        verdicts.append(Verdict(finding, best))
    return verdicts


def _matches(finding: Any, fn: FunctionRecord) -> bool:
    if not _same_file(finding.path, fn.path):
        return False
    line = finding.line
    if fn.first_line <= line <= fn.line:
        return True
    if getattr(finding, "function", None) == fn.qualname:
        return True
    return any(_callsite_line(reason.get("callsite"), fn.path) == line for reason in fn.reasons)


def _callsite_line(callsite: str | None, path: str) -> int | None:
    if not callsite:
        return None
    file, _, line = callsite.rpartition(":")
    return int(line) if line.isdigit() and _same_file(file, path) else None


def _same_file(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False
