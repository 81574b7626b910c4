"""Start a verify child under the user's interpreter and supervise it.

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

from .._isolate import JAX_CHECK_FLAGS, private_loader
from .._isolate import child_environment as _environment

CHILD_DIR = Path(__file__).resolve().parent / "child"

# Loads the child package under a private name (see runtime/_isolate.py), runs it, and leaves with
# os._exit: user threads or atexit hooks must not keep the child alive.
BOOTSTRAP = (
    "import os, sys\n"
    "if sys.version_info < (3, 10):\n"
    "    sys.stderr.write('jaxlint --verify needs Python >= 3.10 in the child\\n')\n"
    "    os._exit(3)\n"
    + private_loader("'jaxlint_verify_child'", "sys.argv[1]")
    + "from jaxlint_verify_child.main import main\n"
    "code = main(sys.argv[2:])\n"
    "for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):\n"
    "    try:\n"
    "        stream.flush()\n"
    "    except Exception:\n"
    "        pass\n"
    "os._exit(code)\n"
)


def child_environment() -> dict[str, str]:
    return _environment(drop=JAX_CHECK_FLAGS, scratch=True)


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


@dataclasses.dataclass
class ChildRun:
    """What one child left behind: its events, how it ended, and the last informative stderr line."""

    events: list[dict[str, Any]]
    ended: str  # "exited", "timeout", "memory" or "not_started"
    returncode: int
    hint: str
    seconds: float
    pid: int | None


def run_child(
    request_data: dict[str, Any], *, python: str, timeout: float, memory_limit_mb: int | None
) -> ChildRun:
    """Run one child on `request_data` (see child/main.py) and wait for it, within `timeout`."""
    with tempfile.TemporaryDirectory(prefix="jaxlint-verify-") as folder:
        work = Path(folder)
        request, events_path = work / "request.json", work / "events.jsonl"
        request.write_text(json.dumps(request_data), encoding="utf-8")
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
