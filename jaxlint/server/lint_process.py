"""The server's side of its lint process (`lint_worker.py`): requests one at a time, cancellable.

A request whose task is cancelled (a newer text supersedes it, its document closes, the server stops) kills
the process that runs it: a lint cannot be stopped halfway any other way, and waiting for it kept `exit`
waiting for a minute on a long module. Killing costs a new process (about a second of imports), so a request
that is still young is left to finish instead (`Linter.cancel`), and a
spare process is started as soon as a request runs long, so a cancelled long lint hands over at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..start_path import DROP_WORKING_DIRECTORY
from .lint_worker import HEADER, frame

log = logging.getLogger(__name__)

# A request that has run this long is worth killing when nobody wants its answer (starting a new process
# costs about as much); from then on a spare process is kept ready.
LONG_REQUEST_S = 1.0


# The lint process imports the server's own jaxlint, wherever the server found it (a checkout, a sys.path set
# at run time), and then takes its folder off sys.path again, so it shadows nothing else; the working
# directory (the user's project) is off sys.path before anything is imported (start_path.py).
_BOOT = DROP_WORKING_DIRECTORY + (
    "sys.path.insert(0, sys.argv[1]); import jaxlint.server.lint_worker as worker; "
    "del sys.path[0]; worker.main(int(sys.argv[2]))"
)


class WorkerDied(Exception):
    """The lint process ended while it ran a request (a crash in native code, or it was killed)."""


class WorkerError(Exception):
    """A request raised in the lint process; the message is its traceback."""


class _Process:
    """A lint process, started by subprocess (asyncio's subprocess support waits for its child watcher, which
    hung the event loop's teardown when a start was cancelled) and talked to through asyncio pipes."""

    def __init__(self, popen: subprocess.Popen, reader: asyncio.StreamReader, writer: asyncio.WriteTransport):
        self.popen = popen
        self.reader = reader
        self.writer = writer

    @classmethod
    async def start(cls) -> _Process:
        popen = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(Path(__file__).resolve().parents[2]), str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader(limit=2**20)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), popen.stdout)
            writer, _ = await loop.connect_write_pipe(asyncio.Protocol, popen.stdin)
        except BaseException:
            _kill(popen)
            raise
        return cls(popen, reader, writer)

    async def request(self, operation: str, args: tuple) -> Any:
        try:
            if self.writer.is_closing():
                raise ConnectionResetError
            self.writer.write(frame((operation, args)))
            header = await self.reader.readexactly(HEADER.size)
            body = await self.reader.readexactly(HEADER.unpack(header)[0])
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            raise WorkerDied(f"the lint process ended (exit status {self.popen.poll()})") from error
        status, value = pickle.loads(body)
        if status == "error":
            raise WorkerError(value)
        return value

    def kill(self) -> None:
        try:
            self.writer.close()
        except RuntimeError:  # its event loop is closed already (the server is ending)
            pass
        _kill(self.popen)


def _kill(popen: subprocess.Popen) -> None:
    """SIGKILL, then reap it if it is gone already (a later call reaps the rest: `reap`)."""
    if popen.poll() is None:
        try:
            popen.kill()
        except OSError:
            pass
    _KILLED.append(popen)
    reap()


_KILLED: list[subprocess.Popen] = []


def reap() -> None:
    _KILLED[:] = [popen for popen in _KILLED if popen.poll() is None]


class Linter:
    """One lint process at a time (plus a spare once requests run long); `call` is a coroutine whose
    cancellation stops the work it started."""

    def __init__(self) -> None:
        self.current: asyncio.Task[_Process] | None = None
        self.spare: asyncio.Task[_Process] | None = None
        self.lock = asyncio.Lock()
        self.busy_since: float | None = None  # when the running request started
        self.owner: asyncio.Task | None = None  # the task whose request runs
        self.unwanted = False  # its answer is no longer wanted (it is killed once it runs long)
        self.closed = False

    def _start(self) -> asyncio.Task[_Process]:
        return asyncio.ensure_future(_Process.start())

    def cancel(self, task: asyncio.Task) -> None:
        """Cancel `task`; if its request is running and young, only once the request runs long: a quick one
        finishes and its answer is dropped, which costs less than a new process."""
        young = self.busy_since is not None and time.monotonic() - self.busy_since < LONG_REQUEST_S
        if task is self.owner and young:
            self.unwanted = True
        else:
            task.cancel()

    async def call(self, operation: str, *args: Any) -> Any:
        async with self.lock:
            if self.closed:
                raise asyncio.CancelledError
            if self.current is None:
                self.current, self.spare = self.spare or self._start(), None
            try:
                process = await self.current
            except OSError as error:
                self.current = None
                raise WorkerDied(f"cannot start the lint process: {error}") from error
            self.busy_since, self.owner = time.monotonic(), asyncio.current_task()
            self.unwanted = False
            request = asyncio.ensure_future(process.request(operation, args))
            try:
                done, _ = await asyncio.wait({request}, timeout=LONG_REQUEST_S)
                if not done:
                    if self.unwanted:
                        raise asyncio.CancelledError
                    if self.spare is None:
                        self.spare = self._start()
                return await request
            except asyncio.CancelledError:
                request.cancel()
                self._replace(process)
                raise
            except WorkerDied:
                self._replace(process)
                raise
            finally:
                self.busy_since = self.owner = None

    def _replace(self, process: _Process) -> None:
        process.kill()
        self.current = None  # the next call takes the spare, or starts a process

    def close(self) -> None:
        """Kill every lint process now (no waiting: the server is going away)."""
        self.closed = True
        for task in (self.current, self.spare):
            if task is None:
                continue
            if task.done() and not task.cancelled() and task.exception() is None:
                task.result().kill()
            else:
                task.cancel()
        self.current = self.spare = None
