"""`jaxlint --verify` after the static lint: verify the findings, print them in the chosen format with
their verdicts, and choose the exit code. Called by jaxlint.cli as `cli_verify(args, config, findings)`."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from jaxlint.finding import Finding

from . import DEFAULT_MEMORY_LIMIT_MB, parse_examples, verify_findings
from .model import VerifyReport
from .report import header, verdict_text

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

# Keys of [tool.jaxlint.verify] besides the examples; a key with a colon is an example too.
SETTINGS = ("examples", "python", "jobs", "memory-limit-mb")


def settings(table: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split [tool.jaxlint.verify] into (settings, examples); ValueError on an unknown key."""
    found = {k: v for k, v in table.items() if k in SETTINGS and k != "examples"}
    examples = dict(table.get("examples") or {})
    for key, value in table.items():
        if key in SETTINGS:
            continue
        if ":" not in key:
            raise ValueError(f"[tool.jaxlint.verify]: unknown key {key!r} (settings: {', '.join(SETTINGS)})")
        examples[key] = value
    return found, examples


def cli_verify(args: Any, config: Any, findings: list[Finding]) -> int:
    try:
        options, examples = settings(dict(getattr(config, "verify", {}) or {}))
        parse_examples(examples)
    except ValueError as error:
        print(f"jaxlint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    jobs = getattr(args, "jobs", None) or options.get("jobs") or min(4, os.cpu_count() or 1)
    report = verify_findings(
        findings,
        python=getattr(args, "python", None) or options.get("python"),
        timeout=float(getattr(config, "verify_timeout", 60.0)),
        jobs=int(jobs),
        examples=examples,
        root=Path(getattr(config, "root", None) or Path.cwd()),
        memory_limit_mb=int(options.get("memory-limit-mb", DEFAULT_MEMORY_LIMIT_MB)),
    )
    sys.stdout.write(render(report, findings, getattr(args, "format", "text")))
    counts = report.counts()
    print(
        f"verify: {counts['CONFIRMED']} confirmed, {counts['NOT_REPRODUCED']} not reproduced, "
        f"{counts['NOT_RUN']} not run, of {len(findings)} finding(s)",
        file=sys.stderr,
    )
    return EXIT_FINDINGS if report.should_fail else EXIT_CLEAN


def render(report: VerifyReport, findings: list[Finding], fmt: str) -> str:
    from jaxlint import report as formats

    ordered = sorted(findings, key=lambda f: f.sort_key())
    if fmt == "json":
        return formats.as_json(ordered, extra=lambda f: report.extend_json(f, {}))
    if fmt == "sarif":
        return formats.sarif(ordered, extra=report.sarif_result_properties)
    if fmt == "github":
        noted = [dataclasses.replace(f, message=f"{f.message} [{verdict_text(report, f)}]") for f in ordered]
        return formats.github(noted)
    lines = [header(report)]
    lines += [f"{formats.location(f)}: {f.code} {f.message} [{verdict_text(report, f)}]" for f in ordered]
    return "\n".join(lines) + "\n"
