"""The findings cache: same answers warm as cold, never stale."""

from __future__ import annotations

from pathlib import Path

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
