"""The reproductions of real reports (tests/reports/README.md): each verified on real JAX, then linted —
`bad/` gives exactly its `# expect:` markers, `twin/` nothing. Known misses are strict xfails with a reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import reports  # noqa: E402


def _record(case_id: str) -> dict | None:
    path = reports.CASES / case_id / "verified.json"
    return json.loads(path.read_text()) if path.exists() else None


def _bad_param(case_id: str):
    reason = reports.load_case(case_id).get("xfail")
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case_id, marks=marks, id=case_id)


def _reserved() -> tuple[set[str], set[str]]:
    """The reports and the GitHub code bases kept for independent measurement (beside the checkout, when it is
    there: CI's fresh clone has no such folder)."""
    path = ROOT.parent / "shared" / "reference" / "reserved.md"
    if not path.exists():
        return set(), set()
    lines = [
        line[2:].strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("- ")
    ]
    return {line for line in lines if line.startswith("https://")}, {
        line for line in lines if line.count("/") == 1
    }


def test_the_corpus_is_well_formed():
    reserved_reports, reserved_repositories = _reserved()
    for case_id in reports.case_ids():
        case = reports.load_case(case_id)
        source = case.get("source", "")
        assert source.startswith("https://"), case_id
        assert source.rstrip("/") not in reserved_reports, f"{case_id}: {source} is reserved"
        repository = "/".join(source.split("/")[3:5]) if "//github.com/" in source else ""
        assert repository not in reserved_repositories, f"{case_id}: {repository} is reserved"
        assert case.get("category") in reports.CATEGORIES, case_id
        assert case.get("summary"), case_id
        assert reports.expected(case_id), f"{case_id}: bad/ has no `# expect:` marker"
        for side in ("bad", "twin"):
            names = {p.name for p in reports.side_files(case_id, side)}
            assert names & {"main.py", "main.ipynb"}, f"{case_id}/{side} has no main.py or main.ipynb"


@pytest.mark.parametrize("case_id", reports.case_ids())
def test_each_case_misbehaves_on_jax_and_its_twin_does_not(case_id):
    record = _record(case_id)
    assert record, f"{case_id} was never run: python tools/reports.py verify {case_id}"
    assert record["digest"] == reports.digest(case_id), f"{case_id} changed since it was run: verify it again"
    assert record["verified"] and record["bad"] and record["twin"] is None, record
    bad = record["bad"]
    if "error" in bad and not reports.load_case(case_id).get("raises_elsewhere"):
        # JAX keeps the user's frames: the error surfaces at a marked line (or the case says why not)
        marked = {(file, line) for file, cell, line, code in reports.expected(case_id)}
        cells = {(f"{file}:cell {cell}", line) for file, cell, line, code in reports.expected(case_id)}
        assert (bad["file"], bad["line"]) in marked | cells, (case_id, bad)


@pytest.mark.parametrize("case_id", [_bad_param(case_id) for case_id in reports.case_ids()])
def test_the_reported_bug_is_found_on_its_line(case_id):
    assert reports.found(case_id, "bad") == reports.expected(case_id)


def _twin_param(case_id: str):
    reason = reports.load_case(case_id).get("xfail_twin")
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case_id, marks=marks, id=case_id)


@pytest.mark.parametrize("case_id", [_twin_param(case_id) for case_id in reports.case_ids()])
def test_the_fixed_code_is_clean(case_id):
    assert reports.found(case_id, "twin") == set()
