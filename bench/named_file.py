"""What one named file costs now that it is linted with its project's facts (issue 28): `jaxlint FILE`
(pre-commit's one changed file) beside `jaxlint FOLDER`, warm (the findings cache filled) and cold.

Runs each command `--repeat` times as a child process and prints the median CPU time (user + system, from
`os.wait4`, workers included), which moves far less than wall time on a shared machine.

    python bench/named_file.py                                 # flax's linen/attention.py, 5 repeats
    python bench/named_file.py --lib optax --file optax/_src/alias.py
    python bench/named_file.py --jaxlint /path/to/other/checkout   # the same rows for another checkout
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import corpus


def cpu(cmd: list[str], env: dict[str, str]) -> float:
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", default="flax")
    parser.add_argument("--file", default="flax/linen/attention.py", help="relative to the library's folder")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jaxlint", default=str(Path(__file__).resolve().parent.parent), help="checkout")
    args = parser.parse_args()
    folder = corpus.default_cache() / "src" / args.lib
    file = folder / args.file
    if not file.is_file():
        raise SystemExit(
            f"{file} not found: fetch the corpus first (python bench/corpus.py --libs {args.lib})"
        )
    env = dict(os.environ, PYTHONPATH=args.jaxlint)
    jaxlint = [sys.executable, "-m", "jaxlint", "-j", "2"]
    with tempfile.TemporaryDirectory() as cache:
        cached = [*jaxlint, "--cache-dir", cache]
        cpu([*cached, str(folder)], env)  # fills the cache
        rows = {
            "FOLDER, warm": [*cached, str(folder)],
            "FILE, warm": [*cached, str(file)],
            "FILE, cold (--no-cache)": [*jaxlint, "--no-cache", str(file)],
        }
        for name, cmd in rows.items():
            times = [cpu(cmd, env) for _ in range(args.repeat)]
            print(f"{name:<26} CPU {statistics.median(times) * 1000:7.0f} ms   (median of {args.repeat})")


if __name__ == "__main__":
    main()
