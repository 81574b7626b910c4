"""The server's lint process (`lint_process.py` starts it; by hand: `python -m jaxlint.server.lint_worker PID`).

libcst's parser holds the GIL for the whole parse (seconds on a long module), so a lint on a thread of the
server stalled its event loop; in a process of its own it stalls nothing, and a lint nobody waits for any
more ends with the process (`lint_process.py`). Requests and replies are pickles framed by their length on
stdin and stdout; the process answers one request at a time and keeps each .py document's latest lint, which
a quick fix needs and whose parse the next edit's starts from (`reparse`). It ends when stdin closes or, on
Linux, when the server dies.

Project facts: each document is linted with what the other modules of its project give it
(`linting.project_facts`, the open documents' latest texts standing for their files), computed once and
kept with the document's own summary (what it tells the other modules) in that run: the facts are a fixed
point of the summaries, so they hold while that summary does. A lint whose summary differs computes its own
facts again (linting once more when they changed). A lint whose summary differs from the document's last
one (or, just opened, a buffer that differs from its file) drops the other documents' facts and tells the
server to re-check the other open documents. A save drops them all (`stale`: files on disk may have changed);
a facts computation that fails leaves the document linted alone (its traceback on stderr).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import pickle
import signal
import struct
import sys
import traceback
from typing import Any, BinaryIO

from .linting import (
    Linted,
    ProjectFacts,
    die_with_parent,
    fix_all,
    fixed_text,
    lint_document,
    notebook_fix,
    project_facts,
)

HEADER = struct.Struct("<Q")


def read_frame(stream: BinaryIO) -> Any:
    """The next message, or None when the stream ends."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    return pickle.loads(stream.read(HEADER.unpack(header)[0]))


def frame(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


@dataclasses.dataclass(frozen=True)
class Facts:
    """A document's project facts, the configuration they were computed under, and the document's summary in
    that run (its facts hold while its summary stays that)."""

    config: Any
    facts: ProjectFacts | None
    summary: Any


class Documents:
    """The operations, the latest lint of each .py document (by uri) for its fixes and its next parse, and
    each document's project facts (by path)."""

    def __init__(self) -> None:
        self.linted: dict[str, Linted] = {}
        self.texts: dict[str, str] = {}  # absolute path -> the latest text linted under it (open documents)
        self.paths: dict[str, str] = {}  # uri -> its absolute path
        self.facts: dict[str, Facts] = {}
        self.summaries: dict[str, Any] = {}  # absolute path -> the summary of its latest lint

    def lint(self, uri: str | None, text: str, path: str, config: Any) -> tuple[list, list[bool], bool]:
        """The findings, for each whether it has a fix `fix` can apply, and whether the other open documents
        should be linted again (what this one tells the other modules changed: the facts they receive may)."""
        path = os.path.abspath(path)
        if uri is not None:
            self.paths[uri] = path
        self.texts[path] = text
        previous = self.linted.get(uri) if uri is not None else None
        facts = self.facts_of(path, config)
        linted = lint_document(text, path, config, previous, facts.facts)
        if facts.facts is not None and linted.summary != facts.summary:
            # The facts came from another summary of this module: computed again, once per lint.
            del self.facts[path]
            again = self.facts_of(path, config)
            if again.facts != facts.facts:
                linted = lint_document(text, path, config, linted, again.facts)
            self.facts[path] = dataclasses.replace(again, summary=linted.summary)
        if path in self.summaries:
            told = linted.summary != self.summaries[path]
        else:  # just opened: new to the others only where the buffer differs from the file
            told = _differs_from_disk(path, text)
        self.summaries[path] = linted.summary
        others = told and facts.facts is not None
        if others:
            own = self.facts.get(path)
            self.facts = {path: own} if own is not None else {}
        if uri is not None and not path.endswith(".ipynb"):
            self.linted[uri] = linted
        return linted.findings, [id(f) in linted.fixes for f in linted.findings], others

    def facts_of(self, path: str, config: Any) -> Facts:
        kept = self.facts.get(path)
        if kept is None or kept.config != config:
            try:
                kept = Facts(config, *project_facts(path, config, self.texts))
            except Exception:  # a bug in the project's lint costs the document its facts, not its lint
                traceback.print_exc()
                kept = Facts(config, None, None)
            self.facts[path] = kept
        return kept

    def stale(self) -> None:
        """Files on disk may have changed (a save): every document's facts are computed again."""
        self.facts.clear()

    def fix(self, uri: str, text: str, path: str, config: Any, index: int) -> str | None:
        """The text with the fix of finding `index` (of the lint of `text`) applied."""
        linted = self.linted.get(uri)
        if linted is None or linted.text != text or linted.path != os.path.abspath(path):
            self.lint(uri, text, path, config)
            linted = self.linted[uri]
        if not 0 <= index < len(linted.findings):
            return None
        return fixed_text(linted, linted.findings[index])

    def forget(self, uri: str) -> None:
        """The document closed: its file on disk stands for it again."""
        self.linted.pop(uri, None)
        path = self.paths.pop(uri, None)
        if path is not None and path not in self.paths.values():
            self.texts.pop(path, None)
            self.summaries.pop(path, None)
            self.facts.clear()

    def fix_all(self, text: str, path: str, config: Any) -> str:
        return fix_all(text, path, config, self.facts_of(os.path.abspath(path), config).facts)

    def notebook_fix(self, source: str, path: str, config: Any, finding: Any) -> Any:
        return notebook_fix(source, path, config, finding, self.facts_of(os.path.abspath(path), config).facts)


def _differs_from_disk(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read() != text
    except (OSError, UnicodeError):
        return True


# Requests between two full collections (see `_settle`).
_COLLECT_EVERY = 64


def _settle(served: int) -> None:
    """After a reply: what the process keeps (each document's parsed tree and lint, hundreds of thousands of
    objects for a long module) leaves the cyclic collector's generations (`gc.freeze`), so that the
    collections a lint's allocations trigger no longer scan it (on a 5,000-line module they took about a
    quarter of a one-character change's lint CPU, bench/README.md). Frozen objects are still freed by reference counting (libcst's trees
    hold no cycles); the few cycles frozen with them are collected every `_COLLECT_EVERY` requests."""
    if served % _COLLECT_EVERY == 0:
        gc.unfreeze()
        gc.collect()
    gc.freeze()


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    documents = Documents()
    served = 0
    while True:
        request = read_frame(requests)
        if request is None:
            return
        operation, args = request
        try:
            reply = ("ok", getattr(documents, operation)(*args))
        except Exception:  # a bug on one document costs that request, never the process
            reply = ("error", traceback.format_exc())
        replies.write(frame(reply))
        replies.flush()
        served += 1
        _settle(served)


def main(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the server's to handle
    die_with_parent(parent)
    replies = sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries the replies: a stray print must not corrupt them
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main(int(sys.argv[1]))
