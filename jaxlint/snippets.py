"""`--output-format full`: each finding as ruff prints it, its line with two lines around it and carets under
the flagged code; in colour on a terminal (`NO_COLOR` turns colour off, `FORCE_COLOR` on, NO_COLOR winning).

    m.py:5:8: JAX101 Python 'if' on traced value 'x' inside jax.jit-compiled 'f'
      |
    3 | @jax.jit
    4 | def f(x):
    5 |     if x > 0:
      |        ^^^^^ JAX101
    6 |         return x
    7 |     return -x
      |

Notebook findings show the lines of their cell. A file that cannot be read again shows the first line only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO

from .finding import Finding
from .report import RawPositions, clean, fixable, location
from .text_lines import split_lines

_CONTEXT = 2  # lines shown before and after the flagged one, as ruff
_BOLD, _RED, _BLUE, _CYAN, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[34m", "\x1b[36m", "\x1b[0m"


def use_colour(stream: IO[str]) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _shown(text: str) -> str:
    return clean(text.replace("\t", "    "))


class _Sources:
    """Each file's lines, read once (a notebook's by cell); `given` holds texts not on disk (stdin)."""

    def __init__(self, given: Mapping[str, str]) -> None:
        self.given = given
        self.files: dict[str, list[str] | None] = {}
        self.notebooks = RawPositions()

    def lines(self, f: Finding) -> list[str] | None:
        if f.cell is not None:
            text = self.notebooks.notebook(f.path)
            return text.cell_lines(f.cell) if text is not None else None
        if f.path not in self.files:
            self.files[f.path] = self._read(f.path)
        return self.files[f.path]

    def _read(self, path: str) -> list[str] | None:
        if path in self.given:
            return split_lines(self.given[path], keepends=False)
        from .lint import decode

        try:
            with open(path, "rb") as handle:
                return split_lines(decode(handle.read()), keepends=False)
        except (OSError, UnicodeError, SyntaxError, LookupError):
            return None


def full(
    findings: list[Finding],
    unsafe: bool = False,
    colour: bool = False,
    given: Mapping[str, str] | None = None,
) -> str:
    paint = (lambda code, text: f"{code}{text}{_RESET}") if colour else (lambda code, text: text)
    sources = _Sources(given or {})
    out = []
    for f in findings:
        mark = paint(_CYAN, "[*]") + " " if fixable(f, unsafe) else ""
        code = paint(_BOLD + _RED, clean(f.code))
        out.append(f"{paint(_BOLD, location(f))}: {code} {mark}{clean(f.message)}\n")
        lines = sources.lines(f)
        if lines is None or not 1 <= f.line <= len(lines):
            out.append("\n")
            continue
        first, last = max(1, f.line - _CONTEXT), min(len(lines), f.line + _CONTEXT)
        width = len(str(last))
        gutter = paint(_BLUE, " " * width + " |")
        out.append(f"{gutter}\n")
        for number in range(first, last + 1):
            text = lines[number - 1]
            out.append(f"{paint(_BLUE, f'{number:>{width}} |')} {_shown(text)}".rstrip() + "\n")
            if number == f.line:
                start = len(_shown(text[: f.column - 1]))
                stop = len(_shown(text[: f.end_column - 1])) if f.end_line == f.line else len(_shown(text))
                carets = "^" * max(1, stop - start)
                out.append(f"{gutter} {' ' * start}{paint(_BOLD + _RED, carets + ' ' + clean(f.code))}\n")
        out.append(f"{gutter}\n\n")
    return "".join(out)
