"""The processes a `--verify` run starts, and how every one of them is found and ended.

A child leads a session of its own, and everything it starts inherits a marker in its environment, so a
child's tree is its session plus the marked processes. A process that leaves the session *and* drops its
environment (a double fork, `setsid`, `execve` with an empty environment) is found neither way; on Linux
jaxlint is therefore a child subreaper while it verifies: such a process, once its parent is gone, becomes
jaxlint's own child instead of init's, and `Reaper.sweep` kills and reaps every child of jaxlint that it
did not start itself. Elsewhere (no prctl) the session and the marker are all there is."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

from .._isolate import processes_with_marker


def _stat_fields(pid: int) -> list[bytes] | None:
    """/proc/<pid>/stat after the command name: state, ppid, pgrp, session, ..."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _session_of(pid: int) -> int | None:
    fields = _stat_fields(pid)
    try:
        return int(fields[3]) if fields else None
    except (ValueError, IndexError):
        return None


def _pids() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []


def tree(pid: int, marker: bytes | None) -> list[int]:
    """The child and what it started: its session (a child leads its own), and where it has a marker
    of its own, every process carrying it (those that left the session with setsid). A forked child's
    own /proc environ is the zygote's, so it is found by its session; what it starts, by the marker."""
    session = [n for n in _pids() if _session_of(n) == pid]
    marked = processes_with_marker(marker) if marker else []
    return session + [n for n in marked if n not in session]


def kill_tree(pid: int, marker: bytes | None) -> None:
    """The child's process group, then anything else it started (a new session, a daemon)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for other in tree(pid, marker):
        if other != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(other, signal.SIGKILL)


class LiveChildren:
    """Children not yet reaped, so that an interrupted jaxlint (Ctrl-C, SIGTERM, an error in another
    thread) can kill them at once instead of leaving each to its timeout: they do not get the
    terminal's SIGINT, being in sessions of their own. A child is started under `spawning()` and stays
    registered until its own thread has reaped it, so a sweep never takes it for an orphan."""

    def __init__(self) -> None:
        self._children: dict[int, bytes | None] = {}
        self._lock = threading.RLock()
        self.stopped = False  # set by kill_all: no new child may start until the next run reopens

    def reopen(self) -> None:
        self.stopped = False

    @contextlib.contextmanager
    def spawning(self) -> Iterator[None]:
        """Held while a child is started and registered: a sweep in another thread waits for it."""
        with self._lock:
            yield

    def add(self, pid: int, marker: bytes | None) -> bool:
        """Register a started child; False, and the child killed, when kill_all ran since this run
        reopened: a signal that lands while a child is being started must not leave it running (its
        thread would then supervise it to its timeout, and jaxlint would wait for that thread)."""
        with self._lock:
            if not self.stopped:
                self._children[pid] = marker
                return True
        kill_tree(pid, marker)
        return False

    def discard(self, pid: int) -> None:
        with self._lock:
            self._children.pop(pid, None)

    def pids(self) -> set[int]:
        with self._lock:
            return set(self._children)

    def kill_all(self) -> None:
        with self._lock:
            self.stopped = True
            children = list(self._children.items())
        for pid, marker in children:
            kill_tree(pid, marker)


LIVE_CHILDREN = LiveChildren()

_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37


def _prctl():  # type: ignore[no-untyped-def]
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError, ImportError):
        return None


class Reaper:
    """For one `--verify` run: jaxlint is a child subreaper (where Linux allows), and `sweep` ends the
    processes re-parented to it. Children jaxlint had before the run (lint workers) are left alone."""

    def __init__(self) -> None:
        self._before: set[int] = set()
        self._previous: int | None = None
        self.active = False

    def __enter__(self) -> Reaper:
        prctl = _prctl()
        if prctl is None:
            return self
        import ctypes

        previous = ctypes.c_int(0)
        if prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(previous), 0, 0, 0) != 0:
            return self
        if prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return self
        self._previous = previous.value
        self._before = set(self._children())
        self.active = True
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.active:
            return
        # The killed children's own threads reap them; what they leave behind is re-parented to us as
        # they die, so sweep until nothing of ours is left or the wait is clearly over.
        deadline = time.monotonic() + 5.0
        while (self.sweep() or LIVE_CHILDREN.pids()) and time.monotonic() < deadline:
            time.sleep(0.05)
        prctl = _prctl()
        if prctl is not None and self._previous is not None:
            prctl(_PR_SET_CHILD_SUBREAPER, self._previous, 0, 0, 0)
        self.active = False

    @staticmethod
    def _children() -> list[int]:
        me = os.getpid()
        found = []
        for pid in _pids():
            fields = _stat_fields(pid)
            try:
                if fields and int(fields[1]) == me:
                    found.append(pid)
            except (ValueError, IndexError):
                continue
        return found

    def sweep(self) -> int:
        """Kill and reap every child of ours that neither existed before the run nor is a registered
        verify child (an orphan of a module's process tree), with everything below it. Returns how many."""
        if not self.active:
            return 0
        ended = 0
        for _ in range(50):  # killing an orphan re-parents its own children to us: go again
            with LIVE_CHILDREN.spawning():
                known = self._before | LIVE_CHILDREN.pids()
                orphans = [pid for pid in self._children() if pid not in known]
                for pid in orphans:
                    _kill_descendants(pid)
            if not orphans:
                break
            for pid in orphans:
                _reap(pid)
            ended += len(orphans)
        return ended


def _kill_descendants(root: int) -> None:
    """SIGKILL `root` and every process below it, stopped first so that none forks meanwhile."""
    parents: dict[int, int] = {}
    for pid in _pids():
        fields = _stat_fields(pid)
        with contextlib.suppress(ValueError, IndexError, TypeError):
            parents[pid] = int(fields[1])  # type: ignore[index]
    below, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier and pid not in below]
        below += frontier
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in below:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


def _reap(pid: int) -> None:
    deadline = time.monotonic() + 2.0
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.01)


REAPER = Reaper()  # entered by verify_findings for its run; `sweep` outside a run does nothing
