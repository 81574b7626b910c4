"""Verdicts in the report formats: text lines under a header naming the device, extra JSON keys per
finding, and SARIF properties."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import CONFIRMED, NOT_REPRODUCED, NOT_RUN, VerifyReport

if TYPE_CHECKING:
    from jaxlint.finding import Finding

_LABELS = {CONFIRMED: "CONFIRMED", NOT_REPRODUCED: "NOT REPRODUCED", NOT_RUN: "NOT RUN"}


def header(report: VerifyReport) -> str:
    """`verify: jax 0.10.2, cpu`; several environments are listed; none when no child started."""
    described = sorted({e.describe() for e in report.environments})
    return "verify: " + ("; ".join(described) if described else "no JAX environment (no child ran)")


def verdict_text(report: VerifyReport, finding: Finding) -> str:
    """`CONFIRMED: TracerBoolConversionError at line 7 (with x: f32[])`, to append to a finding's line."""
    result = report.verdict_for(finding)
    if result is None:
        return "NOT RUN: not verified"
    return f"{_LABELS[result.verdict]}: {result.reason}" if result.reason else _LABELS[result.verdict]


def _location(finding: Finding) -> str:
    cell = f"[cell {finding.cell}]" if finding.cell is not None else ""
    return f"{finding.path}{cell}:{finding.line}:{finding.column}"


def render_text(report: VerifyReport, findings: list[Finding]) -> str:
    lines = [header(report)]
    for finding in sorted(findings, key=lambda f: f.sort_key()):
        lines.append(f"{_location(finding)}: {finding.code} {verdict_text(report, finding)}")
    counts = report.counts()
    summary = (
        f"{counts[CONFIRMED]} confirmed, {counts[NOT_REPRODUCED]} not reproduced, {counts[NOT_RUN]} not run"
    )
    lines.append(f"{len(findings)} finding(s): {summary}")
    return "\n".join(lines) + "\n"


def extend_finding_json(report: VerifyReport, finding: Finding, data: dict[str, Any]) -> dict[str, Any]:
    """The finding's JSON dict plus `verdict`, `verdict_reason`, `inputs` and `device`."""
    result = report.verdict_for(finding)
    if result is None:
        return {**data, "verdict": NOT_RUN, "verdict_reason": "not verified", "inputs": [], "device": None}
    return {**data, **result.to_dict()}


def json_summary(report: VerifyReport) -> dict[str, Any]:
    """Top-level JSON: `{"verify": {"environments": [...], "counts": {...}, "modules": [...]}}`."""
    return {
        "verify": {
            "environments": [e.to_dict() for e in report.environments],
            "counts": report.counts(),
            "modules": [m.to_dict() for m in report.modules],
        }
    }


def sarif_result_properties(report: VerifyReport, finding: Finding) -> dict[str, Any]:
    """For a SARIF result's `properties` bag."""
    result = report.verdict_for(finding)
    if result is None:
        return {"verdict": NOT_RUN, "verdictReason": "not verified", "inputs": []}
    return {
        "verdict": result.verdict,
        "verdictReason": result.reason,
        "inputs": list(result.inputs),
        "device": result.device,
    }


def sarif_run_properties(report: VerifyReport) -> dict[str, Any]:
    """For the SARIF run's (or invocation's) `properties` bag."""
    return {
        "verify": {
            "environments": [e.to_dict() for e in report.environments],
            "counts": report.counts(),
        }
    }
