"""Fork safety of `jaxlint --verify` (issue 27 item 3): many `--verify` runs at once, each forking its
modules' children from a fork server, and a count of the children that died of a signal (SIGABRT above
all: a fork copied a thread's lock held) or wrote a fatal error.

    python bench/fork_safety.py --runs 50 --parallel 8 --python /tmp/venvs/jax012-procs/bin/python

`--python` is the interpreter of the verify child (the JAX under test; default: this one); jaxlint itself
runs under this interpreter. Prints one line per outcome and the totals; exits 1 if any child died of a
signal or a fatal error. Each run verifies `--modules` small modules (numpy, a jitted function with a
JAX101 finding, a jnp computation at import), all CONFIRMED when nothing goes wrong.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODULE = """\
import numpy as np
import jax
import jax.numpy as jnp

TABLE = jnp.asarray(np.arange({n}, dtype=np.float32)) * 2


@jax.jit
def f(x):
    if x > {n}:
        return x
    return -x
"""


def _project(folder: Path, modules: int) -> None:
    for n in range(modules):
        (folder / f"m{n}.py").write_text(MODULE.format(n=n))


def _one_run(folder: Path, python: str, jobs: int, timeout: float, root: Path) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [
        sys.executable,
        "-m",
        "jaxlint",
        "--no-cache",
        "--verify",
        "--format",
        "json",
        "--jobs",
        str(jobs),
    ]
    command += ["--python", python, "--verify-timeout", str(timeout), "."]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, timeout=timeout * 4 + 120)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return [
            {
                "verdict": "ERROR",
                "verdict_reason": f"jaxlint exited {done.returncode}: {done.stderr[-300:]!r}",
            }
        ]


def _kind(verdict: dict) -> str:
    reason = verdict.get("verdict_reason", "")
    if verdict.get("verdict") == "CONFIRMED":
        return "CONFIRMED"
    for word in ("SIGABRT", "SIGSEGV", "SIGBUS", "SIGKILL", "Fatal Python error", "timed out"):
        if word in reason:
            return f"{verdict.get('verdict')}: {word}"
    return f"{verdict.get('verdict')}: {reason[:120]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--parallel", type=int, default=8, help="jaxlint runs at once")
    parser.add_argument("--modules", type=int, default=4, help="modules per run")
    parser.add_argument("--jobs", type=int, default=2, help="--jobs of each run")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the verify child")
    parser.add_argument("--timeout", type=float, default=120.0, help="--verify-timeout of each run")
    parser.add_argument(
        "--jaxlint-root", type=Path, default=ROOT, help="checkout whose jaxlint runs (a baseline)"
    )
    args = parser.parse_args()
    version = subprocess.run(
        [args.python, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True
    ).stdout.strip()
    started = time.monotonic()
    outcomes: collections.Counter[str] = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="jaxlint-fork-safety-") as scratch:
        folders = []
        for run in range(args.runs):
            folder = Path(scratch) / f"run{run}"
            folder.mkdir()
            _project(folder, args.modules)
            folders.append(folder)
        with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
            results = pool.map(
                lambda f: _one_run(f, args.python, args.jobs, args.timeout, args.jaxlint_root), folders
            )
            for verdicts in results:
                outcomes.update(_kind(v) for v in verdicts)
    seconds = time.monotonic() - started
    print(
        f"jax {version}, {args.runs} runs x {args.modules} modules, {args.parallel} runs at once, "
        f"--jobs {args.jobs}, {os.cpu_count()} cores, {seconds:.0f} s"
    )
    for kind, count in outcomes.most_common():
        print(f"  {count:5d}  {kind}")
    bad = sum(c for k, c in outcomes.items() if any(w in k for w in ("SIG", "Fatal", "ERROR")))
    print(f"children that died of a signal or a fatal error: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
