"""Jupyter notebooks: lint the code cells of an .ipynb as one module, report each finding at its cell and line.

- One notebook is one module: the code cells are joined in order, so names imported or defined in earlier
  cells are known in later ones (as in the kernel). Each finding is mapped back to its cell (counted from 1
  over all cells, markdown included, as ruff and editors count them) and to the line inside that cell.
- IPython syntax is replaced line for line, so no line moves and lines that stay Python keep their columns:
  `%timeit -n 3 f(x)` becomes `0;           f(x)` (the statement it runs stays visible to the rules),
  `!pip install x`, `%matplotlib inline`, `obj?` become `pass`, `files = !ls` becomes `files = None`, and a
  cell under a non-Python cell magic (`%%bash`, `%%html`, …) becomes blank lines. Cells under `%%time`,
  `%%timeit`, `%%capture`, `%%prun` … keep their Python body.
- A notebook that is not valid JSON, or not a notebook, is a JAX000 finding, never a crash. Notebooks whose
  kernel language is not Python are skipped.

Rules see the magics through the module index (the model lives in `jaxlint.analysis.binding.magics`, re-exported
here): `index.magics` maps the line of the linted text to a `Magic`, and `magic_for(ctx.index, node)` answers
"which magic runs this node?".
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import json
import re
from typing import Any

import libcst as cst

from .analysis.binding.magics import Magic, Magics, magic_for, magics_for
from .analysis.module_facts import ModuleFacts
from .engine import lint_text
from .finding import PARSE_ERROR_CODE, Finding, parse_error
from .fix import FixCollector
from .nesting import refused_by_libcst, scan, too_deep
from .selection import LintSettings
from .syntax import run_deep

__all__ = ["Magic", "Magics", "lint_notebook", "magic_for", "magics_for"]

# Cell magics whose body is Python run in the notebook's namespace: the body is linted.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit", "snakeviz", "scalene"})
# Line magics that run the Python statement written after them (and their options that take a value).
_CODE_MAGICS: dict[str, tuple[str, str]] = {
    "time": ("", ""),
    "timeit": ("nrp", "tcqo"),
    "prun": ("DlsT", "rq"),
    "memit": ("rt", "ico"),
    "snakeviz": ("", "t"),
}

_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_ASSIGN = re.compile(r"(?P<lhs>[\w.]+(?:\s*,\s*[\w.]+)*)\s*=\s*(?P<rhs>[%!].*)$", re.DOTALL)
_HELP = re.compile(r"\?{0,2}%{0,2}[\w*]+(?:\.[\w*]+)*\?{0,2}$")


# -- reading the notebook ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Cell:
    number: int  # counted from 1 over all cells
    lines: list[str]  # code lines, without line ends
    text: bool = True  # False: the cell's source is not text (no lines; a JAX000 says so)


class NotNotebook(ValueError):
    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def code_cells(text: str) -> list[Cell] | None:
    """The code cells of a notebook's JSON; None for a notebook in another language than Python."""
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotNotebook(f"cannot parse notebook: {error.msg}", error.lineno, error.colno) from error
    except RecursionError as error:
        raise NotNotebook("cannot parse notebook: nesting too deep") from error
    if not isinstance(notebook, dict):
        raise NotNotebook("not a Jupyter notebook: the JSON is not an object")
    if "cells" in notebook:
        raw_cells = notebook["cells"]
        source_key = "source"
    elif isinstance(notebook.get("worksheets"), list):  # nbformat 3
        raw_cells = [c for w in notebook["worksheets"] if isinstance(w, dict) for c in w.get("cells") or []]
        source_key = "input"
    else:
        raise NotNotebook("not a Jupyter notebook: no 'cells' list")
    if not isinstance(raw_cells, list):
        raise NotNotebook("not a Jupyter notebook: 'cells' is not a list")
    if not _is_python(notebook.get("metadata")):
        return None
    cells = []
    for number, raw in enumerate(raw_cells, 1):
        if not isinstance(raw, dict) or raw.get("cell_type") != "code":
            continue
        source = raw.get(source_key, "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            cells.append(Cell(number, [], text=False))
            continue
        source = source.replace("\r\n", "\n").replace("\r", "\n")
        lines = source.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        cells.append(Cell(number, lines))
    return cells


def _is_python(metadata: Any) -> bool:
    if not isinstance(metadata, dict):
        return True
    for table, key in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(table)
        if isinstance(value, dict) and isinstance(value.get(key), str):
            return value[key].strip().lower() in ("python", "python3", "ipython", "ipython3", "")
    return True


# -- IPython syntax to Python, line for line ---------------------------------------------------------------


class _Scanner:
    """Whether the next line starts a logical line: open brackets, open strings, backslash continuations."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None
        self.backslash = False

    @property
    def at_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.backslash

    def feed(self, line: str) -> None:
        self.backslash = False
        i, n = 0, len(line)
        while i < n:
            char = line[i]
            if self.quote is not None:
                if char == "\\":
                    i += 2
                elif line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                else:
                    i += 1
                continue
            if char == "#":
                break
            if char in "\"'":
                self.quote = char * 3 if line.startswith(char * 3, i) else char
                i += len(self.quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char == "\\" and i == n - 1:
                self.backslash = True
            i += 1
        if self.quote is not None and len(self.quote) == 1 and not line.endswith("\\"):
            self.quote = None  # an unterminated one-quote string ends with its line


def _comment_of(text: str) -> str:
    index = text.find("#")
    return text[index:] if index >= 0 else ""


def _placeholder(indent: str, text: str) -> str:
    comment = _comment_of(text)
    return f"{indent}pass  {comment}".rstrip() if comment else f"{indent}pass"


def _code_start(name: str, rest: str) -> int:
    """Index in `rest` (what follows `%name`) where the statement starts, after the magic's options."""
    with_value, without_value = _CODE_MAGICS[name]
    i, n = 0, len(rest)
    while True:
        while i < n and rest[i] in " \t":
            i += 1
        if i + 1 < n and rest[i] == "-" and rest[i + 1].isalpha():
            letter = rest[i + 1]
            end = i + 2
            while end < n and rest[end] not in " \t":
                end += 1
            if letter in with_value:
                if end == i + 2:  # `-n 10`: the value is the next word
                    while end < n and rest[end] in " \t":
                        end += 1
                    while end < n and rest[end] not in " \t":
                        end += 1
                i = end
                continue
            if letter in without_value and all(c in without_value for c in rest[i + 1 : end]):
                i = end
                continue
        return i


def _compiles(text: str) -> bool:
    try:
        compile(
            text,
            "<magic>",
            "exec",
            flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
            dont_inherit=True,
        )
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _classify(stripped: str) -> tuple[str, str] | None:
    """(kind, name) of a logical line that is IPython syntax, else None."""
    if not stripped or stripped[0] == "#":
        return None
    first = stripped[0]
    if first == "%":
        match = _NAME.match(stripped.lstrip("%"))
        return ("line", match.group(0) if match else "")
    if first == "!":
        return ("shell", "")
    if first == "?":
        return ("help", "")
    if first in "/,;":
        return ("autocall", "")
    assign = _ASSIGN.match(stripped)
    if assign is not None:
        rhs = assign.group("rhs")
        if rhs.startswith("!"):
            return ("shell", "")
        match = _NAME.match(rhs.lstrip("%"))
        return ("line", match.group(0) if match else "")
    code = stripped.split("#", 1)[0].rstrip()
    if code.endswith("?") and _HELP.match(code):
        return ("help", "")
    return None


def _logical_end(lines: list[str], start: int) -> int:
    """Index after the last line of the logical line starting at `start`."""
    scanner = _Scanner()
    end = start
    while end < len(lines):
        scanner.feed(lines[end])
        end += 1
        if scanner.at_start:
            break
    return end


def transform_cell(lines: list[str]) -> tuple[list[str], list[tuple[int, int, str, str, str, str | None]]]:
    """The cell as Python, line for line, and its magics as (first, last, kind, name, text, code) (0-based)."""
    out = list(lines)
    found: list[tuple[int, int, str, str, str, str | None]] = []
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start < len(lines) and lines[start].startswith("%%"):
        match = _NAME.match(lines[start][2:])
        name = match.group(0) if match else ""
        last = len(lines) - 1
        if name in PYTHON_CELL_MAGICS:
            out[start] = _placeholder("", lines[start])
            body = "\n".join(lines[start + 1 :])
            found.append((start, last, "cell", name, "\n".join(lines[start:]), body))
            start += 1
        else:
            out[start : last + 1] = [""] * (last + 1 - start)
            found.append((start, last, "cell", name, "\n".join(lines[start:]), None))
            return out, found
    scanner = _Scanner()
    i = start
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        kind_name = _classify(stripped) if scanner.at_start else None
        if kind_name is None:
            scanner.feed(line)
            i += 1
            continue
        kind, name = kind_name
        end = _logical_end(lines, i)
        text = "\n".join([stripped, *lines[i + 1 : end]])
        indent = line[: len(line) - len(stripped)]
        replaced, code = _replace_magic(indent, stripped, kind, name, lines[i + 1 : end])
        out[i] = replaced
        for k in range(i + 1, end):
            out[k] = lines[k] if code is not None else ""
        found.append((i, end - 1, kind, name, text, code))
        i = end
    return out, found


def _replace_magic(
    indent: str, stripped: str, kind: str, name: str, continuation: list[str]
) -> tuple[str, str | None]:
    """The Python line that stands in for a magic's first line, and the code it keeps (None: placeholder)."""
    assign = _ASSIGN.match(stripped) if stripped[0] not in "%!" else None
    rhs = assign.group("rhs") if assign is not None else stripped
    if kind == "line" and name in _CODE_MAGICS and not rhs.startswith("%%"):
        if assign is not None:  # `y = %time f(x)`: blank out `%time` and the options
            rhs_at = len(stripped) - len(rhs)
            prefix_len = len(name) + 1
            cut = rhs_at + prefix_len + _code_start(name, stripped[rhs_at + prefix_len :])
            line = stripped[:rhs_at] + " " * (cut - rhs_at) + stripped[cut:]
            code = stripped[cut:]
        else:  # `%timeit -n 3 f(x)`: `0;` and blanks in place of `%timeit -n 3 `
            prefix_len = len(name) + 1
            cut = prefix_len + _code_start(name, stripped[prefix_len:])
            line = "0;" + " " * (cut - 2) + stripped[cut:]
            code = stripped[cut:]
        if code.split("#", 1)[0].strip() and _compiles("\n".join([line, *continuation])):
            return indent + line, "\n".join([code, *continuation])
    if assign is not None:
        return f"{indent}{assign.group('lhs')} = None", None
    return _placeholder(indent, stripped), None


# -- linting ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class JoinedNotebook:
    """The code cells as one Python text, with the map from its lines back to cells."""

    source: str
    starts: list[int]  # first line of each code cell in `source` (1-based), ascending
    cells: list[Cell]
    magics: Magics

    def locate(self, line: int) -> tuple[int, int]:
        """(cell, line inside the cell) of a line of `source`."""
        if not self.cells:
            return 1, line
        k = max(bisect.bisect_right(self.starts, line) - 1, 0)
        cell = self.cells[k]
        return cell.number, min(max(line - self.starts[k] + 1, 1), max(len(cell.lines), 1))


def join_cells(cells: list[Cell]) -> JoinedNotebook:
    parts: list[str] = []
    starts: list[int] = []
    kept: list[Cell] = []
    magics: list[Magic] = []
    line = 1
    for cell in cells:
        if not cell.lines:
            continue
        python, found = transform_cell(cell.lines)
        for first, last, kind, name, text, code in found:
            magics.append(Magic(line + first, line + last, cell.number, first + 1, kind, name, text, code))
        starts.append(line)
        kept.append(cell)
        parts.extend(f"{text}\n" for text in python)
        line += len(python)
    return JoinedNotebook("".join(parts), starts, kept, Magics(magics))


def lint_notebook(
    source: str, path: str, settings: LintSettings, project: ModuleFacts | None = None, noqa: bool = True
) -> list[Finding]:
    """Lint a notebook's JSON text; findings carry `cell` and the line inside the cell.

    A cell that does not parse, holds a NUL byte or whose source is not text is one JAX000 finding at its own
    line, and the other cells are still linted (without it, as the kernel runs them when that cell fails).
    With `project` (project mode) the notebook receives the facts of the project modules it imports and
    leaves its summary: its calls into them (nothing imports a notebook, so it receives no calls).
    `noqa=False` leaves `# noqa` to the caller (flake8 owns it).
    """
    try:
        cells = code_cells(source)
    except NotNotebook as error:
        return [parse_error(path, error.line, error.column, str(error))]
    if not cells:
        return []
    joined, findings, errors = lint_cells(cells, path, settings, project=project, noqa=noqa)
    return sorted([*errors, *(_to_cell(f, joined) for f in findings)], key=Finding.sort_key)


def lint_cells(
    cells: list[Cell],
    path: str,
    settings: LintSettings,
    project: ModuleFacts | None = None,
    fixes: FixCollector | None = None,
    noqa: bool = True,
) -> tuple[JoinedNotebook, list[Finding], list[Finding]]:
    """The code cells joined and linted without those that are not Python (blanked, so no line moves): the
    joined text, its findings (lines of the joined text) and a JAX000 for each cell left out."""
    errors = _unreadable_cells(cells, path)
    cells = _blanked(cells, errors)
    joined = join_cells(cells)
    findings = lint_text(
        joined.source, path, settings, noqa=noqa, magics=joined.magics, project=project, fixes=fixes
    )
    # A cell that does not parse, or that libcst cannot take, costs that cell its findings, not the notebook.
    if any(
        f.code == PARSE_ERROR_CODE and f.message.startswith(("cannot parse", "cannot analyse"))
        for f in findings
    ):
        broken = _unparsable_cells(cells, path)
        if broken:
            joined = join_cells(_blanked(cells, broken))
            findings = lint_text(
                joined.source, path, settings, noqa=noqa, magics=joined.magics, project=project, fixes=fixes
            )
            errors = [*errors, *broken]
    return joined, findings, errors


def _blanked(cells: list[Cell], errors: list[Finding]) -> list[Cell]:
    """The cells with those that have an error made blank (they keep their lines, so none moves)."""
    numbers = {f.cell for f in errors}
    return [Cell(c.number, [""] * len(c.lines)) if c.number in numbers else c for c in cells]


def _unreadable_cells(cells: list[Cell], path: str) -> list[Finding]:
    """A JAX000 for each code cell that is not Python text at all: its source is not text, or holds a NUL
    byte (the linter would otherwise report the NUL of one cell for the whole notebook, at cell 1)."""
    errors = []
    for cell in cells:
        if not cell.text:
            errors.append(_cell_error(path, cell, 1, 1, "cannot read cell: its source is not text"))
            continue
        for number, line in enumerate(cell.lines, 1):
            if "\x00" in line:
                where = line.index("\x00") + 1
                errors.append(
                    _cell_error(path, cell, number, where, "cell contains NUL bytes: not Python source")
                )
                break
    return errors


def _unparsable_cells(cells: list[Cell], path: str) -> list[Finding]:
    """A JAX000 finding (at the cell and line) for each code cell that does not parse on its own."""
    broken = []
    for cell in cells:
        python, _ = transform_cell(cell.lines)
        text = "".join(f"{line}\n" for line in python)
        try:
            compile(
                text,
                path,
                "exec",
                flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                dont_inherit=True,
            )
            shape = scan(text)  # what libcst cannot take is refused before it crashes on it
            refused = too_deep(text, path, shape) or run_deep(
                _libcst_refusal, text, path, fresh=not shape.shallow
            )
            if refused is not None:
                broken.append(_cell_error(path, cell, refused.line, refused.column, refused.message))
        except SyntaxError as error:
            line, column = error.lineno or 1, error.offset or 1
            broken.append(_cell_error(path, cell, line, column, f"cannot parse: {error.msg}"))
        except (ValueError, RecursionError, MemoryError) as error:
            broken.append(_cell_error(path, cell, 1, 1, f"cannot parse: {type(error).__name__}"))
    return broken


def _libcst_refusal(text: str, path: str) -> Finding | None:
    """None when libcst parses `text` (which CPython parsed), else the JAX000 that says it cannot."""
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return refused_by_libcst(text, path, error.editor_line, error.editor_column, error.message)
    return None


def _cell_error(path: str, cell: Cell, line: int, column: int, message: str) -> Finding:
    line = min(max(line, 1), max(len(cell.lines), 1))
    return dataclasses.replace(parse_error(path, line, column, message), cell=cell.number)


# "first consumed at line 143": a line of the joined text, which no one can find in the notebook.
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")


def _to_cell(finding: Finding, joined: JoinedNotebook) -> Finding:
    cell, line = joined.locate(finding.line)
    end_cell, end_line = joined.locate(finding.end_line)
    end_column = finding.end_column
    if end_cell != cell:  # never across cells: stop at the end of the first one
        lines = next(c.lines for c in joined.cells if c.number == cell)
        end_line = max(len(lines), line)
        end_column = len(lines[end_line - 1]) + 1 if lines else finding.column
    message = _LINE_REFERENCE.sub(
        lambda m: "cell {}, line {}".format(*joined.locate(int(m.group(1)))), finding.message
    )
    return dataclasses.replace(
        finding, cell=cell, line=line, end_line=end_line, end_column=end_column, message=message
    )
