"""A verdict that the last `jaxlint --verify --run` contradicts says so (recompiles/run_facts.py keeps what
that run proved and what it traced clean, per file, with the file's digest; a file changed since is left
alone).

- The run proved the finding's pitfall at its statement (its verdict there was CONFIRMED or FOUND BY
  RUNNING) while tracing here did not (NOT REPRODUCED with the inputs tried, not checked by tracing): the
  run is proof, so the verdict becomes CONFIRMED and says both. A NOT RUN (nothing tried, nothing
  contradicted) stays, with the run's proof added to its reason.
- Tracing here raised the finding's error (CONFIRMED, an exception rule) while the run traced the function
  that holds the line, with the program's own inputs, and no error was raised at any of its lines: the
  verdict stays, and says that the run never hit it (the inputs tried may be ones the program never
  passes: a static argument traced, another branch taken).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from jaxlint.finding import Finding

from ..recompiles.run_facts import digest, read_facts
from .results import CONFIRMED, CONTRADICTED, NOT_RUN, FindingVerdict, VerifyReport

_VERDICT_WORDS = {"NOT_REPRODUCED": "not reproduced", "NOT_RUN": "not run", "NOT_CHECKED": "not checked"}


def note_contradictions(report: VerifyReport, root: Path, signatures_dir: str | None) -> None:
    facts = read_facts(signatures_dir)
    if not facts:
        return
    from .child.expectations import EXCEPTION, EXPECTATIONS

    current: dict[str, bool] = {}
    for finding, verdict in list(report.verdicts.items()):
        if finding.cell is not None:
            continue
        path = _real(finding, root)
        entry = facts.get(path)
        if entry is None:
            continue
        if path not in current:
            current[path] = digest(path) == entry.get("sha256")
        if not current[path]:
            continue  # changed since the run: what it saw is of another text
        last = max(finding.end_line, finding.line)
        if verdict.verdict in _VERDICT_WORDS:  # (FOUND BY RUNNING agrees with the run)
            seen = next(
                (
                    s
                    for s in entry.get("seen", ())
                    if s.get("code") == finding.code
                    and s.get("first", 0) <= last
                    and finding.line <= s.get("last", 0)
                ),
                None,
            )
            if seen is None:
                continue
            if verdict.verdict == NOT_RUN:  # not contradicted (nothing was tried): the run's proof is added
                reason = f"{verdict.reason}; `--verify --run` saw it: {seen.get('text')}"
                report.verdicts[finding] = dataclasses.replace(verdict, reason=reason)
                continue
            word = _VERDICT_WORDS[verdict.verdict]
            reason = f"`--verify --run` saw it: {seen.get('text')}; by tracing here, {word}: {verdict.reason}"
            report.verdicts[finding] = dataclasses.replace(verdict, verdict=CONFIRMED, reason=reason)
            continue
        expectation = EXPECTATIONS.get(finding.code)
        if expectation is None or expectation.kind != EXCEPTION:
            continue
        clean = next(
            (c for c in entry.get("clean", ()) if c.get("first", 0) <= finding.line <= c.get("last", 0)),
            None,
        )
        if clean is not None:
            report.verdicts[finding] = _noted(verdict, clean)


def _noted(verdict: FindingVerdict, clean: dict) -> FindingVerdict:
    times = int(clean.get("traces") or 0)
    note = (
        f"; {CONTRADICTED}: `--verify --run` traced '{clean.get('qualname')}' {times} time"
        f"{'s' if times != 1 else ''} with the program's own inputs and no error was raised at its lines"
    )
    return dataclasses.replace(verdict, reason=verdict.reason + note)


def _real(finding: Finding, root: Path) -> str:
    for candidate in (Path(finding.path), root / finding.path):
        if candidate.is_file():
            return os.path.realpath(candidate)
    return finding.path
