"""The notebook magics model rules query: which IPython syntax sits on a line, which magic runs a node.

`jaxlint.notebook` builds it while turning cells into Python (and re-exports these names); the engine puts it
on `index.magics`. It is empty for .py files. Rules ask `magic_for(ctx.index, node)` — e.g. the `f(x)` call of
`%timeit f(x)`, or any statement in the body of a `%%timeit` cell — or `magics_for(ctx.index)` for all of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import libcst as cst


@dataclasses.dataclass(frozen=True)
class Magic:
    """One piece of IPython syntax in a code cell, and where it sits."""

    line: int  # line of the linted text (all code cells joined) where it starts
    end_line: int  # last line it covers: continuation lines; for a cell magic, the end of its cell
    cell: int  # notebook cell, counted from 1
    cell_line: int  # line inside the cell
    kind: str  # "line" (%name), "cell" (%%name), "shell" (!cmd), "help" (obj?), "autocall" (/f x)
    name: str  # the magic's name ("timeit", "time", "pip", …); "" for shell, help and autocall
    text: str  # as written, continuation lines included
    code: str | None = None  # the Python it runs, left in the linted text (line magics: at `line`; cell
    # magics: lines line+1 … end_line); None when nothing of it is linted

    @property
    def code_lines(self) -> range:
        """Lines of the linted text that hold the Python this magic runs (empty when none)."""
        if self.code is None:
            return range(0)
        if self.kind == "cell":
            return range(self.line + 1, self.end_line + 1)
        return range(self.line, self.end_line + 1)


class Magics(Mapping[int, Magic]):
    """A notebook's magics by line of the linted text, plus lookups from nodes."""

    def __init__(self, magics: list[Magic]) -> None:
        self._by_line = {m.line: m for m in magics}
        self._runs: dict[int, Magic] = {}  # line -> the magic whose code holds that line
        for magic in magics:
            for line in magic.code_lines:
                self._runs[line] = magic

    def __getitem__(self, line: int) -> Magic:
        return self._by_line[line]

    def __iter__(self) -> Iterator[int]:
        return iter(self._by_line)

    def __len__(self) -> int:
        return len(self._by_line)

    def running(self, line: int) -> Magic | None:
        """The magic whose Python code holds this line of the linted text (`%timeit` line, `%%time` body)."""
        return self._runs.get(line)

    def for_node(self, index: Any, node: cst.CSTNode) -> Magic | None:
        if not self._runs:
            return None
        where = index.positions().get(node)  # shared with the engine: resolved once per notebook
        return self._runs.get(where.start.line) if where is not None else None


def magics_for(index: Any) -> Mapping[int, Magic]:
    """The magics of the module being linted, by line (empty for a .py file)."""
    return getattr(index, "magics", None) or {}


def magic_for(index: Any, node: cst.CSTNode) -> Magic | None:
    """The magic that runs `node` (a node of `index.module`), e.g. `f(x)` in `%timeit f(x)`; else None.

    For rules: `magic_for(ctx.index, node)`. Positions are resolved once per notebook, on the first call, and
    only for notebooks whose magics run Python code.
    """
    magics = getattr(index, "magics", None)
    if not isinstance(magics, Magics):
        return None
    return magics.for_node(index, node)
