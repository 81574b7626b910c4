"""The depth axis: every verified pitfall 1-3 hops from the code that traces it is found on its own line.

The cases come from `depth_cases.py` (PITFALL x CONTEXT x CHAIN of hops, each with its clean twin); only the
pairs that `tools/verify_matrix.py --depth` confirmed against real JAX are linted (`verified_depth.json`), all
in one tree, through the public API. Known misses are strict xfails in `gaps_depth.json`
(`python tools/matrix_gaps.py` rewrites it): a fix that finds one fails here until its entry goes.
"""

from __future__ import annotations

import json

import depth_cases as dc
import matrix_cases as mc
import pytest

import jaxlint
from jaxlint.config import Config

PAIRS = dc.verified_pairs()
CASES = [case for pair in PAIRS for case in pair]
GAPS = dc.load_gaps()


def _param(case: mc.Case):
    marks = [pytest.mark.xfail(strict=True, reason=GAPS[case.id])] if case.id in GAPS else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.fixture(scope="module")
def linted(tmp_path_factory):
    root = tmp_path_factory.mktemp("depth")
    owner = mc.write_tree(CASES, root)
    findings = jaxlint.lint_paths([str(root)], config=Config(), jobs=2)
    return mc.findings_by_case(findings, root, owner)


@pytest.mark.parametrize("case", [_param(bad) for bad, _ in PAIRS])
def test_pitfall_is_found_on_its_line(case: mc.Case, linted):
    assert case.expect is not None
    path, line, _cell = case.expect
    found = linted.get(case.id, set())
    assert mc.outcome(case, found), f"{case.code} not reported at {path}:{line}; found {sorted(found)}"


@pytest.mark.parametrize("case", [_param(good) for _, good in PAIRS])
def test_twin_draws_no_finding(case: mc.Case, linted):
    found = linted.get(case.id, set())
    assert mc.outcome(case, found), f"false positive on the clean twin: {sorted(found)}"


def test_every_depth_and_hop_is_verified_for_every_rule():
    assert {dc.depth_of(bad) for bad, _ in PAIRS} == set(dc.DEPTHS)
    assert {hop for bad, _ in PAIRS for hop in dc.hops_of(bad)} == set(dc.HOPS)
    assert {bad.code for bad, _ in PAIRS} >= set(mc.RULES) | {"JAX403", "JAX404"}


def test_every_family_around_a_jitted_call_is_verified_at_every_depth():
    """A loop passing the same key, a jit built per call, a timer, a loop over rows: 1-3 hops each."""
    around = {
        (bad.code, bad.context, dc.depth_of(bad)) for bad, _ in PAIRS if bad.context in dc.AROUND_CONTEXTS
    }
    assert around == {(code, dc.DRIVERS[code][0], d) for code in dc.DRIVERS for d in dc.DEPTHS}


def test_verified_data_matches_the_generated_cases():
    """A change to the chains must be verified against JAX again: `python tools/verify_matrix.py --depth`."""
    table = json.loads(dc.VERIFIED.read_text())["pairs"]
    pairs = list(dc.all_pairs())
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
