"""Check the server's incremental parse (`jaxlint/reparse.py`) against full parses, edit after edit.

Usage::

    python bench/reparse_equivalence.py                    # 3 seeds x 400 edits of a generated module
    python bench/reparse_equivalence.py --seeds 10 --edits 1000 --file path/to/module.py
    python bench/reparse_equivalence.py --future         # the module starts with a __future__ import
    python bench/reparse_equivalence.py --head 40        # edits in the first 40 lines (the first blocks)
    python bench/reparse_equivalence.py --tail 40        # edits in the last 40 lines (the last statements)

Random edits (characters, line pieces, decorators, comments, brackets, quotes and line continuations
inserted; characters and lines deleted; lines copied), a broken text undone most of the time, each text
parsed both ways: the spliced module must equal libcst's full parse node for node (`deep_equals`), and its
statement spans those of a fresh parse. Prints the mismatches (none expected) and how many edits were spliced
rather than parsed whole. A check, like `bench/equivalence.py`; the server's own test replays edits through
the real client (`tests/server/test_server_project.py`).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import libcst as cst

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsp_latency import generated  # noqa: E402  (bench/ is first on sys.path)

import jaxlint.reparse as reparse_module  # noqa: E402

PIECES = [
    "x", " ", "\n", "(", ")", ":", '"', "#", "    ", "\n    y = 1\n", "\n# c\n", "def g():\n", "@jax.jit\n",
    "\n        # deep\n", "  # odd\n", "\nclass C:\n", "x = (\n", "\n\n\n", '"""', "\\\n", "  ", "\t",
    "if x:\n  z = 2\n", "\tw = 3\n",
]  # fmt: skip


HEAD = 0  # --head: edits only in the first HEAD lines (0: anywhere)
TAIL = 0  # --tail: edits only in the last TAIL lines


def edit(text: str, rng: random.Random) -> str:
    kind = rng.random()
    start, end = 0, len(text)
    if HEAD:
        end = min(end, sum(len(line) + 1 for line in text.split("\n")[:HEAD]))
    if TAIL:
        start = max(0, len(text) - sum(len(line) + 1 for line in text.split("\n")[-TAIL:]))
    at = rng.randrange(start, end + 1)
    if kind < 0.3:
        return text[:at] + rng.choice(PIECES) + text[at:]
    if kind < 0.6:
        return text[:at] + text[at + rng.randrange(1, 4) :]
    lines = text.split("\n")
    line = rng.randrange(min(len(lines), HEAD) if HEAD else len(lines))
    if TAIL:
        line = rng.randrange(max(0, len(lines) - TAIL), len(lines))
    if kind < 0.8:
        del lines[line]
    else:
        lines.insert(line, rng.choice(lines))
    return "\n".join(lines)


def check(base: str, seed: int, edits: int) -> tuple[int, int, int]:
    """(mismatches, spliced, parsed whole) over `edits` edits of `base`."""
    spliced = whole = 0
    splice = reparse_module._splice

    def counting(old, text):
        nonlocal spliced, whole
        result = splice(old, text)
        if result is None:
            whole += 1
        else:
            spliced += 1
        return result

    reparse_module._splice = counting
    try:
        rng = random.Random(seed)
        state = reparse_module.parse_whole(base)
        text, bad = base, 0
        for step in range(edits):
            text = edit(text, rng)
            try:
                full = cst.parse_module(text)
            except Exception:
                full = None
            try:
                new = reparse_module.reparse(state, text)
            except Exception:
                new = None
            if (full is None) != (new is None):
                print(f"seed {seed} edit {step}: one parse failed, the other did not")
                bad += 1
            elif new is not None and full is not None:
                if not new.module.deep_equals(full) or new.starts != reparse_module.parse_whole(text).starts:
                    print(f"seed {seed} edit {step}: the spliced module differs from a full parse")
                    bad += 1
                state = new
            if full is None and rng.random() < 0.8:
                text = state.text  # undo
        return bad, spliced, whole
    finally:
        reparse_module._splice = splice


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", help="edit this module instead of a generated one")
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--edits", type=int, default=400)
    parser.add_argument("--future", action="store_true", help="the text starts with a __future__ import")
    parser.add_argument("--head", type=int, default=0, help="edit only the first N lines (the first blocks)")
    parser.add_argument(
        "--tail", type=int, default=0, help="edit only the last N lines (the last statements)"
    )
    args = parser.parse_args()
    global HEAD, TAIL
    HEAD, TAIL = args.head, args.tail
    base = Path(args.file).read_text() if args.file else generated(args.lines)
    if args.future:
        base = "from __future__ import annotations\n" + base
    total = [0, 0, 0]
    for seed in range(args.seeds):
        for i, value in enumerate(check(base, seed, args.edits)):
            total[i] += value
    print(
        f"{args.seeds * args.edits} edits: {total[0]} mismatches; {total[1]} spliced, {total[2]} parsed whole"
    )
    return 1 if total[0] else 0


if __name__ == "__main__":
    raise SystemExit(main())
