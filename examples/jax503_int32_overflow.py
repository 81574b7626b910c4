"""JAX503: integers the literals prove outside int32, in a program that never enables x64: they wrap around."""

import jax.numpy as jnp


def moments(n_terms):
    powers = jnp.arange(100) ** 10  # JAX503: silently wraps around past 2**31 - 1
    return powers[:n_terms].sum()


if __name__ == "__main__":  # a program: enabling x64 is this module's job (library modules are not checked)
    print(moments(5))
