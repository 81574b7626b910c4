"""The edit that adds `# noqa: CODE` to a line, or extends the `# noqa: A, B` comment already there (written
by `suppression.noqa_edits`, as `--add-noqa` writes it), and the code under the cursor in such a comment."""

from __future__ import annotations

import re

from ..suppression import NOQA, noqa_edits
from .textdiff import Edit


def noqa_edit(text: str, line: int, code: str) -> Edit | None:
    """Suppress `code` on `line` (0-based); None where a comment cannot go (the line ends inside a string
    or with a backslash), where the line's comment already suppresses it, or where the text does not tokenize."""
    edits, _ = noqa_edits(text, {line + 1: [code]})
    if line + 1 not in edits:
        return None
    start, end, new = edits[line + 1]
    return (line, start), (line, end), new


_CODE = re.compile(r"[A-Z]+[0-9]+")  # case-sensitive, as jaxlint.suppression reads the codes


def noqa_code_at(line: str, column: int) -> str | None:
    """The code under `column` (0-based, code points) of the line's `# noqa: CODES` comment, if any."""
    comment = next((match for match in NOQA.finditer(line) if match.group("codes")), None)
    if comment is None or column < comment.start():
        return None
    for code in _CODE.finditer(comment.group(0)):
        if comment.start() + code.start() <= column <= comment.start() + code.end():
            return code.group(0)
    return None
