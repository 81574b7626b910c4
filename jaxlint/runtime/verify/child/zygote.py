"""The fork server: imports jax once, then forks one child per module, so a module costs a fork, a
backend start and its own import instead of a whole interpreter and a JAX import.

Forking is safe here because nothing has started a backend (no device client, no XLA threads): the
zygote only imports jax. Each forked child starts a session of its own (so the parent can kill it and
everything it starts as a group), takes its events pipe and stderr from the parent through the
control socket (SCM_RIGHTS), and runs exactly what a freshly started child runs.

Control socket (SOCK_SEQPACKET, one JSON message each): parent -> zygote `{"request": ..., "cwd": ...,
"environ": {...}}` (variables the child's own processes inherit: its marker) with fds [events, stderr]; zygote -> parent `{"ready": true}` once, then `{"started": n, "pid": p}` and
`{"exited": p, "status": s}` (os.waitstatus)."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
from typing import Any

_MESSAGE_LIMIT = 16 * 2**20


def _child(request: dict[str, Any], events_fd: int, stderr_fd: int, cwd: str, environ: dict[str, str]) -> int:
    from .main import EventLog, run_request

    os.setsid()
    os.environ.update(environ)  # the module's own marker: what it starts is found by it, setsid or not
    os.dup2(stderr_fd, 2)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    for fd in (devnull, stderr_fd):
        os.close(fd)
    os.chdir(cwd)
    return run_request(request, EventLog(events_fd, request.pop("nonce")))


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def serve(control_fd: int) -> int:
    sock = socket.socket(fileno=control_fd)
    try:
        import jax  # noqa: F401  (the point: once, before any fork)
    except BaseException as error:
        _send(sock, {"ready": False, "reason": f"cannot import jax: {type(error).__name__}: {error}"})
        return 0
    # The child's own modules too (no backend, no thread): each fork would import them again.
    from . import main, verifier  # noqa: F401

    if threading.active_count() > 1:  # a thread would be half-copied into every fork
        _send(sock, {"ready": False, "reason": "threads running after importing jax"})
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
        data, fds, _, _ = socket.recv_fds(sock, _MESSAGE_LIMIT, 2)
        if not data:
            return 0  # the parent is gone or done: children are its to kill
        message = json.loads(data)
        events_fd, stderr_fd = fds
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                sock.close()
                code = _child(
                    message["request"], events_fd, stderr_fd, message["cwd"], message.get("environ", {})
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
