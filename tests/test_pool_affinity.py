"""A project's later rounds send a file back to the worker that linted it, which answers its parse from the tree
it kept (`syntax.keep_trees`); a kept tree lints exactly as a new one; workers with nothing of their own take
other workers' files; a worker's crash costs only its own batches."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from jaxlint import engine, syntax
from jaxlint.lint import WorkerPool, run_batches
from jaxlint.selection import LintSettings
from tests.conftest import LINTED_SOURCES as SOURCES


@pytest.fixture
def kept_trees():
    syntax.keep_trees(10_000)
    yield
    syntax.keep_trees(0)
    gc.unfreeze()  # kept trees are frozen out of the collector's reach: give this process its collector back


def test_a_kept_tree_is_answered_for_the_same_text_only(kept_trees: None) -> None:
    first = syntax.parse_module("x = 1\n")
    assert syntax.parse_module("x = 1\n") is first
    assert syntax.parse_module("x = 2\n") is not first
    syntax.keep_trees(0)
    assert syntax.parse_module("x = 1\n") is not first


def test_a_kept_tree_is_out_of_the_collectors_reach(kept_trees: None) -> None:
    tree = syntax.parse_module("frozen = 1\n")
    assert gc.get_freeze_count() > 0
    assert not any(obj is tree for obj in gc.get_objects())  # the permanent generation is not listed


def test_kept_trees_stay_under_their_limit(kept_trees: None) -> None:
    syntax.keep_trees(30)
    texts = [f"value_{i} = {i}\n" for i in range(10)]  # 12-13 characters each: two fit
    trees = [syntax.parse_module(text) for text in texts]
    kept = syntax._kept
    assert kept is not None and kept.size <= 30 and list(kept.trees) == texts[-2:]
    assert syntax.parse_module(texts[-1]) is trees[-1]
    assert syntax.parse_module(texts[0]) is not trees[0]
    syntax.parse_module("y = 'longer than the whole limit of thirty characters'\n")
    assert kept.size <= 30


def test_a_kept_tree_lints_as_a_new_one(kept_trees: None) -> None:
    syntax.keep_trees(50_000_000)
    settings = LintSettings()
    for path in SOURCES:
        source = path.read_text(encoding="utf-8")
        first = engine.lint_text(source, str(path), settings)
        again = engine.lint_text(source, str(path), settings)  # the kept tree, linted a second time
        syntax.keep_trees(0)
        fresh = engine.lint_text(source, str(path), settings)
        syntax.keep_trees(50_000_000)
        assert first == again == fresh, path.name
    assert len(SOURCES) > 20


def _pid_and_kept(batch: list[str]) -> list[tuple[int, bool]]:
    """Pool work: for each file, this worker's pid and whether it held the file's tree before parsing it."""
    out = []
    for path in batch:
        source = Path(path).read_text(encoding="utf-8")
        kept = syntax._kept is not None and syntax._kept.get(source) is not None
        syntax.parse_module(source)
        out.append((os.getpid(), kept))
    return out


def _lost(path: str, memory: bool) -> tuple[int, bool]:
    return (0, False)


def _files(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        path = tmp_path / f"m{i}.py"
        path.write_text(f"import jax\n\nvalue_{i} = jax.numpy.ones({i})\n")
        paths.append(str(path))
    return paths


def test_a_later_round_goes_back_to_the_worker_holding_the_tree(tmp_path: Path) -> None:
    files = _files(tmp_path, 24)
    with WorkerPool(2) as pool:
        first = dict(zip(files, run_batches(_pid_and_kept, files, 2, (), _lost, pool), strict=True))
        again = files[::3]
        second = dict(zip(again, run_batches(_pid_and_kept, again, 2, (), _lost, pool), strict=True))
    assert not any(kept for _, kept in first.values())
    assert len({pid for pid, _ in first.values()}) == 2  # both workers linted
    assert all(kept for _, kept in second.values())
    assert all(second[path][0] == first[path][0] for path in again)


def test_an_idle_worker_takes_another_workers_files(tmp_path: Path) -> None:
    files = _files(tmp_path, 40)  # 10 batches of 4: worker 0 sends 2 ahead, 8 wait, more than it can do soon
    with WorkerPool(2) as pool:
        pool.holder = dict.fromkeys(files, 0)  # as if worker 0 had linted them all
        results = run_batches(_pid_and_kept, files, 2, (), _lost, pool)
    assert len({pid for pid, _ in results}) == 2


def _crash_on_marked(batch: list[str]) -> list[tuple[int, bool]]:
    if any(path.endswith("crash.py") for path in batch):
        os._exit(3)
    return _pid_and_kept(batch)


def test_a_crash_costs_only_the_crashing_file_and_the_pool_goes_on(tmp_path: Path) -> None:
    files = _files(tmp_path, 20)
    crash = tmp_path / "crash.py"
    crash.write_text("import jax\n")
    everything = [*files, str(crash)]
    with WorkerPool(2) as pool:
        results = dict(
            zip(everything, run_batches(_crash_on_marked, everything, 2, (), _lost, pool), strict=True)
        )
        assert results[str(crash)] == (0, False)
        assert all(results[path][0] > 0 for path in files)
        # The pool is usable after the crash; files of the dead worker are parsed anew elsewhere.
        again = run_batches(_pid_and_kept, files, 2, (), _lost, pool)
    assert all(pid > 0 for pid, _ in again)
