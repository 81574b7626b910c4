"""The edit that adds `# noqa: CODE` to a line, or extends the `# noqa: A, B` comment already there."""

from __future__ import annotations

import io
import re
import tokenize

from .textdiff import Edit, split_lines

_NOQA_CODES = re.compile(r"#\s*noqa:\s?[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*", re.IGNORECASE)
_BARE_NOQA = re.compile(r"#\s*noqa(?!:)", re.IGNORECASE)


def noqa_edit(text: str, line: int, code: str) -> Edit | None:
    """Suppress `code` on `line` (0-based); None where a comment cannot go (the line ends inside a string
    or with a backslash) or the text does not tokenize."""
    lines = split_lines(text)
    if line >= len(lines):
        return None
    comment = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            start, end = token.start[0] - 1, token.end[0] - 1
            if start <= line < end and token.type != tokenize.NL:
                return None  # a string (or f-string) runs past the end of this line
            if token.type == tokenize.COMMENT and start == line:
                comment = token
    except (tokenize.TokenError, SyntaxError):
        return None
    content = lines[line].rstrip("\r\n")
    if content.rstrip().endswith("\\"):
        return None
    if comment is not None:
        codes = _NOQA_CODES.search(comment.string)
        if codes is not None:
            at = comment.start[1] + codes.end()
            return (line, at), (line, at), f", {code}"
        if _BARE_NOQA.search(comment.string):
            return None  # already suppresses every code
    end = len(content.rstrip())
    return (line, end), (line, len(content)), f"  # noqa: {code}"


_CODE = re.compile(r"[A-Z]+[0-9]+")  # case-sensitive, as jaxlint.suppression reads the codes


def noqa_code_at(line: str, column: int) -> str | None:
    """The code under `column` (0-based, code points) of the line's `# noqa: CODES` comment, if any."""
    comment = _NOQA_CODES.search(line)
    if comment is None or column < comment.start():
        return None
    for code in _CODE.finditer(comment.group(0)):
        if comment.start() + code.start() <= column <= comment.start() + code.end():
            return code.group(0)
    return None
