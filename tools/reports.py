"""Verify the reproductions of real reports on real JAX, and measure jaxlint's recall on them.

    python tools/reports.py verify [ID ...]      run bad/ and twin/ of each case, write each case's verified.json
    python tools/reports.py stats                recall by category

`verify` runs each side in a fresh interpreter with JAX on CPU and `jax_debug_key_reuse` left as the case
sets it: `main.py` through runpy, or `main.ipynb` cell by cell in one namespace. An outcome is the exception's
class with the file and line of its innermost frame inside the side's folder, or the `OBSERVED:` lines it
printed, or null when it ran clean. A case is verified when bad/ misbehaved and twin/ ran clean.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "tests" / "reports"
CASES = REPORTS / "cases"
CATEGORIES = (
    "control-flow",
    "concretization",
    "in-place",
    "tracer-leak",
    "side-effects",
    "prng",
    "recompilation",
    "precision",
    "framework",
)
_EXPECT = re.compile(r"#\s*expect:\s*(JAX\d{3}(?:\s*,\s*JAX\d{3})*)")

_DRIVER = r"""
import json, os, runpy, sys, traceback, io, contextlib
folder = os.path.realpath(sys.argv[1])
sys.path.insert(0, folder)
os.chdir(folder)
printed = io.StringIO()

class Tee(io.TextIOBase):
    def write(self, text):
        printed.write(text)
        return len(text)

outcome = None
try:
    with contextlib.redirect_stdout(Tee()):
        if os.path.exists("main.ipynb"):
            cells = json.load(open("main.ipynb", encoding="utf-8"))["cells"]
            namespace = {"__name__": "__main__"}
            for number, cell in enumerate(cells, 1):
                if cell.get("cell_type") == "code":
                    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
                    exec(compile(source, f"main.ipynb:cell {number}", "exec"), namespace)
        else:
            runpy.run_path("main.py", run_name="__main__")
except BaseException as error:
    frames = [
        f for f in traceback.extract_tb(error.__traceback__)
        if os.path.realpath(f.filename).startswith(folder + os.sep) or f.filename.startswith("main.ipynb:")
    ]
    where = [os.path.relpath(os.path.realpath(frames[-1].filename), folder) if not frames[-1].filename.startswith("main.ipynb:") else frames[-1].filename, frames[-1].lineno] if frames else [None, None]
    outcome = {"error": type(error).__name__, "file": where[0], "line": where[1]}
observed = [line for line in printed.getvalue().splitlines() if line.startswith("OBSERVED:")]
if outcome is None and observed:
    outcome = {"observed": observed[:5]}
print(json.dumps(outcome))
"""


def case_ids() -> list[str]:
    return sorted(path.parent.name for path in CASES.glob("*/case.toml"))


def load_case(case_id: str) -> dict:
    with open(CASES / case_id / "case.toml", "rb") as handle:
        return tomllib.load(handle)


def side_files(case_id: str, side: str) -> list[Path]:
    """The case's own files: not what running or linting it leaves (`__pycache__`, `.jaxlint_cache`, ...)."""
    folder = CASES / case_id / side
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and not any(part == "__pycache__" or part.startswith(".") for part in p.relative_to(folder).parts)
    )


def found(case_id: str, side: str) -> set[tuple[str, int | None, int, str]]:
    """(file, cell, line, code) of what jaxlint reports on a copy of one side, linted as a project of its own
    (as its user has it: not inside this repository, whose other cases would share module names)."""
    import shutil
    import tempfile

    from jaxlint import lint_paths

    with tempfile.TemporaryDirectory() as temporary:
        copy = Path(temporary) / side
        for path in side_files(case_id, side):
            target = copy / path.relative_to(CASES / case_id / side)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        root = copy.resolve()
        return {
            (Path(f.path).resolve().relative_to(root).as_posix(), f.cell, f.line, f.code)
            for f in lint_paths([str(copy)])
        }


def digest(case_id: str) -> str:
    """What the verification ran: the files of bad/ and twin/."""
    sha = hashlib.sha256()
    for side in ("bad", "twin"):
        for path in side_files(case_id, side):
            sha.update(f"{side}/{path.relative_to(CASES / case_id / side).as_posix()}\0".encode())
            sha.update(path.read_bytes().replace(b"\r\n", b"\n"))
    return sha.hexdigest()[:16]


def _cell_lines(path: Path) -> list[tuple[int | None, int, str]]:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        out = []
        for number, cell in enumerate(cells, 1):
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            out += [(number, line, text) for line, text in enumerate(source.splitlines(), 1)]
        return out
    return [(None, line, text) for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]


def expected(case_id: str) -> set[tuple[str, int | None, int, str]]:
    """(file, cell, line, code) for every `# expect:` marker in bad/."""
    folder = CASES / case_id / "bad"
    found = set()
    for path in side_files(case_id, "bad"):
        if path.suffix not in (".py", ".ipynb"):
            continue
        for cell, line, text in _cell_lines(path):
            match = _EXPECT.search(text)
            if match:
                for code in match.group(1).split(","):
                    found.add((path.relative_to(folder).as_posix(), cell, line, code.strip()))
    return found


def run_side(case_id: str, side: str) -> dict | None:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(CASES / case_id / side)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": "driver failed", "file": None, "line": None, "stderr": done.stderr[-400:]}
    return json.loads(lines[-1])


def verify(ids: list[str]) -> int:
    import jax

    failed = 0
    for case_id in ids or case_ids():
        bad, twin = run_side(case_id, "bad"), run_side(case_id, "twin")
        ok = bad is not None and bad.get("error") != "driver failed" and twin is None
        record = {"jax": jax.__version__, "digest": digest(case_id), "bad": bad, "twin": twin, "verified": ok}
        (CASES / case_id / "verified.json").write_text(json.dumps(record, indent=1) + "\n")
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {case_id}: bad {bad}, twin {twin}")
    return 1 if failed else 0


def stats() -> int:
    sys.path.insert(0, str(ROOT))
    table: dict[str, list[int]] = {}
    misses = []
    for case_id in case_ids():
        case = load_case(case_id)
        hit = found(case_id, "bad") == expected(case_id)
        row = table.setdefault(case["category"], [0, 0])
        row[0] += hit
        row[1] += 1
        if not hit:
            misses.append(f"{case_id}: {case.get('xfail', 'NOT MARKED xfail')}")
    total = [sum(r[0] for r in table.values()), sum(r[1] for r in table.values())]
    print("| category | found | cases | recall |\n| --- | ---: | ---: | ---: |")
    for name in CATEGORIES:
        if name in table:
            hits, cases = table[name]
            print(f"| {name} | {hits} | {cases} | {hits / cases:.0%} |")
    if total[1]:
        print(f"| all | {total[0]} | {total[1]} | {total[0] / total[1]:.1%} |")
    for miss in misses:
        print("miss:", miss)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("verify").add_argument("ids", nargs="*")
    sub.add_parser("stats")
    args = parser.parse_args()
    return verify(args.ids) if args.command == "verify" else stats()


if __name__ == "__main__":
    sys.exit(main())
