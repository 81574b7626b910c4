"""Coverage by construction: every verified pitfall is found on its line, in every context and location.

The cases come from `matrix_cases.py` (PITFALL x CONTEXT x LOCATION, each with its clean twin); only the pairs
that `tools/verify_matrix.py` confirmed against real JAX are linted (`verified.json`). All of them are written
into one tree (their module names never collide) and linted once as a project through the public API, as
`jaxlint` would; a few go through the real command too. Known misses live in `gaps.json`, one reason each, as
strict xfails: a fix that finds one fails its test until the entry is removed (`python tools/matrix_gaps.py`).
"""

from __future__ import annotations

import json
import subprocess
import sys

import coverage_table
import matrix_cases as mc
import pytest

import jaxlint
from jaxlint.config import Config

PAIRS = mc.verified_pairs()
CASES = [case for pair in PAIRS for case in pair]
GAPS = mc.load_gaps()


def _param(case: mc.Case):
    marks = [pytest.mark.xfail(strict=True, reason=GAPS[case.id])] if case.id in GAPS else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.fixture(scope="module")
def linted(tmp_path_factory):
    root = tmp_path_factory.mktemp("matrix")
    owner = mc.write_tree(CASES, root)
    findings = jaxlint.lint_paths([str(root)], config=Config(), jobs=2)
    return mc.findings_by_case(findings, root, owner)


@pytest.mark.parametrize("case", [_param(bad) for bad, _ in PAIRS])
def test_pitfall_is_found_on_its_line(case: mc.Case, linted):
    found = linted.get(case.id, set())
    assert case.expect is not None
    path, line, cell = case.expect
    where = f"{path}:{line}" + (f" (cell {cell})" if cell else "")
    assert mc.outcome(case, found), f"{case.code} not reported at {where}; found {sorted(found)}"


@pytest.mark.parametrize("case", [_param(good) for _, good in PAIRS])
def test_twin_draws_no_finding(case: mc.Case, linted):
    found = linted.get(case.id, set())
    assert mc.outcome(case, found), f"false positive on the clean twin: {sorted(found)}"


def test_the_matrix_is_large_and_spans_every_axis():
    assert len(PAIRS) >= 300
    assert {bad.context for bad, _ in PAIRS} == set(mc.CONTEXTS)
    assert {bad.location for bad, _ in PAIRS} == set(mc.LOCATIONS)
    assert {bad.code for bad, _ in PAIRS} == set(mc.RULES)


def test_verified_data_matches_the_generated_cases():
    """A change to the axes must be verified against JAX again: `python tools/verify_matrix.py`."""
    table = json.loads(mc.VERIFIED.read_text())["pairs"]
    pairs = list(mc.all_pairs())
    assert set(table) == {bad.pair for bad, _ in pairs}
    stale = [bad.pair for bad, good in pairs if table[bad.pair]["digest"] != [bad.digest(), good.digest()]]
    assert not stale, f"{len(stale)} pairs changed since they were verified, e.g. {stale[:3]}"


def test_every_gap_names_a_verified_case_with_one_reason():
    ids = {case.id for case in CASES}
    assert set(GAPS) <= ids, sorted(set(GAPS) - ids)[:5]
    for case_id, reason in GAPS.items():
        assert isinstance(reason, str) and reason.strip(), case_id
        if case_id.endswith("|good"):
            assert reason == "false positive", case_id


def test_the_coverage_page_is_current():
    assert coverage_table.DOC.read_text() == coverage_table.render(), "run: python tools/matrix_gaps.py"


# A few pairs through the real command, one per location (a notebook's cells included): the same findings as
# the public API gives.
CLI_PAIRS = list({bad.location: (bad, good) for bad, good in reversed(PAIRS)}.values())


def test_the_command_reports_what_the_api_reports(tmp_path, jaxlint_cmd):
    cases = [case for pair in CLI_PAIRS for case in pair]
    assert {case.location for case in cases} == set(mc.LOCATIONS)
    owner = mc.write_tree(cases, tmp_path)
    run = subprocess.run(
        [*jaxlint_cmd, "--format", "json", "--exit-zero", "--no-cache", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    command = {(f["code"], f["path"], f["line"], f.get("cell")) for f in json.loads(run.stdout)}
    api = jaxlint.lint_paths([str(tmp_path)], config=Config(), jobs=1)
    assert command == {(f.code, f.path, f.line, f.cell) for f in api}
    by_case = mc.findings_by_case(api, tmp_path, owner)
    for case in cases:
        expected = mc.outcome(case, by_case.get(case.id, set()))
        assert expected == (case.id not in GAPS), case.id


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
