"""`jaxlint --verify --run CMD`: run a command with recompile counting in its Python processes.

A single string is run by the shell (`--run "python train.py && python eval.py"`); a list is executed
as is (`--run -- python train.py --epochs 2`). The command's output goes to the terminal as usual; with
`--format json` its stdout is sent to stderr so that stdout holds the JSON report only.

Exit code: the command's own when it fails (128+N when killed by signal N, 127 when it cannot be
started), else 1 when a function compiled more than its budget in one process, else 0.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import Any, TextIO

from . import DEFAULT_MAX_COMPILES
from .aggregate import load_reports, merge
from .bootstrap import child_environment, write_sitecustomize
from .crossref import cross_reference
from .render import to_json, write_json, write_text


def run_command(
    argv: list[str],
    *,
    max_compiles: int | None = None,
    budgets: Mapping[str, int] | None = None,
    fmt: str = "text",
    out: TextIO | None = None,
    static_findings: list[Any] | None = None,
    all_functions: bool = False,
) -> int:
    """Run `argv` instrumented, write the report to `out`, and return the exit code (module docstring)."""
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
        site_dir = write_sitecustomize(os.path.join(workdir, "site"))
        env = child_environment(dict(os.environ), site_dir, reports_dir)
        exit_code = _run(argv, env, stdout=_stderr_fd() if fmt == "json" else None)
        run = merge(load_reports(reports_dir), budgets=budgets or {}, default_budget=default_budget)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    verdicts = cross_reference(static_findings, run.functions)
    if fmt == "json":
        data = to_json(
            command=command, exit_code=exit_code, run=run, verdicts=verdicts, default_budget=default_budget
        )
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
        )
    if exit_code != 0:
        return exit_code
    return 1 if run.over_budget else 0


def _run(argv: list[str], env: dict[str, str], stdout: int | None) -> int:
    shell = len(argv) == 1
    try:
        process = subprocess.Popen(argv[0] if shell else argv, shell=shell, env=env, stdout=stdout)
    except OSError as exc:  # not found, not executable
        sys.stderr.write(f"jaxlint: cannot run {argv[0]!r}: {exc.strerror or exc}\n")
        return 127
    interrupted = False
    while True:
        try:
            code = process.wait()
            break
        except KeyboardInterrupt:  # the command got the same SIGINT: let it finish and report
            if interrupted:
                process.kill()
            interrupted = True
    if code < 0:
        return 128 - code if -code in signal.valid_signals() else 1
    return code


def _stderr_fd() -> int | None:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None
