"""`jaxlint examples/` shows every rule, each at the line its comment names."""

from __future__ import annotations

import re
from pathlib import Path

from jaxlint import lint_paths
from jaxlint.rules import ALL_RULES

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_every_rule_has_an_example_flagged_where_its_comment_says() -> None:
    opt_in = [rule.code for rule in ALL_RULES if not rule.default_enabled]  # "ALL" leaves opt-in rules off
    findings = lint_paths([str(EXAMPLES)], select=["ALL", *opt_in])
    found = {(Path(f.path).name, f.line, f.code) for f in findings}
    expected = set()
    for path in sorted(EXAMPLES.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for code in re.findall(r"#\s*(JAX\d{3})\b", line):
                expected.add((path.name, number, code))
    assert found == expected
    assert {code for _, _, code in found} >= {rule.code for rule in ALL_RULES}
