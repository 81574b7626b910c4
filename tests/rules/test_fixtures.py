"""Every rule's fixture file, checked line by line.

A fixture is `tests/fixtures/rules/<CODE>.py`. Each line that must be flagged ends with a comment
`# expect: <CODE>:<column>` (several separated by commas); every other line must stay clean. Only the file's
own rule is run on it, so fixtures of one rule are not disturbed by another.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jaxlint import lint_source
from jaxlint.rules import RULES_BY_CODE

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
_EXPECT = re.compile(r"#\s*expect:\s*(.+)$")


def expectations(source: str) -> set[tuple[int, str, int]]:
    expected = set()
    for number, line in enumerate(source.splitlines(), 1):
        match = _EXPECT.search(line)
        if match:
            for item in match.group(1).split(","):
                code, column = item.strip().split(":")
                expected.add((number, code, int(column)))
    return expected


FIXTURE_FILES = sorted(FIXTURES.glob("JAX*.py"))


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_fixture(fixture: Path) -> None:
    code = fixture.stem.split("_")[0]
    assert code in RULES_BY_CODE, f"fixture for unknown rule {code}"
    source = fixture.read_text(encoding="utf-8")
    found = {(f.line, f.code, f.column) for f in lint_source(source, str(fixture), select=[code])}
    expected = expectations(source)
    assert expected, "a fixture must have at least one INVALID line"
    missing = sorted(expected - found)
    unexpected = sorted(found - expected)
    assert not missing and not unexpected, f"missing: {missing}\nunexpected (false positives): {unexpected}"


def test_every_rule_has_a_fixture() -> None:
    covered = {p.stem.split("_")[0] for p in FIXTURE_FILES}
    assert set(RULES_BY_CODE) <= covered, f"rules without fixtures: {sorted(set(RULES_BY_CODE) - covered)}"
