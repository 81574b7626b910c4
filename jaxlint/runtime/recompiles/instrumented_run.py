"""`jaxlint --verify --run CMD`: run a command with recompile counting in its Python processes.

A single string is run by the shell (`--run "python train.py && python eval.py"`); a list is executed
as is (`--run -- python train.py --epochs 2`). The command's output goes to the terminal as usual; with
`--format json` its stdout is sent to stderr so that stdout holds the JSON report only.

Errors the command raised at a flagged line confirm that finding, and so does a tracer printed there
while JAX traced (JAX201/JAX203, observations.py; crossref.py); a key consumed twice (key_fingerprints.py) is
JAX301, confirmed or FOUND BY RUNNING. Every jitted call's
abstract signature is recorded (call_records.py) into `signatures_dir`, the store that a later
`jaxlint --verify` builds its inputs from (signature_store.py).

Exit code: the command's own when it fails (128+N when killed by signal N, 127 when it cannot be
started), else 1 when a function compiled more than its budget in one process or the run found a bug
no static finding named (FOUND BY RUNNING: run_found.py), else 0.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from .._isolate import processes_with_marker
from .aggregate import load_reports, merge
from .bootstrap import child_environment, write_sitecustomize
from .budget import DEFAULT_MAX_COMPILES
from .crossref import (
    cross_reference,
    cross_reference_errors,
    cross_reference_observations,
    watched_statements,
)
from .line_watch import write_watch
from .process_report import ENV_DIR
from .render import to_json, write_json, write_text
from .run_facts import write_facts
from .run_found import found_by_running
from .signature_store import write_calls
from .store_candidates import store_candidates


def run_command(
    argv: list[str],
    *,
    max_compiles: int | None = None,
    budgets: Mapping[str, int] | None = None,
    fmt: str = "text",
    out: TextIO | None = None,
    static_findings: list[Any] | None = None,
    all_functions: bool = False,
    signatures_dir: str | None = None,
    root: str | None = None,
    html: str | None = None,
    names: Mapping[str, str] | None = None,
    keep: Callable[[Any], bool] | None = None,
    files: list[str] | None = None,
) -> int:
    """Run `argv` instrumented, write the report to `out` (and with `html` a self-contained page to that
    file: html_report.py), and return the exit code (module docstring). `keep`: whether the user's selection
    and `# noqa` leave a finding that only the run made."""
    out = out if out is not None else sys.stdout
    if not argv:
        sys.stderr.write("jaxlint: --run needs a command\n")
        return 2
    default_budget = DEFAULT_MAX_COMPILES if max_compiles is None else max_compiles
    command = argv[0] if len(argv) == 1 else shlex.join(argv)
    workdir = tempfile.mkdtemp(prefix="jaxlint-run-")
    try:
        reports_dir = os.path.join(workdir, "reports")
        os.mkdir(reports_dir)
        statements = watched_statements(static_findings)
        flagged = {(s["path"], s["span"][0]) for s in statements}
        statements += store_candidates(files or (), flagged)  # leaks no static finding names
        if statements:
            write_watch(reports_dir, statements)
        site_dir = write_sitecustomize(os.path.join(workdir, "site"))
        env = child_environment(dict(os.environ), site_dir, reports_dir)
        marker = f"{ENV_DIR}={reports_dir}".encode()
        started = time.time()
        exit_code = _run(argv, env, stdout=_stderr_fd() if fmt == "json" else None, marker=marker)
        ended = time.time()
        run = merge(load_reports(reports_dir), budgets=budgets or {}, default_budget=default_budget)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for key in unmatched_budgets(budgets or {}, run.functions):
        sys.stderr.write(
            f"jaxlint: warning: max-compiles-per-function {key!r} matched no function that ran\n"
        )
    verdicts = cross_reference(static_findings, run.functions)
    verdicts += cross_reference_errors(static_findings, run.raised)
    verdicts += cross_reference_observations(static_findings, run.observed)
    verdicts = found_by_running(verdicts, run, root, names or {}, keep)
    recorded = 0
    unkept = unkept_functions(run.calls, root)
    if signatures_dir:
        try:
            recorded = write_calls(signatures_dir, run.calls, root)
            exact = bool(run.processes) and all(p.get("mode") == "exact" for p in run.processes)
            write_facts(signatures_dir, verdicts, run, root, exact)
        except OSError as error:
            sys.stderr.write(f"jaxlint: cannot write the recorded calls to {signatures_dir}: {error}\n")
    if fmt == "json":
        data = to_json(
            command=command, exit_code=exit_code, run=run, verdicts=verdicts, default_budget=default_budget
        )
        data["recorded_functions"] = recorded
        data["unrecorded_functions"] = [{"qualname": q, "reason": r} for q, r in unkept]
        write_json(out, data)
    else:
        write_text(
            out,
            command=command,
            exit_code=exit_code,
            run=run,
            verdicts=verdicts,
            default_budget=default_budget,
            all_functions=all_functions,
            recorded=recorded,
            store=signatures_dir or "",
            unkept=unkept,
        )
    unwritten = False
    if html:
        from .html_report import write_html

        try:
            write_html(
                html,
                command=command,
                exit_code=exit_code,
                run=run,
                verdicts=verdicts,
                default_budget=default_budget,
                started=started,
                ended=ended,
            )
        except OSError as error:
            sys.stderr.write(f"jaxlint: cannot write the HTML report {html}: {error.strerror or error}\n")
            unwritten = True
    if exit_code != 0:
        return exit_code
    return 2 if unwritten else 1 if run.over_budget or any(v.found for v in verdicts) else 0


def unkept_functions(calls: list[dict[str, Any]], root: str | None) -> list[tuple[str, str]]:
    """Project functions whose every call held something another process cannot rebuild."""
    real_root = os.path.realpath(root) + os.sep if root else None
    return [
        (entry["qualname"], entry["unkept"])
        for entry in calls
        if entry.get("unkept")
        and not entry.get("calls")
        and (real_root is None or os.path.realpath(str(entry.get("path"))).startswith(real_root))
    ]


def unmatched_budgets(budgets: Mapping[str, int], functions: list[Any]) -> list[str]:
    """Budget keys that named no function of the run: a typo, or a function that never compiled."""
    names = set()
    for f in functions:
        names.update({f"{f.module}:{f.qualname}", f.qualname})
        if f.module == "__main__":
            names.add(f"{os.path.splitext(os.path.basename(f.path))[0]}:{f.qualname}")
    return [key for key in budgets if key not in names]


def _run(argv: list[str], env: dict[str, str], stdout: int | None, marker: bytes = b"") -> int:
    shell = len(argv) == 1
    try:
        process = subprocess.Popen(argv[0] if shell else argv, shell=shell, env=env, stdout=stdout)
    except OSError as exc:  # not found, not executable
        sys.stderr.write(f"jaxlint: cannot run {argv[0]!r}: {exc.strerror or exc}\n")
        return 127
    # SIGTERM/SIGHUP to jaxlint go to every process of the command (found by the reports folder in
    # their environment: the shell and what it started), so the command ends and our temporary folder
    # is removed instead of both being left behind. A terminal's SIGINT reaches them by itself.
    forwarded: list[int] = []

    def forward(signum: int, frame: Any) -> None:
        forwarded.append(signum)
        for pid in {process.pid, *(processes_with_marker(marker) if marker else ())}:
            with contextlib.suppress(OSError):
                os.kill(pid, signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            number = getattr(signal, name, None)
            if number is not None:
                previous[number] = signal.signal(number, forward)
    interrupted = False
    try:
        while True:
            try:
                code = process.wait()
                break
            except KeyboardInterrupt:  # the command got the same SIGINT: let it finish and report
                if interrupted:
                    process.kill()
                interrupted = True
    finally:
        for number, old in previous.items():
            signal.signal(number, old)
    if forwarded:
        return 128 + forwarded[0]
    if code < 0:
        return 128 - code if -code in signal.valid_signals() else 1
    return code


def _stderr_fd() -> int | None:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None
