"""Lint one source text: parse once, index, walk once with every selected rule, then place and filter findings."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst

from .analysis.binding.index import ModuleIndex
from .analysis.binding.positions import StatementPositions
from .analysis.flow.walk import FlowWalker
from .analysis.module_facts import ModuleFacts
from .finding import PARSE_ERROR_CODE, Finding, parse_error, too_large
from .fix import FixCollector
from .fix import describe as describe_fix
from .nesting import Shape, refused_by_libcst, scan, too_deep
from .rules import Rule, rule_class
from .selection import PREFILTER_WORDS, LintSettings
from .suppression import Suppressions
from .syntax import parse_module, run_deep
from .unit_reuse import Placed, UnitMemo, plan
from .unit_reuse_summary import SentFacts, after_walk

# Words a file must contain to possibly have a finding; anything else is skipped before parsing.


def lint_text(
    source: str,
    path: str,
    settings: LintSettings,
    *,
    noqa: bool = True,
    magics: Any = None,
    fixes: FixCollector | None = None,
    project: ModuleFacts | None = None,
    parser: Callable[[str], cst.Module] | None = None,
    statements: StatementPositions | None = None,
    units: UnitMemo | None = None,
) -> list[Finding]:
    """One text -> findings, sorted. Never raises for bad input (JAX000); a bug may raise.

    `noqa=False` leaves `# noqa` to the caller (flake8 owns it); `magics` (notebooks) goes to `index.magics`.
    `project` (the file drivers' project mode) brings the facts other modules give this one and collects its
    summary (`analysis.project`).

    `fixes`, when given, receives the parsed module and the node-level edits of the unsuppressed findings.
    `parser` (the server's incremental parse, `reparse.py`) parses instead of `syntax.parse_module`: it must
    build the module a full parse builds, and raise what it raises; `statements` (its memo of positions per
    top-level statement, `analysis.binding.positions.StatementPositions`) answers positions in unchanged statements;
    `units` (the server's `unit_reuse.UnitMemo`, filled by each lint) lets a lint walk only the defs an edit
    changed where that gives a full lint's findings.
    """
    # Each lint is an audit event (`sys.addaudithook`): tests and benchmarks count a face's lint passes in a
    # real run; with no hook it costs nothing measurable.
    sys.audit("jaxlint.lint", path, source)
    silent = not any(word in source for word in PREFILTER_WORDS) and not _mentions(
        source, settings.jit_decorators
    )
    if silent and (project is None or not project.imported):
        return []
    findings = _checked_and_linted(
        source, path, settings, noqa, magics, fixes, project, parser, statements, units
    )
    # A module with no JAX word is analysed only for the other modules it imports or they call
    # (`ModuleFacts.imported`): a text that cannot be analysed is not this run's concern (no JAX000), as when
    # the prefilter skipped it.
    return [f for f in findings if f.code != PARSE_ERROR_CODE] if silent else findings


def _checked_and_linted(
    source: str,
    path: str,
    settings: LintSettings,
    noqa: bool,
    magics: Any,
    fixes: FixCollector | None,
    project: ModuleFacts | None,
    parser: Callable[[str], cst.Module] | None,
    statements: StatementPositions | None,
    units: UnitMemo | None,
) -> list[Finding]:
    if "\x00" in source:
        return [parse_error(path, 1, 1, "file contains NUL bytes: not Python source")]
    if len(source) > settings.max_file_size:
        return [too_large(path, len(source), settings.max_file_size)]
    # Parsed and analysed on a deep stack: libcst's parser, its code generation and the analysis recurse once
    # per level of the tree, and a long chain of operators makes thousands. A text that may nest that deep
    # gets a fresh thread, whose stack goes when it ends.
    shape = scan(source)
    run = (
        source,
        path,
        settings,
        noqa,
        magics,
        fixes,
        project,
        shape,
        parser or parse_module,
        statements,
        units,
    )
    return run_deep(_parse_and_lint, *run, fresh=not shape.shallow)


def _parse_and_lint(
    source: str,
    path: str,
    settings: LintSettings,
    noqa: bool,
    magics: Any,
    fixes: FixCollector | None,
    project: ModuleFacts | None,
    shape: Shape,
    parser: Callable[[str], cst.Module],
    statements: StatementPositions | None,
    units: UnitMemo | None = None,
) -> list[Finding]:
    refused = too_deep(source, path, shape)
    if refused is not None:
        return [refused]
    try:
        module = parser(source)
    except cst.ParserSyntaxError as error:
        return [_syntax_error(source, path, error)]
    except RecursionError as error:  # pathological nesting
        return [parse_error(path, 1, 1, f"cannot parse: {type(error).__name__}")]
    # (A MemoryError goes up: the driver says the file was too large for the memory it may use.)
    return lint_module(
        module,
        source,
        path,
        settings,
        noqa=noqa,
        magics=magics,
        fixes=fixes,
        project=project,
        statements=statements,
        units=units,
    )


def _syntax_error(source: str, path: str, error: cst.ParserSyntaxError) -> Finding:
    """CPython's own message and position are clearer than libcst's; fall back to libcst's. Text CPython
    parses is valid Python whatever libcst says: not a syntax error, a file jaxlint cannot analyse."""
    try:
        compile(source, path, "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as py_error:
        line, column = py_error.lineno or 1, py_error.offset or 1
        return parse_error(path, line, column, f"cannot parse: {py_error.msg}")
    except (ValueError, RecursionError, MemoryError):
        pass
    else:
        return refused_by_libcst(source, path, error.editor_line, error.editor_column, error.message)
    return parse_error(path, error.editor_line, error.editor_column, f"cannot parse: {error.message}")


def _mentions(source: str, names: Iterable[str]) -> bool:
    return any(name.rsplit(".", 1)[-1] in source for name in names)


def lint_module(
    module: cst.Module,
    source: str,
    path: str,
    settings: LintSettings,
    *,
    noqa: bool = True,
    magics: Any = None,
    fixes: FixCollector | None = None,
    project: ModuleFacts | None = None,
    statements: StatementPositions | None = None,
    units: UnitMemo | None = None,
) -> list[Finding]:
    index = ModuleIndex(module, settings.jit_decorators, project.package if project is not None else None)
    index.statement_positions = statements
    if project is not None:
        project.observe(index)  # it releases the index once it has read the module's summary from it
        return _lint_indexed(module, index, source, path, settings, noqa, magics, fixes, project, units)
    try:
        return _lint_indexed(module, index, source, path, settings, noqa, magics, fixes, project, units)
    finally:
        index.release()


def _lint_indexed(
    module: cst.Module,
    index: ModuleIndex,
    source: str,
    path: str,
    settings: LintSettings,
    noqa: bool,
    magics: Any,
    fixes: FixCollector | None,
    project: ModuleFacts | None,
    units: UnitMemo | None = None,
) -> list[Finding]:
    if magics is not None:  # a notebook (its magics, possibly none)
        index.magics = magics
        index.notebook = True
    if (
        not index.imports.mentions_jax
        and not settings.jit_decorators
        and (project is None or not project.imported)
    ):
        return []
    rules = [rule_class(code)() for code in settings.rules]
    hooks: dict[str, list[Any]] = {}
    for rule in rules:
        for name, method in rule.hooks().items():
            hooks.setdefault(name, []).append(method)
    if units is not None and magics is not None:
        units = None  # per-unit reuse covers .py documents (`unit_reuse.py`)
    only = plan(units, module, source, path, settings, noqa, index, project) if units is not None else None
    raw: list[tuple[Rule, cst.CSTNode, str, str | None, Any, int]] = []

    def collect(rule, node, message, frame, fix) -> None:
        raw.append((rule, node, message, frame.function, fix, frame.walker.top))  # (no cycle through walker)

    walker = FlowWalker(index, hooks, collect, project, only.only if only is not None else frozenset())
    sent = None
    if units is not None and project is not None:
        sent = project.outgoing = SentFacts(project.outgoing, walker)
    walker.run()
    walked = after_walk(units, index, project, walker, only, sent) if units is not None else None
    positions = index.positions().resolve([item[1] for item in raw]) if raw else {}
    placed: list[Placed] = []
    for rule, node, message, function, fix, top in raw:
        if only is not None and top != 0 and top not in only.only:
            continue  # an import line's: the last lint's stands
        where = positions[node]
        fix_text, fix_safety = describe_fix(module, fix, rule.fix_safety)
        placed.append(
            Placed(
                top,
                rule.code,
                rule.name,
                rule.severity,
                node,
                message,
                function,
                fix,
                fix_text,
                fix_safety,
                rule.quotes_lines,
                where.start.line,
                where.start.column + 1,
                where.end.line,
                where.end.column + 1,
            )
        )
    if units is not None and walked is not None:
        placed = units.remember(module, source, path, settings, noqa, only, placed, walked)
    if not placed:
        return []
    suppressions = Suppressions(source if noqa and settings.noqa else "")
    findings = []
    for p in placed:
        if suppressions.suppressed(p.code, p.line):
            continue
        findings.append(
            Finding(
                path=path,
                line=p.line,
                column=p.column,
                end_line=p.end_line,
                end_column=p.end_column,
                code=p.code,
                name=p.name,
                message=p.message,
                severity=p.severity,
                fix=p.fix_text,
                fix_safety=p.fix_safety,
                function=p.function,
            )
        )
        if fixes is not None and p.fix is not None:
            fixes.add(module, findings[-1], p.fix)
    findings.sort(key=Finding.sort_key)
    return findings
