"""bench/fresh/fresh.py, the fresh-code loop: its list, and run -> triage -> compare through the real command.

A GitHub entry is taken from a local git mirror (no network): a one-file repository with a key drawn twice.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FRESH = ROOT / "bench" / "fresh" / "fresh.py"
sys.path.insert(0, str(ROOT / "bench"))

from corpus import ALL_PINS  # noqa: E402

sys.path.insert(0, str(ROOT / "bench" / "fresh"))
import fresh  # noqa: E402

SAMPLE = """import jax


def draw(key):
    a = jax.random.normal(key, (3,))
    b = jax.random.normal(key, (3,))
    return a + b
"""


def test_the_list_is_pinned_fresh_and_large_enough():
    codebases = fresh.load()
    pypi = [c for c in codebases if c.pypi]
    assert len(pypi) >= 60
    assert all(c.version for c in pypi)
    already = {n.lower() for n in ALL_PINS}
    assert not [c.name for c in codebases if c.name.lower() in already or c.pypi.lower() in already]
    reserved = ROOT.parent / "shared" / "reference" / "reserved.md"
    if reserved.is_file():
        names = set(re.findall(r"^- ([\w.-]+(?:/[\w.-]+)?)$", reserved.read_text(), re.M))
        assert not [c.name for c in codebases if c.pypi in names or c.github in names]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def mirrored(tmp_path: Path) -> tuple[Path, Path]:
    """A mirror folder holding owner+name/repo (as the search tool's fetch leaves it) and a list naming it."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "sample.py").write_text(SAMPLE)
    _git("init", "-q", cwd=work)
    _git("add", "sample.py", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sample", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    mirror = tmp_path / "mirror"
    (mirror / "someone+sample").mkdir(parents=True)
    _git("clone", "-q", "--bare", str(work), str(mirror / "someone+sample" / "repo"), cwd=tmp_path)
    listing = tmp_path / "codebases.toml"
    listing.write_text(
        f'[[codebase]]\nname = "sample"\ngithub = "someone/sample"\ncommit = "{commit}"\nbatch = 1\n\n'
        '[[codebase]]\nname = "elsewhere"\ngithub = "someone/elsewhere"\n'
        f'commit = "{"0" * 40}"\nbatch = 1\n'
    )
    return mirror, listing


def _fresh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(FRESH), *args], capture_output=True, text=True, timeout=300)


def test_run_writes_a_sheet_and_compare_reports_new_gone_and_still_false(tmp_path, mirrored):
    mirror, listing = mirrored
    sheet = tmp_path / "batch1.md"
    common = [
        "--list",
        str(listing),
        "--batch",
        "1",
        "--sheet",
        str(sheet),
        "--cache",
        str(tmp_path / "cache"),
    ]
    run = _fresh("run", *common, "--mirror", str(mirror))
    assert run.returncode == 0, run.stderr
    text = sheet.read_text()
    # The fetchable entry is linted, the other one skipped with its reason, and the reuse listed.
    assert re.search(r"^\| sample \| [0-9a-f]{7} \|", text, re.M)
    assert "| elsewhere |" in text and "not in" in text
    rows = fresh.read_sheet(sheet)
    assert [(f.path, f.line, f.rule, f.verdict) for f in rows] == [("sample.py", 6, "JAX301", "")]

    # Triage it as false, then compare a later run that no longer reports it but reports something else.
    sheet.write_text(text.replace(" |  |  |\n", " | F | a test verdict |\n"))
    assert [f.verdict for f in fresh.read_sheet(sheet)] == ["F"]
    later = tmp_path / "later.json"
    later.write_text(
        json.dumps([{"codebase": "sample", "path": "sample.py", "line": 5, "rule": "JAX101", "message": "m"}])
    )
    cmp = _fresh("compare", *common, "--findings", str(later))
    assert cmp.returncode == 0, cmp.stderr
    out = cmp.stdout
    assert "new (1):" in out and "sample sample.py:5 JAX101" in out
    assert "gone (1):" in out and "[F] sample sample.py:6 JAX301" in out
    assert "still false (0):" in out

    # Rerunning keeps the verdict of a finding still reported, and compare then counts it still false.
    rerun = _fresh("run", *common, "--mirror", str(mirror))
    assert rerun.returncode == 0, rerun.stderr
    assert [f.verdict for f in fresh.read_sheet(sheet)] == ["F"]
    again = _fresh("compare", *common, "--mirror", str(mirror))
    assert "still false (1):" in again.stdout
    assert "precision (T+TB)/judged 0/1 = 0.0%" in again.stdout


def test_a_snapshot_missing_a_blob_is_exported_without_it(tmp_path):
    """`fetch` may leave a snapshot without its largest blobs: the entry is still linted, that file skipped."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "sample.py").write_text(SAMPLE)
    (work / "big.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
    _git("init", "-q", cwd=work)
    _git("add", "sample.py", "big.ipynb", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sample", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    bare = tmp_path / "mirror" / "someone+sample" / "repo"
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    blob = _git("hash-object", "big.ipynb", cwd=work)
    (bare / "objects" / blob[:2] / blob[2:]).unlink()  # a local clone keeps loose objects
    listing = tmp_path / "codebases.toml"
    listing.write_text(
        f'[[codebase]]\nname = "sample"\ngithub = "someone/sample"\ncommit = "{commit}"\nbatch = 1\n'
    )
    sheet = tmp_path / "batch1.md"
    run = _fresh(
        "run",
        *("--list", str(listing), "--batch", "1", "--sheet", str(sheet), "--cache", str(tmp_path / "cache")),
        *("--mirror", str(tmp_path / "mirror")),
    )
    assert run.returncode == 0, run.stderr
    assert "skipped: big.ipynb" in run.stderr
    assert [(f.path, f.line, f.rule) for f in fresh.read_sheet(sheet)] == [("sample.py", 6, "JAX301")]


def test_a_mirror_left_as_a_clone_with_its_git_folder_is_read(tmp_path):
    """`fetch` may leave owner+name/repo/.git (a clone) rather than a bare repo: the entry is linted from it."""
    work = tmp_path / "mirror" / "someone+sample" / "repo"
    work.mkdir(parents=True)
    (work / "sample.py").write_text(SAMPLE)
    _git("init", "-q", cwd=work)
    _git("add", "sample.py", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sample", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    listing = tmp_path / "codebases.toml"
    listing.write_text(
        f'[[codebase]]\nname = "sample"\ngithub = "someone/sample"\ncommit = "{commit}"\nbatch = 1\n'
    )
    sheet = tmp_path / "batch1.md"
    run = _fresh(
        "run",
        *("--list", str(listing), "--batch", "1", "--sheet", str(sheet), "--cache", str(tmp_path / "cache")),
        *("--mirror", str(tmp_path / "mirror")),
    )
    assert run.returncode == 0, run.stderr
    assert [(f.path, f.line, f.rule) for f in fresh.read_sheet(sheet)] == [("sample.py", 6, "JAX301")]
