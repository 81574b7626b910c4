"""`# noqa` comments, flake8's grammar, and the file-level `# jaxlint: noqa`: read here (`Suppressions`), and
written here (`noqa_edits`, for `--add-noqa` and the server's quick fix), so a comment written is one read.

As in flake8 and ruff, the word `noqa` may be in any case but the codes may not: `# noqa: jax201` does not
suppress JAX201 (flake8 reports it, ruff warns it is invalid), so jaxlint and its flake8 plugin agree."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Mapping

from .text_lines import split_lines

# flake8's own pattern: a bare noqa comment, or one with codes (`noqa: A1,B2`, `NOQA:A1 B2`).
NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_NOQA_CODE = re.compile(r"[A-Za-z]+[0-9]+")
_FILE_NOQA = re.compile(r"#\s*(?:jaxlint|flake8)\s*:\s*noqa\b(?!\s*:)", re.IGNORECASE)

ALL = None  # a bare noqa comment suppresses every code


class Suppressions:
    def __init__(self, source: str) -> None:
        self.file_level = False
        self.lines: dict[int, frozenset[str] | None] = {}
        if "noqa" not in source.lower():
            return
        for line, comment in _comments(source):
            if _FILE_NOQA.search(comment):
                self.file_level = True
            match = NOQA.search(comment)
            if match:
                codes = match.group("codes")
                self.lines[line] = ALL if not codes else frozenset(_NOQA_CODE.findall(codes))

    def suppressed(self, code: str, line: int) -> bool:
        if self.file_level:
            return True
        if line not in self.lines:
            return False
        return _covers(self.lines[line], code)


def _covers(codes: frozenset[str] | None, code: str) -> bool:
    return codes is ALL or any(code.startswith(c) for c in codes)


LineEdit = tuple[int, int, str]  # on one line: (start column, end column, new text); columns in code points


def noqa_edits(
    source: str, wanted: Mapping[int, Iterable[str]]
) -> tuple[dict[int, LineEdit], dict[int, str]]:
    """For each line (1-based) -> codes: the edit on that line that makes its `# noqa` comment suppress the
    codes (a new comment, or the missing codes appended to `# noqa: A1`), and, apart, why no comment can go on
    a line (it ends inside a string or continues with a backslash; the file does not tokenize). A line whose
    comment already suppresses the codes (a bare `# noqa`, or one naming them) and a line past the end get
    neither."""
    comments: dict[int, tokenize.TokenInfo] = {}
    inside: set[int] = set()  # lines that end inside a multi-line token (a string, an f-string)
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token
            elif token.start[0] < token.end[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                inside.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return {}, {line: "the file does not tokenize" for line in wanted}
    lines = split_lines(source, keepends=False)
    edits: dict[int, LineEdit] = {}
    refused: dict[int, str] = {}
    for number, codes in wanted.items():
        if not 1 <= number <= len(lines):
            continue
        text = lines[number - 1]
        if number in inside or text.rstrip().endswith("\\"):
            refused[number] = "the line ends inside a string or continues on the next"
            continue
        comment = comments.get(number)
        noqa = NOQA.search(comment.string) if comment is not None else None
        if comment is None or noqa is None:
            end = len(text.rstrip())
            edits[number] = (end, len(text), f"  # noqa: {', '.join(sorted(set(codes)))}")
            continue
        present = ALL if not noqa.group("codes") else frozenset(_NOQA_CODE.findall(noqa.group("codes")))
        missing = sorted({code for code in codes if not _covers(present, code)})
        if missing:
            at = comment.start[1] + noqa.end()
            edits[number] = (at, at, "".join(f", {code}" for code in missing))
    return edits, refused


def _comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comment; falls back to a line scan when tokenizing fails."""
    try:
        return [
            (tok.start[0], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return [(i, line[line.index("#") :]) for i, line in enumerate(source.splitlines(), 1) if "#" in line]
