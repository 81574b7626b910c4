"""Evidence beyond one traced line: the flagged statement's whole span, and the module's own top-level
code run on import with the checkers on (issue 14 items 1 and 6)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from test_verify_support import FIXTURES, marked

from jaxlint.runtime.verify import verify_findings
from jaxlint.runtime.verify.child.source import statement_span

pytestmark = pytest.mark.slow

EVIDENCE = ["verify_span.py", "verify_import_keys.py", "verify_import_legacy.py", "verify_import_clean.py"]
CASES = [m for name in EVIDENCE for m in marked(name)]


@pytest.fixture(scope="module")
def verdicts():
    report = verify_findings([c.finding for c in CASES], root=FIXTURES, timeout=120)
    return {(c.finding.path.rsplit("/", 1)[-1], c.finding.line): report.verdicts[c.finding] for c in CASES}


def test_a_finding_on_a_later_line_of_a_multi_line_call_is_confirmed(verdicts):
    result = verdicts[("verify_span.py", 9)]
    assert result.verdict == "CONFIRMED" and result.reason.startswith("KeyReuseError at line 9"), (
        result.reason
    )
    assert verdicts[("verify_span.py", 19)].verdict == "NOT_REPRODUCED"


@pytest.mark.parametrize("name, line", [("verify_import_keys.py", 8), ("verify_import_legacy.py", 7)])
def test_top_level_key_reuse_is_confirmed_by_importing(verdicts, name, line):
    result = verdicts[(name, line)]
    assert result.verdict == "CONFIRMED", result.reason
    assert result.reason == f"KeyReuseError at line {line} while importing the module"
    assert result.inputs == ("module import",)


def test_top_level_code_that_ran_cleanly_or_never_ran(verdicts):
    ran = verdicts[("verify_import_clean.py", 7)]
    assert ran.verdict == "NOT_REPRODUCED" and "ran while importing the module" in ran.reason
    never = verdicts[("verify_import_clean.py", 12)]
    assert never.verdict == "NOT_RUN" and "did not run while importing" in never.reason


SOURCE = textwrap.dedent(
    """\
    def f(x, key):
        y = g(
            x,
            key,
        )
        if (x >
                0):
            return y
        # between
        return x
    """
)


@pytest.mark.parametrize(
    "line, span", [(3, (2, 5)), (4, (2, 5)), (2, (2, 5)), (7, (6, 7)), (8, (8, 8)), (10, (10, 10))]
)
def test_statement_span_is_the_innermost_statement_or_a_compound_header(line, span):
    assert statement_span(ast.parse(SOURCE), line) == span


def test_notebook_cells_run_in_order_and_verdicts_name_the_cell():
    from jaxlint import lint_paths

    paths = [str(FIXTURES / "notebook_traced.ipynb"), str(FIXTURES / "notebook_keys.ipynb")]
    findings = lint_paths(paths)
    report = verify_findings(findings, root=FIXTURES, timeout=120)
    by_code = {(f.code, f.cell, f.line): report.verdicts[f] for f in findings}
    traced = by_code[("JAX101", 3, 3)]
    assert traced.verdict == "CONFIRMED", traced.reason
    assert traced.reason.startswith("TracerBoolConversionError at cell 3, line 3")
    reused = by_code[("JAX301", 2, 3)]
    assert reused.verdict == "CONFIRMED", reused.reason
    assert reused.reason == "KeyReuseError at cell 2, line 3 while importing the module"
