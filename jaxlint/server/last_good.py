"""While a text does not parse, its diagnostics from the last text that did stay, moved with the edits.

Per .py document and per notebook cell: the last lint without a syntax error (its text and findings). A lint
that finds one shows that lint's JAX000 plus the last good findings, each moved to the line its text is on
now (lines inserted or removed above it shift it); one whose lines were edited, or that sits on the broken
line, is dropped, since it may no longer hold.
"""

from __future__ import annotations

import dataclasses
import difflib

from .linting import Finding, is_syntax_error
from .textdiff import common_ends, split_lines


@dataclasses.dataclass(frozen=True)
class Good:
    text: str
    findings: list[Finding]


class LastGood:
    def __init__(self) -> None:
        self.by_key: dict[str, Good] = {}  # document or cell uri -> its last lint that parsed

    def shown(self, key: str, text: str, findings: list[Finding]) -> list[Finding]:
        """What to show for the lint `findings` of `text`."""
        errors = [f for f in findings if is_syntax_error(f)]
        if not errors:
            self.by_key[key] = Good(text, findings)
            return findings
        good = self.by_key.get(key)
        if good is None:
            return findings
        broken = {f.line for f in errors}
        return [f for f in carry_over(good.text, good.findings, text) if f.line not in broken] + findings

    def forget(self, key: str) -> None:
        self.by_key.pop(key, None)


def carry_over(old: str, findings: list[Finding], new: str) -> list[Finding]:
    """`findings` of `old` at their lines in `new`; those on lines that changed are dropped."""
    if old == new:
        return list(findings)
    to_new = _unchanged_lines(split_lines(old), split_lines(new))
    moved = []
    for finding in findings:
        start = to_new.get(finding.line)
        span = range(finding.line, finding.end_line + 1)
        if start is None or any(to_new.get(line) != start + line - finding.line for line in span):
            continue
        shift = start - finding.line
        moved.append(dataclasses.replace(finding, line=start, end_line=finding.end_line + shift))
    return moved


def _unchanged_lines(old: list[str], new: list[str]) -> dict[int, int]:
    """1-based line of `old` -> its line in `new`, for the lines a diff leaves unchanged. The common start
    and end are matched directly, the rest by difflib with its heuristic for popular lines (without it,
    10,000 lines of code took a second; with it, milliseconds)."""
    head, tail = common_ends(old, new)
    to_new = {line: line for line in range(1, head + 1)}
    shift = len(new) - len(old)
    to_new.update((line, line + shift) for line in range(len(old) - tail + 1, len(old) + 1))
    matcher = difflib.SequenceMatcher(None, old[head : len(old) - tail], new[head : len(new) - tail])
    for a, b, size in matcher.get_matching_blocks():
        to_new.update((head + a + k + 1, head + b + k + 1) for k in range(size))
    return to_new
