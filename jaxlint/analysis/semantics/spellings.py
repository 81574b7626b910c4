"""The library table's second spellings (library.py re-exports them): a name, or a module prefix, that is the
same thing as another, so the analysis resolves both to one qualified name (`binding.names.canonical`). Data only, run
by tests/analysis/test_library_names.py on the versions named.
"""

from __future__ import annotations

NAMES_CHECKED = "jax 0.10.2, equinox 0.13.8"
# Spellings JAX 0.10.2 no longer has, kept for code written for older JAX: not run.
OLDER_SPELLINGS = frozenset({"jax.pjit", "jax.tree_map", "jax.ad_checkpoint.checkpoint"})

# (prefix, replacement): a qualified name equal to the prefix, or under it (`prefix.rest`), is the replacement's.
# The function rows run alike (the transformation, the tree map); the modules' rows are where the public
# module's functions are defined (`jax.numpy.zeros` is `jax._src.numpy...zeros`); `jax.experimental.io_callback`
# is named `jax.io_callback` here (the name HOST_CALLBACKS lists), which JAX 0.10.2 does not export.
CANONICAL_PREFIXES = (
    ("jax.experimental.pjit.pjit", "jax.jit"),
    ("jax.pjit", "jax.jit"),
    ("jax.tree_util.tree_map", "jax.tree.map"),
    ("jax.tree_map", "jax.tree.map"),
    ("jax.ad_checkpoint.checkpoint", "jax.checkpoint"),
    ("jax.remat", "jax.checkpoint"),
    ("jax.experimental.shard_map.shard_map", "jax.shard_map"),
    ("jax._src.numpy", "jax.numpy"),
    ("jax._src.lax.lax", "jax.lax"),
    ("jax._src.lax.control_flow", "jax.lax"),
    ("jax._src.random", "jax.random"),
    ("jax.experimental.io_callback", "jax.io_callback"),
    ("equinox.internal", "equinox"),
)

# How a message spells a qualified name: with the alias users import it under (`jnp.sum`, `eqx.filter_jit`), a
# builtin bare (`len`). The first prefix that matches wins.
SHORT_PREFIXES = (
    ("builtins.", ""),
    ("jax.numpy.", "jnp."),
    ("jax.lax.", "lax."),
    ("numpy.", "np."),
    ("equinox.", "eqx."),
    ("flax.linen.", "nn."),
    ("flax.nnx.", "nnx."),
    ("haiku.", "hk."),
    ("datetime.datetime.", "datetime."),
)


def display_name(qualname: str) -> str:
    """`qualname` as a message shows it: `jax.numpy.sum` is `jnp.sum`, `builtins.len` is `len`."""
    for prefix, short in SHORT_PREFIXES:
        if qualname.startswith(prefix):
            return short + qualname[len(prefix) :]
    return qualname
