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
from jaxlint.analysis.positions import Positions, all_positions, positions_of

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "tests" / "fixtures" / "rules").glob("*.py")) + sorted(
    (ROOT / "examples").rglob("*.py")
)


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
