"""How often the server's per-unit reuse (`jaxlint/unit_reuse.py`) applies to edits of real library code, and
whether each reusing lint gives a full lint's findings.

Usage::

    python bench/reuse_rate.py                      # optax, flax.nnx, equinox: 80 files
    python bench/reuse_rate.py --files 20 --per-file 2 --kinds number,string

For each file (sorted, then every k-th to spread them over the libraries; tests left out), a few edits at
places spread over the file: a number's last digit changed (`number`) or one character appended to an
identifier inside an indented body (`name`: typing), or one character typed at the end of a string literal
there, docstrings included (`string`). Each edit is linted in process as the server lints
(`lint_document` with the previous lint of the original text, alone: no project) and with a full lint; prints
reused/total per kind, why the others were not reused (`UnitMemo.refused`), and the mismatches (must be 0).
Needs the libraries' sources under `<cache>/src/` (`bench/corpus.py` fetches them).
"""

from __future__ import annotations

import argparse
import collections
import copy
import dataclasses
import io
import keyword
import random
import sys
import tokenize
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jaxlint.server.linting import config_for, lint_document  # noqa: E402

SOURCES = Path.home() / ".cache" / "jaxlint-bench" / "src"
FOLDERS = ["optax/optax", "flax/flax/nnx", "equinox/equinox"]


def files(count: int) -> list[Path]:
    found = []
    for folder in FOLDERS:
        found += [
            p
            for p in sorted((SOURCES / folder).rglob("*.py"))
            if "test" not in p.name and "test" not in p.parts[-2] and p.stat().st_size > 2000
        ]
    step = max(1, len(found) // count)
    return found[::step][:count]


def places(text: str, kind: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) offsets of every edit of this kind the text allows."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    for token in tokens:
        (row, col), (end_row, end_col) = token.start, token.end
        end = offsets[end_row - 1] + end_col
        if kind == "number" and token.type == tokenize.NUMBER and token.string[-1].isdigit():
            out.append((end - 1, end, str((int(token.string[-1]) + 1) % 10)))
        elif (
            kind == "string"
            and token.type == tokenize.STRING
            and col > 0
            and lines[row - 1][:1] in " \t"
            and token.string[-1] in "'\""
        ):
            quotes = 3 if token.string.endswith(('"""', "'''")) and len(token.string) >= 6 else 1
            out.append((end - quotes, end - quotes, "x"))  # a character typed before the closing quote
        elif (
            kind == "name"
            and token.type == tokenize.NAME
            and not keyword.iskeyword(token.string)
            and not keyword.issoftkeyword(token.string)
            and col > 0
            and lines[row - 1][:1] in " \t"
        ):
            out.append((end, end, "x"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=80)
    parser.add_argument("--per-file", type=int, default=2, help="edits of each kind per file")
    parser.add_argument("--kinds", default="number,name,string")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    totals = {kind: collections.Counter() for kind in kinds}
    mismatches = 0
    for path in files(args.files):
        text = path.read_text()
        name = str(path)
        config = config_for(name)
        base = lint_document(text, name, config)
        rng = random.Random(name)
        for kind in kinds:
            found = places(text, kind)
            if not found:
                continue
            step = len(found) / args.per_file
            chosen = [found[int(step * i + rng.random() * step)] for i in range(args.per_file)]
            for start, end, replacement in chosen:
                new = text[:start] + replacement + text[end:]
                previous = dataclasses.replace(base, units=copy.copy(base.units))
                linted = lint_document(new, name, config, previous)
                full = lint_document(new, name, config)
                counts = totals[kind]
                counts["total"] += 1
                if linted.findings != full.findings:
                    mismatches += 1
                    print(f"MISMATCH {path} @{start} {kind}")
                memo = linted.units
                if memo is not None and memo.reused:
                    counts["reused"] += 1
                else:
                    counts[getattr(memo, "refused", "?") if memo is not None else "?"] += 1
    for kind, counts in totals.items():
        total, reused = counts.pop("total", 0), counts.pop("reused", 0)
        reasons = ", ".join(f"{why or 'not linted'} {n}" for why, n in counts.most_common())
        print(f"{kind}: {reused}/{total} reused; not reused: {reasons}")
    print(f"mismatches: {mismatches}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
