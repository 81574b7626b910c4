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
    return _real_path(finding.path, root)


def _real_path(path: str, root: Path) -> str:
    for candidate in (Path(path), root / path):
        if candidate.is_file():
            return os.path.realpath(candidate)
    return path


def _reason(record: dict[str, Any]) -> str:
    where = (
        f"cell {record['cell']}, line {record['cell_line']}" if "cell" in record else f"line {record['line']}"
    )
    return f"{record['error']} raised at {where} while tracing '{record['traced']}' (with {record['inputs']})"


def _place(record: dict[str, Any]) -> str:
    """Where a found error is, as a "blocked by" reason names it."""
    if "cell" in record:
        return f"{os.path.basename(record['notebook'])}, cell {record['cell']}, line {record['cell_line']}"
    return f"{os.path.basename(record['path'])}:{record['line']}"


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
        statics.setdefault((_real(finding, root), finding.code), []).append(finding)
    seen: set[tuple[str, int, str]] = set()
    reported: dict[tuple[str, int, str], str] = {}  # the errors found by running that the report shows
    for record in report.raised:
        key = (record["path"], record["line"], record["code"])
        in_cell = "cell" in record  # a notebook's (its joined module is gone with its temporary folder)
        if key in seen or not (in_cell or os.path.isfile(record["path"])):
            continue
        seen.add(key)
        reason, device = _reason(record), record.get("device")
        path, line, end_line = (
            (_real_path(record["notebook"], root), record["cell_line"], record["cell_end_line"])
            if in_cell
            else (record["path"], record["line"], record.get("end_line") or record["line"])
        )
        named = [
            f
            for f in statics.get((path, record["code"]), [])
            if f.cell == record.get("cell") and f.line <= line <= max(f.end_line, f.line)
        ]
        if named:
            reported[key] = _place(record)
            for finding in named:
                before = report.verdicts.get(finding)
                if before is None or before.verdict != CONFIRMED:
                    report.verdicts[finding] = FindingVerdict(CONFIRMED, reason, (record["inputs"],), device)
            continue
        code = record["code"]
        finding = Finding(
            _display_path(path, root),
            line,
            record.get("column") or 1,
            end_line,
            record.get("column") or 1,
            code,
            names.get(code, code),
            f"{record['text']} (raised while tracing '{record['traced']}')",
            cell=record.get("cell"),
        )
        if keep is not None and not keep(finding):
            continue
        reported[key] = _place(record)
        report.found.append(finding)
        report.verdicts[finding] = FindingVerdict(FOUND_BY_RUNNING, reason, (record["inputs"],), device)
    _name_reported_blockers(report, reported)


def _name_reported_blockers(report: VerifyReport, reported: dict[tuple[str, int, str], str]) -> None:
    """A NOT RUN "blocked by" names the first blocking error the report shows (a notebook's by its cell);
    when the user's selection or a `# noqa` hides them all, its own reason comes back."""
    from .child.raised import blocked_text

    for finding, verdict in list(report.verdicts.items()):
        if not verdict.blocked_by:
            continue
        first = verdict.blocked_by[0]
        shown = next((b for b in verdict.blocked_by if b in reported), None)
        text = f"blocked by the {shown[2]} found at {reported[shown]}" if shown else verdict.unblocked
        reason = verdict.reason.replace(blocked_text(*first), text, 1)
        if reason != verdict.reason:
            report.verdicts[finding] = dataclasses.replace(verdict, reason=reason)
