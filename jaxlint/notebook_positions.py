"""Where a notebook finding sits in the raw `.ipynb` file: (cell, line, column) -> the line and column of the
JSON text that holds that character, for tools that show the file as it is stored (GitHub code scanning,
workflow annotations). Also each cell's source text, for snippets.

The JSON is read with the standard library's pure-Python scanner, its string parser wrapped so that each
string remembers where its text starts; escapes (`\\n`, `\\"`, `\\u00e9`, surrogate pairs) are walked to
map a character of the decoded text to its place in the file. Imports nothing from jaxlint.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from typing import Any

_SCANSTRING: Any = getattr(json.decoder, "scanstring")  # noqa: B009 (not in typeshed)
_LINE_END = re.compile(r"\r\n|\r|\n")


class _Located(str):
    """A decoded JSON string that knows the offset of its first character in the file (after the quote)."""

    start: int


def _scan_located(text: str, end: int, strict: bool = True) -> tuple[str, int]:
    value, after = _SCANSTRING(text, end, strict)
    located = _Located(value)
    located.start = end
    return located, after


def _load(text: str) -> Any:
    decoder = json.JSONDecoder()
    decoder.parse_string = _scan_located  # type: ignore[attr-defined]
    # The pure-Python scanner calls `parse_string`; the C one ignores it. (Neither is in typeshed.)
    decoder.scan_once = getattr(json.scanner, "py_make_scanner")(decoder)  # type: ignore[attr-defined]  # noqa: B009
    return decoder.decode(text)


class NotebookText:
    """One notebook's JSON text, parsed once; every method answers None where the text is not a notebook
    as expected."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._cells: list[Any] | None = None
        try:
            document = _load(text)
        except (ValueError, RecursionError):
            return
        if isinstance(document, dict) and isinstance(document.get("cells"), list):
            self._cells = document["cells"]
        elif isinstance(document, dict) and isinstance(document.get("worksheets"), list):  # nbformat 3
            self._cells = [
                c for w in document["worksheets"] if isinstance(w, dict) for c in w.get("cells") or []
            ]
        self._line_starts: list[int] | None = None

    def _parts(self, cell: int) -> list[_Located] | None:
        if self._cells is None or not 1 <= cell <= len(self._cells):
            return None
        raw = self._cells[cell - 1]
        if not isinstance(raw, dict):
            return None
        source = raw.get("source", raw.get("input"))
        parts = source if isinstance(source, list) else [source]
        located = [part for part in parts if isinstance(part, _Located)]
        return located if len(located) == len(parts) else None

    def cell_lines(self, cell: int) -> list[str] | None:
        """The cell's source lines (line ends dropped, as the linter splits them)."""
        parts = self._parts(cell)
        if parts is None:
            return None
        return "".join(parts).replace("\r\n", "\n").replace("\r", "\n").split("\n")

    def raw_position(self, cell: int, line: int, column: int) -> tuple[int, int] | None:
        """The 1-based (line, column) in the file of the character at `line`:`column` (1-based, code points) of
        the cell's source; a column past the end of its line answers the end of that line."""
        parts = self._parts(cell)
        if parts is None or not parts:
            return None
        joined = "".join(parts)
        offset = 0
        for _ in range(line - 1):  # line ends as the linter splits them: \r\n, \r or \n
            found = _LINE_END.search(joined, offset)
            if found is None:
                return None
            offset = found.end()
        found = _LINE_END.search(joined, offset)
        line_end = found.start() if found is not None else len(joined)
        offset = min(offset + column - 1, line_end)
        for part in parts:
            if offset < len(part) or part is parts[-1]:
                return self._line_column(_raw_offset(self.text, part.start, min(offset, len(part))))
            offset -= len(part)
        return None

    def _line_column(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            starts = [0]
            at = self.text.find("\n")
            while at != -1:
                starts.append(at + 1)
                at = self.text.find("\n", at + 1)
            self._line_starts = starts
        import bisect

        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1


def _raw_offset(text: str, start: int, index: int) -> int:
    """The file offset of decoded character `index` of the JSON string whose text starts at `start`."""
    at = start
    for _ in range(index):
        if text[at] != "\\":
            at += 1
        elif text[at + 1] != "u":
            at += 2
        else:
            high = int(text[at + 2 : at + 6], 16)
            at += 6
            if 0xD800 <= high < 0xDC00 and text.startswith("\\u", at):  # a surrogate pair is one character
                at += 6
    return at
