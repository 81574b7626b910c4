"""Lines as Python, libcst and LSP count them: ended by `\r\n`, `\r` or `\n` only. `str.splitlines` also breaks
at a form feed, U+2028 and other characters a source file may hold inside a line, which shifts every line
number after them."""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str, keepends: bool = True) -> list[str]:
    """The lines of `text`, with their line ends unless `keepends` is false."""
    lines = _LINE.findall(text)
    return lines if keepends else [line.rstrip("\r\n") for line in lines]
