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
import signal
import sys
import time
from typing import Any

from .lint_worker import HEADER, frame

log = logging.getLogger(__name__)

# A request that has run this long is worth killing when nobody wants its answer (starting a new process
# costs about as much); from then on a spare process is kept ready.
LONG_REQUEST_S = 1.0


class WorkerDied(Exception):
    """The lint process ended while it ran a request (a crash in native code, or it was killed)."""


class WorkerError(Exception):
    """A request raised in the lint process; the message is its traceback."""


class _Process:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls) -> _Process:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "jaxlint.server.lint_worker",
            str(os.getpid()),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        return cls(process)

    async def request(self, operation: str, args: tuple) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(frame((operation, args)))
            await self.process.stdin.drain()
            header = await self.process.stdout.readexactly(HEADER.size)
            body = await self.process.stdout.readexactly(HEADER.unpack(header)[0])
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            raise WorkerDied(f"the lint process ended (exit status {self.process.returncode})") from error
        status, value = pickle.loads(body)
        if status == "error":
            raise WorkerError(value)
        return value

    def kill(self) -> None:
        if self.process.returncode is not None:
            return
        try:
            self.process.kill()
        except (ProcessLookupError, RuntimeError):  # reaped already, or its event loop is gone
            try:
                os.kill(self.process.pid, signal.SIGKILL)
            except OSError:
                pass


class Linter:
    """One lint process at a time (plus a spare once requests run long); `call` is a coroutine whose
    cancellation stops the work it started."""

    def __init__(self) -> None:
        self.current: asyncio.Task[_Process] | None = None
        self.spare: asyncio.Task[_Process] | None = None
        self.lock = asyncio.Lock()
        self.busy_since: float | None = None  # when the running request started
        self.owner: asyncio.Task | None = None  # the task whose request runs
        self.closed = False

    def _start(self) -> asyncio.Task[_Process]:
        return asyncio.ensure_future(_Process.start())

    def cancel(self, task: asyncio.Task) -> None:
        """Cancel `task`, unless its request is running and young: then it finishes and its answer is
        dropped, which costs less than a new process."""
        young = self.busy_since is not None and time.monotonic() - self.busy_since < LONG_REQUEST_S
        if task is not self.owner or not young:
            task.cancel()

    async def call(self, operation: str, *args: Any) -> Any:
        async with self.lock:
            if self.closed:
                raise asyncio.CancelledError
            if self.current is None:
                self.current, self.spare = self.spare or self._start(), None
            process = await self.current
            self.busy_since, self.owner = time.monotonic(), asyncio.current_task()
            request = asyncio.ensure_future(process.request(operation, args))
            try:
                done, _ = await asyncio.wait({request}, timeout=LONG_REQUEST_S)
                if not done and self.spare is None:
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
