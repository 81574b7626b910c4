"""JAX301/JAX302 beyond the fixtures: messages, opt-in selection, and the JAX302 fix."""

from __future__ import annotations

import textwrap

from jaxlint import lint_source
from jaxlint.autofix import fix_source
from jaxlint.config import Config, with_overrides

SOURCE = textwrap.dedent(
    """
    import jax
    import jax.random as jrandom
    from jax.random import PRNGKey

    key = jax.random.PRNGKey(0)  # seed
    other = jrandom.PRNGKey(1)
    third = PRNGKey(2)
    x = jax.random.normal(key, (3,))
    y = jax.random.uniform(key, (3,))
    """
)


def test_reuse_message_names_both_uses() -> None:
    (finding,) = lint_source(SOURCE, select=["JAX301"])
    assert finding.line == 10
    assert finding.message.startswith("key 'key' reused: first consumed at line 9 by jax.random.normal")


def test_legacy_prng_key_is_opt_in() -> None:
    assert not [f for f in lint_source(SOURCE) if f.code == "JAX302"]
    assert not [f for f in lint_source(SOURCE, select=["JAX"]) if f.code == "JAX302"]
    found = lint_source(SOURCE, select=["JAX302"])
    assert [(f.line, f.fix, f.fix_safety) for f in found] == [
        (6, "jax.random.key(0)", "unsafe"),
        (7, "jrandom.key(1)", "unsafe"),
        (8, "jax.random.key(2)", "unsafe"),
    ]


def test_legacy_prng_key_fix_is_unsafe_and_idempotent() -> None:
    config = with_overrides(Config(), select=("JAX302",), ignore=None)
    assert fix_source(SOURCE, "m.py", config, unsafe=False).fixed == SOURCE
    fixed = fix_source(SOURCE, "m.py", config, unsafe=True).fixed
    assert "key = jax.random.key(0)  # seed" in fixed
    assert "other = jrandom.key(1)" in fixed
    assert "third = jax.random.key(2)" in fixed
    assert fix_source(fixed, "m.py", config, unsafe=True).fixed == fixed


def test_no_fix_without_a_reference_to_jax_random() -> None:
    source = "from jax.random import PRNGKey, normal\nk = PRNGKey(0)\n"
    (finding,) = lint_source(source, select=["JAX302"])
    assert finding.fix is None
