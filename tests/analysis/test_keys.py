"""The PRNG key dataflow (`jaxlint.analysis.keys.dataflow`) on its own: reuses found per function, their kind and first
use, function summaries, joins, loops and the precision traps."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from jaxlint.analysis import ModuleIndex
from jaxlint.analysis.keys.dataflow import SAMPLERS, KeyAnalysis, analyze_module

HEADER = "import jax\nfrom jax import lax\nfrom jax import random as jr\n"


def reuses(source: str) -> list[tuple[str, int, str, str, int]]:
    """(function, line, kind, key text, line of the first use), lines counted in the dedented body."""
    module = cst.parse_module(HEADER + textwrap.dedent(source))
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    offset = HEADER.count("\n")
    out = []
    for function, found in analyze_module(ModuleIndex(module)).items():
        for reuse in found:
            line = positions[reuse.node].start.line - offset
            first = positions[reuse.first.node].start.line - offset
            out.append((function, line, reuse.kind, reuse.key, first))
    return sorted(out)


def summary_of(source: str, name: str):
    module = cst.parse_module(HEADER + textwrap.dedent(source))
    index = ModuleIndex(module)
    unit = next(u for u in index.units.values() if u.qualname == name)
    return KeyAnalysis(index).summary(unit)


def test_samplers_cover_jax_random() -> None:
    jax_random = pytest.importorskip("jax.random")
    public = {n for n in dir(jax_random) if not n.startswith("_") and callable(getattr(jax_random, n))}
    not_consumers = {"PRNGKey", "key", "key_data", "key_impl", "key_dtype", "wrap_key_data", "clone"}
    not_consumers |= {"fold_in", "split", "random_gamma_p"}
    missing = {n for n in public - not_consumers if "jax.random." + n not in SAMPLERS}
    assert not missing, f"jax.random functions that consume a key but are not SAMPLERS: {sorted(missing)}"


def test_straight_line_reuse_names_both_uses() -> None:
    found = reuses(
        """
        def f(key):
            a = jr.normal(key)
            b = jr.uniform(key)
            return a, b
        """
    )
    assert found == [("f", 4, "reuse", "key", 3)]


def test_rebinding_by_split_is_a_new_key() -> None:
    assert not reuses(
        """
        def f(key):
            key, sub = jr.split(key)
            a = jr.normal(sub)
            key, sub = jr.split(key)
            return a + jr.normal(sub) + jr.normal(key)
        """
    )


@pytest.mark.parametrize(
    "body, line",
    [
        ("k1, k2 = jr.split(key)\n    x = jr.normal(key)", 3),  # parent after split
        ("x = jr.normal(key)\n    k1, k2 = jr.split(key)", 3),  # split after a sample
        ("ks = jr.split(key, 3)\n    x = jr.normal(ks[1]) + jr.normal(ks[1])", 3),  # one element twice
        ("a, b = jr.split(key)\n    x = jr.normal(a) + jr.normal(b) + jr.normal(a)", 3),
        # unpacked element and indexed element are the same key
        ("ks = jr.split(key)\n    a, b = ks\n    x = jr.normal(a) + jr.normal(ks[0])", 4),
        ("x = jr.normal(jr.fold_in(key, 3))\n    y = jr.normal(jr.fold_in(key, 3))", 3),  # same fold_in data
    ],
)
def test_reuse_patterns(body: str, line: int) -> None:
    found = reuses(f"def f(key):\n    {body}\n")
    assert [(fn, ln) for fn, ln, *_ in found] == [("f", line)]


@pytest.mark.parametrize(
    "body",
    [
        "x = jr.normal(jr.fold_in(key, 0)) + jr.normal(jr.fold_in(key, 1)) + jr.normal(key)",
        "d = jr.key_data(key)\n    c = jr.clone(key)\n    x = jr.normal(c) + jr.normal(key)",
        "tree = {'k': key, 'other': [key]}\n    x = jr.normal(key)",
        "ks = jr.split(key, 2)\n    x = jr.normal(ks[0]) + jr.normal(ks[1])",
        "x = jr.normal(jr.PRNGKey(0)) + jr.normal(jr.PRNGKey(0))",
        "x = jax.vmap(jr.normal)(jr.split(key, 4))",
    ],
)
def test_not_reuse(body: str) -> None:
    assert not reuses(f"def f(key):\n    {body}\n")


def test_branches_join_without_inventing_reuse() -> None:
    assert not reuses(
        """
        def f(key, c):
            if c:
                x = jr.normal(key)
                key = jr.key(1)
            else:
                x = 0.0
            return x + jr.normal(key)
        """
    )


def test_branch_that_consumes_without_replacing_is_may_reuse() -> None:
    found = reuses(
        """
        def f(key, c):
            if c:
                x = jr.normal(key)
            else:
                key = jr.key(1)
            return jr.normal(key)
        """
    )
    assert found == [("f", 7, "reuse", "key", 4)]


def test_early_exits_end_paths() -> None:
    assert not reuses(
        """
        def f(key, c, xs):
            if c:
                return jr.normal(key)
            if xs is None:
                raise ValueError(jr.normal(key))
            for x in xs:
                if x:
                    y = jr.normal(key)
                    break
            else:
                y = jr.uniform(key)
            return y
        """
    )


def test_loop_without_replacement_is_loop_reuse() -> None:
    found = reuses(
        """
        def f(key, n):
            for i in range(n):
                x = jr.normal(key)
            return x
        """
    )
    assert found == [("f", 4, "loop", "key", 4)]


def test_loop_with_split_at_the_top_and_fold_in() -> None:
    assert not reuses(
        """
        def f(key, n):
            for i in range(n):
                key, sub = jr.split(key)
                x = jr.normal(sub) + jr.normal(jr.fold_in(key, i))
            return [jr.normal(jr.fold_in(key, j)) for j in range(n)], jr.normal(key)
        """
    )


def test_continue_path_carries_the_consumed_key() -> None:
    found = reuses(
        """
        def f(key, sub, xs):
            for x in xs:
                y = jr.normal(sub)
                if x:
                    continue
                key, sub = jr.split(key)
        """
    )
    assert found == [("f", 4, "loop", "sub", 4)]


def test_comprehension_consumes_in_every_round() -> None:
    found = reuses("def f(key, n):\n    return [jr.normal(key) for _ in range(n)]\n")
    assert [kind for _, _, kind, _, _ in found] == ["loop"]


def test_lax_body_closure_and_carry() -> None:
    found = reuses(
        """
        def f(key, xs):
            def body(c, x):
                return c + jr.normal(key), x
            def carry(state, x):
                k, h = state
                return (k, h + jr.normal(k)), x
            lax.scan(body, 0.0, xs)
            return lax.scan(carry, (key, 0.0), xs)
        """
    )
    assert ("f.<locals>.body", 4, "closure", "key", 4) in found
    assert ("f.<locals>.carry", 7, "carry", "k", 7) in found


def test_scan_carry_split_properly() -> None:
    assert not reuses(
        """
        def f(key, xs):
            def body(state, x):
                k, h = state
                k, sub = jr.split(k)
                return (k, h + jr.normal(sub)), x
            return lax.scan(body, (key, 0.0), xs)
        """
    )


def test_summaries() -> None:
    source = """
        def draws(key, x, n):
            return jr.normal(key) + x
        def splits(key):
            return jr.split(key)
        def nested(pair):
            a, b = pair
            return jr.normal(b)
        def ignores(key):
            return key
        def maybe(key, flag):
            if flag:
                return jr.normal(key)
            return 0.0
        KEY = jr.key(0)
        def uses_global():
            return jr.normal(KEY)
        """
    assert summary_of(source, "draws").params == {("key", ())}
    assert summary_of(source, "splits").params == {("key", ())}
    assert summary_of(source, "nested").params == {("pair", (1,))}
    assert not summary_of(source, "ignores")
    assert summary_of(source, "maybe").params == {("key", ())}
    assert summary_of(source, "uses_global").free == {("KEY", ())}


def test_helper_consumption_and_tuple_paths() -> None:
    found = reuses(
        """
        def second(pair):
            a, b = pair
            return jr.normal(b)
        def f(k1, k2):
            x = second((k1, k2))
            return x + jr.normal(k1) + jr.normal(k2)
        """
    )
    assert found == [("f", 7, "reuse", "k2", 6)]


def test_attributes_are_forgotten_after_unknown_calls() -> None:
    found = reuses(
        """
        class M:
            def twice(self):
                return jr.normal(self.key) + jr.normal(self.key)
            def refreshed(self):
                a = jr.normal(self.key)
                self.reseed()
                return a + jr.normal(self.key)
        """
    )
    assert [(fn, ln) for fn, ln, *_ in found] == [("M.twice", 4)]


def test_unknown_calls_consume_nothing() -> None:
    assert not reuses(
        """
        def f(model, key, x):
            y = model.apply(x, rngs={"dropout": key})
            z = model(x, key)
            return jr.normal(key)
        """
    )


def test_module_without_jax_random_is_skipped() -> None:
    index = ModuleIndex(cst.parse_module("import jax.numpy as jnp\ndef f(x):\n    return jnp.sum(x)\n"))
    assert not KeyAnalysis(index).relevant


_LOADS_KEYS = """
import json, sys
from jaxlint.engine import lint_text
from jaxlint.selection import LintSettings
found = lint_text(sys.stdin.read(), "m.py", LintSettings())
print(json.dumps({"codes": [f.code for f in found], "loaded": "jaxlint.analysis.keys.dataflow" in sys.modules}))
"""


@pytest.mark.parametrize(
    ("source", "codes", "loaded"),
    [
        ("import jax\n\n@jax.jit\ndef f(x):\n    return x + 1\n", [], False),
        (
            "import jax\n\ndef f(key):\n    return jax.random.normal(key) + jax.random.normal(key)\n",
            ["JAX301"],
            True,
        ),
    ],
)
def test_the_dataflow_loads_only_for_a_module_that_draws_random_numbers(
    source: str, codes: list[str], loaded: bool
) -> None:
    """`key_relevance.uses_keys` decides before the dataflow is imported: a module that calls nothing in
    jax.random neither runs nor imports `keys.py` (a tenth of jaxlint's import time when nothing is compiled)."""
    import json
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _LOADS_KEYS], input=source, capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == {"codes": codes, "loaded": loaded}


def test_library_table_consumers() -> None:
    # flax's apply draws from a fold_in of its `rngs` key: twice with one key is reuse, its own draws are not
    # (the module needs a jax.random call for the dataflow to run at all)
    assert reuses(
        """
        def f(model, key, x):
            y = model.apply(x, rngs={"dropout": key})
            return model.apply(y, rngs={"dropout": key}) + jr.normal(jr.fold_in(key, 1))
        """
    ) == [("f", 4, "reuse", "key", 3)]
    assert not reuses(
        """
        def f(model, key, x):
            y = model.apply(x, rngs={"dropout": key})
            return model.apply(y, rngs={"params": key}) + jr.normal(key)
        """
    )
