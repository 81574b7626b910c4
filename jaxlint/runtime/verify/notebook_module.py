"""A notebook as a module the child can import: its code cells joined in order (as the kernel runs
them), IPython syntax neutralised line for line, and the map between (cell, line) and the joined line.

Line magics, shell escapes and help (`%time f(x)`, `!pip ...`, `f?`) become `pass` with their
indentation; `%%time`/`%%timeit`/`%%capture` cells keep their body (it is Python that runs); other cell
magics (`%%bash`, `%%html`, ...) become comments. Verdicts name the cell and its line again."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun")
_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")


@dataclasses.dataclass
class NotebookModule:
    path: Path  # the joined module, written under a private folder
    lines: dict[tuple[int, int], int]  # (cell, line in cell) -> line of the module
    cells: dict[int, tuple[int, int]]  # line of the module -> (cell, line in cell)

    def describe(self, text: str) -> str:
        """`... at line 37 ...` -> `... at cell 4, line 2 ...`."""

        def name(match: re.Match[str]) -> str:
            where = self.cells.get(int(match.group(1)))
            return f"cell {where[0]}, line {where[1]}" if where else match.group(0)

        return re.sub(r"\bline (\d+)", name, text)


def _neutralised(line: str) -> str:
    stripped = line.lstrip()
    if stripped.startswith(("%", "!")) or (stripped.endswith("?") and not stripped.startswith("#")):
        return line[: len(line) - len(stripped)] + "pass  # IPython syntax"
    return line


def write_notebook_module(notebook: Path, folder: Path) -> NotebookModule:
    """Raises ValueError (or OSError) for a file that is not a readable notebook."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a Jupyter notebook: no 'cells' list")
    out: list[str] = []
    lines: dict[tuple[int, int], int] = {}
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        cell_lines = text.splitlines()
        magic = cell_lines[0].strip() if cell_lines and cell_lines[0].lstrip().startswith("%%") else ""
        for index, line in enumerate(cell_lines, 1):
            if magic and (index == 1 or not magic.startswith(_PYTHON_CELL_MAGICS)):
                line = "# " + line
            else:
                line = _neutralised(line)
            out.append(line)
            lines[(number, index)] = len(out)
        out.append("")
    name = "_jaxlint_notebook_" + _IDENTIFIER.sub("_", notebook.stem)
    path = folder / f"{name}.py"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return NotebookModule(path, lines, {v: k for k, v in lines.items()})
