"""The library table's `jax.random` rows (analysis/semantics/random_draws.py), run on real JAX on CPU: every sampler
draws from its key (its first parameter, `key`): the same key twice draws the same numbers, another key others;
the key makers make the kind of key the table says; a literal seed makes the same key every time."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from jaxlint.analysis.semantics.library import (
    ALIGNING,
    FOLD_IN,
    KEY_MAKERS,
    KEY_RESULTS,
    OLDER_SAMPLERS,
    SAMPLERS,
    SEEDED_KEY_MAKERS,
    SPLIT,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from tests.analysis.test_library_semantics import resolve  # noqa: E402

# Values for each sampler's required parameters after the key, by parameter name.
_REQUIRED: dict[str, Any] = {
    "a": 2.0,
    "b": 2.0,
    "d": 3,
    "n": 5,
    "p": 0.5,
    "alpha": jnp.ones(3),
    "logits": jnp.zeros(4),
    "df": 3.0,
    "dfnum": 3.0,
    "dfden": 4.0,
    "loc": 0.0,
    "scale": 1.0,
    "concentration": 2.0,
    "mean": 1.0,
    "lam": 3.0,
    "lower": -1.0,
    "upper": 1.0,
    "left": 0.0,
    "mode": 0.5,
    "right": 1.0,
    "shape": (8,),
    "minval": 0,
    "maxval": 1000,
    "x": jnp.arange(16),
}
_SPECIAL: dict[str, dict[str, Any]] = {
    "multinomial": {"n": 10.0, "p": jnp.full(4, 0.25)},
    "multivariate_normal": {"mean": jnp.zeros(2), "cov": jnp.eye(2)},
    "choice": {"a": 1000},
    "orthogonal": {"n": 3},
}


def _draw(name: str, key: Any) -> Any:
    function = resolve(name)
    short = name.rsplit(".", 1)[1]
    parameters = list(inspect.signature(function).parameters.values())[1:]
    kwargs = {
        p.name: _SPECIAL.get(short, {}).get(p.name, _REQUIRED.get(p.name))
        for p in parameters
        if p.default is inspect.Parameter.empty
    }
    if "shape" in {p.name for p in parameters} and "shape" not in kwargs and short not in _SPECIAL:
        kwargs["shape"] = (8,)  # enough draws that two keys differ
    return function(key, **kwargs)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_draws_from_its_key(name: str) -> None:
    if name in OLDER_SAMPLERS:
        pytest.skip(f"{name}: not in JAX 0.10.2 (kept for code written for older JAX), not run")
    assert next(iter(inspect.signature(resolve(name)).parameters)) == "key", f"{name}: the key comes first"
    key, other = jax.random.key(0), jax.random.key(1)
    draw = jax.jit(lambda k: _draw(name, k))  # one compilation (eagerly the gamma family compiles op by op)
    leaves = lambda tree: [jnp.asarray(x) for x in jax.tree.leaves(tree)]  # noqa: E731
    same = leaves(draw(key))
    assert all((a == b).all() for a, b in zip(same, leaves(draw(key)), strict=True)), "one key, one draw"
    assert not all((a == b).all() for a, b in zip(same, leaves(draw(other)), strict=True)), "another key"


@pytest.mark.parametrize("name", sorted(KEY_RESULTS))
def test_key_makers_make_the_kind_of_key_the_table_says(name: str) -> None:
    typed, raw = jax.random.key(0), jax.random.PRNGKey(0)
    is_typed = lambda k: jnp.issubdtype(k.dtype, jax.dtypes.prng_key)  # noqa: E731
    made = {
        "jax.random.key": lambda given: jax.random.key(0),
        "jax.random.PRNGKey": lambda given: jax.random.PRNGKey(0),
        SPLIT: lambda given: jax.random.split(given)[0],
        FOLD_IN: lambda given: jax.random.fold_in(given, 1),
        "jax.random.clone": jax.random.clone,
        "jax.random.wrap_key_data": lambda given: jax.random.wrap_key_data(jax.random.key_data(typed)),
    }[name]
    kind = KEY_RESULTS[name]
    for given in (typed, raw):
        key = made(given)
        if kind is None:
            assert is_typed(key) == is_typed(given), f"{name}: the kind of the key it is given"
        else:
            assert is_typed(key) == (kind == "key") and (kind == "key" or key.dtype == jnp.uint32)


def test_key_makers_consume_nothing_and_seeds_repeat() -> None:
    """`clone(k)` has k's bits (the table counts it a fresh key: JAX's marker of a deliberate reuse);
    `key(0)`/`PRNGKey(0)` make the same key on every call."""
    assert KEY_MAKERS >= SEEDED_KEY_MAKERS and SPLIT not in KEY_MAKERS and FOLD_IN not in KEY_MAKERS
    data = jax.random.key_data
    key = jax.random.key(3)
    assert (data(jax.random.clone(key)) == data(key)).all()
    for name in SEEDED_KEY_MAKERS:
        make = resolve(name)
        assert (jnp.asarray(jax.random.key_data(make(7))) == jnp.asarray(jax.random.key_data(make(7)))).all()


def test_seeded_makers_pair_a_raw_key_with_its_typed_twin() -> None:
    """JAX302 replaces the one seeded maker of raw keys by the one of typed keys, in the same module: both take
    the same seed and hold the same bits."""
    kinds = sorted((KEY_RESULTS[name], name) for name in SEEDED_KEY_MAKERS)
    assert [kind for kind, _ in kinds] == ["key", "uint32"]
    (_, typed), (_, raw) = kinds
    assert typed.rpartition(".")[0] == raw.rpartition(".")[0]
    for seed in (0, 7):
        bits = jax.random.key_data(resolve(typed)(seed))
        assert (jnp.asarray(bits) == jnp.asarray(resolve(raw)(seed))).all()


@pytest.mark.parametrize("name", sorted(ALIGNING))
def test_aligning_draws_pick_alike_for_every_element(name: str) -> None:
    """One key given for two elements of a batch (two leaves of one shape) picks the same entries of each: a
    permutation or choice moves both alike, and the others draw indices, bits, masks or keys (never values to
    add), the same ones for each."""
    if name in OLDER_SAMPLERS:
        pytest.skip(f"{name}: not in JAX 0.10.2 (kept for code written for older JAX), not run")
    assert name in SAMPLERS or name == SPLIT
    key, short = jax.random.key(0), name.rsplit(".", 1)[1]
    if short in ("permutation", "choice"):
        a, b = jnp.arange(8), jnp.arange(8) * 10
        pick = (
            (lambda x: resolve(name)(key, x))
            if short == "permutation"
            else (lambda x: resolve(name)(key, x, (4,)))
        )
        assert (pick(b) == pick(a) * 10).all() and not (pick(a) == a[: pick(a).shape[0]]).all()
        return
    drawn = (jax.random.split(key),) if name == SPLIT else (_draw(name, key), _draw(name, key))
    if name == SPLIT:
        assert jnp.issubdtype(drawn[0].dtype, jax.dtypes.prng_key)
    else:
        kind = jnp.dtype(drawn[0].dtype)
        assert kind.kind in "biu", f"{name}: draws {kind}, not indices, bits or a mask"
        assert (drawn[0] == drawn[1]).all()
