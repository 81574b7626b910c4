"""The library table's calls and methods that change no Python object they are given (library.py re-exports
them): the key model (`key_model.py`) keeps what a function holds (its attributes, list items) across them.
Data only, run by tests/analysis/test_library_pure.py on the versions named.
"""

from __future__ import annotations

PURE_CHECKED = "jax 0.10.2, numpy 2.4.6, optax 0.2.8, chex 0.1.92, flax 0.12.8, python 3.11.7"

# Calls under these prefixes return new values and leave their arguments as they were (jnp, jax.random, lax,
# math, functools.partial, operator's arithmetic, optax's transformations, chex's asserts). Exceptions that run
# shows are not modelled: numpy's in-place functions (`numpy.copyto`, `numpy.put`, `numpy.random.shuffle`)
# and `operator.setitem`/`delitem`/`iadd` on a list change their first argument.
PURE_PREFIXES = (
    "jax.",
    "numpy.",
    "math.",
    "builtins.",
    "functools.",
    "operator.",
    "typing.",
    "optax.",
    "chex.",
)
# ... except these builtins, which change the object (or anything) they are given.
IMPURE_CALLS = frozenset({"builtins.setattr", "builtins.delattr", "builtins.exec", "builtins.eval"})
# Methods that return a new value and leave their receiver as it was, on the receiver each is written for: a JAX
# array's (`x.reshape`, `x.at[i].set`), a dict's (`get`, `items`, `copy`), a str's (`format`, `join`), a flax
# TrainState's (`apply_gradients`, `replace`), a pytree's `tree_flatten`. (`add` is the `.at[i]` update's; a
# Python set's `add`, which changes the set, is not told apart.)
PURE_METHODS = frozenset(
    (
        "reshape astype sum mean max min std var squeeze transpose ravel flatten swapaxes take get items keys "
        "values copy format join startswith endswith lower upper strip set add multiply divide power apply_gradients "
        "replace tree_flatten block_until_ready dot argmax argmin cumsum prod any all clip round conj real imag"
    ).split()
)
