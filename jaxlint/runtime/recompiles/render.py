"""The `--run` report: a table sorted by compiles, or one JSON object for CI dashboards."""

from __future__ import annotations

import json
import os
from typing import Any, TextIO

from ..confirmable import RECOMPILE_CODES
from .aggregate import RunTotals
from .crossref import Verdict
from .function_record import FunctionRecord
from .retrace_reasons import UNEXPLAINED

_SIGNATURES_SHOWN = 4
_REASONS_SHOWN = 5
_WIDTH = 110


def display_path(path: str) -> str:
    """Relative to the working directory when the file is under it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith(os.pardir) else rel


def to_json(
    *, command: str, exit_code: int, run: RunTotals, verdicts: list[Verdict], default_budget: int
) -> dict[str, Any]:
    return {
        "command": command,
        "exit_code": exit_code,
        "backend": run.backend,
        "devices": run.devices,
        "jax_version": next((p["jax_version"] for p in run.processes if p.get("jax_version")), None),
        "processes": run.processes,
        "max_compiles": default_budget,
        "functions": [_function_json(f) for f in run.functions],
        "over_budget": [f.name for f in run.over_budget],
        "internal": {"traces": run.internal_traces, "compiles": run.internal_compiles},
        "unattributed_compiles": run.unattributed_compiles,
        "static_findings": [v.to_dict() for v in verdicts],
        "errors": run.errors,
    }


def _function_json(f: FunctionRecord) -> dict[str, Any]:
    return {
        "qualname": f.qualname,
        "module": f.module,
        "path": display_path(f.path),
        "line": f.line,
        "traces": f.traces,
        "compiles": f.compiles,
        "signatures": f.signatures,
        "reasons": [{**r, "callsite": display_callsite(r.get("callsite"))} for r in f.reasons],
        "processes": f.processes,
        "max_compiles_in_process": f.max_compiles_in_process,
        "budget": f.budget,
        "over_budget": f.over_budget,
        "persistent_cache_hits": f.persistent_cache_hits,
        "compile_seconds": round(f.compile_seconds, 4),
        "signatures_dropped": f.signatures_dropped,
        "reasons_dropped": f.reasons_dropped,
    }


def display_callsite(callsite: str | None) -> str | None:
    if not callsite:
        return callsite
    path, _, line = callsite.rpartition(":")
    return f"{display_path(path)}:{line}"


def write_json(out: TextIO, data: dict[str, Any]) -> None:
    json.dump(data, out, indent=2)
    out.write("\n")


def write_text(
    out: TextIO,
    *,
    command: str,
    exit_code: int,
    run: RunTotals,
    verdicts: list[Verdict],
    default_budget: int,
    all_functions: bool = False,
    recorded: int = 0,
    store: str = "",
    unkept: list[tuple[str, str]] | None = None,
) -> None:
    w = out.write
    count = len(run.processes)
    backend = run.backend or "none (nothing compiled)"
    devices = f" ({', '.join(run.devices)})" if run.devices else ""
    w(f"jaxlint --run: {command}\n")
    w(
        f"  exit code {exit_code} · backend {backend}{devices} · {count} Python process{'es' if count != 1 else ''}"
        f" with jax · budget {default_budget} compiles per function and process\n"
    )
    if not run.processes:
        w(
            "  no Python process of the command imported jax: not a Python command, or one run with"
            " `python -I`, `-E` or `-S`, which skip the injected sitecustomize\n"
        )
    write_table(out, run, all_functions=all_functions)
    _write_verdicts(out, verdicts)
    write_recorded(out, recorded, store)
    write_unkept(out, unkept or [])
    over = run.over_budget
    if over:
        w(f"\n  FAILED: {len(over)} function{'s' if len(over) != 1 else ''} over the compile budget: ")
        w(", ".join(f"{f.qualname} ({f.max_compiles_in_process} > {f.budget})" for f in over) + "\n")
    if exit_code != 0:
        w(f"\n  the command failed with exit code {exit_code}\n")


def write_table(
    out: TextIO,
    run: RunTotals,
    *,
    by_window: bool = False,
    window: str = "process",
    all_functions: bool = False,
) -> None:
    """Functions traced more than once (or over budget) with their signatures and retrace reasons,
    then one line for the rest, JAX's own functions and unattributed compiles.

    A window is a process (`--run`) or a test (pytest, `by_window`: reasons are then counted by text
    instead of listed by retrace number, and budgets are checked per test by the plugin).
    """
    w = out.write
    functions = run.functions
    # Installed libraries' own jitted functions (optax's update, flax's internals) are not the user's to
    # fix: one line for them unless asked, except any over budget, which must be explained.
    libraries = [] if all_functions else [f for f in functions if is_library(f) and not f.over_budget]
    functions = [f for f in functions if f not in libraries]
    shown = [f for f in functions if f.retraced or f.over_budget]
    quiet = [f for f in functions if f not in shown]
    if shown:
        w(f"\n  {'compiles':>8}  {'traces':>6}  {'sigs':>4}  function  (defined at)\n")
        for f in shown:
            _write_function(out, f, by_window=by_window, window=window)
    if quiet:
        total = sum(f.compiles for f in quiet)
        w(
            f"\n  {len(quiet)} other jitted function{'s' if len(quiet) != 1 else ''} traced once"
            f" ({total} compile{'s' if total != 1 else ''}): "
            + ", ".join(f.qualname for f in quiet[:8])
            + (", …" if len(quiet) > 8 else "")
            + "\n"
        )
    if libraries:
        total = sum(f.compiles for f in libraries)
        w(
            f"  {len(libraries)} jitted function{'s' if len(libraries) != 1 else ''} of installed libraries"
            f" ({total} compile{'s' if total != 1 else ''}; --all-functions lists them)\n"
        )
    if run.internal_compiles or run.internal_traces:
        w(
            f"  JAX's own functions (eager op-by-op dispatch, jnp helpers): {run.internal_traces} traces,"
            f" {run.internal_compiles} compiles\n"
        )
    if run.unattributed_compiles:
        names = ", ".join(f"{n} ×{c}" for n, c in sorted(run.unattributed_compiles.items()))
        w(f"  compiles not attributed to a traced function: {names}\n")
    for error in run.errors:
        w(f"  instrumentation error: {error}\n")


def _write_function(out: TextIO, f: FunctionRecord, *, by_window: bool, window: str) -> None:
    w = out.write
    where = f"{display_path(f.path)}:{f.line}"
    flag = (
        f"  OVER BUDGET ({f.max_compiles_in_process} > {f.budget})" if f.over_budget and not by_window else ""
    )
    processes = (
        f"  [{f.processes} {window}s, at most {f.max_compiles_in_process} in one]" if f.processes > 1 else ""
    )
    sigs = len(f.signatures) + f.signatures_dropped
    w(f"  {f.compiles:>8}  {f.traces:>6}  {sigs:>4}  {f.module}:{f.qualname}  ({where}){flag}{processes}\n")
    indent = " " * 26
    for signature in f.signatures[:_SIGNATURES_SHOWN]:
        w(_clip(f"{indent}seen {signature}") + "\n")
    if sigs > _SIGNATURES_SHOWN:
        w(f"{indent}… {sigs - _SIGNATURES_SHOWN} more signatures\n")
    groups = _count_reasons(f.reasons) if by_window else group_reasons(f.reasons)
    for which, reason, callsite in groups[:_REASONS_SHOWN]:
        at = f"  [{display_callsite(callsite)}]" if callsite else ""
        w(f"{indent}{which}: {reason}{at}\n")
    hidden = len(groups) - _REASONS_SHOWN + f.reasons_dropped
    if hidden > 0:
        w(f"{indent}… {hidden} more retrace reasons (see --format json)\n")


def _reason_text(r: dict[str, Any]) -> str:
    """Our reason, except where we could not tell and JAX could: a pytree's static part (a new optax
    optimizer or flax TrainState each run) is outside the signature we compare, but JAX names it."""
    if r.get("jax_hint") and r["reason"] in ("unknown", UNEXPLAINED):
        return f"JAX says: {r['jax_hint']}"
    return r["reason"]


_LIBRARY_DIRS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def is_library(f: FunctionRecord) -> bool:
    """Defined in an installed package (flax, optax, ...), not in the project being run."""
    return any(d in f.path for d in _LIBRARY_DIRS)


def group_reasons(reasons: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    """Consecutive retraces with the same reason in the same process collapse into one line."""
    runs: list[list[Any]] = []  # [first, last, reason, callsite, pid]
    for r in reasons:
        reason, pid = _reason_text(r), r.get("pid")
        last = runs[-1] if runs else None
        if last and last[2] == reason and last[4] == pid and r["trace"] == last[1] + 1:
            last[1] = r["trace"]
        else:
            runs.append([r["trace"], r["trace"], reason, r.get("callsite"), pid])
    return [
        (f"retrace {first}" if first == last else f"retraces {first}–{last}", reason, callsite)
        for first, last, reason, callsite, _ in runs
    ]


def _count_reasons(reasons: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    """Each distinct reason once, with how often it occurred, most frequent first."""
    counts: dict[str, list[Any]] = {}
    for r in reasons:
        entry = counts.setdefault(_reason_text(r), [0, r.get("callsite")])
        entry[0] += 1
    ordered = sorted(counts.items(), key=lambda item: -item[1][0])
    return [(f"{n} retrace{'s' if n != 1 else ''}", reason, callsite) for reason, (n, callsite) in ordered]


def _write_verdicts(out: TextIO, verdicts: list[Verdict]) -> None:
    confirmed = [v for v in verdicts if v.confirmed]
    if confirmed:
        out.write("\n")
    for v in confirmed:
        f = v.finding
        named = f" ({f.name})" if v.found else ""  # no static finding there: say what the rule is
        out.write(
            f"  {v.status} {f.code}{named} {display_path(f.path)}:{f.line}:{f.column}: {seen_text(v)}\n"
        )
    recompiles = sum(1 for v in verdicts if not v.confirmed and v.finding.code in RECOMPILE_CODES)
    if recompiles:
        out.write(
            f"  {recompiles} JAX401/JAX402 finding{'s' if recompiles != 1 else ''} not observed recompiling"
            " in this run\n"
        )
    others = len(verdicts) - len(confirmed) - recompiles
    if others:
        out.write(
            f"  {others} other confirmable finding{'s' if others != 1 else ''} not observed in this run"
            " (`jaxlint --verify` traces them)\n"
        )


def seen_text(v: Verdict) -> str:
    """What the run did that confirms `v`, in a sentence."""
    fn, error = v.function, v.error
    if fn is not None:
        return f"'{fn.qualname}' was traced {fn.traces} times and compiled {fn.compiles} times"
    if v.observed is not None and v.observed["kind"] == "key-reuse":
        return f"line {v.observed['line']}: {v.observed['text']}"
    if v.observed is not None and v.observed["kind"] in ("leak", "runs-once"):
        return f"line {v.observed['line']} {v.observed['text']}"
    if v.observed is not None:
        return f"line {v.observed['line']} printed {v.observed['text']!r} while JAX traced it"
    assert error is not None
    if error.get("uncaught"):
        return f"{error['types'][0]} raised at line {v.error_line}, uncaught: it ended the program"
    if error.get("checked"):
        return f"{error['types'][0]} at line {v.error_line}, by JAX's key-reuse check of the trace (not raised in the program)"
    return f"{error['types'][0]} raised at line {v.error_line} during the run"


def write_recorded(out: TextIO, functions: int, directory: str) -> None:
    if functions:
        out.write(
            f"\n  recorded the calls of {functions} jitted function{'s' if functions != 1 else ''} in"
            f" {display_path(directory)}: `jaxlint --verify` traces them with these inputs first\n"
        )


def write_unkept(out: TextIO, unkept: list[tuple[str, str]]) -> None:
    """Functions called only with arguments another process cannot rebuild (a flax TrainState's closures)."""
    if not unkept:
        return
    out.write("\n  could not record the calls of (`jaxlint --verify` will say NOT RUN for their findings):\n")
    for qualname, why in unkept[:10]:
        out.write(f"    {qualname}: {why}\n")
    out.write(
        "  the way out: have the module's top-level code make such a call (a script or notebook that builds the"
        " state and calls the function while imported: `jaxlint --verify` uses those calls live), or declare"
        " `[tool.jaxlint.verify.examples]`\n"
    )


def _clip(line: str) -> str:
    return line if len(line) <= _WIDTH else line[: _WIDTH - 1] + "…"
