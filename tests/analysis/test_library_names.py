"""The library table's second spellings (analysis/semantics/spellings.py), run on jax 0.10.2 and equinox: a function
row's two spellings run alike (or are one object); a module row's public functions are the replacement's."""

from __future__ import annotations

import importlib
import types

import pytest

from jaxlint.analysis.semantics.library import CANONICAL_PREFIXES, NAMES_CHECKED, OLDER_SPELLINGS

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pytest.importorskip("equinox")

from tests.analysis.test_library_semantics import is_tracer, resolve  # noqa: E402

# Names under a private module that the public one spells otherwise: `jax._src.numpy.fft` is a module where
# `jax.numpy.fft` is too but another object; `jax._src.lax.lax.map` is jax's own `safe_map`, not `lax.map`.
_NOT_THE_SAME = {"jax._src.lax.lax": {"map"}}


def test_checked_on_the_running_jax() -> None:
    assert NAMES_CHECKED.startswith(f"jax {jax.__version__}")


@pytest.mark.parametrize("row", CANONICAL_PREFIXES, ids=lambda row: row[0])
def test_two_spellings_are_one_thing(row: tuple[str, str]) -> None:
    old, new = row
    if old in OLDER_SPELLINGS:
        pytest.skip(f"{old}: not in JAX 0.10.2 (kept for code written for older JAX), not run")
    first = resolve(old)
    if isinstance(first, types.ModuleType):
        public = importlib.import_module(new)
        common = [n for n in dir(first) if not n.startswith("_") and hasattr(public, n)]
        functions = [
            n
            for n in common
            if callable(getattr(public, n)) and not isinstance(getattr(first, n), types.ModuleType)
        ]
        assert functions, f"{old}: no function shared with {new}"
        differ = [n for n in functions if getattr(first, n) is not getattr(public, n)]
        assert set(differ) <= _NOT_THE_SAME.get(old, set()), f"{old}: {differ} are not {new}'s"
        return
    if (
        new == "jax.io_callback"
    ):  # the name HOST_CALLBACKS lists; jax 0.10.2 exports it only under experimental
        seen: list[bool] = []
        jax.jit(lambda x: first(lambda v: seen.append(is_tracer(v)) or v, x, x))(jnp.ones(2))
        assert seen == [False], "its callback runs on concrete values"
        return
    second = resolve(new)
    if first is second:
        return
    seen = []

    def probe(x):  # a new function per spelling below: jit caches by the function
        seen.append(is_tracer(x))
        return x

    if new == "jax.tree.map":
        assert first(lambda v: v + 1, {"a": 1}) == second(lambda v: v + 1, {"a": 1})
        return
    if new == "jax.shard_map":
        import numpy as np
        from jax.sharding import Mesh
        from jax.sharding import PartitionSpec as P

        mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
        for spelling in (first, second):
            spelling(lambda x: probe(x), mesh=mesh, in_specs=P(), out_specs=P())(jnp.ones(2))
    else:
        for spelling in (first, second):
            spelling(lambda x: probe(x))(jnp.ones(2))
    assert seen == [True, True], f"{old} and {new}: {seen}"


def test_messages_spell_a_name_as_users_import_it() -> None:
    from jaxlint.analysis.semantics.spellings import display_name

    assert display_name("jax.numpy.linalg.norm") == "jnp.linalg.norm"
    assert display_name("jax.lax.dynamic_slice") == "lax.dynamic_slice"
    assert display_name("jax.random.randint") == "jax.random.randint"
    assert display_name("equinox.filter_jit") == "eqx.filter_jit"
    assert display_name("flax.nnx.jit") == "nnx.jit"
    assert display_name("numpy.save") == "np.save"
    assert display_name("builtins.len") == "len"
    assert display_name("datetime.datetime.now") == "datetime.now"
    assert display_name("jax.jit") == "jax.jit"
