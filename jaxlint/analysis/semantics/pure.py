"""The library table's calls and methods that change no Python object they are given (library.py re-exports
them): the key model (`keys/model.py`) keeps what a function holds (its attributes, list items) across them.
Data only, run by tests/analysis/test_library_pure.py on the versions named.
"""

from __future__ import annotations

PURE_CHECKED = "jax 0.10.2, numpy 2.4.6, optax 0.2.8, chex 0.1.92, flax 0.12.8, python 3.11.7"

# Calls under these prefixes return new values and leave their arguments as they were (jnp, jax.random, lax,
# math, functools.partial, operator's arithmetic, optax's transformations, chex's asserts), but for
# `IMPURE_CALLS` below.
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
# ... except these, which change the object (or anything) they are given: builtins, numpy's in-place functions
# (their first argument) and operator's item stores and in-place operators (on a list).
IMPURE_CALLS = frozenset(
    {"builtins.setattr", "builtins.delattr", "builtins.exec", "builtins.eval"}
    | {f"numpy.{n}" for n in "copyto put place putmask put_along_axis fill_diagonal random.shuffle".split()}
    | {f"operator.{n}" for n in "setitem delitem iadd iconcat imul".split()}
)
# Array functions under these prefixes take no function, but for `HIGHER_ORDER_ARRAY_FUNCTIONS`, and consume no
# JAX key: the key model reads their arguments and looks no further (the test lists every callable parameter of
# the installed namespaces).
FIRST_ORDER_PREFIXES = ("jax.numpy.", "numpy.", "math.")
HIGHER_ORDER_ARRAY_FUNCTIONS = frozenset(
    "apply_along_axis apply_over_axes fromfunction frompyfunc piecewise ufunc vectorize seterrcall".split()
)
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
