"""Lint the coverage matrix's verified cases and rewrite its known gaps and the coverage page.

    python tools/matrix_gaps.py

Needs only jaxlint (no JAX: the cases were verified by `tools/verify_matrix.py`, whose `verified.json` it
reads). It writes `tests/matrix/gaps.json` (every verified pitfall the linter misses and every twin it flags,
one reason each, from REASONS below; an entry already in the file keeps its reason) and `docs/coverage.md`.
Run it after a change to the linter: a fixed gap leaves the file, and the strict xfail that held it is gone.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "matrix"))
sys.path.insert(0, str(ROOT))

import coverage_table  # noqa: E402
import matrix_cases as mc  # noqa: E402

import jaxlint  # noqa: E402
from jaxlint.config import Config  # noqa: E402

# Why a verified pitfall is missed, by what the case shares with others (first match wins). Each says what
# the linter does not know; a new kind of miss falls through to the last line and must be diagnosed.
REASONS: tuple[tuple[str, str, str, str], ...] = (
    # (rule or "*", context or "*", location or "*", reason)
)
UNDIAGNOSED = "missed: not yet diagnosed"


def reason_for(case: mc.Case) -> str:
    if case.twin:
        return "false positive"
    for rule, context, location, reason in REASONS:
        if rule in ("*", case.code) and context in ("*", case.context) and location in ("*", case.location):
            return reason
    return UNDIAGNOSED


def main() -> int:
    pairs = mc.verified_pairs()
    cases = [case for pair in pairs for case in pair]
    with tempfile.TemporaryDirectory(prefix="jaxlint-matrix-") as tmp:
        root = Path(tmp)
        owner = mc.write_tree(cases, root)
        found = mc.findings_by_case(jaxlint.lint_paths([str(root)], config=Config(), jobs=2), root, owner)
    old = mc.load_gaps()
    gaps = {}
    for case in cases:
        if not mc.outcome(case, found.get(case.id, set())):
            gaps[case.id] = old.get(case.id) or reason_for(case)
    text = json.dumps({"generated_by": "python tools/matrix_gaps.py", "gaps": gaps}, indent=1) + "\n"
    mc.GAPS.write_text(text)
    coverage_table.DOC.write_text(coverage_table.render())
    misses = sum(1 for k in gaps if k.endswith("|bad"))
    flagged = sorted(k for k in gaps if k.endswith("|good"))
    print(
        f"{len(pairs)} verified pairs: {misses} pitfalls missed ({100 * misses / max(len(pairs), 1):.1f}%),"
    )
    print(f"{len(flagged)} twins flagged (false positives){': ' if flagged else ''}" + ", ".join(flagged))
    undiagnosed = sum(1 for v in gaps.values() if v == UNDIAGNOSED)
    if undiagnosed:
        print(f"{undiagnosed} gaps without a diagnosed reason: add a line to REASONS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
