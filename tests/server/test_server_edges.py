"""Edges of the protocol (issue 39, item 4): a document with a lone surrogate, a change with no content
changes, and a stdin that is not LSP at all, each through the real server process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp

from .conftest import ROOT, TIMEOUT, codes, run
from .test_language_server import SOURCE


def test_a_lone_surrogate_does_not_keep_the_old_diagnostics(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", SOURCE)
        assert codes(await session.diagnostics(uri, 1)) == ["JAX101", "JAX201"]
        # A client's buffer may hold a lone surrogate (JSON's "\ud800"); without the print line the
        # document has one finding: the lint of this text, not the old diagnostics, must come.
        text = SOURCE.replace('    print("x is", x)\n', '    s = "\ud800"\n')
        session.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=2, uri=uri),
                [lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        assert codes(await session.diagnostics(uri, 2)) == ["JAX101"]
        # Opened with one: linted too (the replacement character where it stood is a syntax error).
        opened = session.open(tmp_path / "other.py", "x = 1  \ud800\n" + SOURCE)
        (diagnostic,) = await session.diagnostics(opened, 1)
        assert diagnostic.code == "JAX000" and diagnostic.range.start.line == 0
        assert await session.stop() == 0

    run(scenario)


def test_a_change_without_content_changes_publishes_the_diagnostics(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", SOURCE)
        assert codes(await session.diagnostics(uri, 1)) == ["JAX101", "JAX201"]
        session.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(lsp.VersionedTextDocumentIdentifier(version=2, uri=uri), [])
        )
        assert codes(await session.diagnostics(uri, 2)) == ["JAX101", "JAX201"]
        assert await session.stop() == 0

    run(scenario)


def _server(stdin, **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "jaxlint", "server"],
        stdin=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **popen,
    )


def test_garbage_on_stdin_ends_the_server_with_the_reason(tmp_path):
    # `jaxlint server < /dev/zero` spun a core, its memory growing, until killed.
    garbage = {
        "zeros": "/dev/zero",
        "text lines": tmp_path / "lines.txt",
        "blank lines": tmp_path / "blank.txt",
    }
    (tmp_path / "lines.txt").write_text("hello\n" * 100_000)
    (tmp_path / "blank.txt").write_text("\r\n" * 100_000)
    for what, path in garbage.items():
        with open(path, "rb") as stdin:
            server = _server(stdin)
            _, err = server.communicate(timeout=TIMEOUT)
        assert server.returncode == 1, (what, err)
        assert "jaxlint server: stdin is not the Language Server Protocol" in err, (what, err)


def test_the_end_of_stdin_ends_the_server_and_says_so():
    server = _server(subprocess.DEVNULL)
    _, err = server.communicate(timeout=TIMEOUT)
    assert server.returncode == 1
    assert "jaxlint server: stdin ended before the client sent `exit`" in err


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as from a terminal, not a background job of a shell


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell starts a background job


def _catches_sigint(pid: int) -> bool:
    """Whether the process has a handler for SIGINT (Python's own, once its start-up is done; jaxlint's)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return False


def test_sigint_ends_the_server_at_any_time():
    # Sent once the process handles SIGINT (Python's handler is set before `site` is imported: a signal
    # then is Python's start-up failing, so 0.3 s later), during jaxlint's imports (a second or two) and
    # once it reads stdin. A shell's background job starts it with SIGINT ignored: then the handler is
    # jaxlint's, set as its server starts (0 s: during the imports), and the server does not keep ignoring.
    cases = [(_ignore_sigint, 0.0), (_default_sigint, 0.3), (_default_sigint, 1.0), (_ignore_sigint, 3.0)]
    cases.append((_default_sigint, 3.0))
    for start, delay in cases:
        read, write = os.pipe()  # a client that sends nothing, and never closes the pipe
        server = _server(read, preexec_fn=start)
        os.close(read)
        try:
            deadline = time.monotonic() + TIMEOUT
            while not _catches_sigint(server.pid) and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(delay)
            server.send_signal(signal.SIGINT)
            try:  # liveness, not speed: generous for a loaded machine
                server.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                raise AssertionError(f"SIGINT after {delay} s ({start.__name__}) did not end it") from None
            assert server.returncode in (130, -signal.SIGINT), (delay, start.__name__, server.returncode)
        finally:
            server.kill()
            server.communicate()
            os.close(write)
