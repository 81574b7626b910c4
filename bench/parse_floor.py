"""The libcst parse-only floor: parse every file with ``libcst.parse_module`` and do nothing else.

Usage: ``python bench/parse_floor.py --files-from LIST [-j N]`` where LIST holds one path a line.
Prints one JSON object (files, lines, parse errors, in-process seconds) on stdout.

This is what any libcst-based linter must pay at least: start an interpreter, import libcst, read and
parse each file once.  ``-j 1`` parses in this process; ``-j N`` hands the files, largest first, to a
``multiprocessing.Pool`` of N workers (the best balance a linter could hope for).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time

import libcst


def parse_one(path: str) -> tuple[int, str | None]:
    with open(path, "rb") as f:
        data = f.read()
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    try:
        libcst.parse_module(data)
    except Exception as exc:  # a parse error is a result, not a crash
        return lines, f"{path}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return lines, None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--files-from", required=True, help="file with one path per line")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    with open(args.files_from, encoding="utf-8") as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    if args.jobs <= 1:
        results = [parse_one(p) for p in paths]
    else:
        import os

        by_size = sorted(paths, key=lambda p: os.path.getsize(p), reverse=True)
        with multiprocessing.Pool(args.jobs) as pool:
            results = list(pool.imap_unordered(parse_one, by_size, chunksize=1))
    errors = [err for _, err in results if err]
    out = {
        "files": len(results),
        "lines": sum(n for n, _ in results),
        "errors": len(errors),
        "first_errors": errors[:5],
        "seconds_in_process": round(time.perf_counter() - t0, 3),
        "libcst": getattr(libcst, "__version__", None) or _libcst_version(),
    }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


def _libcst_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("libcst")
    except Exception:
        return None


if __name__ == "__main__":
    sys.exit(main())
