"""Start-up of jaxlint on one small file beside `python -c "import libcst"` (issue 17: at most 1.4x).

Alternates the two commands `--repeat` times and prints the median wall and CPU time (user + system, from
`os.wait4`) of each and their ratios. CPU time moves far less than wall time on a shared machine.

    python bench/startup.py                 # with bytecode caches (as installed code runs)
    python bench/startup.py --no-bytecode   # every module compiled from source each run
    python bench/startup.py --jaxlint-source  # only jaxlint compiled each run (PYTHONDONTWRITEBYTECODE=1 on a
                                              # checkout without __pycache__: what run.py measures there)
    python bench/startup.py --importtime    # also print jaxlint's 25 costliest imports (-X importtime)
    python bench/startup.py --jaxlint OLD .   # several checkouts, alternated in the same rounds (before/after)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL_FILE = """\
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    if x.sum() > 0:
        return x
    return -x
"""


def run(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    start = time.perf_counter()
    # In a folder of its own: `-m` puts the working directory first on sys.path, so run from a checkout
    # it would import that checkout's jaxlint whatever --jaxlint names.
    child = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--no-bytecode", action="store_true", help="compile every module each run")
    parser.add_argument("--jaxlint-source", action="store_true", help="compile jaxlint (only) each run")
    parser.add_argument("--importtime", action="store_true")
    parser.add_argument(
        "--jaxlint",
        nargs="+",
        default=[str(Path(__file__).resolve().parent.parent)],
        help="checkouts (several: each one's start-up in every round, alternated)",
    )
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.jaxlint[0]))
    with tempfile.TemporaryDirectory() as tmp:
        if args.jaxlint_source:  # installed packages read their bytecode; nothing new is written
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env.pop("PYTHONPYCACHEPREFIX", None)
        elif args.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "none")  # no cache to read either
        else:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pyc")
        small = os.path.join(tmp, "step.py")
        Path(small).write_text(SMALL_FILE, encoding="utf-8")
        lint = [sys.executable, "-m", "jaxlint", small, "--no-cache", "--format", "json"]
        commands = {"import libcst": [sys.executable, "-c", "import libcst"]}
        envs = {"import libcst": env}
        for checkout in args.jaxlint:
            name = "jaxlint, 1 small file" if len(args.jaxlint) == 1 else f"jaxlint {checkout}"
            commands[name], envs[name] = lint, dict(env, PYTHONPATH=os.path.abspath(checkout))
        if not args.no_bytecode and not args.jaxlint_source:  # fill the bytecode caches first
            for name, cmd in commands.items():
                run(cmd, envs[name], tmp)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        loads = []
        for _ in range(args.repeat):
            for name, cmd in commands.items():
                times[name].append(run(cmd, envs[name], tmp))
            loads.append(os.getloadavg()[0])
        medians = {}
        for name, runs in times.items():
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            medians[name] = (wall, cpu)
            print(
                f"{name:24} wall {wall * 1000:6.0f} ms   CPU {cpu * 1000:6.0f} ms   (median of {args.repeat})"
            )
        lw, lc = medians["import libcst"]
        for name in list(medians)[1:]:
            jw, jc = medians[name]
            label = "ratio" if len(medians) == 2 else f"ratio {name.removeprefix('jaxlint ')}"
            print(f"{label:24} wall {jw / lw:6.2f}x    CPU {jc / lc:6.2f}x")
        print(
            f"load average (1 min) during the rounds: median {statistics.median(loads):.2f}, "
            f"{min(loads):.2f}-{max(loads):.2f}"
        )
        if args.importtime:
            out = subprocess.run(
                [lint[0], "-X", "importtime", *lint[1:]],
                env=envs[list(commands)[-1]],
                cwd=tmp,
                capture_output=True,
                text=True,
            ).stderr
            rows = [line.split("|") for line in out.splitlines() if line.startswith("import time:")][1:]
            rows.sort(key=lambda r: -int(r[1]))
            for self_us, cumulative, name in rows[:25]:
                print(
                    f"{int(self_us.split(':')[1]) / 1000:7.1f} {int(cumulative) / 1000:7.1f} ms  {name.rstrip()}"
                )


if __name__ == "__main__":
    main()
