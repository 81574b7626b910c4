"""The analysis facts behind issue 13's "coverage that follows", on their own: what a helper returns
(`analysis.summaries.returns`) and the key-reuse kinds for mapped functions and literal seeds (`analysis.keys.dataflow`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxlint.analysis import ModuleIndex
from jaxlint.analysis.keys.dataflow import analyze_module
from jaxlint.analysis.summaries.returns import returns_array
from jaxlint.analysis.values.flags import returns_one_array

HELPERS = """
import jax.numpy as jnp
from jax import lax

def mean_sq(x):
    return jnp.mean(x ** 2)

def through_local(x):
    y = jnp.abs(x)
    return y.sum() * 2

def calls_helper(x):
    return mean_sq(x) + 1.0

def pair(x):
    return jnp.mean(x), jnp.std(x)

def sometimes(x, flag):
    if flag:
        return jnp.sum(x)
    return 0.0

def scanned(x):
    return lax.scan(lambda c, v: (c, v), 0.0, x)

def text(x):
    return "%s" % jnp.sum(x)

def splits(x):
    return jnp.split(x, 2)

@some_decorator
def decorated(x):
    return jnp.sum(x)
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mean_sq", True),
        ("through_local", True),
        ("calls_helper", True),
        ("pair", False),
        ("sometimes", False),
        ("scanned", False),
        ("text", False),
        ("splits", False),
        ("decorated", False),
    ],
)
def test_helper_returns_array(name: str, expected: bool) -> None:
    index = ModuleIndex(cst.parse_module(HELPERS))
    assert returns_array(cst.Name(name), index.root, index, returns_one_array) is expected


def kinds(source: str) -> list[tuple[str, str]]:
    module = cst.parse_module("import jax\nfrom jax import lax\n" + textwrap.dedent(source))
    return sorted(
        (function, reuse.kind)
        for function, found in analyze_module(ModuleIndex(module)).items()
        for reuse in found
    )


def test_vmap_and_tree_map_closures_are_mapped() -> None:
    source = """
    def rows(key, xs):
        return jax.vmap(lambda x: x + jax.random.normal(key))(xs)

    def leaves(key, tree):
        return jax.tree.map(lambda p: p + jax.random.normal(key, p.shape), tree)

    def own_keys(keys, xs):
        return jax.vmap(lambda k, x: x + jax.random.normal(k))(keys, xs)
    """
    assert kinds(source) == [("leaves.<locals>.<lambda>", "mapped"), ("rows.<locals>.<lambda>", "mapped")]


def test_literal_seed_only_where_the_function_runs_repeatedly() -> None:
    source = """
    @jax.jit
    def step(x):
        return x + jax.random.normal(jax.random.key(0), x.shape)

    def once(x):
        return x + jax.random.normal(jax.random.key(0), x.shape)

    def body(c, x):
        return c + jax.random.normal(jax.random.PRNGKey(3)), x

    for batch in range(3):
        step(batch)
    for size in (2, 3):
        once(size)
    once(1)
    lax.scan(body, 0.0, None, length=3)
    """
    assert kinds(source) == [("body", "seed"), ("step", "seed")]
