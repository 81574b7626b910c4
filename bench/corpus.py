"""Fetch the benchmark corpus: pinned releases of real JAX code bases, their ``.py`` files only.

Usage::

    python bench/corpus.py                       # the 13 libraries of the speed rows
    python bench/corpus.py --libs flax,optax     # a subset
    python bench/corpus.py --libs users          # the users' corpus (precision triage), or `everything`
    python bench/corpus.py --cache /tmp/corpus   # another cache folder (or env JAXLINT_BENCH_CACHE)
    python bench/corpus.py --paths               # print `name path` lines only (for scripts)

Each library is downloaded once with ``pip download --no-deps --only-binary=:all:`` (the source
distribution only when a release has no wheel) into ``<cache>/dist/`` and its ``.py`` files are unpacked
into ``<cache>/src/<lib>/``.  The cache folder lives outside the repository (default
``~/.cache/jaxlint-bench``); whatever is already unpacked at the pinned version is reused, so later runs
need no network.  Only the standard library and pip are used.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

# Exact pins: the newest release of each on PyPI when the benchmark was written (all ship a
# py3-none-any wheel with the library's own sources).  Bump them together, deliberately, and say so in
# bench/README.md: figures measured on different pins are not comparable.
PINS: dict[str, str] = {
    "jax": "0.10.2",
    "flax": "0.12.8",
    "optax": "0.2.8",
    "equinox": "0.13.8",
    "dm-haiku": "0.0.17",
    "numpyro": "0.22.0",
    "chex": "0.1.92",
    "diffrax": "0.7.2",
    "distrax": "0.1.9",
    "blackjax": "1.7.1",
    "brax": "0.14.2",
    "jraph": "0.0.6.dev0",
    "trax": "1.4.1",
}

# The users' corpus, for precision (bench/triage.md): code written *with* JAX rather than JAX's own
# libraries -- RL environments and agents, single-file training scripts, evolution strategies, molecular
# dynamics, optimal transport, research frameworks.  Pinned the same way, but not part of the speed rows
# unless named (``--libs users``), so that the speed figures above stay comparable.
USER_PINS: dict[str, str] = {
    "rlax": "0.1.9",
    "mctx": "0.0.71",
    "gymnax": "1.0.1",
    "evosax": "0.3.2",
    "jumanji": "1.1.2",
    "optimistix": "0.1.0",
    "ott-jax": "0.6.0",
    "neural-tangents": "0.6.5",
    "jax-md": "0.2.29",
    "sbx-rl": "0.28.0",
    "dopamine-rl": "4.1.2",
    "cleanrl": "1.2.0",
    "qdax": "0.5.0",
    "evojax": "0.2.17",
    "jaxmarl": "0.2.0",
    "penzai": "0.2.5",
    "craftax": "1.6.1",
}

ALL_PINS: dict[str, str] = {**PINS, **USER_PINS}

MARKER = ".jaxlint-bench-pin"


@dataclass(frozen=True)
class Library:
    name: str
    version: str
    path: Path
    files: int
    lines: int


def default_cache() -> Path:
    env = os.environ.get("JAXLINT_BENCH_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/jaxlint-bench").expanduser()


def parse_libs(text: str | None) -> list[str]:
    """``"flax, optax"`` -> ``["flax", "optax"]`` in the order given; None or ``all`` -> the 13 speed
    libraries; ``users`` -> the users' corpus; ``everything`` -> both."""
    groups = {"all": list(PINS), "users": list(USER_PINS), "everything": list(ALL_PINS)}
    if not text:
        return list(PINS)
    names: list[str] = []
    for n in (n.strip() for n in text.split(",")):
        if n:
            names.extend(groups.get(n, [n]))
    unknown = [n for n in names if n not in ALL_PINS]
    if unknown:
        raise SystemExit(f"unknown libraries {', '.join(unknown)}; known: {', '.join(ALL_PINS)}")
    return list(dict.fromkeys(names))


def _normalise(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _find_dist(dist_dir: Path, name: str, version: str) -> Path | None:
    """The wheel (preferred) or sdist of ``name==version`` already in ``dist_dir``, if any."""
    if not dist_dir.is_dir():
        return None
    sdist = None
    for p in sorted(dist_dir.iterdir()):
        fname = p.name
        if fname.endswith(".whl"):
            parts = fname[: -len(".whl")].split("-")
            if len(parts) >= 2 and _normalise(parts[0]) == _normalise(name) and parts[1] == version:
                return p
        for ext in (".tar.gz", ".zip"):
            if fname.endswith(ext) and "-" in fname:
                dist, _, ver = fname[: -len(ext)].rpartition("-")
                if _normalise(dist) == _normalise(name) and ver == version:
                    sdist = p
    return sdist


def _pip_download(name: str, version: str, dist_dir: Path) -> Path:
    dist_dir.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--ignore-requires-python", "-q"]
    spec = f"{name}=={version}"
    attempts = [
        base + ["--only-binary=:all:", "-d", str(dist_dir), spec],
        # No wheel for this release: take the sdist as it is (no build: --no-build-isolation is not
        # needed because pip download of an sdist with --no-deps only prepares metadata).
        base + ["--no-binary=:all:", "-d", str(dist_dir), spec],
    ]
    errors = []
    for cmd in attempts:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        found = _find_dist(dist_dir, name, version)
        if found is not None:
            return found
        errors.append(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    raise SystemExit(f"could not download {spec}:\n" + "\n".join(errors))


def _count(path: Path) -> tuple[int, int]:
    files = lines = 0
    for f in sorted(path.rglob("*.py")):
        data = f.read_bytes()
        files += 1
        lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return files, lines


def _unpack(archive: Path, dest: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        if archive.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if info.is_dir() or not info.filename.endswith(".py"):
                        continue
                    target = (tmp / info.filename).resolve()
                    if not str(target).startswith(str(tmp.resolve()) + os.sep):
                        continue  # no path escapes
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(zf.read(info))
        else:
            with tarfile.open(archive) as tf:
                for member in tf.getmembers():
                    if not member.isfile() or not member.name.endswith(".py"):
                        continue
                    # sdists wrap everything in "<name>-<version>/": drop that level.
                    rel = Path(*Path(member.name).parts[1:])
                    target = (tmp / rel).resolve()
                    if not str(target).startswith(str(tmp.resolve()) + os.sep):
                        continue
                    src = tf.extractfile(member)
                    if src is None:
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(src.read())
        (tmp / MARKER).write_text(f"{archive.name}\n")
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def ensure(name: str, cache: Path, quiet: bool = False) -> Library:
    """Return the unpacked library ``name`` at its pinned version, downloading it if needed."""
    version = ALL_PINS[name]
    dest = cache / "src" / name
    marker = dest / MARKER
    archive_name = marker.read_text().strip() if marker.is_file() else ""
    if not (archive_name and f"-{version}" in archive_name):
        dist_dir = cache / "dist"
        archive = _find_dist(dist_dir, name, version)
        if archive is None:
            if not quiet:
                print(f"downloading {name}=={version} ...", file=sys.stderr, flush=True)
            archive = _pip_download(name, version, dist_dir)
        dest.parent.mkdir(parents=True, exist_ok=True)
        _unpack(archive, dest)
    files, lines = _count(dest)
    if files == 0:
        raise SystemExit(f"{name}=={version}: no .py files unpacked into {dest}")
    return Library(name, version, dest, files, lines)


def ensure_all(names: list[str], cache: Path, quiet: bool = False) -> list[Library]:
    return [ensure(n, cache, quiet=quiet) for n in names]


def python_files(libs: str | None, cache: Path | str | None = None) -> list[str]:
    """Every `.py` file of the named libraries (downloaded first if missing), sorted per library."""
    root = Path(cache).expanduser().resolve() if cache else default_cache()
    return [
        str(p)
        for lib in ensure_all(parse_libs(libs), root, quiet=True)
        for p in sorted(lib.path.rglob("*.py"))
    ]


def format_table(libs: list[Library]) -> str:
    rows = ["| library | version | files | lines |", "| --- | --- | ---: | ---: |"]
    for lib in libs:
        rows.append(f"| {lib.name} | {lib.version} | {lib.files:,} | {lib.lines:,} |")
    rows.append(
        f"| **total** | | {sum(x.files for x in libs):,} | {sum(x.lines for x in libs):,} |",
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument(
        "--libs",
        help="comma-separated names or groups (all = the 13 speed libraries, users, everything): "
        + ", ".join(ALL_PINS),
        default=None,
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="cache folder (default: $JAXLINT_BENCH_CACHE or ~/.cache/jaxlint-bench)",
    )
    ap.add_argument("--paths", action="store_true", help="print only `name path` lines")
    args = ap.parse_args(argv)
    cache = (args.cache or default_cache()).expanduser().resolve()
    libs = ensure_all(parse_libs(args.libs), cache, quiet=args.paths)
    if args.paths:
        for lib in libs:
            print(lib.name, lib.path)
    else:
        print(f"corpus in {cache / 'src'}\n")
        print(format_table(libs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
