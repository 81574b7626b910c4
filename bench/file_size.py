"""Lint time against file size: one ordinary JAX module of 1,000 to 50,000 lines, linted whole.

Usage: ``python bench/file_size.py [--lines 1000,2000,5000,10000,20000,50000] [--cli] [--jaxlint CHECKOUT]``

The module is `tools/hostile_inputs.py`'s `long_module`: the same block of three functions again and again,
each block with one finding whose rule asks for lines per function (JAX301), as a long real module does.
Each size is linted in this process by `engine.lint_text`, with the cyclic collector off as `lint.py` lints
(with it on, it traverses the growing tree again and again: 0.21 -> 0.35 s per 1,000 lines from 1,000 to
50,000 lines), and timed in CPU time (``process_time``); the
column that matters is the time per 1,000 lines, which stays flat when the lint is linear in the file's size
(issue 30: per-function position passes made it quadratic, 50,000 lines took 13 minutes). ``--cli`` also
times the real command on each size (wall time, ``--no-cache``), start-up included. ``--jaxlint CHECKOUT``
measures the jaxlint of another checkout (an older commit) with this script, for before/after figures.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="1000,2000,5000,10000,20000,50000", help="comma-separated sizes")
    parser.add_argument("--cli", action="store_true", help="also time `python -m jaxlint` on each size")
    parser.add_argument("--jaxlint", type=Path, default=ROOT, help="the checkout whose jaxlint is measured")
    args = parser.parse_args()
    checkout = args.jaxlint.resolve()
    sys.path[:0] = [str(checkout), str(ROOT / "tools")]
    from hostile_inputs import long_module

    from jaxlint.config import Config
    from jaxlint.engine import lint_text
    from jaxlint.selection import settings_for

    settings = settings_for(Config(), "long.py")
    lint_text(long_module(100), "long.py", settings)  # rules and tables loaded before the first timing
    print(f"jaxlint from {checkout}")
    print(
        f"{'lines':>7} {'findings':>8} {'cpu s':>8} {'s / 1k lines':>12}"
        + ("  cli wall s" if args.cli else "")
    )
    with tempfile.TemporaryDirectory() as folder:
        for lines in (int(n) for n in args.lines.split(",")):
            source = long_module(lines)
            gc.disable()  # as `lint.py` lints a batch: the collector would traverse the whole tree again and again
            start = time.process_time()
            findings = lint_text(source, "long.py", settings)
            cpu = time.process_time() - start
            gc.enable()
            count = len(findings)
            del findings
            gc.collect()
            real_lines = source.count("\n")
            row = f"{real_lines:>7,} {count:>8,} {cpu:>8.2f} {cpu * 1000 / real_lines:>12.3f}"
            if args.cli:
                path = Path(folder) / "long.py"
                path.write_text(source)
                env = {**os.environ, "PYTHONPATH": str(checkout)}
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "jaxlint", "--no-cache", str(path)], capture_output=True, env=env
                )
                row += f"  {time.perf_counter() - start:>10.2f}"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
