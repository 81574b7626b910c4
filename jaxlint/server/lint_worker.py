"""The server's lint process (`lint_process.py` starts it; by hand: `python -m jaxlint.server.lint_worker PID`).

libcst's parser holds the GIL for the whole parse (seconds on a long module), so a lint on a thread of the
server stalled its event loop; in a process of its own it stalls nothing, and a lint nobody waits for any
more ends with the process (`lint_process.py`). Requests and replies are pickles framed by their length on
stdin and stdout; the process answers one request at a time and keeps each .py document's latest lint, which
a quick fix needs. It ends when stdin closes or, on Linux, when the server dies.
"""

from __future__ import annotations

import pickle
import signal
import struct
import sys
import traceback
from typing import Any, BinaryIO

from .linting import Linted, die_with_parent, fix_all, fixed_text, lint_document, notebook_fix

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


class Documents:
    """The operations, and the latest lint of each .py document (by uri) for its fixes."""

    def __init__(self) -> None:
        self.linted: dict[str, Linted] = {}

    def lint(self, uri: str | None, text: str, path: str, config: Any) -> tuple[list, list[bool]]:
        """The findings, and for each whether it has a fix `fix` can apply."""
        linted = lint_document(text, path, config)
        if uri is not None and not path.endswith(".ipynb"):
            self.linted[uri] = linted
        return linted.findings, [id(f) in linted.fixes for f in linted.findings]

    def fix(self, uri: str, text: str, path: str, config: Any, index: int) -> str | None:
        """The text with the fix of finding `index` (of the lint of `text`) applied."""
        linted = self.linted.get(uri)
        if linted is None or linted.text != text or linted.path != path:
            self.lint(uri, text, path, config)
            linted = self.linted[uri]
        if not 0 <= index < len(linted.findings):
            return None
        return fixed_text(linted, linted.findings[index])

    def forget(self, uri: str) -> None:
        self.linted.pop(uri, None)

    @staticmethod
    def fix_all(text: str, path: str, config: Any) -> str:
        return fix_all(text, path, config)

    @staticmethod
    def notebook_fix(source: str, path: str, config: Any, finding: Any) -> Any:
        return notebook_fix(source, path, config, finding)


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    documents = Documents()
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


def main(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the server's to handle
    die_with_parent(parent)
    replies = sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries the replies: a stray print must not corrupt them
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main(int(sys.argv[1]))
