"""Every confirmable rule is CONFIRMED at the flagged line of its fixture by tracing with real JAX on CPU;
the VALID look-alikes next to them never are."""

from __future__ import annotations

import pytest
from test_verify_support import FIXTURES, Marked, marked

from jaxlint.runtime.verify import CONFIRMABLE_CODES, verify_findings
from jaxlint.runtime_output import render_verify
from tests.conftest import DEVICE, VERIFY_HEADER, exact_recompiles

pytestmark = pytest.mark.slow

RULE_FIXTURES = sorted(p.name for p in FIXTURES.glob("verify_jax*.py"))
CASES = [m for name in RULE_FIXTURES for m in marked(name)]


# Cases only the module's own top-level call can trace (a live call: JAX 0.9 on); before it, NOT_RUN.
LIVE_ONLY = {("verify_jax405.py", 52), ("verify_jax405.py", 64)}


def _skip_without_live_calls(case: Marked) -> None:
    if (case.finding.path.rsplit("/", 1)[-1], case.finding.line) in LIVE_ONLY and not exact_recompiles():
        pytest.skip("traced only with the module's top-level call: this JAX has no live calls")


def _id(case: Marked) -> str:
    return f"{case.finding.path.rsplit('/', 1)[-1]}:{case.finding.line}-{case.expect}"


@pytest.fixture(scope="module")
def report():
    return verify_findings([c.finding for c in CASES], root=FIXTURES, timeout=120, jobs=2)


def test_every_confirmable_rule_has_a_confirmed_fixture(report):
    confirmed = {f.code for f, v in report.verdicts.items() if v.verdict == "CONFIRMED"}
    assert confirmed == CONFIRMABLE_CODES


@pytest.mark.parametrize("case", [c for c in CASES if c.expect == "confirmed"], ids=_id)
def test_invalid_case_is_confirmed_at_its_line(report, case):
    result = report.verdicts[case.finding]
    assert result.verdict == "CONFIRMED", result.reason
    assert result.inputs, "the inputs that reproduced it are listed"
    assert DEVICE.fullmatch(result.device) and result.device == report.environments[0].describe()
    assert f"line {case.finding.line}" in result.reason


@pytest.mark.parametrize("case", [c for c in CASES if c.expect == "ok"], ids=_id)
def test_valid_look_alike_is_never_confirmed(report, case):
    result = report.verdicts[case.finding]
    assert result.verdict != "CONFIRMED", result.reason
    _skip_without_live_calls(case)
    assert result.verdict == "NOT_REPRODUCED", result.reason
    assert result.inputs and all(text in result.reason for text in result.inputs if "f32[]" in text)


@pytest.mark.parametrize("case", [c for c in CASES if c.expect == "maybe"], ids=_id)
def test_a_version_dependent_case_is_traced(report, case):
    result = report.verdicts[case.finding]
    _skip_without_live_calls(case)
    assert result.verdict in ("CONFIRMED", "NOT_REPRODUCED"), result.reason


def test_every_module_ran_to_the_end(report):
    statuses = {m.module: m.status for m in report.modules}
    assert statuses.pop("verify_jax502_module_level") == "import_failed"
    assert set(statuses.values()) == {"done"}
    assert report.environments and report.environments[0].backend


def test_text_report_has_the_device_header_and_one_line_per_finding(report):
    findings = [c.finding for c in CASES]
    lines = render_verify(report, findings, "text").splitlines()
    assert VERIFY_HEADER.fullmatch(lines[0]), lines[0]
    assert len(lines) == len(findings) + 1
    assert report.any_confirmed


def _at(report, name, line):
    return next(v for f, v in report.verdicts.items() if f.path.endswith(name) and f.line == line)


def test_a_static_self_is_observed_stale_or_unhashable_and_an_unused_attribute_is_not(report):
    stale = _at(report, "verify_jax405.py", 32)
    assert stale.reason.startswith("a stale value of self.w was used: after it changed"), stale.reason
    unhashable = _at(report, "verify_jax405.py", 75)
    assert "could not hash the static `self`: ValueError: Non-hashable static" in unhashable.reason
    if not exact_recompiles():
        return  # the rest is traced with the module's top-level calls: JAX 0.9 on
    by_value = _at(report, "verify_jax405.py", 52)  # a value hash does not help a mutated instance
    assert "top-level code made at line 80" in by_value.reason  # stale or not (see the fixture)
    unused = _at(report, "verify_jax405.py", 64)
    assert "with self.calls changed, the next call returned what the method computes" in unused.reason
