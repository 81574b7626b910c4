"""Shared helpers for the verify tests: findings built from the markers in tests/fixtures/verify.

A marker `# JAX101` expects CONFIRMED at its line, `# ok: JAX101` a VALID look-alike that must never be
CONFIRMED, `# notrun: JAX101` a NOT_RUN, `# maybe: JAX405` a pitfall that only some JAX versions show
(CONFIRMED or NOT_REPRODUCED, never NOT_RUN). The finding's `function` is the innermost def or lambda around the
line, as the static linter reports it (`Model.step`, `outer.<locals>.inner`)."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

from jaxlint.finding import Finding

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "verify"
MARKER = re.compile(r"#\s*(?:(ok|notrun|maybe):\s*)?(JAX\d{3})\b")


@dataclasses.dataclass(frozen=True)
class Marked:
    finding: Finding
    expect: str  # "confirmed", "ok", "notrun" or "maybe"


def _function_spans(tree: ast.Module) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                name = "<lambda>" if isinstance(child, ast.Lambda) else child.name
                qualname = prefix + name
                first = min([d.lineno for d in getattr(child, "decorator_list", [])] + [child.lineno])
                spans.append((first, child.end_lineno or child.lineno, qualname))
                visit(child, qualname + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return spans


def enclosing_function(spans: list[tuple[int, int, str]], line: int) -> str | None:
    around = [s for s in spans if s[0] <= line <= s[1]]
    return max(around, key=lambda s: (s[0], -s[1]))[2] if around else None


def marked(name: str) -> list[Marked]:
    path = FIXTURES / name
    text = path.read_text()
    spans = _function_spans(ast.parse(text))
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = MARKER.search(line)
        if not match:
            continue
        kind, code = match.groups()
        finding = Finding(
            path=str(path),
            line=number,
            column=1,
            end_line=number,
            end_column=len(line) + 1,
            code=code,
            name="fixture",
            message=f"fixture finding {code}",
            function=enclosing_function(spans, number),
        )
        found.append(Marked(finding, kind or "confirmed"))
    return found


def test_markers_find_enclosing_functions():
    found = {m.finding.line: m for m in marked("verify_reach.py")}
    functions = {m.finding.function for m in found.values()}
    assert {
        "Model.forward",
        "Model.Inner.run",
        "make_step.<locals>.step",
        "partial_jit",
        "<lambda>",
    } <= functions
    assert all(m.finding.code.startswith("JAX") for m in found.values())
