"""Issue 30 item 7: the server's life (interrupt, exit, a vanished client, requests after shutdown, bad
positions) while a lint runs, through pygls's client and the real `python -m jaxlint server`.

A lint that holds the GIL and never ends stands for libcst parsing a long module: the hook below, on the
PYTHONPATH of the server and of its lint process, makes a text with STALL in it backtrack forever inside `re`
(C code that never lets the GIL go), and leaves a file `stalling` next to itself when it starts."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from .conftest import TIMEOUT, codes, run
from .test_language_server import SOURCE

STALLING_LINTER = """
import re
from pathlib import Path
import jaxlint.engine as engine

real = engine.lint_text

def lint_text(source, *args, **kwargs):
    if "STALL" in source:
        Path(__file__).with_name("stalling").touch()
        re.match(r"(a+)+$", "a" * 64 + "b")  # exponential, in C, holding the GIL
    return real(source, *args, **kwargs)

engine.lint_text = lint_text
"""

STALLED = "import jax\nSTALL = 1\n"


@pytest.fixture
def hooks(tmp_path: Path) -> Path:
    folder = tmp_path / "hooks"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(STALLING_LINTER)
    return folder


def _descendants(pid: int) -> set[int]:
    """The processes under `pid` (Linux's /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found |= {child, *_descendants(child)}
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def _stalled_session(session_factory, hooks, tmp_path):
    """A server stuck in a lint, and the pids of the processes under it."""
    session = session_factory(path=[hooks])
    await session.start()
    session.open(tmp_path / "stalled.py", STALLED)
    server = session.client._server
    assert server is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not (hooks / "stalling").exists():
        assert loop.time() < deadline, "the lint did not start"
        await asyncio.sleep(0.05)
    return session, server, _descendants(server.pid)


async def _spare_started(server) -> set[int]:
    """Wait for the spare lint process a long lint starts; all the lint processes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while len(_descendants(server.pid)) < 2:
        assert loop.time() < deadline, "no spare lint process"
        await asyncio.sleep(0.05)
    return _descendants(server.pid)


async def _exits(server) -> int:
    return await asyncio.wait_for(server.wait(), TIMEOUT)


async def _ended(pids: set[int]) -> None:
    """Wait until none of `pids` runs (polled: a dead server sends nothing to wait for)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while any(map(_alive, pids)):
        assert loop.time() < deadline, f"processes {pids} still run"
        await asyncio.sleep(0.05)


def test_the_event_loop_answers_while_a_lint_holds_the_gil(session_factory, hooks, tmp_path):
    async def scenario():
        session, server, _ = await _stalled_session(session_factory, hooks, tmp_path)
        other = session.open(tmp_path / "other.py", SOURCE)
        hover = session.client.text_document_hover_async(
            lsp.HoverParams(lsp.TextDocumentIdentifier(other), lsp.Position(0, 0))
        )
        assert await asyncio.wait_for(hover, TIMEOUT) is None
        # The stuck lint is cancelled by a newer text: its diagnostics come.
        stalled = (tmp_path / "stalled.py").as_uri()
        session.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=2, uri=stalled),
                [lsp.TextDocumentContentChangeWholeDocument(text=SOURCE)],
            )
        )
        assert codes(await session.diagnostics(stalled, 2)) == ["JAX101", "JAX201"]
        assert codes(await session.diagnostics(other, 1)) == ["JAX101", "JAX201"]
        assert await session.stop() == 0

    run(scenario)


def test_sigint_ends_the_server_and_its_lint_process(session_factory, hooks, tmp_path):
    async def scenario():
        session, server, lint_processes = await _stalled_session(session_factory, hooks, tmp_path)
        server.send_signal(signal.SIGINT)
        assert await _exits(server) == 130
        await _ended(lint_processes)

    run(scenario)


def test_exit_does_not_wait_for_a_running_lint(session_factory, hooks, tmp_path):
    async def scenario():
        session, server, lint_processes = await _stalled_session(session_factory, hooks, tmp_path)
        await asyncio.wait_for(session.client.shutdown_async(None), TIMEOUT)
        session.client.exit(None)
        assert await _exits(server) == 0
        await _ended(lint_processes)

    run(scenario)


def test_a_vanished_client_ends_the_server_during_a_lint(session_factory, hooks, tmp_path):
    async def scenario():
        session, server, _ = await _stalled_session(session_factory, hooks, tmp_path)
        lint_processes = await _spare_started(server)
        server.stdin.close()  # the editor is gone: no shutdown, no exit
        assert await _exits(server) == 1
        await _ended(lint_processes)

    run(scenario)


def test_exit_without_shutdown_exits_1(session_factory):
    async def scenario():
        session = session_factory()
        await session.start()
        session.client.exit(None)
        assert await _exits(session.client._server) == 1

    run(scenario)


def test_requests_after_shutdown_and_at_positions_past_the_end_get_errors(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", SOURCE)
        assert codes(await session.diagnostics(uri, 1)) == ["JAX101", "JAX201"]
        past_the_end = lsp.Position(SOURCE.count("\n") + 5, 0)
        with pytest.raises(JsonRpcException) as hover_error:
            await asyncio.wait_for(
                session.client.text_document_hover_async(
                    lsp.HoverParams(lsp.TextDocumentIdentifier(uri), past_the_end)
                ),
                TIMEOUT,
            )
        assert hover_error.value.code == -32602  # InvalidParams
        with pytest.raises(JsonRpcException) as action_error:
            await asyncio.wait_for(
                session.client.text_document_code_action_async(
                    lsp.CodeActionParams(
                        lsp.TextDocumentIdentifier(uri),
                        lsp.Range(lsp.Position(0, 0), past_the_end),
                        lsp.CodeActionContext(diagnostics=[]),
                    )
                ),
                TIMEOUT,
            )
        assert action_error.value.code == -32602
        # The end of the document is a position, not past it.
        end = lsp.Position(SOURCE.count("\n"), 0)
        hover = session.client.text_document_hover_async(
            lsp.HoverParams(lsp.TextDocumentIdentifier(uri), end)
        )
        assert await asyncio.wait_for(hover, TIMEOUT) is None

        await asyncio.wait_for(session.client.shutdown_async(None), TIMEOUT)
        with pytest.raises(JsonRpcException) as after:
            await asyncio.wait_for(
                session.client.text_document_hover_async(
                    lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(6, 9))
                ),
                TIMEOUT,
            )
        assert after.value.code == -32600  # InvalidRequest
        session.client.exit(None)
        assert await _exits(session.client._server) == 0

    run(scenario)


def test_no_lint_process_outlives_a_killed_server(session_factory, hooks, tmp_path):
    async def scenario():
        session, server, lint_processes = await _stalled_session(session_factory, hooks, tmp_path)
        os.kill(server.pid, signal.SIGKILL)
        await _exits(server)
        await _ended(lint_processes)

    run(scenario)
