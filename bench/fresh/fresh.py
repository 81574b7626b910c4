"""The fresh-code loop: lint code bases the project has never linted, triage every finding, compare later runs.

Usage::

    python bench/fresh/fresh.py list                      # the batches of bench/fresh/codebases.toml
    python bench/fresh/fresh.py run --batch 1             # fetch batch 1, lint it, write sheets/batch1.md
    python bench/fresh/fresh.py compare --batch 1         # lint again, compare with the sheet: new, gone,
                                                          # still false; precision of this run
    python bench/fresh/fresh.py stats sheets/batch1.md    # a sheet's counts and precision, as triaged

``run`` downloads each code base of the batch once (``pip download --no-deps``: the sdist, which has the
tests and examples, else the wheel) into ``<cache>/dist/`` and unpacks its ``.py`` and ``.ipynb`` files into
``<cache>/src/<name>-<version>/``; the cache (default ``$JAXLINT_BENCH_CACHE/fresh`` or
``~/.cache/jaxlint-bench/fresh``) is outside the repository.  GitHub entries are taken from a local mirror
(``--mirror DIR`` holding ``owner+name`` git directories, as the search tool's ``fetch`` leaves them) at
their pinned commit, and skipped with a note when no mirror has them.  Each code base is linted on its own,
from its folder, by the jaxlint of this checkout (``--checkout`` for another): ``python -m jaxlint
--no-cache --format json --exit-zero -j 1 .``.  The sheet lists every finding with empty verdict and reason
cells for the triager (T real, TB present but harmless, D debatable, F false); running ``run`` again keeps
the verdicts of findings still there.  JAX000 findings and crashed runs are the internal errors.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from corpus import _find_dist, default_cache  # noqa: E402

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

LIST = HERE / "codebases.toml"
SHEETS = HERE / "sheets"
SUFFIXES = (".py", ".ipynb")
MARKER = ".jaxlint-fresh-pin"
VERDICTS = ("T", "TB", "D", "F")
JAX000 = "JAX000"  # files jaxlint cannot lint: the input's fault (syntax, encoding, size) or jaxlint's own


def is_internal(f: Finding) -> bool:
    """A JAX000 that stands for a bug in jaxlint ("internal error while linting ..."), not for bad input."""
    return f.rule == JAX000 and f.message.startswith("internal error")


@dataclass(frozen=True)
class Codebase:
    name: str
    batch: int
    version: str = ""
    pypi: str = ""
    github: str = ""
    commit: str = ""
    style: str = ""
    what: str = ""

    @property
    def pin(self) -> str:
        return self.version if self.pypi else self.commit[:7]

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.pin}"


@dataclass
class Finding:
    codebase: str
    path: str
    line: int
    rule: str
    message: str
    verdict: str = ""
    reason: str = ""
    cell: int = 0  # a notebook's cell (the line is the cell's)

    @property
    def key(self) -> tuple[str, str, int, int, str]:
        return (self.codebase, self.path, self.cell, self.line, self.rule)

    @property
    def where(self) -> str:
        return f"{self.path}:cell {self.cell}:{self.line}" if self.cell else f"{self.path}:{self.line}"


@dataclass
class Linted:
    codebase: Codebase
    files: int = 0
    lines: int = 0
    findings: list[Finding] = field(default_factory=list)
    crashed: str = ""  # why the run failed, when it did
    skipped: str = ""  # why it was not linted (not fetchable here)
    seconds: float = 0.0


def load(path: Path = LIST) -> list[Codebase]:
    data = tomllib.loads(path.read_text())
    known = set(Codebase.__dataclass_fields__)
    out = []
    for row in data.get("codebase", []):
        extra = set(row) - known
        if extra:
            raise SystemExit(f"{path}: unknown keys {sorted(extra)} in {row.get('name')}")
        cb = Codebase(**row)
        if bool(cb.pypi) == bool(cb.github):
            raise SystemExit(f"{path}: {cb.name} needs exactly one of pypi or github")
        if (cb.pypi and not cb.version) or (cb.github and len(cb.commit) != 40):
            raise SystemExit(f"{path}: {cb.name} is not pinned (version, or a 40-hex commit)")
        out.append(cb)
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise SystemExit(f"{path}: a name is listed twice")
    return out


# -- fetching ---------------------------------------------------------------------------------------


def _download(cb: Codebase, dist_dir: Path) -> Path:
    """The sdist (preferred: tests and examples) or else the wheel of ``cb``, downloaded once."""
    found = _find_dist(dist_dir, cb.pypi, cb.version)
    if found is not None:
        return found
    dist_dir.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--ignore-requires-python", "-q"]
    spec = f"{cb.pypi}=={cb.version}"
    errors = []
    for choice in ("--no-binary=:all:", "--only-binary=:all:"):
        # pip download of an sdist with --no-deps still prepares its metadata (a build backend may be
        # installed into a temporary environment); nothing of it is run on the linted code.
        proc = subprocess.run(base + [choice, "-d", str(dist_dir), spec], capture_output=True, text=True)
        found = _find_dist(dist_dir, cb.pypi, cb.version)
        if found is not None:
            return found
        errors.append((proc.stdout + proc.stderr).strip().splitlines()[-1:])
    raise RuntimeError(f"could not download {spec}: {errors}")


def _inside(root: Path, rel: Path) -> Path | None:
    target = (root / rel).resolve()
    return target if str(target).startswith(str(root.resolve()) + os.sep) else None


def _unpack(archive: Path, dest: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        if archive.name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(archive) as zf:
                sdist = archive.name.endswith(".zip")
                for info in zf.infolist():
                    if info.is_dir() or not info.filename.endswith(SUFFIXES):
                        continue
                    parts = Path(info.filename).parts[1:] if sdist else Path(info.filename).parts
                    target = _inside(tmp, Path(*parts)) if parts else None
                    if target is not None:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(zf.read(info))
        else:
            with tarfile.open(archive) as tf:
                for member in tf.getmembers():
                    if not member.isfile() or not member.name.endswith(SUFFIXES):
                        continue
                    parts = Path(member.name).parts[1:]  # sdists wrap all in <name>-<version>/
                    target = _inside(tmp, Path(*parts)) if parts else None
                    src = tf.extractfile(member)
                    if target is not None and src is not None:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(src.read())
        (tmp / MARKER).write_text(f"{archive.name}\n")
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def _from_mirror(cb: Codebase, mirror: Path | None, dest: Path) -> str:
    """Export ``cb``'s pinned commit from a local git mirror; the reason when it cannot."""
    if mirror is None:
        return "GitHub entry: not fetchable here (no --mirror)"
    owner_name = cb.github.replace("/", "+")
    # `fetch` leaves <mirror>/owner+name/repo (a bare git directory, or a clone with repo/.git); a plain
    # owner+name one counts too.
    places = (mirror / owner_name / "repo", mirror / owner_name / "repo" / ".git", mirror / owner_name)
    gits = [p for p in places if (p / "HEAD").is_file()]
    for git_dir in gits:
        listing = subprocess.run(
            ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", cb.commit],
            capture_output=True,
        )
        if listing.returncode != 0:
            continue
        # File by file rather than `git archive`: a snapshot may lack its largest blobs, and one missing
        # blob fails the whole archive.  The missing files are skipped and named on stderr.
        tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
        wrapped = tmp / "wrapped.tar.gz"
        missing = []
        with tarfile.open(wrapped, "w:gz") as out:
            for entry in listing.stdout.decode("utf-8", "replace").split("\0"):
                meta, _, name = entry.partition("\t")
                if not name.endswith(SUFFIXES) or meta.split()[1:2] != ["blob"]:
                    continue
                blob = subprocess.run(
                    ["git", "--git-dir", str(git_dir), "cat-file", "blob", meta.split()[2]],
                    capture_output=True,
                )
                if blob.returncode != 0:
                    missing.append(name)
                    continue
                info = tarfile.TarInfo(f"{cb.folder}/{name}")
                info.size = len(blob.stdout)
                out.addfile(info, io.BytesIO(blob.stdout))
        if missing:
            print(f"{cb.name}: not in the snapshot, skipped: {', '.join(missing)}", file=sys.stderr)
        _unpack(wrapped, dest)
        shutil.rmtree(tmp)
        return ""
    return f"GitHub entry: commit {cb.commit[:7]} of {cb.github} not in {mirror}"


def fetch(cb: Codebase, cache: Path, mirror: Path | None) -> tuple[Path | None, str]:
    """The unpacked code base, and an empty reason; or None and why it was skipped."""
    dest = cache / "src" / cb.folder
    if (dest / MARKER).is_file():
        return dest, ""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if cb.github:
        why = _from_mirror(cb, mirror, dest)
        return (None, why) if why else (dest, "")
    try:
        archive = _download(cb, cache / "dist")
    except RuntimeError as exc:
        return None, str(exc)
    _unpack(archive, dest)
    return dest, ""


def _count(root: Path) -> tuple[int, int]:
    files = lines = 0
    for f in sorted(root.rglob("*")):
        if f.suffix in SUFFIXES and f.is_file():
            data = f.read_bytes()
            files += 1
            lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return files, lines


# -- linting ----------------------------------------------------------------------------------------


def lint(cb: Codebase, root: Path, checkout: Path, timeout: float) -> Linted:
    out = Linted(cb)
    out.files, out.lines = _count(root)
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "jaxlint", "--no-cache", "--format", "json", "--exit-zero", "-j", "1", "."]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        out.crashed = f"timed out after {timeout:.0f} s"
        return out
    out.seconds = time.perf_counter() - start
    try:
        rows = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        rows = []
        out.crashed = f"exit {proc.returncode}, no JSON: {proc.stderr.strip().splitlines()[-1:]}"
    if proc.returncode != 0 and not out.crashed:
        out.crashed = f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}"
    for r in rows:
        path = os.path.relpath(r["path"], root) if os.path.isabs(r["path"]) else r["path"]
        cell = int(r.get("cell") or 0)
        out.findings.append(Finding(cb.name, path, int(r["line"]), r["code"], r["message"], cell=cell))
    out.findings.sort(key=lambda f: (f.path, f.cell, f.line, f.rule))
    return out


# -- sheets -----------------------------------------------------------------------------------------

_HEADER = "| # | code base | file:line | rule | message | verdict | reason |"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _uncell(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.strip())


def _cells(row: str) -> list[str]:
    return [_uncell(c) for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def read_sheet(path: Path) -> list[Finding]:
    """The findings of a sheet, with their verdicts (the table under the header row)."""
    out: list[Finding] = []
    in_table = False
    for row in path.read_text().splitlines():
        if row.strip() == _HEADER:
            in_table = True
            continue
        if not in_table or not row.startswith("|"):
            in_table = in_table and not row.strip()
            continue
        cells = _cells(row)
        if len(cells) != 7 or cells[0].startswith("-"):
            continue
        _, codebase, where, rule, message, verdict, reason = cells
        file, _, line = where.rpartition(":")
        notebook = re.fullmatch(r"(.*):cell (\d+)", file)
        cell = int(notebook.group(2)) if notebook else 0
        file = notebook.group(1) if notebook else file
        if verdict and verdict not in VERDICTS:
            raise SystemExit(f"{path}: verdict {verdict!r} is none of {', '.join(VERDICTS)} ({where})")
        out.append(Finding(codebase, file, int(line), rule, message, verdict, reason, cell))
    return out


def _revision(checkout: Path) -> str:
    proc = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(checkout), "status", "--porcelain", "jaxlint"], capture_output=True, text=True
    )
    return (proc.stdout.strip() or "unknown") + (" + uncommitted changes" if dirty.stdout.strip() else "")


def _match(
    old: list[Finding], new: list[Finding]
) -> tuple[list[tuple[Finding, Finding]], list[Finding], list[Finding]]:
    """Pairs (old, new) with the same code base, file, line and rule (in order when repeated), the
    old ones gone and the new ones added."""
    pool: dict[tuple[str, str, int, str], list[Finding]] = {}
    for f in old:
        pool.setdefault(f.key, []).append(f)
    pairs, added = [], []
    for f in new:
        if pool.get(f.key):
            pairs.append((pool[f.key].pop(0), f))
        else:
            added.append(f)
    gone = [f for fs in pool.values() for f in fs]
    return pairs, gone, added


def write_sheet(
    path: Path, batch: int, results: list[Linted], checkout: Path, keep: list[Finding]
) -> list[Finding]:
    findings = [f for r in results for f in r.findings]
    for old, new in _match(keep, findings)[0]:
        new.verdict, new.reason = old.verdict, old.reason
    lines = [
        f"# Fresh-code batch {batch}: triage sheet",
        "",
        f"Linted by jaxlint at `{_revision(checkout)}` on {time.strftime('%Y-%m-%d')}: from each code base's folder,",
        "`python -m jaxlint --no-cache --format json --exit-zero -j 1 .` (`python bench/fresh/fresh.py run "
        f"--batch {batch}`).",
        "Verdicts: **T** real (the code does what the message says), **TB** present but harmless, **D** debatable,",
        '**F** false (the message is wrong about the code). Internal errors: JAX000 "internal error" findings and crashed',
        "runs; a JAX000 for input that is not Python (a notebook cell holding a fragment) is judged like a finding but",
        "stays out of the precision.",
        "",
        "| code base | version | style | files | lines | findings | internal errors | note |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        cb = r.codebase
        internal = sum(map(is_internal, r.findings)) + bool(r.crashed)
        note = r.skipped or r.crashed
        lines.append(
            f"| {cb.name} | {cb.pin} | {cb.style} | {r.files:,} | {r.lines:,} | {len(r.findings)} | {internal} | {_cell(note)} |"
        )
    done = [r for r in results if not r.skipped]
    lines.append(
        f"| **total** | | | {sum(r.files for r in done):,} | {sum(r.lines for r in done):,} | {len(findings)} | "
        f"{sum(sum(map(is_internal, r.findings)) + bool(r.crashed) for r in done)} | |"
    )
    lines += ["", "## Findings", "", _HEADER, "| ---: | --- | --- | --- | --- | --- | --- |"]
    for i, f in enumerate(findings, 1):
        lines.append(
            f"| {i} | {f.codebase} | {_cell(f.where)} | {f.rule} | {_cell(f.message)} | {f.verdict} | {_cell(f.reason)} |"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return findings


def precision(findings: list[Finding]) -> str:
    """Counts and precision over the rules' findings; JAX000 (files jaxlint could not lint) apart."""
    rules = [f for f in findings if f.rule != JAX000]
    counts = {v: sum(f.verdict == v for f in rules) for v in VERDICTS}
    judged = sum(counts.values())
    untriaged = len(rules) - judged
    parts = [f"{len(rules)} rule findings: " + ", ".join(f"{v} {counts[v]}" for v in VERDICTS)]
    if untriaged:
        parts.append(f"untriaged {untriaged}")
    if judged:
        right = counts["T"] + counts["TB"]
        parts.append(f"precision (T+TB)/judged {right}/{judged} = {right / judged:.1%}")
        parts.append(f"T only {counts['T']}/{judged} = {counts['T'] / judged:.1%}")
    internal = sum(map(is_internal, findings))
    parts.append(f"internal errors {internal}, JAX000 for bad input {len(findings) - len(rules) - internal}")
    return "; ".join(parts)


# -- commands ---------------------------------------------------------------------------------------


def _batch(codebases: list[Codebase], batch: int, only: str | None) -> list[Codebase]:
    chosen = [c for c in codebases if c.batch == batch]
    if only:
        names = {n.strip() for n in only.split(",")}
        chosen = [c for c in chosen if c.name in names]
    if not chosen:
        raise SystemExit(f"batch {batch} has no code base{' named ' + only if only else ''}")
    return chosen


def _lint_batch(args: argparse.Namespace) -> list[Linted]:
    cache = (args.cache or default_cache() / "fresh").expanduser().resolve()
    results = []
    for cb in _batch(load(args.list), args.batch, args.only):
        root, why = fetch(cb, cache, args.mirror)
        if root is None:
            print(f"{cb.name}: skipped: {why}", file=sys.stderr)
            results.append(Linted(cb, skipped=why))
            continue
        r = lint(cb, root, args.checkout.resolve(), args.timeout)
        status = f"crashed: {r.crashed}" if r.crashed else f"{len(r.findings)} findings"
        print(
            f"{cb.name} {cb.pin}: {r.files} files, {r.lines:,} lines, {status} ({r.seconds:.0f} s)",
            file=sys.stderr,
        )
        results.append(r)
    return results


def cmd_list(args: argparse.Namespace) -> int:
    for cb in load(args.list):
        where = f"pypi {cb.pypi}=={cb.version}" if cb.pypi else f"github {cb.github}@{cb.commit[:7]}"
        print(f"batch {cb.batch}  {cb.name:22} {where:34} {cb.style:12} {cb.what}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    sheet = args.sheet or SHEETS / f"batch{args.batch}.md"
    keep = read_sheet(sheet) if sheet.is_file() else []
    results = _lint_batch(args)
    findings = write_sheet(sheet, args.batch, results, args.checkout.resolve(), keep)
    print(f"wrote {sheet}: {precision(findings)}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    sheet = args.sheet or SHEETS / f"batch{args.batch}.md"
    old = read_sheet(sheet)
    if args.findings:
        rows = json.loads(Path(args.findings).read_text())
        new = [
            Finding(r["codebase"], r["path"], r["line"], r["rule"], r["message"], cell=r.get("cell", 0))
            for r in rows
        ]
    else:
        results = _lint_batch(args)
        new = [f for r in results for f in r.findings]
        linted = {r.codebase.name for r in results if not r.skipped and not r.crashed}
        old = [f for f in old if f.codebase in linted]  # --only, skips and crashes: compare what ran
    pairs, gone, added = _match(old, new)
    for o, n in pairs:
        n.verdict, n.reason = o.verdict, o.reason
    print(f"sheet {sheet}: {precision(old)}")
    print(f"\nnew ({len(added)}):")
    for f in added:
        print(f"  {f.codebase} {f.where} {f.rule} {f.message}")
    print(f"\ngone ({len(gone)}):")
    for f in gone:
        print(f"  [{f.verdict or '?'}] {f.codebase} {f.where} {f.rule} {f.reason}")
    still = [n for _, n in pairs if n.verdict == "F"]
    print(f"\nstill false ({len(still)}):")
    for f in still:
        print(f"  {f.codebase} {f.where} {f.rule} {f.reason}")
    lost = [f for f in gone if f.verdict in ("T", "TB")]
    print(f"\nthis run: {precision(new)}")
    print(f"true findings lost: {len(lost)}; new findings to triage: {len(added)}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    for sheet in args.sheets:
        findings = read_sheet(Path(sheet))
        print(f"{sheet}: {precision(findings)}")
        by_rule: dict[str, list[Finding]] = {}
        for f in findings:
            by_rule.setdefault(f.rule, []).append(f)
        for rule, fs in sorted(by_rule.items()):
            print(f"  {rule}: " + ", ".join(f"{v} {sum(f.verdict == v for f in fs)}" for v in VERDICTS))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="print the code bases by batch")
    p_run = sub.add_parser("run", help="fetch and lint a batch; write its triage sheet")
    p_cmp = sub.add_parser("compare", help="lint a batch again and compare with its sheet")
    p_stats = sub.add_parser("stats", help="counts and precision of triaged sheets")
    p_stats.add_argument("sheets", nargs="+")
    for p in (p_list, p_run, p_cmp):
        p.add_argument(
            "--list", type=Path, default=LIST, help="the code-base list (default: bench/fresh/codebases.toml)"
        )
    for p in (p_run, p_cmp):
        p.add_argument("--batch", type=int, required=True)
        p.add_argument("--only", help="comma-separated names: lint only these code bases of the batch")
        p.add_argument("--sheet", type=Path, help="the sheet (default: bench/fresh/sheets/batchN.md)")
        p.add_argument(
            "--cache",
            type=Path,
            help="cache folder (default: $JAXLINT_BENCH_CACHE/fresh or ~/.cache/jaxlint-bench/fresh)",
        )
        p.add_argument("--mirror", type=Path, help="folder of git mirrors (owner+name) for GitHub entries")
        p.add_argument(
            "--checkout", type=Path, default=REPO, help="the jaxlint checkout to run (default: this one)"
        )
        p.add_argument("--timeout", type=float, default=900.0, help="seconds per code base (default 900)")
    p_cmp.add_argument(
        "--findings",
        help="compare a JSON list of findings (codebase, path, line, rule, message) instead of linting",
    )
    args = ap.parse_args(argv)
    return {"list": cmd_list, "run": cmd_run, "compare": cmd_compare, "stats": cmd_stats}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
