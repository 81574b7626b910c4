"""The library table's `jax.random` rows (library.py re-exports them): which functions draw from the key they
are given, which make keys and of what kind. Data only, run on jax 0.10.2 by
tests/analysis/test_library_random.py; the key model (`keys/model.py`) and the value model read it.
"""

from __future__ import annotations

RANDOM_CHECKED = "jax 0.10.2"
_RANDOM = "jax.random."
# Samplers not in jax 0.10.2, kept for code written for older JAX (`jax.random.shuffle`): not run.
OLDER_SAMPLERS = frozenset({_RANDOM + "shuffle", _RANDOM + "random_bits"})

# Everything in jax.random that draws random bits from its key (its first argument, or `key=`): the same key
# twice draws the same numbers.
SAMPLERS = frozenset(
    _RANDOM + name
    for name in (
        "ball bernoulli beta binomial bits categorical cauchy chisquare choice dirichlet double_sided_maxwell "
        "exponential f gamma generalized_normal geometric gumbel laplace loggamma logistic lognormal maxwell "
        "multinomial multivariate_normal normal orthogonal pareto permutation poisson rademacher randint "
        "rayleigh shuffle t triangular truncated_normal uniform wald weibull_min random_bits"
    ).split()
)
SPLIT = _RANDOM + "split"
FOLD_IN = _RANDOM + "fold_in"  # `fold_in(k, i) == split(k)[i]`
# Calls that make a key, and its kind: "key" (a typed key), "uint32" (a legacy raw key), None (the kind of
# the key they are given).
KEY_RESULTS: dict[str, str | None] = {
    _RANDOM + "key": "key",
    _RANDOM + "PRNGKey": "uint32",
    SPLIT: None,
    FOLD_IN: None,
    _RANDOM + "clone": None,
    _RANDOM + "wrap_key_data": "key",
}
# Of those, the ones that make a key without consuming one (`clone(k)` has k's bits: a reuse marked on purpose).
KEY_MAKERS = frozenset(_RANDOM + n for n in ("key", "PRNGKey", "clone", "wrap_key_data"))
# Key makers whose literal first argument (a seed) makes the same key on every run.
SEEDED_KEY_MAKERS = frozenset({_RANDOM + "key", _RANDOM + "PRNGKey"})
# Draws that pick or mask entries (an index, a permutation, bits, a mask, keys): one key across the elements or
# leaves of a batch picks alike for each, keeping them aligned (brax permutes every leaf of a transition batch
# with one key), so the key model takes a mapped function sharing a key for these as deliberate.
ALIGNING = frozenset(
    _RANDOM + n
    for n in "permutation shuffle choice randint bits random_bits categorical bernoulli split".split()
)
