"""The speed work changes no result, checked over the bench corpus (CI runs the same checks on the fixtures:
tests/test_speed_equivalence.py).

Usage: ``python bench/equivalence.py [--libs flax,optax,equinox] [--sample N]``

For every file: `analysis.binding.positions.positions_of` for all nodes at once, and for `--sample` single nodes
(the pass that stops early), must equal libcst's `PositionProvider`; so must `all_positions`. Prints the
counts and exits 1 on any difference. About two minutes of CPU for the three default libraries.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from corpus import python_files  # bench/ is this script's folder, first on sys.path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def main(argv: list[str] | None = None) -> int:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from jaxlint.analysis.binding.positions import all_positions, positions_of

    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--libs", default="flax,optax,equinox")
    ap.add_argument("--cache", default=None)
    ap.add_argument("--sample", type=int, default=20, help="single-node checks per file")
    args = ap.parse_args(argv)
    files = python_files(args.libs, args.cache)
    checked = nodes = bad = 0
    for path in files:
        try:
            module = cst.parse_module(Path(path).read_text(encoding="utf-8"))
        except Exception:
            continue
        checked += 1
        full = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
        nodes += len(full)
        mismatches = []
        if positions_of(module, list(full)) != full:
            mismatches.append("positions_of(all)")
        if all_positions(module) != full:
            mismatches.append("all_positions")
        for node in random.Random(path).sample(list(full), min(args.sample, len(full))):
            if positions_of(module, [node]) != {node: full[node]}:
                mismatches.append(f"positions_of({type(node).__name__})")
        if mismatches:
            bad += 1
            print(f"DIFFERENT {path}: {', '.join(mismatches)}")
    print(f"{checked} files, {nodes:,} nodes: {'no difference' if not bad else f'{bad} files differ'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
