import jax
import jax.numpy as jnp
import numpy as np


def array_namespace(x):
    """The array module matching x, as the array API standard's __array_namespace__ would give."""
    return jnp if isinstance(x, jax.Array) else np
