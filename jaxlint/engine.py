"""Lint one source text: parse once, index, walk once with every selected rule, then place and filter findings."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import libcst as cst

from .analysis import FlowWalker, ModuleIndex
from .finding import Finding
from .fixes import FixCollector
from .fixes import describe as describe_fix
from .rules import ALL_RULES, PARSE_ERROR_CODE, PARSE_ERROR_NAME, Rule
from .suppression import Suppressions

# Words a file must contain to possibly have a finding; anything else is skipped before parsing.
_PREFILTER = ("jax", "jnp", "lax")


@dataclasses.dataclass(frozen=True)
class LintSettings:
    """What the engine needs from the configuration."""

    rules: tuple[type[Rule], ...] = tuple(r for r in ALL_RULES if r.default_enabled)
    jit_decorators: frozenset[str] = frozenset()


def decode(data: bytes) -> str:
    """Source bytes to text, honouring a PEP 263 coding cookie; raises UnicodeDecodeError/SyntaxError."""
    import io
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def parse_error(path: str, line: int, column: int, message: str) -> Finding:
    return Finding(path, line, column, line, column, PARSE_ERROR_CODE, PARSE_ERROR_NAME, message)


def lint_text(
    source: str,
    path: str,
    settings: LintSettings,
    *,
    noqa: bool = True,
    magics: Any = None,
    fixes: FixCollector | None = None,
) -> list[Finding]:
    """`noqa=False` leaves `# noqa` to the caller (flake8 owns it); `magics` (notebooks) goes to `index.magics`.

    `fixes`, when given, receives the parsed module and the node-level edits of the unsuppressed findings.
    """
    if not any(word in source for word in _PREFILTER) and not _mentions(source, settings.jit_decorators):
        return []
    if "\x00" in source:
        return [parse_error(path, 1, 1, "file contains NUL bytes: not Python source")]
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        return [_syntax_error(source, path, error)]
    except (RecursionError, MemoryError) as error:  # pathological nesting
        return [parse_error(path, 1, 1, f"cannot parse: {type(error).__name__}")]
    return lint_module(module, source, path, settings, noqa=noqa, magics=magics, fixes=fixes)


def _syntax_error(source: str, path: str, error: cst.ParserSyntaxError) -> Finding:
    """CPython's own message and position are clearer than libcst's; fall back to libcst's."""
    try:
        compile(source, path, "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except SyntaxError as py_error:
        line, column = py_error.lineno or 1, py_error.offset or 1
        return parse_error(path, line, column, f"cannot parse: {py_error.msg}")
    except (ValueError, RecursionError, MemoryError):
        pass
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
) -> list[Finding]:
    index = ModuleIndex(module, settings.jit_decorators)
    if magics is not None:
        index.magics = magics
    if not index.imports.mentions_jax and not settings.jit_decorators:
        return []
    rules = [rule_class() for rule_class in settings.rules]
    hooks: dict[str, list[Any]] = {}
    for rule in rules:
        for name, method in rule.hooks().items():
            hooks.setdefault(name, []).append(method)
    raw: list[tuple[Rule, cst.CSTNode, str, str | None, Any]] = []

    def collect(rule, node, message, frame, fix) -> None:
        raw.append((rule, node, message, frame.function, fix))

    FlowWalker(index, hooks, collect).run()
    if not raw:
        return []
    positions = index.positions()
    suppressions = Suppressions(source if noqa else "")
    findings = []
    for rule, node, message, function, fix in raw:
        where = positions[node]
        line = where.start.line
        if suppressions.suppressed(rule.code, line):
            continue
        fix_text, fix_safety = describe_fix(module, fix, rule.fix_safety)
        findings.append(
            Finding(
                path=path,
                line=line,
                column=where.start.column + 1,
                end_line=where.end.line,
                end_column=where.end.column + 1,
                code=rule.code,
                name=rule.name,
                message=message,
                severity=rule.severity,
                fix=fix_text,
                fix_safety=fix_safety,
                function=function,
            )
        )
        if fixes is not None and fix is not None:
            fixes.add(module, findings[-1], fix)
    findings.sort(key=Finding.sort_key)
    return findings
