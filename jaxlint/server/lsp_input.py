"""The server's stdin as pygls reads it, refusing what is not LSP.

pygls reads a header line with an unbounded `readline()` and skips any line it does not understand, so a
stream of garbage (`jaxlint server < /dev/zero`) grew its memory and spun a core for as long as it lasted.
Here a header line is bounded, each line must be a header (`Name: value`) or the blank line that ends the
headers of a message with a Content-Length, and the body it announces is bounded: anything else ends the
server, with the reason on stderr, as the end of stdin does.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import BinaryIO

MAX_HEADER_LINE = 1 << 16
MAX_HEADERS = 32  # header lines of one message
MAX_BODY = 1 << 28  # 256 MiB: far above any document an editor sends

_HEADER = re.compile(rb"[!-9;-~]+:[^\r\n]*\r?\n")
_LENGTH = re.compile(rb"Content-Length: (\d+)\r\n")  # as pygls reads it


class LspInput:
    """`readline` and `read` for pygls's reader; b"" (the end, for pygls) once the input is not LSP."""

    def __init__(self, stream: BinaryIO, exited: Callable[[], bool]) -> None:
        self.stream = stream
        self.exited = exited  # whether the client sent `exit` (then the end of stdin is no news)
        self.headers = 0  # header lines of the message being read
        self.length: int | None = None  # its Content-Length
        self.ended: str | None = None  # why the input ended, once it has

    def readline(self) -> bytes:
        if self.ended is not None:
            return b""
        line = self.stream.readline(MAX_HEADER_LINE)
        if not line:
            return b"" if self.exited() else self._end("stdin ended before the client sent `exit`")
        if line in (b"\r\n", b"\n"):
            if self.length is None:
                return self._garbage(line)
            self.headers, self.length = 0, None  # the body comes next (`read`)
            return line
        self.headers += 1
        if not _HEADER.fullmatch(line) or self.headers > MAX_HEADERS:
            return self._garbage(line)
        length = _LENGTH.fullmatch(line)
        if length is not None:
            self.length = int(length.group(1))
            if self.length > MAX_BODY:
                return self._end(f"a message of {self.length} bytes is more than the {MAX_BODY} accepted")
        return line

    def read(self, size: int) -> bytes:
        return b"" if self.ended is not None else self.stream.read(size)

    def _garbage(self, line: bytes) -> bytes:
        return self._end(
            f"stdin is not the Language Server Protocol: a header was expected, got {line[:40]!r}"
        )

    def _end(self, reason: str) -> bytes:
        self.ended = reason
        print(f"jaxlint server: {reason}; stopping", file=sys.stderr, flush=True)
        return b""
