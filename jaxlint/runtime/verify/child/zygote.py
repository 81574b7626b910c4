"""The fork server: imports jax once, then forks one child per module, so a module costs a fork, a
backend start and its own import instead of a whole interpreter and a JAX import.

Forking is safe only while the zygote has one thread and no backend (no device client, no XLA thread
pool): a fork copies the forking thread alone, and a lock another thread held stays locked in the child
for good. So the zygote is started with the math libraries' thread pools at one thread, refuses to serve
if importing jax started a thread anyway, and checks again before every fork (`fork_hazard`: threads in
/proc/self/task, JAX's backends); when either is there it answers with the reason instead of forking, and
that module gets a fresh interpreter. Each forked child starts a session of its own (so the parent can
kill it and everything it starts as a group), takes its events pipe and stderr from the parent through the
control socket (SCM_RIGHTS), and runs exactly what a freshly started child runs.

Control socket (SOCK_SEQPACKET, one JSON message each): parent -> zygote `{"cwd": ..., "number": n,
"environ": {...}}` (variables the child's own processes inherit: its marker) with fds [events, stderr, request]
(a file holding the request's JSON, which can be larger than one socket message); zygote -> parent `{"ready": true}` once, then `{"started": n, "pid": p}` and
`{"exited": p, "status": s}` (os.waitstatus); `{"started": n, "pid": null, "reason": why}` when it may not fork."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
from typing import Any

_MESSAGE_LIMIT = 1 << 16  # the control message alone: the request comes in a file


def os_threads() -> int:
    """Threads of this process as the OS counts them (XLA's and BLAS's too, which `threading` does not see)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _backend_started(jax: Any) -> bool:
    try:
        from jax._src import xla_bridge
    except ImportError:
        return False
    check = getattr(xla_bridge, "backends_are_initialized", None)
    if callable(check):
        try:
            return bool(check())
        except Exception:
            return True
    return bool(getattr(xla_bridge, "_backends", None))


def fork_hazard(jax: Any) -> str:
    """Why forking this process now would be unsafe ("" when it is not)."""
    threads = os_threads()
    if threads > 1:
        return f"the fork server had {threads} threads running"
    if _backend_started(jax):
        return "JAX in the fork server had started a backend"
    return ""


def _child(
    request: dict[str, Any],
    events_fd: int,
    stderr_fd: int,
    cwd: str,
    environ: dict[str, str],
    restore: dict[str, str | None],
) -> int:
    from .main import event_channel, run_request

    os.setsid()
    for name, value in restore.items():  # set to 1 for the zygote alone (fork_server._ONE_THREAD)
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    os.environ.update(environ)  # the module's own marker: what it starts is found by it, setsid or not
    os.dup2(stderr_fd, 2)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    for fd in (devnull, stderr_fd):
        os.close(fd)
    os.chdir(cwd)
    return run_request(request, event_channel(events_fd, request.pop("nonce")))


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def serve(control_fd: int, restore_env: str = "{}") -> int:
    sock = socket.socket(fileno=control_fd)
    restore = json.loads(restore_env)
    try:
        import jax  # (the point: once, before any fork)
    except BaseException as error:
        _send(sock, {"ready": False, "reason": f"cannot import jax: {type(error).__name__}: {error}"})
        return 0
    # The child's own modules too (no backend, no thread): each fork would import them again.
    from . import main, verifier  # noqa: F401

    hazard = fork_hazard(jax)
    if hazard:  # a thread would be half-copied into every fork
        _send(sock, {"ready": False, "reason": f"{hazard} after importing jax"})
        return 0
    _send(sock, {"ready": True})
    children: dict[int, int | None] = {}  # pid -> pidfd (readable once it exited), where the OS has them
    while True:
        pidfds = [fd for fd in children.values() if fd is not None]
        polled = len(pidfds) < len(children)
        ready, _, _ = select.select([sock, *pidfds], [], [], 0.05 if polled else None)
        for pid, pidfd in list(children.items()):
            if pidfd is not None and pidfd not in ready:
                continue
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                del children[pid]
                if pidfd is not None:
                    os.close(pidfd)
                _send(sock, {"exited": pid, "status": status})
        if sock not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(sock, _MESSAGE_LIMIT, 3)
        if not data:
            return 0  # the parent is gone or done: children are its to kill
        message = json.loads(data)
        events_fd, stderr_fd, request_fd = fds
        with os.fdopen(request_fd, "rb") as body:
            message["request"] = json.loads(body.read())
        fds = [events_fd, stderr_fd]
        hazard = fork_hazard(jax)
        if hazard:
            for fd in fds:
                os.close(fd)
            _send(sock, {"started": message["number"], "pid": None, "reason": hazard})
            continue
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                sock.close()
                code = _child(
                    message["request"],
                    events_fd,
                    stderr_fd,
                    message["cwd"],
                    message.get("environ", {}),
                    restore,
                )
            finally:
                for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
                    try:
                        stream.flush()
                    except Exception:
                        pass
                os._exit(code)
        os.close(events_fd)
        os.close(stderr_fd)
        try:
            children[pid] = os.pidfd_open(pid)
        except (AttributeError, OSError):
            children[pid] = None
        _send(sock, {"started": message["number"], "pid": pid})
