"""Old text + new text -> the few replacements that turn one into the other (no whole-file edits).

Positions are (line, column) with 0-based lines and code-point columns; the server converts them to the
client's units. Lines break at \\r\\n, \\r and \\n, as LSP counts them.
"""

from __future__ import annotations

import difflib

from ..text_lines import split_lines

Position = tuple[int, int]
Edit = tuple[Position, Position, str]  # (start, end, new text)


def common_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many lines the two share at their start, and then at their end (not overlapping the start)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def text_edits(old: str, new: str) -> list[Edit]:
    """Non-overlapping replacements, in document order, that turn `old` into `new`."""
    if old == new:
        return []
    old_lines, new_lines = split_lines(old), split_lines(new)
    # Lines the two share at the start and end are matched directly: a fix changes a few lines, and difflib
    # over a whole long module took most of a second on the event loop.
    head, tail = common_ends(old_lines, new_lines)
    matcher = difflib.SequenceMatcher(
        None, old_lines[head : len(old_lines) - tail], new_lines[head : len(new_lines) - tail], autojunk=False
    )
    edits: list[Edit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        edits.append(_narrow(old_lines, i1, i2, "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])))
    return edits


def _narrow(lines: list[str], first: int, last: int, old: str, new: str) -> Edit:
    """Replace lines first..last-1 (`old`) by `new`, trimmed to what differs between them."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    if 0 < prefix < len(old) and old[prefix - 1 : prefix + 1] == "\r\n":
        prefix -= 1  # never split a \r\n: LSP has no position between its two characters
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    cut = len(old) - suffix
    if 0 < cut < len(old) and old[cut - 1 : cut + 1] == "\r\n":
        suffix -= 1
    start = _position(lines, first, prefix)
    end = _position(lines, first, len(old) - suffix)
    return start, end, new[prefix : len(new) - suffix]


def _position(lines: list[str], first: int, offset: int) -> Position:
    """(line, column) of the `offset`-th character counted from the start of line `first`."""
    line = first
    while line < len(lines) and offset >= len(lines[line]):
        if line == len(lines) - 1 and not lines[line].endswith(("\n", "\r")):
            break  # the end of a last line without a line end
        offset -= len(lines[line])
        line += 1
    return line, offset


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply edits made by `text_edits` (for tests and for checking ourselves)."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: Position) -> int:
        line, column = position
        return starts[line] + column if line < len(lines) else len(text)

    out, at = [], 0
    for start, end, replacement in edits:
        out.append(text[at : offset(start)])
        out.append(replacement)
        at = offset(end)
    out.append(text[at:])
    return "".join(out)
