"""Start a verify child under the user's interpreter and supervise it.

The child gets a fresh session (its own process group), its request on stdin (then closed), an
inherited pipe for its events (at most EVENTS_KEPT bytes are read: more kills it), its stdout discarded
and the tail of its stderr kept (never shown in the report), and an empty working directory of its own.
It is killed, with everything it started (found by a marker in their environment, even after setsid, and
by jaxlint being their subreaper: see children.py), on timeout, when the resident memory of its whole
tree passes the limit, on SIGINT/SIGTERM/SIGHUP to jaxlint, and after it exits."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import json
import os
import re
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ...start_path import DROP_WORKING_DIRECTORY
from .._isolate import JAX_CHECK_FLAGS, private_loader
from .._isolate import child_environment as _environment
from .children import LIVE_CHILDREN, REAPER, kill_tree, tree

CHILD_DIR = Path(__file__).resolve().parent / "child"

# Loads the child package under a private name (see runtime/_isolate.py), runs it, and leaves with
# os._exit: user threads or atexit hooks must not keep the child alive.
BOOTSTRAP = (
    DROP_WORKING_DIRECTORY + "import os, sys\n"
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


# Every process a child starts inherits this variable (with the run's random value): found again by it
# in /proc even after it called setsid() or was re-parented, for the kill and the memory watchdog.
RUN_MARKER = "JAXLINT_VERIFY_RUN"


atexit.register(LIVE_CHILDREN.kill_all)


class Terminated(BaseException):
    """jaxlint got SIGTERM or SIGHUP: unwinds like Ctrl-C, so children die and temp folders go."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def ending_children_on_signals() -> Iterator[None]:
    """In the main thread: SIGTERM and SIGHUP raise Terminated (SIGINT already raises
    KeyboardInterrupt), and any of them kills every live child tree at once, before unwinding."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        LIVE_CHILDREN.kill_all()
        raise Terminated(signum)

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, handler)
    try:
        yield
    except KeyboardInterrupt:
        LIVE_CHILDREN.kill_all()
        raise
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


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


_TREE_CHECK_INTERVAL = 0.5  # seconds between memory checks over the whole tree (a /proc scan)


def _sleep_then(exited: Callable[[], bool]) -> Callable[[float], bool]:
    def wait(seconds: float) -> bool:
        time.sleep(seconds)
        return exited()

    return wait


def _supervise(
    exited: Callable[[], bool],
    pid: int,
    timeout: float,
    rss_limit: int | None,
    marker: bytes | None,
    wait: Callable[[float], bool] | None = None,
    flooded: Callable[[], bool] = lambda: False,
) -> str:
    """`wait(s)`: block up to s seconds, True once the child exited (an event for a forked child, so its
    end is seen at once, not at the next poll)."""
    wait = wait or _sleep_then(exited)
    deadline = time.monotonic() + timeout
    next_tree_check = 0.0
    outcome = "exited"
    if exited():
        return outcome
    while True:
        now = time.monotonic()
        if now >= deadline:
            outcome = "timeout"
            break
        if flooded():
            outcome = "flooded"
            break
        if rss_limit and _rss_bytes(pid) > rss_limit:
            outcome = "memory"
            break
        if rss_limit and now >= next_tree_check:
            next_tree_check = now + _TREE_CHECK_INTERVAL
            if sum(_rss_bytes(p) for p in tree(pid, marker)) > rss_limit:
                outcome = "memory"
                break
        if wait(0.02):
            break
    return outcome  # the caller kills the tree: whatever the child started dies with it, exited or not


class _Drain(threading.Thread):
    """Reads a pipe to its end (or until stopped) so the child never blocks on it, and keeps at most
    `limit` bytes of it: the first (`keep="head"`, then `overflowed` is set and the rest is read and
    dropped) or the last (`keep="tail"`). What a child writes never grows jaxlint's memory past that."""

    def __init__(self, fd: int, limit: int, keep: str) -> None:
        super().__init__(daemon=True)
        self.fd, self.limit, self.keep = fd, limit, keep
        self.data = bytearray()
        self.overflowed = False
        self._halt = threading.Event()

    def run(self) -> None:
        import select

        try:
            while not self._halt.is_set():
                ready, _, _ = select.select([self.fd], [], [], 0.1)
                if not ready:
                    continue
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    break
                if self.keep == "tail":
                    self.data += chunk
                    del self.data[: max(len(self.data) - self.limit, 0)]
                elif not self.overflowed:
                    room = self.limit - len(self.data)
                    self.data += chunk[:room]
                    self.overflowed = len(chunk) > room
        except OSError:
            pass

    def finish(self) -> bytes:
        """After the child and its tree are dead: what is left in the pipe is read, then it is closed (a
        forked grandchild that kept the pipe open must not hold us up)."""
        self.join(timeout=2.0)
        self._halt.set()
        self.join()
        os.close(self.fd)
        return bytes(self.data)


def _events(data: bytes, nonce: str) -> list[dict[str, Any]]:
    """The child's events; lines without the run's nonce are not the child's and are dropped."""
    events = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError, RecursionError):
            event = json.loads(line)
            if isinstance(event, dict) and event.pop("nonce", None) == nonce:
                events.append(event)
    return events


# Lines the interpreter or XLA write when a process dies; anything else on stderr is the user's and stays out
# of the report.
_FATAL_LINE = re.compile(
    r"^(Fatal Python error:.*|terminate called.*|.*std::bad_alloc.*|F\d{4} .*|Check failed:.*|"
    r"jaxlint --verify needs Python.*)$"
)
_FATAL_START = re.compile(r"Fatal Python error:|terminate called|Check failed:")
_GLOG_PREFIX = re.compile(r"^F\d{4} [^\]]*\] ")  # XLA's `F0000 00:00:00.0 1 file.cc:12] ` before its message

STDERR_KEPT = 64 * 1024  # bytes of the child's stderr kept (the end: where a fatal error is written)
EVENTS_KEPT = 16 * 2**20  # bytes of events read from one child: far above what a module's verdicts take


def _stderr_hint(data: bytes) -> str:
    """The last line the runtime wrote about a fatal error, e.g. `Fatal Python error: Segmentation fault`.
    Only a line one writer wrote whole is quoted: where threads or processes dying together interleaved
    their messages (two starts on one line), the exit status says what happened, not a garbled line."""
    for line in reversed(data.decode("utf-8", errors="replace").splitlines()):
        line = line.strip()
        if _FATAL_LINE.match(line) and len(_FATAL_START.findall(_GLOG_PREFIX.sub("", line))) <= 1:
            return line[:200]
    return ""


@dataclasses.dataclass
class ChildRun:
    """What one child left behind: its events, how it ended, and the last informative stderr line."""

    events: list[dict[str, Any]]
    # "exited", "timeout", "memory", "flooded" (wrote more than EVENTS_KEPT), "not_started", or
    # "server_died" (the fork server it came from died, so how it ended is unknown: run it again)
    ended: str
    returncode: int
    hint: str
    seconds: float
    pid: int | None
    fresh_reason: str = ""  # why a fork server was at hand but this child started a fresh interpreter


def _feed(stream: Any, data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(data)
        stream.close()


def run_child(
    request_data: dict[str, Any],
    *,
    python: str,
    timeout: float,
    memory_limit_mb: int | None,
    server: Any = None,
) -> ChildRun:
    """Run one child on `request_data` (see child/main.py) and wait for it, within `timeout`: forked
    from `server` (a ForkServer) when one is given and can fork safely, else a fresh interpreter. The
    memory limit is on resident memory, of the child and all it started: address space says little
    (XLA's thread pools map gigabytes on a many-core machine without touching them)."""
    if LIVE_CHILDREN.stopped:
        return ChildRun([], "not_started", 0, "jaxlint was interrupted", 0.0, None)
    nonce = secrets.token_hex(16)
    rss_limit = memory_limit_mb * 2**20 if memory_limit_mb else None
    with tempfile.TemporaryDirectory(prefix="jaxlint-verify-") as folder:
        read_events, write_events = os.pipe()
        read_stderr, write_stderr = os.pipe()
        started = time.monotonic()
        request = {**request_data, "nonce": nonce}
        # One marker per module, so that what this module starts (a setsid'd grandchild included) dies
        # at this module's timeout, forked or not.
        marker_value = secrets.token_hex(8)
        marker = f"{RUN_MARKER}={marker_value}".encode()
        forked: int | str | None = None
        if server is not None:
            forked = server.start(request, folder, write_events, write_stderr, {RUN_MARKER: marker_value})
        if isinstance(forked, int):
            os.close(write_events)
            os.close(write_stderr)
            pid = forked
            LIVE_CHILDREN.add(pid, marker)  # the zygote's child: found by its session and marker
            exited = functools.partial(server.exited, pid)
            wait = functools.partial(server.wait_exit, pid)
        else:
            try:
                with LIVE_CHILDREN.spawning():
                    if LIVE_CHILDREN.stopped:  # interrupted while the fork server was asked
                        for fd in (read_events, write_events, read_stderr, write_stderr):
                            os.close(fd)
                        return ChildRun([], "not_started", 0, "jaxlint was interrupted", 0.0, None)
                    proc = subprocess.Popen(
                        [python, "-c", BOOTSTRAP, str(CHILD_DIR), str(write_events)],
                        cwd=folder,  # empty: nothing of ours to find or overwrite there
                        stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL,
                        stderr=write_stderr,
                        pass_fds=(write_events,),
                        env={**child_environment(), RUN_MARKER: marker_value},
                        start_new_session=True,
                    )
                    LIVE_CHILDREN.add(proc.pid, marker)  # under the lock: never taken for an orphan
            except OSError as error:
                for fd in (read_events, write_events, read_stderr, write_stderr):
                    os.close(fd)
                hint = f"cannot start the interpreter {python}: {error}"
                return ChildRun([], "not_started", 0, hint, 0.0, None)
            os.close(write_events)
            os.close(write_stderr)
            pid = proc.pid
            exited = functools.partial(_has_exited, proc)
            wait = None
            threading.Thread(
                target=_feed, args=(proc.stdin, json.dumps(request).encode()), daemon=True
            ).start()
        events = _Drain(read_events, EVENTS_KEPT, keep="head")
        stderr = _Drain(read_stderr, STDERR_KEPT, keep="tail")
        events.start()
        stderr.start()
        try:
            ended = _supervise(
                exited, pid, timeout, rss_limit, marker, wait, flooded=lambda: events.overflowed
            )
        finally:
            kill_tree(pid, marker)
            event_data, stderr_data = events.finish(), stderr.finish()
            status = server.returncode(pid) if isinstance(forked, int) else proc.wait()
            LIVE_CHILDREN.discard(pid)  # reaped: a sweep may not take it for an orphan before this
            REAPER.sweep()  # what the child's tree left re-parented to jaxlint (double forks, setsid)
        if status is None:  # the fork server died before it could say how this child ended
            ended, status = ("server_died" if ended == "exited" else ended), -signal.SIGKILL
        seconds = round(time.monotonic() - started, 3)
        return ChildRun(
            _events(event_data, nonce),
            ended,
            status,
            _stderr_hint(stderr_data),
            seconds,
            pid,
            fresh_reason=forked if isinstance(forked, str) else "",
        )
