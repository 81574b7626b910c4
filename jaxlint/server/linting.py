"""The server's one door into jaxlint: every import of the linter's internals lives here, nowhere else.

The rest of `jaxlint.server` speaks LSP and sees only this small API:
- `config_for(path, select, ignore)`: the configuration the CLI would use for `path` (nearest pyproject.toml
  with a [tool.jaxlint] table), with the client's select/ignore applied as the CLI applies its flags;
- `project_facts(path, config, texts)`: what the other modules of `path`'s project give it (`lint.lint_project`,
  the open documents' `texts` standing for their files on disk; summaries from the findings cache, computed
  when missing or stale, as the command does), and the module's own summary in that run;
- `lint_document(text, path, config, previous, facts)`: findings (1-based lines, code-point columns, end
  exclusive) with the project's facts, the module's summary, and, for .py files, the handles `fixed_text`
  needs to apply one finding's fix; `previous` (the document's last lint) lends its parse to `reparse`;
- `fixed_text(linted, finding)`, `fix_all(text, path, config)`: the whole new text (callers diff it);
- `notebook_fix(source, path, config, finding)`: one finding's fix in a notebook, as new lines of one cell;
- `rule_help(code)`, `rule_summary(code)`, `docs_url(code)`: what hover and `codeDescription` show;
- `die_with_parent(pid)`: for the lint process (`lint_worker.py`), which runs the functions above.
Static mode: nothing here imports jax.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from ..analysis.binding.positions import StatementPositions
from ..autofix import apply, fix_source
from ..cache import default_dir
from ..config import Config, ConfigError, find_pyproject, load, with_overrides
from ..engine import lint_text
from ..finding import PARSE_ERROR_CODE, Finding, parse_error
from ..fix import FixCollector
from ..lint import (
    ProjectFacts,
    die_with_parent,
    keep_selected,
    lint_guarded,
    lint_project,
    observe_re_exports,
)
from ..notebook import NotNotebook, code_cells, lint_cells
from ..reparse import Parsed, reparse
from ..report import _DOCS_URL
from ..rules import RULES_BY_CODE
from ..selection import settings_for, validate
from ..unit_reuse import UnitMemo

__all__ = [
    "PARSE_ERROR_CODE",
    "ConfigError",
    "Finding",
    "Linted",
    "ProjectFacts",
    "config_for",
    "die_with_parent",
    "docs_url",
    "fix_all",
    "fixed_text",
    "is_syntax_error",
    "lint_document",
    "notebook_fix",
    "project_facts",
    "rule_help",
    "rule_summary",
]

# pyproject.toml path -> (mtime, Config): re-read only when the file changes.
_LOADED: dict[Path | None, tuple[float, Config]] = {}


def config_for(path: str, select: list[str] | None = None, ignore: list[str] | None = None) -> Config:
    """The CLI's configuration for `path`, plus the client's settings; raises ConfigError where the CLI
    would exit 2 (a bad file, or a selector, from the file or the client, that matches no rule)."""
    pyproject = find_pyproject(Path(path))
    mtime = _mtime(pyproject)
    cached = _LOADED.get(pyproject)
    if cached is None or cached[0] != mtime:
        try:
            loaded = load(pyproject)
        except (OSError, ValueError) as error:  # unreadable, or not TOML (tomllib's error is a ValueError)
            raise ConfigError(f"cannot read the configuration: {error}") from error
        validate(loaded, f"{pyproject}: [tool.jaxlint] ")
        cached = (mtime, loaded)
        _LOADED[pyproject] = cached
    config = cached[1]
    if select is None and ignore is None:
        return config
    config = with_overrides(config, select=select, ignore=ignore)
    validate(config, "the client's settings: ")
    return config


def _mtime(path: Path | None) -> float:
    try:
        return os.stat(path).st_mtime if path is not None else 0.0
    except OSError:
        return 0.0


@dataclasses.dataclass
class Linted:
    """One lint of one text: the findings, the module's summary (what it tells the other modules), and for
    each fixable finding of a .py file the fix to apply; `parsed`: the text's parse (or, while the text does
    not parse, the last that did), which the next edit's `reparse` starts from."""

    text: str
    path: str
    findings: list[Finding]
    module: Any = None  # the parsed module the fixes' nodes belong to
    fixes: dict[int, Any] = dataclasses.field(default_factory=dict)  # id(finding) -> Fix
    summary: Any = None
    parsed: Parsed | None = None
    statements: StatementPositions | None = None  # positions per top-level statement, kept across edits
    units: UnitMemo | None = None  # its findings by the statement whose walk found them (`unit_reuse.py`)


def project_facts(path: str, config: Config, texts: dict[str, str]) -> tuple[ProjectFacts | None, Any]:
    """What `path`'s project gives it (None for a document that is no file: as the command's stdin, it is
    linted alone) and its own summary in that run, `texts` standing for the files they name."""
    if not os.path.isfile(path):
        return None, None
    _, run = lint_project([path], config, jobs=1, cache_dir=default_dir(config), texts=texts)
    result = run.results.get(path)
    return run.facts.get(path), (result[1] if result is not None else None)


def lint_document(
    text: str,
    path: str,
    config: Config,
    previous: Linted | None = None,
    facts: ProjectFacts | None = None,
) -> Linted:
    """Lint a .py text (or a notebook's JSON when `path` ends in .ipynb), as the command would lint the file
    holding it: with `facts`, its project's (`project_facts`), else alone."""
    settings = settings_for(config, path)
    project = facts.module_facts(path) if facts is not None else None
    if path.endswith(".ipynb"):
        findings = keep_selected(lint_guarded(text, path, settings, project=project), settings)
        return Linted(text, path, findings, summary=project.summary() if project is not None else None)
    same = previous is not None and previous.path == path
    kept = previous.parsed if previous is not None and same else None
    statements = previous.statements if previous is not None and same else None
    statements = statements if statements is not None else StatementPositions()
    units = previous.units if previous is not None and same else None
    units = units if units is not None else UnitMemo()
    parses: list[Parsed] = []

    def parser(source: str) -> Any:
        parses.append(reparse(kept, source))
        parsed = parses[-1]
        units.spans = (parsed.module, parsed.text, parsed.starts) if parsed.starts else None
        return parsed.module

    collector = FixCollector()
    try:
        findings = lint_text(
            text,
            path,
            settings,
            fixes=collector,
            project=project,
            parser=parser,
            statements=statements,
            units=units,
        )
    except RecursionError:
        findings = [parse_error(path, 1, 1, "cannot analyse: nesting too deep")]
    findings = keep_selected(findings, settings)
    summary = None
    if project is not None:
        observe_re_exports(text, path, settings, project)
        summary = project.summary()
    fixes = {id(finding): fix for finding, fix in collector.items}
    parsed = parses[-1] if parses else kept
    return Linted(text, path, findings, collector.module, fixes, summary, parsed, statements, units)


def is_syntax_error(finding: Finding) -> bool:
    return finding.code == PARSE_ERROR_CODE and finding.message.startswith("cannot parse")


def fixed_text(linted: Linted, finding: Finding) -> str | None:
    """The text with this one finding's fix applied; None when it has none or the result would not parse."""
    fix = linted.fixes.get(id(finding))
    if fix is None or linted.module is None:
        return None
    new = apply(linted.module, [fix])
    try:
        compile(new, linted.path, "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return None
    return new


@dataclasses.dataclass(frozen=True)
class CellEdit:
    """Replace `count` lines of notebook cell `cell` (counted from 1, as findings count), starting at line
    `first` (0-based), with `lines` (without line ends)."""

    cell: int
    first: int
    count: int
    lines: list[str]


def notebook_fix(
    source: str, path: str, config: Config, finding: Finding, facts: ProjectFacts | None = None
) -> list[CellEdit] | None:
    """The fix of `finding` (a finding of this notebook's JSON `source`, linted with its project's `facts`) as
    line edits of its cell; None when it has no fix, or the fix would touch IPython syntax or another cell."""
    import difflib

    try:
        cells = code_cells(source)
    except NotNotebook:
        return None
    if not cells:
        return None
    collector = FixCollector()
    project = facts.module_facts(path) if facts is not None else None
    joined, _, _ = lint_cells(cells, path, settings_for(config, path), project, collector)  # as lint_notebook
    fix = None
    for found, candidate in collector.items:
        if (found.code, found.column) == (finding.code, finding.column) and joined.locate(found.line) == (
            finding.cell,
            finding.line,
        ):
            fix = candidate
            break
    if fix is None or collector.module is None:
        return None
    new = apply(collector.module, [fix])
    try:
        compile(new, path, "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return None
    magic_lines = {line for magic in joined.magics.values() for line in range(magic.line, magic.end_line + 1)}
    old_lines, new_lines = joined.source.split("\n"), new.split("\n")
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:
            return None  # pure insertions have no cell to belong to
        if any(line + 1 in magic_lines for line in range(i1, i2)):
            # Magics are not Python in the cell, but a line magic's code keeps its columns (`%timeit f(x)`
            # is linted as `0;      f(x)`): an edit inside that code is the same edit of the cell's line.
            cell, first = joined.locate(i1 + 1)
            lines = next((c.lines for c in cells if c.number == cell), [])
            if i2 - i1 != 1 or j2 - j1 != 1 or cell != finding.cell or not 1 <= first <= len(lines):
                return None
            old, new_line, stored = old_lines[i1], new_lines[j1], lines[first - 1]
            start = len(os.path.commonprefix([old, new_line]))
            if len(stored) != len(old) or stored[start:] != old[start:]:
                return None
            edits.append(CellEdit(cell, first - 1, 1, [stored[:start] + new_line[start:]]))
            continue
        cell, first = joined.locate(i1 + 1)
        if joined.locate(i2) != (cell, first + i2 - i1 - 1) or cell != finding.cell:
            return None  # the fix would cross a cell boundary
        edits.append(CellEdit(cell, first - 1, i2 - i1, new_lines[j1:j2]))
    return edits or None


def fix_all(text: str, path: str, config: Config, facts: ProjectFacts | None = None) -> str:
    """The text with every safe fix applied (the CLI's `--fix`, with the project's `facts`); notebooks come
    back unchanged."""
    return fix_source(text, path, config, unsafe=False, facts=facts).fixed


def docs_url(code: str) -> str | None:
    return _DOCS_URL.format(code=code.lower()) if code in RULES_BY_CODE else None


def rule_summary(code: str) -> str | None:
    """Markdown: the rule's code, name and one-line summary."""
    rule = RULES_BY_CODE.get(code)
    return None if rule is None else f"**{rule.code} {rule.name}**: {rule.summary}"


_HOVER_SECTIONS = ("What it does", "Why is this bad", "Use instead")


def rule_help(code: str) -> str | None:
    """Markdown for hover: the rule's name and summary, then what it does, why, and what to use instead."""
    rule = RULES_BY_CODE.get(code)
    if rule is None:
        return None
    sections: dict[str, str] = {}
    heading = None
    for line in rule.doc.strip().splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
            sections[heading] = ""
        elif heading is not None:
            sections[heading] += line + "\n"
    parts = [f"**{rule.code} {rule.name}**: {rule.summary}"]  # as rule_summary
    for name in _HOVER_SECTIONS:
        body = sections.get(name, "").strip()
        if body:
            parts.append(f"**{name}**\n\n{body}")
    return "\n\n".join(parts)
