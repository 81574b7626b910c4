"""Parent side of `--run`: merge the per-process reports and check each function's compile budget.

A function compiled in several processes (a script and the subprocess it spawns, xdist workers) is
one row; its counts add up, and the budget applies to the largest count in any single process.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
from collections.abc import Mapping
from typing import Any

from .call_records import MAX_CALLS_PER_FUNCTION
from .function_record import FunctionRecord


@dataclasses.dataclass
class RunTotals:
    functions: list[FunctionRecord]
    processes: list[dict[str, Any]]  # pid, ppid, argv, backend, … of each process that imported jax
    internal_traces: int = 0
    internal_compiles: int = 0
    unattributed_compiles: dict[str, int] = dataclasses.field(default_factory=dict)
    errors: list[str] = dataclasses.field(default_factory=list)
    calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # replayable calls (call_records)
    raised: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # errors with the user's frames
    observed: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # observations.py's records

    @property
    def backend(self) -> str | None:
        backends = sorted({p["backend"] for p in self.processes if p.get("backend")})
        return ",".join(backends) if backends else None

    @property
    def devices(self) -> list[str]:
        return sorted({d for p in self.processes for d in p.get("devices") or ()})

    @property
    def over_budget(self) -> list[FunctionRecord]:
        return [f for f in self.functions if f.over_budget]


def load_reports(directory: str) -> list[dict[str, Any]]:
    """Every process report in `directory`, in start order; unreadable ones are skipped."""
    reports = []
    for path in glob.glob(os.path.join(directory, "*.json")):
        try:
            with open(path, encoding="utf-8") as handle:
                reports.append(json.load(handle))
        except (OSError, ValueError):
            continue
    return sorted(reports, key=lambda r: r.get("pid", 0))


def budget_for(module: str, qualname: str, path: str, budgets: Mapping[str, int], default: int) -> int:
    """`module:qualname`, then `qualname`; a script's `__main__` also answers to its file stem."""
    names = [f"{module}:{qualname}"]
    if module == "__main__":
        names.append(f"{os.path.splitext(os.path.basename(path))[0]}:{qualname}")
    names.append(qualname)
    for name in names:
        if name in budgets:
            return int(budgets[name])
    return default


class Merger:
    """Adds up reports of separate windows (processes, or tests under pytest) function by function."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, int, str], FunctionRecord] = {}
        self.run = RunTotals(functions=[], processes=[])

    def add(self, report: dict[str, Any], window: Any = None) -> None:
        """One process report (or `Recorder.snapshot()`, or another Merger's `as_report()`)."""
        run = self.run
        if "pid" in report:
            run.processes.append({k: report.get(k) for k in _PROCESS_FIELDS})
        run.internal_traces += report.get("internal", {}).get("traces", 0)
        run.internal_compiles += report.get("internal", {}).get("compiles", 0)
        for name, count in report.get("unattributed_compiles", {}).items():
            run.unattributed_compiles[name] = run.unattributed_compiles.get(name, 0) + count
        run.errors.extend(e for e in report.get("errors", []) if e not in run.errors)
        for entry in report.get("calls", []):
            _add_calls(run.calls, entry)
        run.raised.extend(e for e in report.get("raised", []) if e not in run.raised)
        run.observed.extend(o for o in report.get("observed", []) if o not in run.observed)
        window = report.get("pid") if window is None else window
        for fn in report.get("functions", []):
            key = (fn["path"], fn["first_line"], fn["qualname"])
            row = self._rows.get(key)
            if row is None:
                row = self._rows[key] = FunctionRecord(
                    fn["module"], fn["qualname"], fn["path"], fn["line"], fn["first_line"], processes=0
                )
            _add(row, fn, window)

    def result(self, *, budgets: Mapping[str, int], default_budget: int) -> RunTotals:
        for row in self._rows.values():
            row.budget = budget_for(row.module, row.qualname, row.path, budgets, default_budget)
        self.run.functions = sorted(
            self._rows.values(), key=lambda f: (-f.compiles, -f.traces, f.path, f.line)
        )
        return self.run

    def as_report(self) -> dict[str, Any]:
        """A report that another Merger can add, keeping the per-window maximum (pytest-xdist workers)."""
        return {
            "functions": [{**row.to_dict(), "windows": row.processes} for row in self._rows.values()],
            "internal": {"traces": self.run.internal_traces, "compiles": self.run.internal_compiles},
            "unattributed_compiles": self.run.unattributed_compiles,
            "errors": self.run.errors,
        }


_PROCESS_FIELDS = ("pid", "ppid", "argv", "backend", "devices", "jax_version", "mode")


def merge(reports: list[dict[str, Any]], *, budgets: Mapping[str, int], default_budget: int) -> RunTotals:
    merger = Merger()
    for report in reports:
        merger.add(report)
    return merger.result(budgets=budgets, default_budget=default_budget)


def _add_calls(rows: list[dict[str, Any]], entry: dict[str, Any]) -> None:
    """One function's recorded calls, merged with those other processes recorded, a few at most."""
    key = (entry.get("path"), entry.get("first_line"), entry.get("qualname"))
    for row in rows:
        if (row.get("path"), row.get("first_line"), row.get("qualname")) == key:
            row["calls"] += [c for c in entry.get("calls", []) if c not in row["calls"]]
            del row["calls"][MAX_CALLS_PER_FUNCTION:]
            if "unkept" in entry:
                row.setdefault("unkept", entry["unkept"])
            return
    rows.append({**entry, "calls": list(entry.get("calls", []))[:MAX_CALLS_PER_FUNCTION]})


def _add(row: FunctionRecord, fn: dict[str, Any], window: Any) -> None:
    row.traces += fn["traces"]
    row.compiles += fn["compiles"]
    row.persistent_cache_hits += fn.get("persistent_cache_hits", 0)
    row.compile_seconds += fn.get("compile_seconds", 0.0)
    row.add_compile_times(fn.get("compile_times", []))
    row.processes += fn.get("windows", 1)
    row.max_compiles_in_process = max(
        row.max_compiles_in_process, fn.get("max_compiles_in_process", fn["compiles"])
    )
    for signature in fn.get("signatures", []):
        row.add_signature(signature)
    row.signatures_dropped += fn.get("signatures_dropped", 0)
    reasons = [r if "pid" in r else {**r, "pid": window} for r in fn.get("reasons", [])]
    row.add_reasons(reasons, fn.get("reasons_dropped", 0))
