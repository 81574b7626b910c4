"""Parent side of the fork server (child/zygote.py): one interpreter that imports jax once, from which
every module's child is forked. Anything that goes wrong with it (no fork on this platform, jax missing,
threads or a backend in the zygote) makes `start` answer why instead of a pid, and the caller starts a
fresh interpreter for that module, with the reason in `--verbose`. A zygote that dies is started again
(`restart`) and the modules it took down with it run again."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import Any

from ...start_path import DROP_WORKING_DIRECTORY
from .._isolate import private_loader
from .children import LIVE_CHILDREN, kill_tree
from .supervise import CHILD_DIR, RUN_MARKER, child_environment

ZYGOTE_BOOTSTRAP = (
    DROP_WORKING_DIRECTORY  # it runs in jaxlint's working directory: the user's project
    + "import os, sys\n"
    + private_loader("'jaxlint_verify_child'", "sys.argv[1]")
    + "from jaxlint_verify_child.zygote import serve\n"
    "os._exit(serve(int(sys.argv[2]), sys.argv[3]))\n"
)

# Math libraries start a thread pool when numpy loads (OpenBLAS: one thread per core): the zygote must
# stay single-threaded to fork safely, and tracing needs no parallel BLAS. Set to 1 for the zygote alone;
# each forked child puts back the user's values (or their absence), so what the module starts sees the
# user's environment.
_ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

_READY_TIMEOUT = 300.0  # importing jax on a cold disk can take a while
_EXIT_REPORT_TIMEOUT = 10.0  # after a kill, how long the zygote may take to report the reaped child
MAX_RESTARTS = 3  # zygotes started again after one died, per run


class ForkServer:
    def __init__(self, python: str) -> None:
        self.python = python
        self.failure = ""
        self.generation = 0  # which zygote: a restart is asked for the one that died, once
        self.restarts = 0
        self._lock = threading.Lock()
        self._restarting = threading.Lock()
        self._numbers = 0
        self._started: dict[int, queue.Queue[int | str | None]] = {}
        self._status: dict[int, int] = {}
        self._exited: dict[int, threading.Event] = {}
        self._lost: set[int] = set()  # children whose zygote died before reporting their end
        self._died = False  # the zygote exited on its own (not closed, not refused to start)
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        marker_value = secrets.token_hex(8)
        self._marker_value = marker_value
        self._marker = f"{RUN_MARKER}={marker_value}".encode()
        if not hasattr(os, "fork") or not hasattr(socket, "send_fds"):
            self.failure = "no fork on this platform"
            return
        self._spawn()

    def _spawn(self) -> None:
        self.generation += 1
        self.failure = ""
        self._died = False
        try:
            self._start_zygote()
        except BaseException:  # a signal while it starts (jax imports for seconds): nobody else would end it
            self.close()
            raise

    def _start_zygote(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        base = child_environment()
        single = dict.fromkeys(_ONE_THREAD, "1")
        restore = json.dumps({name: base.get(name) for name in _ONE_THREAD})
        try:
            with LIVE_CHILDREN.spawning():
                self._proc = subprocess.Popen(
                    [
                        self.python,
                        "-c",
                        ZYGOTE_BOOTSTRAP,
                        str(CHILD_DIR),
                        str(theirs.fileno()),
                        restore,
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    pass_fds=(theirs.fileno(),),
                    env={**base, **single, RUN_MARKER: self._marker_value},
                    start_new_session=True,
                )
                LIVE_CHILDREN.add(self._proc.pid, self._marker)
        except OSError as error:
            self.failure = f"cannot start {self.python}: {error}"
            self._sock = None
            ours.close()
            return
        finally:
            theirs.close()
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
        threading.Thread(target=self._read, args=(ours, self.generation), daemon=True).start()

    @property
    def running(self) -> bool:
        return self._sock is not None and not self.failure

    def _read(self, sock: socket.socket, generation: int) -> None:
        mine: set[int] = set()  # children of this zygote not yet reported
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
                    pid = message.get("pid")
                    if pid is not None:
                        mine.add(pid)
                        self._exited.setdefault(pid, threading.Event())
                    if waiting is not None:
                        waiting.put(pid if pid is not None else message.get("reason", "cannot fork"))
                elif "exited" in message:
                    mine.discard(message["exited"])
                    self._status[message["exited"]] = message["status"]
                    self._exited.setdefault(message["exited"], threading.Event()).set()
        with self._lock:  # the zygote is gone: nobody will report its children
            if generation == self.generation and not self.failure:
                self.failure = "the fork server exited"
                self._died = True
            for waiting in self._started.values():
                waiting.put(None)
            self._lost |= mine
            for pid in mine:
                self._exited.setdefault(pid, threading.Event()).set()

    def start(
        self,
        request: dict[str, Any],
        cwd: str,
        events_fd: int,
        stderr_fd: int,
        environ: dict[str, str] | None = None,
    ) -> int | str:
        """Fork a child for `request`, with `environ` added to what the processes it starts inherit; its
        pid, or why the server cannot (the caller starts a fresh interpreter instead)."""
        sock = self._sock  # a restart in another thread may replace it: use the one checked
        if sock is None or not self.running:
            return f"no fork server: {self.failure}"
        with self._lock:
            self._numbers += 1
            number = self._numbers
            answer: queue.Queue[int | str | None] = queue.Queue()
            self._started[number] = answer
        message = json.dumps({"cwd": cwd, "number": number, "environ": environ or {}}).encode()
        try:
            # The request goes in a file of its own: with recorded (pickled) calls it outgrows what one
            # socket message may hold (the socket's send buffer, ~208 KiB by default on Linux).
            with tempfile.TemporaryFile() as body:
                body.write(json.dumps(request).encode())
                body.seek(0)
                socket.send_fds(sock, [message], [events_fd, stderr_fd, body.fileno()])
            started = answer.get(timeout=30.0)
        except (OSError, queue.Empty):
            started = None
        finally:
            with self._lock:
                self._started.pop(number, None)
        return (
            started if started is not None else f"the fork server did not fork: {self.failure or 'no answer'}"
        )

    def exited(self, pid: int) -> bool:
        event = self._exited.get(pid)
        return event is None or event.is_set()

    def wait_exit(self, pid: int, seconds: float) -> bool:
        """Block up to `seconds`; True once the child exited."""
        event = self._exited.get(pid)
        return event is None or event.wait(seconds)

    def returncode(self, pid: int) -> int | None:
        """After the child's tree was killed: its exit code as Popen gives it (-N for signal N), or None
        when its zygote died before saying (how it ended is unknown)."""
        event = self._exited.get(pid)
        if event is not None:
            event.wait(_EXIT_REPORT_TIMEOUT)
        with self._lock:
            status = self._status.pop(pid, None)
            self._exited.pop(pid, None)
            lost = pid in self._lost
            self._lost.discard(pid)
        if lost:
            return None
        if status is None:
            return -signal.SIGKILL
        return os.waitstatus_to_exitcode(status)

    def restart(self) -> bool:
        """Start a new zygote if this one died (once, whoever of the modules it took down asks first); True
        when one runs."""
        with self._lock:
            generation = self.generation
            stale = self._died and self.restarts < MAX_RESTARTS and not LIVE_CHILDREN.stopped
            if stale:
                self.restarts += 1
        if stale:
            with self._restarting:
                if generation == self.generation:
                    self._stop_zygote()
                    self._spawn()
        return self.running

    def _stop_zygote(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None
        if self._proc is not None:
            kill_tree(self._proc.pid, self._marker)
            deadline = time.monotonic() + 10
            while self._proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            LIVE_CHILDREN.discard(self._proc.pid)
            self._proc = None  # reaped: its pid may be another process's now

    def close(self) -> None:
        """Stop the zygote and anything still carrying its marker (a setsid'd grandchild of a module)."""
        self._stop_zygote()
        self.failure = self.failure or "closed"
