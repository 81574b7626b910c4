"""The speed work changes no result: positions for findings equal libcst's `PositionProvider`, node for node.

The same checks over the bench corpus (too slow for CI) are `python bench/equivalence.py`.
"""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from jaxlint.analysis import ModuleIndex
from jaxlint.analysis.binding.positions import Positions, all_positions, positions_of
from tests.conftest import LINTED_SOURCES as SOURCES
from tests.conftest import ROOT


def _full(module: cst.Module):
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_positions_equal_position_provider(path: Path) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    full = _full(module)
    assert positions_of(module, list(full)) == dict(full)  # every node, one pass
    assert all_positions(module) == dict(full)
    rng = random.Random(str(path.name))
    nodes = list(full)
    for node in rng.sample(nodes, min(25, len(nodes))):  # one node: the pass stops early
        assert positions_of(module, [node]) == {node: full[node]}


def test_sources_exist() -> None:
    assert len(SOURCES) > 20


_TRICKY = '''\
# comment\r
import jax\r
x = (  # open\r
    jax.numpy.ones(3)\r
)\r
@jax.jit\r
def f(a, \\\r
      b):\r
    s = """two\r
lines"""\r
    if a:\r
        pass\r
    elif b: return a\r
    else:\r
\r
        return b\r
class C: y = 1\r
'''


@pytest.mark.parametrize(
    "source", [_TRICKY, _TRICKY.replace("\r\n", "\n").rstrip("\n"), "", "\n", "# only\n"]
)
def test_positions_on_odd_layouts(source: str) -> None:
    module = cst.parse_module(source)
    full = _full(module)
    assert positions_of(module, list(full)) == dict(full)
    assert all_positions(module) == dict(full)
    for node in full:
        assert positions_of(module, [node]) == {node: full[node]}


def test_positions_mapping_answers_misses_and_batches() -> None:
    module = cst.parse_module(_TRICKY)
    full = _full(module)
    nodes = list(full)
    positions = Positions(module)
    positions.resolve(nodes[:3])
    assert len(positions) == 3
    # Single lookups beyond the batch, enough to switch to one whole-module pass, all answer right.
    for node in nodes[-10:]:
        assert positions[node] == full[node]
        assert positions.get(node) == full[node]
    assert positions.get(cst.Name("elsewhere")) is None
    with pytest.raises(KeyError):
        positions[cst.Name("elsewhere")]


def test_index_positions_are_lazy() -> None:
    module = cst.parse_module("import jax\nx = jax.numpy.ones(3)\n")
    index = ModuleIndex(module, frozenset())
    target = module.body[1]
    assert index.line_of(target) == 2
    assert len(index.positions()) == 1  # only what was asked


def test_no_tree_outlives_its_lint() -> None:
    """Every parsed module dies with its file's lint (`lint.py` collects the cycles once per file): a cache
    that kept function trees alive made every collection traverse them (20% of the CPU time). The collector
    state the caller had is restored."""
    import gc

    from jaxlint.config import Config
    from jaxlint.lint import lint_files

    def functions() -> int:
        return sum(1 for o in gc.get_objects() if type(o) is cst.FunctionDef)

    paths = [str(p) for p in SOURCES if "JAX104" in p.name or "JAX301" in p.name]
    assert gc.isenabled()
    before = functions()
    assert lint_files(paths, Config(), jobs=1)
    assert gc.isenabled()
    assert functions() <= before


@pytest.mark.parametrize("project", [False, True], ids=["lint_text", "project"])
def test_a_lint_leaves_no_cycle_holding_the_tree(project: bool) -> None:
    """Reference counting frees each file's tree, index and walk as soon as its lint returns: the index, the
    walker and the project facts break their cycles when done (`ModuleIndex.release`). A cycle that held the
    tree would make the cyclic collector traverse every node of every file (5% of a run's time)."""
    import gc

    from jaxlint import engine
    from jaxlint.config import Config
    from jaxlint.lint import lint_project_file
    from jaxlint.selection import LintSettings

    settings = LintSettings()
    paths = [p for p in SOURCES if p.suffix == ".py"]
    enabled = gc.isenabled()
    gc.collect()
    gc.freeze()  # what earlier tests left alive is not traversed by each collection below: only the lint's own
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for path in paths:
            if project:
                lint_project_file(str(path), Config())
            else:
                engine.lint_text(path.read_text(encoding="utf-8"), str(path), settings)
            gc.collect()
            held = sorted(
                {
                    type(o).__module__ + "." + type(o).__qualname__
                    for o in gc.garbage
                    if type(o).__module__.startswith(("libcst", "jaxlint"))
                }
            )
            gc.garbage.clear()
            assert not held, f"{path.name}: a reference cycle kept {held[:8]} alive until the collector ran"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.unfreeze()
        if enabled:
            gc.enable()
