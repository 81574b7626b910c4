"""Run one module's findings in a child process under the user's interpreter, and turn what it reported
(or how it died) into verdicts.

The child gets a fresh session (its own process group), no stdin, its stdout/stderr sent to files that are
never shown in the report, and a working directory of its own. It is killed, with everything it started,
on timeout, on runaway memory, and after it exits."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from jaxlint.finding import Finding

from .model import NOT_RUN, Environment, FindingVerdict, ModuleRun
from .project import ModuleLocation

CHILD_DIR = Path(__file__).resolve().parent / "child"

# Loads the child package under a name of its own, so that neither jaxlint's __init__ (which may need
# libcst) nor a user module called like one of ours is involved.
BOOTSTRAP = """\
import importlib.util, os, sys
if sys.version_info < (3, 10):
    sys.stderr.write("jaxlint --verify needs Python >= 3.10 in the child\\n")
    os._exit(3)
d = sys.argv[1]
s = importlib.util.spec_from_file_location(
    "jaxlint_verify_child", os.path.join(d, "__init__.py"), submodule_search_locations=[d])
m = importlib.util.module_from_spec(s)
sys.modules[s.name] = m
s.loader.exec_module(m)
from jaxlint_verify_child.main import main
code = main(sys.argv[2:])
for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
    try:
        stream.flush()
    except Exception:
        pass
os._exit(code)  # user threads or atexit hooks must not keep the child alive
"""

# Our checking modes switch these per attempt; inherited globally they would change every trace.
_CHILD_ENV_DROPPED = ("JAX_CHECK_TRACER_LEAKS", "JAX_DEBUG_KEY_REUSE", "JAX_ENABLE_CUSTOM_PRNG")


@dataclasses.dataclass
class ModuleJob:
    location: ModuleLocation
    findings: list[Finding] = dataclasses.field(default_factory=list)
    examples: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # qualname -> argument strings


@dataclasses.dataclass
class ModuleOutcome:
    verdicts: dict[Finding, FindingVerdict]
    environment: Environment | None
    run: ModuleRun


def child_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _CHILD_ENV_DROPPED}
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # do not grab 75% of the GPU per child
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave no __pycache__ in the user's tree
    return env


def _request(job: ModuleJob, memory_limit_mb: int | None) -> dict[str, Any]:
    return {
        "path": str(job.location.path),
        "module": job.location.name,
        "search_path": list(job.location.search_path),
        "memory_limit_mb": memory_limit_mb,
        "examples": job.examples,
        "findings": [
            {"id": i, "code": f.code, "line": f.line, "end_line": f.end_line, "function": f.function}
            for i, f in enumerate(job.findings)
        ],
    }


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class _LiveChildren:
    """Children not yet reaped, so that an interrupted jaxlint (Ctrl-C, an error in another thread) can
    kill them at once instead of leaving each to its timeout: they do not get the terminal's SIGINT,
    being in sessions of their own."""

    def __init__(self) -> None:
        self._pids: set[int] = set()
        self._lock = threading.Lock()

    def add(self, pid: int) -> None:
        with self._lock:
            self._pids.add(pid)

    def discard(self, pid: int) -> None:
        with self._lock:
            self._pids.discard(pid)

    def kill_all(self) -> None:
        with self._lock:
            pids = list(self._pids)
        for pid in pids:
            _kill_group(pid)


LIVE_CHILDREN = _LiveChildren()
atexit.register(LIVE_CHILDREN.kill_all)


def _has_exited(proc: subprocess.Popen) -> bool:
    """True once the child has exited, without reaping it: its process-group id stays reserved until we
    kill the group, so the kill can never hit an unrelated process that reused the id."""
    if hasattr(os, "waitid"):
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None and info.si_pid == proc.pid
    return proc.poll() is not None


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _supervise(proc: subprocess.Popen, timeout: float, rss_limit: int | None) -> str:
    deadline = time.monotonic() + timeout
    outcome = "exited"
    while not _has_exited(proc):
        if time.monotonic() >= deadline:
            outcome = "timeout"
            break
        if rss_limit and _rss_bytes(proc.pid) > rss_limit:
            outcome = "memory"
            break
        time.sleep(0.05)
    _kill_group(proc.pid)  # whatever the child started dies with it, exited or not
    proc.wait()
    return outcome


def _read_events(path: Path) -> list[dict[str, Any]]:
    events = []
    with contextlib.suppress(FileNotFoundError):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                events.append(json.loads(line))
    return events


# Lines the interpreter or XLA write when a process dies; anything else on stderr is the user's and stays out
# of the report.
_FATAL_LINE = re.compile(
    r"^(Fatal Python error:.*|terminate called.*|.*std::bad_alloc.*|F\d{4} .*|Check failed:.*|"
    r"jaxlint --verify needs Python.*)$"
)


def _stderr_hint(path: Path) -> str:
    """The last line the runtime wrote about a fatal error, e.g. `Fatal Python error: Segmentation fault`."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for line in reversed(lines):
        if _FATAL_LINE.match(line.strip()):
            return line.strip()[:200]
    return ""


def _exit_description(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


@dataclasses.dataclass
class ChildRun:
    """What one child left behind: its events, how it ended, and the last informative stderr line."""

    events: list[dict[str, Any]]
    ended: str  # "exited", "timeout", "memory" or "not_started"
    returncode: int
    hint: str
    seconds: float
    pid: int | None


def run_child(job: ModuleJob, *, python: str, timeout: float, memory_limit_mb: int | None) -> ChildRun:
    with tempfile.TemporaryDirectory(prefix="jaxlint-verify-") as folder:
        work = Path(folder)
        request, events_path = work / "request.json", work / "events.jsonl"
        request.write_text(json.dumps(_request(job, memory_limit_mb)), encoding="utf-8")
        started = time.monotonic()
        with open(work / "stdout.txt", "wb") as out, open(work / "stderr.txt", "wb") as err:
            try:
                proc = subprocess.Popen(
                    [python, "-c", BOOTSTRAP, str(CHILD_DIR), str(request), str(events_path)],
                    cwd=work,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=child_environment(),
                    start_new_session=True,
                )
            except OSError as error:
                return ChildRun(
                    [], "not_started", 0, f"cannot start the interpreter {python}: {error}", 0.0, None
                )
            LIVE_CHILDREN.add(proc.pid)
            try:
                rss_limit = 2 * memory_limit_mb * 2**20 if memory_limit_mb else None
                ended = _supervise(proc, timeout, rss_limit)
            finally:
                LIVE_CHILDREN.discard(proc.pid)
        seconds = round(time.monotonic() - started, 3)
        return ChildRun(
            _read_events(events_path),
            ended,
            proc.returncode,
            _stderr_hint(work / "stderr.txt"),
            seconds,
            proc.pid,
        )


# A crash in one function (a segfault, os._exit) costs the module's later findings; restart the child for
# them a few times, within the module's one timeout.
MAX_RESTARTS = 3


def run_module(job: ModuleJob, *, python: str, timeout: float, memory_limit_mb: int | None) -> ModuleOutcome:
    deadline = time.monotonic() + timeout
    verdicts: dict[Finding, FindingVerdict] = {}
    pending = list(job.findings)
    runs: list[tuple[ChildRun, Reading]] = []
    while pending:
        left = max(deadline - time.monotonic(), 0.1)
        child = run_child(
            dataclasses.replace(job, findings=pending),
            python=python,
            timeout=left,
            memory_limit_mb=memory_limit_mb,
        )
        reading = read_child(pending, child, timeout, memory_limit_mb)
        runs.append((child, reading))
        verdicts.update(reading.verdicts)
        pending = reading.unreached
        if pending and (reading.status != "crashed" or len(runs) > MAX_RESTARTS or not reading.progressed):
            verdicts.update({f: FindingVerdict(NOT_RUN, reading.unreached_reason) for f in pending})
            break
    first, last = runs[0][1], runs[-1][1]
    environment = next((r.environment for _, r in runs if r.environment), None)
    device = environment.describe() if environment else None
    location = job.location
    run = ModuleRun(
        str(location.path),
        location.name,
        len(job.findings),
        round(sum(c.seconds for c, _ in runs), 3),
        last.status,
        last.detail,
        first.import_seconds,
        runs[-1][0].pid,
        restarts=len(runs) - 1,
    )
    verdicts = {f: dataclasses.replace(verdicts[f], device=device) for f in job.findings}
    return ModuleOutcome(verdicts, environment, run)


@dataclasses.dataclass
class Reading:
    """One child's events read back: verdicts it gave or that its death implies, and what it never reached."""

    verdicts: dict[Finding, FindingVerdict]
    unreached: list[Finding]
    unreached_reason: str
    status: str  # ModuleRun.status
    detail: str
    environment: Environment | None
    import_seconds: float | None
    progressed: bool  # it got past the import: a restart can reach the unreached findings


def read_child(
    findings: list[Finding], child: ChildRun, timeout: float, memory_limit_mb: int | None
) -> Reading:
    environment = None
    import_seconds = None
    import_failure = ""
    no_jax = ""
    in_progress: int | None = None
    results: dict[int, FindingVerdict] = {}
    done = False
    for event in child.events:
        kind = event.get("event")
        if kind == "environment":
            environment = Environment.from_event(event)
        elif kind == "imported":
            import_seconds = event.get("seconds")
        elif kind == "import_failed":
            import_failure = event.get("reason", "")
        elif kind == "no_jax":
            no_jax = event.get("reason", "")
        elif kind == "begin":
            in_progress = event["id"]
        elif kind == "verdict":
            results[event["id"]] = FindingVerdict(
                event["verdict"], event.get("reason", ""), tuple(event.get("inputs", ()))
            )
            in_progress = None
        elif kind == "done":
            done = True

    if child.ended == "not_started":
        status, what = "not_started", child.hint
    elif child.ended == "timeout":
        status, what = "timeout", f"timed out after {timeout:g} s"
    elif child.ended == "memory":
        status, what = (
            "memory",
            f"the child used more than {2 * (memory_limit_mb or 0)} MiB of memory and was killed",
        )
    elif no_jax:
        status, what = "no_jax", no_jax
    elif not done:
        hint = f" ({child.hint})" if child.hint else ""
        status, what = "crashed", f"the child {_exit_description(child.returncode)}{hint}"
    else:
        status, what = ("import_failed", import_failure) if import_failure else ("done", "")

    imported = import_seconds is not None or bool(import_failure)
    stage = "" if imported else ("starting jax" if environment is None else "importing the module")
    verdicts: dict[Finding, FindingVerdict] = {}
    unreached: list[Finding] = []
    for index, finding in enumerate(findings):
        if index in results:
            verdicts[finding] = results[index]
        elif status in ("no_jax", "not_started"):
            verdicts[finding] = FindingVerdict(NOT_RUN, what)
        elif stage:
            verdicts[finding] = FindingVerdict(NOT_RUN, f"{what} while {stage}")
        elif index == in_progress:
            verdicts[finding] = FindingVerdict(
                NOT_RUN, f"{what} while tracing '{finding.function or 'module code'}'"
            )
        else:
            unreached.append(finding)
    return Reading(
        verdicts,
        unreached,
        f"not reached: {what} on an earlier finding of this module",
        status,
        what,
        environment,
        import_seconds,
        progressed=imported and not import_failure,
    )
