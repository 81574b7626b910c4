"""The static linter's own findings on the rule fixtures, confirmed by tracing: what `jaxlint --verify`
does, minus the CLI. Lenient about which lines the linter flags (its rules evolve on their own): every
finding it reports on a line marked INVALID must be CONFIRMED, and none on a VALID line may be."""

from __future__ import annotations

import pytest
from test_verify_support import FIXTURES, marked

from jaxlint.runtime.verify import CONFIRMABLE_CODES, verify_findings

pytestmark = pytest.mark.slow

FIXTURE_NAMES = sorted(p.name for p in FIXTURES.glob("verify_jax*.py")) + ["verify_reach.py"]


def test_linter_findings_on_the_fixtures_are_confirmed():
    from jaxlint import lint_paths

    findings = [
        f for f in lint_paths([str(FIXTURES / n) for n in FIXTURE_NAMES]) if f.code in CONFIRMABLE_CODES
    ]
    assert findings, "the linter must report confirmable findings on the verify fixtures"
    expected = {
        (m.finding.path, m.finding.line, m.finding.code): m.expect for n in FIXTURE_NAMES for m in marked(n)
    }
    report = verify_findings(findings, root=FIXTURES, timeout=120, jobs=2)
    for finding in findings:
        result = report.verdicts[finding]
        expect = expected.get((str(FIXTURES / finding.path.rsplit("/", 1)[-1]), finding.line, finding.code))
        if expect == "confirmed":
            assert result.verdict == "CONFIRMED", (finding, result)
        elif expect == "ok":
            assert result.verdict != "CONFIRMED", (finding, result)
