"""Measure jaxlint's speed on real JAX code, beside flake8, ruff and the libcst parse-only floor.

Usage::

    python bench/run.py                                  # all 13 libraries, every row
    python bench/run.py --libs optax --quick             # one library, all-core rows only
    python bench/run.py --json results.json              # also write the figures as JSON

Every row runs as a child process on the same list of files, one after the other, in this one run,
started through bench/measure_child.py, which takes its wall time and, from ``os.wait4``, its CPU time
(user + sys) and peak RSS, worker processes included.  Peak RSS is that of the LARGEST SINGLE process of
the row (the kernel's ``ru_maxrss`` semantics), not the sum over workers.  See bench/README.md for what
each row means.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import corpus

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
TOOLS = ("parse", "flake8", "ruff", "jaxlint")
# A row is marked contended when other processes used more than this many cores, on average, while it ran.
CONTENDED_CORES = 0.25
SMALL_FILE = '''"""A small JAX file: what a pre-commit hook sees for one edited file."""
import jax
import jax.numpy as jnp


@jax.jit
def step(params, x):
    y = jnp.tanh(x @ params["w"] + params["b"])
    return jnp.sum(y**2)
'''


@dataclass
class Row:
    key: str
    label: str
    jobs: int | None = None
    cmd: list[str] = field(default_factory=list)
    wall_s: float | None = None
    user_s: float | None = None
    sys_s: float | None = None
    peak_rss_mib: float | None = None
    rc: int | None = None
    lines_per_s: float | None = None
    files_per_s: float | None = None
    findings: int | None = None
    skipped: str | None = None
    note: str | None = None
    others_cores: float | None = None  # CPU used by OTHER processes meanwhile, in cores (Linux)

    @property
    def cpu_s(self) -> float | None:
        if self.user_s is None or self.sys_s is None:
            return None
        return self.user_s + self.sys_s


@dataclass
class Measured:
    wall_s: float
    user_s: float
    sys_s: float
    peak_rss_mib: float
    rc: int
    stdout: str
    stderr: str
    others_cores: float | None = None


def busy_cpu_seconds() -> float | None:
    """CPU seconds all processes of the machine have used since boot (Linux /proc/stat), steal included."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        ticks = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return None
    # cpu user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / ticks


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _rss_mib(maxrss: int) -> float:
    # Linux reports KiB, macOS bytes.
    return maxrss / (1024 * 1024) if sys.platform == "darwin" else maxrss / 1024


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Measured:
    """Run ``cmd`` to the end through measure_child.py: wall, user/sys and peak RSS of it and its workers."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as d:
        result = Path(d) / "usage.json"
        launcher = [sys.executable, "-I", "-S", str(BENCH / "measure_child.py"), str(result)]
        busy0 = busy_cpu_seconds()
        proc = subprocess.run(
            [*launcher, *cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        busy1 = busy_cpu_seconds()
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
        if proc.returncode != 0 or not result.is_file():
            raise RuntimeError(f"could not run {cmd[0]}: {tail(stderr)}")
        usage = json.loads(result.read_text())
        others = None
        # Below a second, the launcher's own start-up and /proc/stat's 10 ms ticks swamp the figure.
        if busy0 is not None and busy1 is not None and usage["wall_s"] >= 1.0:
            own = usage["user_s"] + usage["sys_s"]
            others = max(0.0, (busy1 - busy0 - own) / usage["wall_s"])
        return Measured(
            wall_s=usage["wall_s"],
            user_s=usage["user_s"],
            sys_s=usage["sys_s"],
            peak_rss_mib=_rss_mib(usage["maxrss"]),
            rc=usage["rc"],
            stdout=stdout,
            stderr=stderr,
            others_cores=others,
        )


def fill(row: Row, m: Measured, files: int, lines: int) -> Row:
    row.wall_s, row.user_s, row.sys_s = m.wall_s, m.user_s, m.sys_s
    row.peak_rss_mib, row.rc = m.peak_rss_mib, m.rc
    row.others_cores = None if m.others_cores is None else round(m.others_cores, 2)
    row.lines_per_s = lines / m.wall_s if m.wall_s else None
    row.files_per_s = files / m.wall_s if m.wall_s else None
    return row


def tail(text: str, n: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


# ----------------------------------------------------------------------------------------------- tools


def ruff_command() -> list[str] | None:
    for candidate in (Path(sys.executable).parent / "ruff", shutil.which("ruff")):
        if candidate and Path(candidate).is_file():
            return [str(candidate)]
    return None


def tool_version(cmd: list[str], env: dict[str, str] | None = None) -> str | None:
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0] if proc.returncode == 0 and text else None


def jaxlint_env(tmp: Path) -> dict[str, str]:
    """jaxlint from this checkout (installed or not), with any user-level cache kept inside ``tmp``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["XDG_CACHE_HOME"] = str(tmp / "xdg-cache")
    return env


def jaxlint_probe(jaxlint: list[str], cwd: Path, env: dict[str, str]) -> tuple[bool, str, str]:
    """(available, why-not, --help text)."""
    cmd = [*jaxlint, "--help"]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False, f"`{' '.join(cmd)}` timed out", ""
    if proc.returncode != 0:
        return False, f"`{' '.join(cmd)}` failed (rc {proc.returncode}): {tail(proc.stderr, 1)}", ""
    return True, "", proc.stdout


def count_findings_by_rule(stdout: str) -> Counter | None:
    """Findings per rule code from jaxlint's ``--format json`` output, whatever its exact shape."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return None
    counts: Counter = Counter()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            code = node.get("code")
            if (
                isinstance(code, str)
                and re.fullmatch(r"[A-Z]+\d+", code)
                and ("line" in node or "path" in node)
            ):
                counts[code] += 1
                return
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(data)
    return counts


# ------------------------------------------------------------------------------------------------ rows


def run_all(args: argparse.Namespace, libs: list[corpus.Library], tmp: Path) -> dict:
    ncores = args.jobs or cores()
    files = sorted(str(p) for lib in libs for p in lib.path.rglob("*.py"))
    n_files = len(files)
    n_lines = sum(lib.lines for lib in libs)
    list_file = tmp / "files.txt"
    list_file.write_text("\n".join(files) + "\n", encoding="utf-8")
    work = tmp / "cwd"  # an empty folder: no config file of the repo or the corpus is picked up
    work.mkdir()
    job_counts = [ncores] if args.quick else sorted({1, ncores})
    wanted = set(args.tools)
    rows: list[Row] = []
    versions: dict[str, str | None] = {}
    findings_by_rule: dict[str, int] | None = None
    skipped: dict[str, str] = {}
    load_before = load_average()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    def run_row(
        row: Row, cmd: list[str], env: dict[str, str] | None = None, ok=(0,), cwd: Path = work
    ) -> Measured:
        """Run ``cmd`` ``--repeat`` times; the row keeps the fastest run (its CPU and RSS too)."""
        row.cmd = short_cmd(cmd)
        log(f"[bench] {row.label} ...")
        runs = []
        for _ in range(args.repeat):
            m = measure(cmd, cwd, env)
            runs.append(m)
            if m.rc not in ok:
                break
        m = min(runs, key=lambda x: (x.rc not in ok, x.wall_s))
        fill(row, m, n_files, n_lines)
        if len(runs) > 1:
            row.note = "walls " + ", ".join(f"{x.wall_s:.2f}" for x in runs)
        if m.rc not in ok:
            row.lines_per_s = row.files_per_s = None
            row.note = f"FAILED, exit {m.rc}: {tail(m.stderr, 1) or tail(m.stdout, 1)}"
            log(f"[bench]   exit {m.rc}\n{tail(m.stderr)}")
        else:
            flag_contention(row)
            log(f"[bench]   {m.wall_s:.2f} s wall, {m.user_s + m.sys_s:.2f} s CPU, {m.peak_rss_mib:.0f} MiB")
        rows.append(row)
        return m

    file_set = set(files)

    def short_cmd(cmd: list[str]) -> list[str]:
        """``cmd`` with the corpus file list shown as one ``<N corpus files>`` item (keeps the JSON small)."""
        out = [x for x in cmd if x not in file_set]
        if len(out) < len(cmd):
            first = next(i for i, x in enumerate(cmd) if x in file_set)
            out.insert(first, f"<{len(cmd) - len(out)} corpus files>")
        return out

    def add_note(row: Row, text: str) -> None:
        row.note = f"{row.note}; {text}" if row.note else text

    def flag_contention(row: Row) -> None:
        if row.others_cores is not None and row.others_cores > CONTENDED_CORES:
            add_note(row, f"contended: other processes used {row.others_cores:.2f} cores meanwhile")

    # (a) libcst parse-only floor
    if "parse" in wanted:
        for j in job_counts:
            row = Row(f"parse-j{j}", f"libcst parse floor, {j} proc", jobs=j)
            cmd = [
                sys.executable,
                str(BENCH / "parse_floor.py"),
                "--files-from",
                str(list_file),
                "-j",
                str(j),
            ]
            m = run_row(row, cmd)
            if m.rc == 0:
                info = json.loads(m.stdout)
                versions["libcst"] = info.get("libcst")
                if info["errors"]:
                    add_note(
                        row, f"{info['errors']} files libcst cannot parse, e.g. {info['first_errors'][0]}"
                    )

    # (b) flake8, default plugins only, config files ignored
    if "flake8" in wanted:
        version = tool_version([sys.executable, str(BENCH / "flake8_default.py"), "--version"])
        versions["flake8"] = version.split(" CPython")[0] if version else None
        for j in job_counts:
            row = Row(f"flake8-j{j}", f"flake8 -j {j}", jobs=j)
            cmd = [sys.executable, str(BENCH / "flake8_default.py"), "--isolated", "-j", str(j), *files]
            m = run_row(row, cmd, ok=(0, 1))
            row.findings = sum(1 for line in m.stdout.splitlines() if line.strip())
            hidden = [ln for ln in m.stderr.splitlines() if ln.startswith("flake8_default:")]
            if hidden:
                add_note(row, hidden[0])

    # (c) ruff, default rules, no cache, config files ignored
    if "ruff" in wanted:
        ruff = ruff_command()
        if ruff is None:
            skipped["ruff"] = "ruff not found next to this Python or on PATH"
            rows.append(Row("ruff", "ruff check", skipped=skipped["ruff"]))
        else:
            version = tool_version([*ruff, "--version"])
            versions["ruff"] = version.removeprefix("ruff ") if version else None
            row = Row("ruff", f"ruff check --no-cache ({ncores} cores)", jobs=ncores)
            flags = ["--no-cache", "--isolated", "--output-format", "concise", "--exit-zero"]
            m = run_row(row, [*ruff, "check", *flags, *files])
            row.findings = sum(1 for line in m.stdout.splitlines() if re.search(r":\d+:\d+: ", line))

    # (d) jaxlint
    if "jaxlint" in wanted:
        jaxlint = shlex.split(args.jaxlint_cmd) if args.jaxlint_cmd else [sys.executable, "-m", "jaxlint"]
        env = jaxlint_env(tmp)
        available, why, help_text = jaxlint_probe(jaxlint, work, env)
        has_cache = False  # set below from --help
        no_cache: list[str] = []
        if not available:
            skipped["jaxlint"] = f"jaxlint CLI not available yet: {why}"
            log(f"[bench] SKIPPED the jaxlint rows: {skipped['jaxlint']}")
            for key, label in (
                ("jaxlint-cold", "jaxlint --no-cache"),
                ("jaxlint-warm", "jaxlint warm cache"),
                ("jaxlint-startup", "jaxlint start-up, 1 small file"),
            ):
                rows.append(Row(key, label, skipped="jaxlint CLI not available (see below)"))
        else:
            version = tool_version([*jaxlint, "--version"], env=env)
            versions["jaxlint"] = version.removeprefix("jaxlint ") if version else None
            base = [*jaxlint, *files, "--format", "json"]
            # Before jaxlint has a cache its CLI has no --no-cache: every run is then cold.
            has_cache = "--no-cache" in help_text
            no_cache = ["--no-cache"] if has_cache else []
            for j in job_counts:
                row = Row(f"jaxlint-cold-j{j}", f"jaxlint -j {j} {' '.join(no_cache)}".rstrip(), jobs=j)
                m = run_row(row, [*base, "-j", str(j), *no_cache], env=env, ok=(0, 1))
                if not has_cache:
                    add_note(row, "no --no-cache option: no cache yet")
                if m.rc in (0, 1):
                    by_rule = count_findings_by_rule(m.stdout)
                    if by_rule is None:
                        add_note(row, "output is not JSON: findings not counted")
                    else:
                        row.findings = sum(by_rule.values())
                        findings_by_rule = dict(sorted(by_rule.items()))

            # warm: the same files with a cache folder of its own; run once to fill it, then time
            if not has_cache:
                skipped["jaxlint warm cache"] = (
                    "this jaxlint's CLI has no --no-cache option: no cache to warm yet"
                )
                rows.append(
                    Row(f"jaxlint-warm-j{ncores}", "jaxlint warm cache", skipped="no cache yet (see below)")
                )
        if available and has_cache:
            cache_dir = tmp / "jaxlint-cache"
            cache_cwd = tmp / "cache-cwd"
            cache_cwd.mkdir()
            cache_args = ["--cache-dir", str(cache_dir)] if "--cache-dir" in help_text else []
            warm_cmd = [*base, "-j", str(ncores), *cache_args]
            log(f"[bench] jaxlint -j {ncores}, filling the cache ...")
            fill_run = measure(warm_cmd, cache_cwd, env)
            row = Row(f"jaxlint-warm-j{ncores}", f"jaxlint -j {ncores} warm cache", jobs=ncores)
            m = run_row(row, warm_cmd, env=env, ok=(0, 1), cwd=cache_cwd)
            add_note(row, f"filling run {fill_run.wall_s:.2f} s")
            places = (cache_dir, cache_cwd, tmp / "xdg-cache")
            if not any(p.is_dir() and any(p.iterdir()) for p in places):
                add_note(
                    row, "no cache files seen (--cache-dir, cwd, $XDG_CACHE_HOME): is the cache implemented?"
                )
            if m.rc in (0, 1):
                by_rule = count_findings_by_rule(m.stdout)
                row.findings = sum(by_rule.values()) if by_rule is not None else None

        if available:
            # start-up: one small file, median of several runs, beside `python -c "import libcst"`
            small = tmp / "small" / "step.py"
            small.parent.mkdir()
            small.write_text(SMALL_FILE, encoding="utf-8")
            repeats = 3 if args.quick else 7
            # As installed code starts: every module from its bytecode, written by a first run into a folder of
            # this run's own (PYTHONDONTWRITEBYTECODE, which development machines often set, would make each run
            # compile jaxlint's modules again: `bench/startup.py --jaxlint-source` measures that case).
            compiled = dict(env, PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
            compiled.pop("PYTHONDONTWRITEBYTECODE", None)
            for key, label, cmd in (
                ("python-startup", "python -c pass", [sys.executable, "-c", "pass"]),
                ("import-libcst", 'python -c "import libcst"', [sys.executable, "-c", "import libcst"]),
                (
                    "jaxlint-startup",
                    "jaxlint start-up, 1 small file",
                    [*jaxlint, str(small), "--format", "json", "-j", "1", *no_cache],
                ),
            ):
                log(f"[bench] {label} x{repeats} ...")
                measure(cmd, work, compiled)  # writes the bytecode
                ms = [measure(cmd, work, compiled) for _ in range(repeats)]
                mid = sorted(ms, key=lambda x: x.wall_s)[len(ms) // 2]
                row = Row(key, f"{label} (median of {repeats})", jobs=1, cmd=cmd)
                fill(row, mid, 1, SMALL_FILE.count("\n"))
                row.lines_per_s = row.files_per_s = None
                if mid.rc not in (0, 1):
                    add_note(row, f"FAILED, exit {mid.rc}: {tail(mid.stderr, 1)}")
                add_note(row, "walls " + ", ".join(f"{x.wall_s:.3f}" for x in ms))
                flag_contention(row)
                rows.append(row)
                log(f"[bench]   median {statistics.median(x.wall_s for x in ms):.3f} s")

    load_after = load_average()
    return {
        "machine": {
            "cores": ncores,
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
            "load_average_before": load_before,
            "load_average_after": load_after,
        },
        "versions": versions,
        "corpus": {
            "libraries": [
                {"name": x.name, "version": x.version, "files": x.files, "lines": x.lines} for x in libs
            ],
            "files": n_files,
            "lines": n_lines,
            "path": str(libs[0].path.parent) if libs else None,
        },
        "quick": args.quick,
        "repeat": args.repeat,
        "rows": [dict(asdict(r), cpu_s=r.cpu_s) for r in rows],
        "ratios": ratios(rows, ncores),
        "findings_by_rule": findings_by_rule,
        "skipped": skipped,
    }


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def ratios(rows: list[Row], ncores: int) -> list[dict]:
    by = {r.key: r for r in rows if r.skipped is None and r.wall_s is not None and r.rc in (0, 1)}
    out = []

    def add(name: str, num: str, den: str, what: str = "wall") -> None:
        a, b = by.get(num), by.get(den)
        if a is None or b is None:
            return
        x = a.wall_s if what == "wall" else a.cpu_s
        y = b.wall_s if what == "wall" else b.cpu_s
        if x and y:
            out.append({"ratio": name, "of": num, "to": den, "measure": what, "value": round(x / y, 3)})

    for j in sorted({1, ncores}):
        add(f"jaxlint / parse floor, {j} proc", f"jaxlint-cold-j{j}", f"parse-j{j}")
        add(f"jaxlint / parse floor, {j} proc (CPU)", f"jaxlint-cold-j{j}", f"parse-j{j}", "cpu")
        add(f"jaxlint / flake8, -j {j}", f"jaxlint-cold-j{j}", f"flake8-j{j}")
    add(f"jaxlint -j {ncores} / ruff", f"jaxlint-cold-j{ncores}", "ruff")
    add(f"warm / cold cache, -j {ncores}", f"jaxlint-warm-j{ncores}", f"jaxlint-cold-j{ncores}")
    add("start-up / import libcst", "jaxlint-startup", "import-libcst")
    add(f"flake8 / parse floor, -j {ncores}", f"flake8-j{ncores}", f"parse-j{ncores}")
    add(f"ruff / parse floor, {ncores} proc", "ruff", f"parse-j{ncores}")
    if ncores != 1:
        add(f"parse floor speed-up, 1 -> {ncores} proc", "parse-j1", f"parse-j{ncores}")
        add(f"jaxlint speed-up, 1 -> {ncores} proc", "jaxlint-cold-j1", f"jaxlint-cold-j{ncores}")
    return out


# --------------------------------------------------------------------------------------------- report


def _f(x: float | None, fmt: str) -> str:
    return "" if x is None else format(x, fmt)


def cell(text: str | None) -> str:
    """``text`` fit for one markdown table cell."""
    return " / ".join(x.strip() for x in (text or "").splitlines() if x.strip()).replace("|", "\\|")


def markdown(result: dict) -> str:
    c, mach = result["corpus"], result["machine"]
    libs = ", ".join(f"{x['name']} {x['version']}" for x in c["libraries"])
    lines = [
        f"Corpus: {c['files']:,} files, {c['lines']:,} lines ({libs}).",
        f"Machine: {mach['cores']} cores, {mach['platform']}, Python {mach['python']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v) + ".",
        f"Load average (1, 5, 15 min) before: {mach['load_average_before']}, after: {mach['load_average_after']}.",
        "",
        "| row | wall s | CPU s | lines/s | files/s | peak RSS MiB (largest process) | findings"
        " | others' cores | note |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in result["rows"]:
        if r["skipped"]:
            lines.append(f"| {r['label']} | | | | | | | | skipped: {r['skipped']} |")
            continue
        wall = _f(r["wall_s"], ".3f" if r["wall_s"] is not None and r["wall_s"] < 10 else ".1f")
        lines.append(
            f"| {r['label']} | {wall} | {_f(r['cpu_s'], '.2f')} | {_f(r['lines_per_s'], ',.0f')} "
            f"| {_f(r['files_per_s'], ',.1f')} | {_f(r['peak_rss_mib'], '.0f')} "
            f"| {'' if r['findings'] is None else format(r['findings'], ',')} | {_f(r['others_cores'], '.2f')}"
            f" | {cell(r['note'])} |"
        )
    before = mach["load_average_before"]
    contended = [r["label"] for r in result["rows"] if "contended" in (r["note"] or "")]
    if (before and before[0] > mach["cores"] / 2) or contended:
        lines.insert(
            4,
            f"**Warning**: the machine was busy (1-min load {before[0] if before else '?'} before the run on"
            f" {mach['cores']} cores; contended rows: {', '.join(contended) or 'none seen'}): other processes"
            " competed for the cores, so wall times and lines/s are inflated; CPU s is the steadier figure."
            " Re-run on a quiet machine, or with --repeat 3.",
        )
    for tool, why in result["skipped"].items():
        lines += ["", f"**{tool} skipped**: {why}"]
    if result["ratios"]:
        lines += ["", "| ratio | value |", "| --- | ---: |"]
        lines += [f"| {x['ratio']} | {x['value']:.2f}× |" for x in result["ratios"]]
    if result.get("findings_by_rule"):
        lines += ["", "| jaxlint rule | findings |", "| --- | ---: |"]
        lines += [f"| {code} | {n:,} |" for code, n in result["findings_by_rule"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--libs", default=None, help="comma-separated subset of: " + ", ".join(corpus.PINS))
    ap.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="corpus cache (default $JAXLINT_BENCH_CACHE or ~/.cache/jaxlint-bench)",
    )
    ap.add_argument(
        "--quick", action="store_true", help="all-core rows only (no 1-process rows), fewer start-ups"
    )
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of: " + ", ".join(TOOLS))
    ap.add_argument(
        "-j", "--jobs", type=int, default=None, help="the 'all cores' job count (default: usable cores)"
    )
    ap.add_argument(
        "--repeat", type=int, default=1, help="run each row N times and keep the fastest (default 1)"
    )
    ap.add_argument(
        "--jaxlint-cmd",
        default=None,
        help='how to start jaxlint (default: "<this python> -m jaxlint", with this checkout on PYTHONPATH)',
    )
    ap.add_argument("--json", type=Path, default=None, help="write the results as JSON to this path")
    args = ap.parse_args(argv)
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(args.tools) - set(TOOLS)
    if unknown:
        ap.error(f"unknown tools {', '.join(sorted(unknown))}")
    cache = (args.cache or corpus.default_cache()).expanduser().resolve()
    libs = corpus.ensure_all(corpus.parse_libs(args.libs), cache)
    with tempfile.TemporaryDirectory(prefix="jaxlint-bench.") as tmp:
        result = run_all(args, libs, Path(tmp))
    print(markdown(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
