"""The findings cache: same answers warm as cold, never stale."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.config import Config, with_overrides
from jaxlint.lint import lint_files

BAD = "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"


def entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.json"))


def test_warm_run_reads_the_cache_and_matches_cold(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(BAD)
    cache = tmp_path / "cache"
    cold = lint_files([str(src)], Config(), jobs=1, cache_dir=str(cache))
    assert [f.code for f in cold] == ["JAX101"]
    (entry,) = entries(cache)
    # Prove the second run reads the entry: doctor its message and see it come back.
    entry.write_text(entry.read_text().replace("Python 'if'", "CACHED 'if'"))
    warm = lint_files([str(src)], Config(), jobs=1, cache_dir=str(cache))
    assert warm[0].message.startswith("CACHED") and warm[0].path == str(src)


def test_content_and_config_changes_miss(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(BAD)
    cache = tmp_path / "cache"
    lint_files([str(src)], Config(), jobs=1, cache_dir=str(cache))
    src.write_text(BAD.replace("if x > 0:", "if x.ndim > 0:"))
    assert lint_files([str(src)], Config(), jobs=1, cache_dir=str(cache)) == []
    src.write_text(BAD)
    ignoring = with_overrides(Config(), ignore=("JAX101",))
    assert lint_files([str(src)], ignoring, jobs=1, cache_dir=str(cache)) == []
    assert len(entries(cache)) == 3


def test_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(BAD)
    cache = tmp_path / "cache"
    lint_files([str(src)], Config(), jobs=1, cache_dir=str(cache))
    (entry,) = entries(cache)
    entry.write_text("{not json")
    assert [f.code for f in lint_files([str(src)], Config(), jobs=1, cache_dir=str(cache))] == ["JAX101"]


def test_unchanged_pooled_run_starts_no_worker(tmp_path: Path, monkeypatch) -> None:
    import jaxlint.lint as lint

    paths = []
    for i in range(10):  # enough files for a worker pool
        src = tmp_path / f"m{i}.py"
        src.write_text(BAD)
        paths.append(str(src))
    cache = tmp_path / "cache"
    cold = lint_files(paths, Config(), jobs=2, cache_dir=str(cache))
    paths_changed = paths[:1]
    (tmp_path / "m0.py").write_text(BAD.replace("x > 0", "x > 1"))

    def no_pool(*args, **kwargs):
        raise AssertionError("a worker pool was started for cached files")

    monkeypatch.setattr(lint, "run_batches", no_pool)
    # One file changed: it is linted here (too few misses for a pool); the nine others come from the cache.
    warm = lint_files(paths, Config(), jobs=2, cache_dir=str(cache))
    assert [(f.path, f.code) for f in warm] == [(f.path, f.code) for f in cold]
    assert paths_changed == [warm[0].path]


_LOADED_AFTER_RUN = """
import json, sys
from jaxlint.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m == "libcst" or m.startswith("jaxlint.rules.") and m != "jaxlint.rules.base")
print(json.dumps({"code": code, "loaded": loaded}))
"""


@pytest.mark.parametrize("files", [3, 10])  # linted in the process; in a worker pool
@pytest.mark.parametrize("output", ["text", "json"])
def test_an_unchanged_run_imports_neither_libcst_nor_a_rule(tmp_path: Path, files: int, output: str) -> None:
    """A run answered from the cache reads the cache and reports: the engine (libcst, every rule module: half
    of such a run's time) is imported only where a file is linted."""
    for i in range(files):
        (tmp_path / f"m{i}.py").write_text(BAD)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .m import f\n")  # re-exports: the summary's imports
    (tmp_path / "pkg" / "m.py").write_text(BAD)

    def run() -> dict:
        command = [sys.executable, "-c", _LOADED_AFTER_RUN, ".", "-j", "2", "--format", output]
        result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
        return json.loads(result.stdout.splitlines()[-1])

    cold, warm = run(), run()
    assert cold["code"] == warm["code"] == 1
    assert "libcst" in cold["loaded"] and "jaxlint.rules.traced_control_flow" in cold["loaded"]
    assert warm["loaded"] == []
