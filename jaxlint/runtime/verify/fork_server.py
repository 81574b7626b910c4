"""Parent side of the fork server (child/zygote.py): one interpreter that imports jax once, from which
every module's child is forked. Anything that goes wrong with it (no fork on this platform, jax missing,
threads after import, the zygote dying) makes `start` answer None, and the caller starts a fresh
interpreter for that module instead, as before."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import signal
import socket
import subprocess
import threading
import time
from typing import Any

from .._isolate import private_loader
from .supervise import CHILD_DIR, LIVE_CHILDREN, RUN_MARKER, _kill_tree, child_environment

ZYGOTE_BOOTSTRAP = (
    "import os, sys\n"
    + private_loader("'jaxlint_verify_child'", "sys.argv[1]")
    + "from jaxlint_verify_child.zygote import serve\n"
    "os._exit(serve(int(sys.argv[2])))\n"
)

_READY_TIMEOUT = 300.0  # importing jax on a cold disk can take a while
_EXIT_REPORT_TIMEOUT = 10.0  # after a kill, how long the zygote may take to report the reaped child


class ForkServer:
    def __init__(self, python: str) -> None:
        self.python = python
        self.failure = ""
        self._lock = threading.Lock()
        self._numbers = 0
        self._started: dict[int, queue.Queue[int | None]] = {}
        self._status: dict[int, int] = {}
        self._exited: dict[int, threading.Event] = {}
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        marker_value = secrets.token_hex(8)
        self._marker = f"{RUN_MARKER}={marker_value}".encode()
        if not hasattr(os, "fork") or not hasattr(socket, "send_fds"):
            self.failure = "no fork on this platform"
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [python, "-c", ZYGOTE_BOOTSTRAP, str(CHILD_DIR), str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                env={**child_environment(), RUN_MARKER: marker_value},
                start_new_session=True,
            )
        except OSError as error:
            self.failure = f"cannot start {python}: {error}"
            ours.close()
            return
        finally:
            theirs.close()
        LIVE_CHILDREN.add(self._proc.pid, self._marker)
        self._sock = ours
        ours.settimeout(_READY_TIMEOUT)
        try:
            hello = json.loads(ours.recv(1 << 16) or b"{}")
        except (OSError, ValueError):
            hello = {}
        ours.settimeout(None)
        if not hello.get("ready"):
            self.failure = hello.get("reason", "the fork server did not start")
            self.close()
            return
        threading.Thread(target=self._read, daemon=True).start()

    @property
    def running(self) -> bool:
        return self._sock is not None and not self.failure

    def _read(self) -> None:
        sock = self._sock
        assert sock is not None
        while True:
            try:
                data = sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            message = json.loads(data)
            with self._lock:
                if "started" in message:
                    waiting = self._started.get(message["started"])
                    if waiting is not None:
                        self._exited.setdefault(message["pid"], threading.Event())
                        waiting.put(message["pid"])
                elif "exited" in message:
                    self._status[message["exited"]] = message["status"]
                    self._exited.setdefault(message["exited"], threading.Event()).set()
        with self._lock:  # the zygote is gone: nobody will report the others
            self.failure = self.failure or "the fork server exited"
            for waiting in self._started.values():
                waiting.put(None)
            for event in self._exited.values():
                event.set()

    def start(
        self,
        request: dict[str, Any],
        cwd: str,
        events_fd: int,
        stderr_fd: int,
        environ: dict[str, str] | None = None,
    ) -> int | None:
        """Fork a child for `request`, with `environ` added to what the processes it starts inherit; its
        pid, or None when the server cannot (start one fresh)."""
        if not self.running:
            return None
        with self._lock:
            self._numbers += 1
            number = self._numbers
            answer: queue.Queue[int | None] = queue.Queue()
            self._started[number] = answer
        message: Any = {"request": request, "cwd": cwd, "number": number, "environ": environ or {}}
        message = json.dumps(message).encode()
        try:
            assert self._sock is not None
            socket.send_fds(self._sock, [message], [events_fd, stderr_fd])
            return answer.get(timeout=30.0)
        except (OSError, queue.Empty):
            return None
        finally:
            with self._lock:
                self._started.pop(number, None)

    def exited(self, pid: int) -> bool:
        event = self._exited.get(pid)
        return event is None or event.is_set()

    def wait_exit(self, pid: int, seconds: float) -> bool:
        """Block up to `seconds`; True once the child exited."""
        event = self._exited.get(pid)
        return event is None or event.wait(seconds)

    def returncode(self, pid: int) -> int:
        """After the child's tree was killed: its exit code as Popen gives it (-N for signal N)."""
        event = self._exited.get(pid)
        if event is not None:
            event.wait(_EXIT_REPORT_TIMEOUT)
        status = self._status.pop(pid, None)
        self._exited.pop(pid, None)
        if status is None:
            return -signal.SIGKILL
        return os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        """Stop the zygote and anything still carrying its marker (a setsid'd grandchild of a module)."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        if self._proc is not None:
            _kill_tree(self._proc.pid, self._marker)
            deadline = time.monotonic() + 10
            while self._proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            LIVE_CHILDREN.discard(self._proc.pid)
        self.failure = self.failure or "closed"
