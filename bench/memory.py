"""Peak memory of a run: the parent process (which keeps every finding) and its worker processes.

Usage: ``python bench/memory.py [--findings 160000] [--big 0.93] [--huge 5] [--jaxlint CHECKOUT] [-j 2]``

Workloads, generated in a temporary folder:
- ``findings``: files of one jitted function with 1,600 `print`s each (1,600 JAX201 findings with fixes per
  file), as many files as ``--findings`` asks for, linted with ``-j J --format json``: the parent's peak
  is mostly what it keeps per finding;
- ``big`` and ``huge``: one ordinary JAX module (`tools/hostile_inputs.long_module`) of about ``--big`` and
  ``--huge`` MB beside 8 small files (so that a pool lints it, as in a directory run), with
  ``--max-file-size`` raised above it: the peak of the worker that lints it. ``--huge 0`` skips the 5 MB
  file (before issue 39 it needed ~6 GB).

Each run is the real command (``python -c 'from jaxlint.cli import main'``, ``--no-cache``) whose exit hook
writes the peak resident set of the process itself (the parent: its VmHWM) and of its waited-for children
(the largest worker: ``getrusage``), in MB. ``--jaxlint CHECKOUT`` measures another checkout (an older commit:
``git archive REV jaxlint | tar -x -C DIR``) with the same workloads. ``--bound-mb N`` runs the big and huge
files with ``JAXLINT_MEMORY_MB=N`` (the workers' memory bound, issue 39): without it, raising
``max-file-size`` to the file's size raises the bound to 2 KB a byte.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The parent's peak is its VmHWM: `ru_maxrss` keeps, across exec, the peak of the process that forked it
# (this script, once it has read a run's 160,000 findings). Workers are forks: their `ru_maxrss` is theirs.
_WRAPPER = """
import atexit, json, resource, sys
def report():
    with open("/proc/self/status") as status:
        own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(sys.argv[1], "w") as handle:
        json.dump({"parent_kb": own, "children_kb": children}, handle)
atexit.register(report)
from jaxlint.cli import main
sys.exit(main(sys.argv[2:]))
"""

_PRINTS_PER_FILE = 1600


def prints_module(count: int) -> str:
    body = "".join(f"    print(x{i % 7})\n" for i in range(count))
    return (
        "import jax\n\n@jax.jit\ndef f("
        + ", ".join(f"x{i}" for i in range(7))
        + "):\n"
        + body
        + "    return x0\n"
    )


def measure(checkout: Path, folder: Path, args: list[str], bound_mb: int = 0) -> dict[str, float]:
    out = folder / "rusage.json"
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    if bound_mb:
        env["JAXLINT_MEMORY_MB"] = str(bound_mb)
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(out), "--no-cache", *args],
        capture_output=True,
        env=env,
        cwd=folder,
    )
    wall = time.monotonic() - start
    if result.returncode not in (0, 1):
        raise SystemExit(f"jaxlint failed ({result.returncode}): {result.stderr.decode()[-2000:]}")
    usage = json.loads(out.read_text())
    found = json.loads(result.stdout) if "--format" in args else []
    codes: dict[str, int] = {}
    for finding in found:
        codes[finding["code"]] = codes.get(finding["code"], 0) + 1
    return {
        "parent_mb": usage["parent_kb"] / 1024,
        "workers_mb": usage["children_kb"] / 1024,
        "wall_s": wall,
        "findings": len(found),
        "codes": codes,  # type: ignore[dict-item]
        "jax000": [f["message"] for f in found if f["code"] == "JAX000"][:3],  # type: ignore[dict-item]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--findings", type=int, default=160_000, help="findings of the first workload (0: skip)"
    )
    parser.add_argument("--big", type=float, default=0.93, help="MB of the big module (0: skip)")
    parser.add_argument("--huge", type=float, default=5.0, help="MB of the huge module (0: skip)")
    parser.add_argument("--jaxlint", type=Path, default=ROOT, help="the checkout whose jaxlint is measured")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--bound-mb", type=int, default=0, help="JAXLINT_MEMORY_MB for the big and huge runs")
    args = parser.parse_args()
    checkout = args.jaxlint.resolve()
    sys.path.insert(0, str(ROOT / "tools"))
    from hostile_inputs import long_module

    print(f"jaxlint from {checkout}, -j {args.jobs}")
    jobs = ["-j", str(args.jobs), "--format", "json"]
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        if args.findings:
            work = folder / "findings"
            work.mkdir()
            files = max(1, args.findings // _PRINTS_PER_FILE)
            for i in range(files):
                (work / f"m{i}.py").write_text(prints_module(_PRINTS_PER_FILE))
            row = measure(checkout, work, [*jobs, "."])
            # The same files without their findings (`print` -> `abs`): the parent's cost without findings.
            plain = folder / "plain"
            plain.mkdir()
            for i in range(files):
                (plain / f"m{i}.py").write_text(prints_module(_PRINTS_PER_FILE).replace("print(", "abs("))
            base = measure(checkout, plain, [*jobs, "."])
            per = (row["parent_mb"] - base["parent_mb"]) * 1024 * 1024 / max(1, row["findings"])
            print(
                f"findings: {row['findings']:,} findings in {files} files: parent {row['parent_mb']:,.0f} MB "
                f"(without the findings {base['parent_mb']:,.0f} MB: {per:,.0f} B per finding), largest worker "
                f"{row['workers_mb']:,.0f} MB, {row['wall_s']:.0f} s"
            )
        for name, megabytes in (("big", args.big), ("huge", args.huge)):
            if not megabytes:
                continue
            work = folder / name
            work.mkdir()
            lines = 30_000
            source = long_module(lines)
            lines = int(lines * megabytes * 1e6 / len(source))
            source = long_module(lines)
            (work / "big.py").write_text(source)
            for i in range(8):
                (work / f"small{i}.py").write_text(prints_module(2))
            limit = len(source.encode()) + 1
            (work / "pyproject.toml").write_text(f"[tool.jaxlint]\nmax-file-size = {limit}\n")
            row = measure(checkout, work, [*jobs, "."], args.bound_mb)
            print(
                f"{name}: a {len(source) / 1e6:.2f} MB module ({lines:,} lines) and 8 small files: parent "
                f"{row['parent_mb']:,.0f} MB, largest worker {row['workers_mb']:,.0f} MB, "
                f"{row['wall_s']:.0f} s, findings {row['codes']}, JAX000: {row['jax000']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
