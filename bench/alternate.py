"""Alternating cold runs of jaxlint checkouts (and the parse floor) on the same files: median and best wall
and CPU time of each.

Usage: ``python bench/alternate.py [--libs flax,optax,equinox] [--runs 5] [--floor] CHECKOUT [CHECKOUT ...]``

A CHECKOUT is a folder holding a ``jaxlint`` package (this repository, or ``git archive REV jaxlint | tar -x
-C DIR`` of an older commit); each run is ``python -m jaxlint --no-cache -j 2 --format json <libraries>`` with
that folder first on ``PYTHONPATH``. ``--floor`` adds ``bench/parse_floor.py -j 2`` on the same files. The
commands are run in turn, round after round, so that a shared machine's slow and fast moments fall on all of
them alike: compare medians, and CPU time (children's user + system) before wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import default_cache, ensure_all, parse_libs, python_files  # bench/ is first on sys.path

HERE = Path(__file__).resolve().parent


def _timed(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("checkouts", nargs="+", help="folders holding a jaxlint package")
    ap.add_argument("--libs", default="flax,optax,equinox")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--floor", action="store_true", help="also run the libcst parse floor")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--cache", default=os.environ.get("JAXLINT_BENCH_CACHE"))
    args = ap.parse_args(argv)
    files = python_files(args.libs, args.cache)
    cache = Path(args.cache).expanduser().resolve() if args.cache else default_cache()
    roots = [str(lib.path) for lib in ensure_all(parse_libs(args.libs), cache, quiet=True)]
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        if args.floor:
            listing = Path(scratch) / "files.txt"
            listing.write_text("\n".join(files) + "\n")
            floor = [
                sys.executable,
                str(HERE / "parse_floor.py"),
                "--files-from",
                str(listing),
                "-j",
                str(args.jobs),
            ]
            commands["parse floor"] = (floor, dict(os.environ))
        for checkout in args.checkouts:
            path = str(Path(checkout).resolve())
            command = [
                sys.executable,
                "-m",
                "jaxlint",
                "--no-cache",
                "-j",
                str(args.jobs),
                "--format",
                "json",
                *roots,
            ]
            commands[path] = (command, dict(os.environ, PYTHONPATH=path))
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (command, env) in commands.items():
                times[name].append(_timed(command, env, scratch))
    print(f"{len(files)} files ({args.libs}), {args.runs} alternating runs, load average {os.getloadavg()}")
    print(f"{'command':<40}{'wall med':>10}{'best':>8}{'CPU med':>10}{'best':>8}")
    for name, rows in times.items():
        walls, cpus = [w for w, _ in rows], [c for _, c in rows]
        print(
            f"{name[-40:]:<40}{statistics.median(walls):>10.2f}{min(walls):>8.2f}"
            f"{statistics.median(cpus):>10.2f}{min(cpus):>8.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
