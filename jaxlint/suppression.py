"""`# noqa` comments, flake8's grammar, and the file-level `# jaxlint: noqa`.

As in flake8 and ruff, the word `noqa` may be in any case but the codes may not: `# noqa: jax201` does not
suppress JAX201 (flake8 reports it, ruff warns it is invalid), so jaxlint and its flake8 plugin agree."""

from __future__ import annotations

import io
import re
import tokenize

# flake8's own pattern: a bare noqa comment, or one with codes (`noqa: A1,B2`, `NOQA:A1 B2`).
_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
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
            match = _NOQA.search(comment)
            if match:
                codes = match.group("codes")
                self.lines[line] = ALL if not codes else frozenset(_NOQA_CODE.findall(codes))

    def suppressed(self, code: str, line: int) -> bool:
        if self.file_level:
            return True
        if line not in self.lines:
            return False
        codes = self.lines[line]
        return codes is ALL or any(code.startswith(c) for c in codes)


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
