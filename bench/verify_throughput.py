"""`--verify` throughput: N one-function modules, each with one JAX101 finding, verified with one child
per module from a fresh interpreter (`fork=False`, as before issue 14) and forked from one fork server
(the default), against the floor: one `import jax` plus a first jit call in a fresh interpreter.

    python bench/verify_throughput.py [--modules 20] [--jobs 1] [--repeat 3] [--forked-only]

Prints the best of `--repeat` wall times and the ratios to the floor (goal <= 2x, bar <= 4x), and the CPU
time of all processes (this one's own and its children's, the fork server's forks included once it is
reaped), which a machine shared with other work disturbs less than the wall time.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jaxlint.finding import Finding  # noqa: E402
from jaxlint.runtime.verify import verify_findings  # noqa: E402

MODULE = """\
import jax


@jax.jit
def f{n}(x):
    if x > {n}:
        return x
    return -x
"""

FLOOR = "import jax, jax.numpy as jnp; jax.jit(lambda x: x + 1)(jnp.ones(3)).block_until_ready()"


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _best(repeat: int, run) -> tuple[float, float]:
    """The best wall time and the best CPU time over `repeat` runs."""
    times, cpu = [], []
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), _cpu()
        run()
        times.append(time.perf_counter() - started)
        cpu.append(_cpu() - cpu_started)
    return min(times), min(cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--forked-only", action="store_true", help="skip the fresh-interpreter route (slow)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jaxlint-bench-") as folder:
        root = Path(folder)
        findings = []
        for n in range(args.modules):
            path = root / f"mod{n}.py"
            path.write_text(MODULE.format(n=n))
            findings.append(
                Finding(str(path), 6, 5, 6, 14, "JAX101", "traced-control-flow", "m", function=f"f{n}")
            )

        floor = _best(args.repeat, lambda: subprocess.run([sys.executable, "-c", FLOOR], check=True))
        results = {}
        routes = (("fresh interpreter per module", False), ("forked from one server", True))
        for label, fork in routes[1:] if args.forked_only else routes:
            reports: list = []

            def run(fork: bool = fork, reports: list = reports) -> None:
                reports.append(verify_findings(findings, root=root, jobs=args.jobs, timeout=300, fork=fork))

            results[label] = _best(args.repeat, run)
            confirmed = reports[-1].counts()["CONFIRMED"]
            assert confirmed == args.modules, reports[-1].counts()
    print(f"floor: import jax + first jit call: {floor[0]:.2f} s (CPU {floor[1]:.2f} s)")
    for label, (seconds, cpu) in results.items():
        print(
            f"{args.modules} modules, jobs={args.jobs}, {label}: {seconds:.2f} s"
            f" = {seconds / floor[0]:.1f}x the floor, {seconds / args.modules * 1000:.0f} ms per module;"
            f" CPU {cpu:.2f} s = {cpu / floor[1]:.1f}x the floor's"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
