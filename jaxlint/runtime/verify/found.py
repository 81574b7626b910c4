"""The errors the verify children's traces raised in the user's code (child/raised.py), joined to the
report: one that a static finding names (same file, rule, and a line of its statement) confirms it; the
others become findings of their own, FOUND_BY_RUNNING."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jaxlint.finding import Finding

from .results import CONFIRMED, FOUND_BY_RUNNING, FindingVerdict, VerifyReport


def _display_path(path: str, root: Path) -> str:
    """As the static findings name files: relative to the working directory when inside it."""
    for base in (Path.cwd(), root):
        try:
            return Path(path).resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return path


def _real(finding: Finding, root: Path) -> str:
    for candidate in (Path(finding.path), root / finding.path):
        if candidate.is_file():
            return os.path.realpath(candidate)
    return finding.path


def _reason(record: dict[str, Any]) -> str:
    return (
        f"{record['error']} raised at line {record['line']} while tracing '{record['traced']}' "
        f"(with {record['inputs']})"
    )


def join_raised(
    report: VerifyReport,
    findings: list[Finding],
    root: Path,
    names: Mapping[str, str],
    keep: Callable[[Finding], bool] | None,
) -> None:
    """`report.raised`: the children's records, each with the `device` its child traced on; `names`: every code's
    name (the runtime does not import the rules); `keep`: whether the user's selection and `# noqa`
    comments leave a new finding in."""
    statics: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        if finding.cell is None:
            statics.setdefault((_real(finding, root), finding.code), []).append(finding)
    seen: set[tuple[str, int, str]] = set()
    reported: set[tuple[str, int, str]] = set()  # the errors found by running that the report shows
    for record in report.raised:
        key = (record["path"], record["line"], record["code"])
        if key in seen or not os.path.isfile(record["path"]):
            continue  # a notebook's module is gone with its temporary folder: its cells are not joined
        seen.add(key)
        reason, device = _reason(record), record.get("device")
        named = [
            f
            for f in statics.get((record["path"], record["code"]), [])
            if f.line <= record["line"] <= max(f.end_line, f.line)
        ]
        if named:
            reported.add(key)
            for finding in named:
                before = report.verdicts.get(finding)
                if before is None or before.verdict != CONFIRMED:
                    report.verdicts[finding] = FindingVerdict(CONFIRMED, reason, (record["inputs"],), device)
            continue
        code = record["code"]
        finding = Finding(
            _display_path(record["path"], root),
            record["line"],
            record.get("column") or 1,
            record.get("end_line") or record["line"],
            record.get("column") or 1,
            code,
            names.get(code, code),
            f"{record['text']} (raised while tracing '{record['traced']}')",
        )
        if keep is not None and not keep(finding):
            continue
        reported.add(key)
        report.found.append(finding)
        report.verdicts[finding] = FindingVerdict(FOUND_BY_RUNNING, reason, (record["inputs"],), device)
    _name_reported_blockers(report, reported)


def _name_reported_blockers(report: VerifyReport, reported: set[tuple[str, int, str]]) -> None:
    """A NOT RUN "blocked by" names the first blocking error the report shows; when the user's selection
    or a `# noqa` hides them all, its own reason comes back."""
    from .child.raised import blocked_text

    for finding, verdict in list(report.verdicts.items()):
        if not verdict.blocked_by:
            continue
        first = verdict.blocked_by[0]
        shown = next((b for b in verdict.blocked_by if b in reported), None)
        if shown == first:
            continue
        text = blocked_text(*shown) if shown else verdict.unblocked
        reason = verdict.reason.replace(blocked_text(*first), text, 1)
        report.verdicts[finding] = dataclasses.replace(verdict, reason=reason)
