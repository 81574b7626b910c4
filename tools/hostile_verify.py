"""Run `jaxlint --verify` on the hostile modules of tests/fixtures/hostile and say what survived.

    python tools/hostile_verify.py                          # every module, one run
    python tools/hostile_verify.py flood_events.py -- --jobs 1 --python /tmp/venvs/jax012/bin/python
    python tools/hostile_verify.py --jaxlint-root /path/to/other/checkout      # a baseline

Copies the chosen modules into a scratch project, runs the real command there (`--verify --verbose`,
options after `--` passed on), and prints its report, jaxlint's peak resident memory, and the processes the
modules started (reported through JAXLINT_HOSTILE_PIDS) that were still running after jaxlint exited;
those are then killed. Exits 1 if any survived. The modules and what each does: tests/fixtures/hostile/README.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "fixtures" / "hostile"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _peak_rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="file names in tests/fixtures/hostile (default: all)")
    parser.add_argument("--jaxlint-root", type=Path, default=ROOT, help="checkout whose jaxlint runs")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_args(argv[:cut]), argv[cut + 1 :]
    modules = args.modules or sorted(p.name for p in HOSTILE.glob("*.py"))
    with tempfile.TemporaryDirectory(prefix="jaxlint-hostile-") as scratch:
        project = Path(scratch) / "proj"
        project.mkdir()
        for name in modules:
            shutil.copy(HOSTILE / name, project / name)
        pids_file = Path(scratch) / "pids.txt"
        env = {**os.environ, "PYTHONPATH": str(args.jaxlint_root), "JAXLINT_HOSTILE_PIDS": str(pids_file)}
        command = [sys.executable, "-m", "jaxlint", "--no-cache", "--verify", "--verbose", *extra, "."]
        started = time.monotonic()
        proc = subprocess.Popen(command, cwd=project, env=env)
        peak = [0]

        def sample() -> None:
            while proc.poll() is None:
                peak[0] = max(peak[0], _peak_rss(proc.pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = proc.wait()
        sampler.join()
        seconds = time.monotonic() - started
        time.sleep(0.5)  # what jaxlint killed last has exited by now
        pids = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
        survivors = [p for p in pids if _alive(p)]
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
    print(f"jaxlint exited {code} after {seconds:.1f} s; its peak resident memory: {peak[0] >> 20} MiB")
    print(f"processes the modules started: {len(pids)}; still running after jaxlint: {survivors or 'none'}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
