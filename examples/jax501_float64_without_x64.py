"""JAX501: float64 requested, but 64-bit mode is never turned on, so JAX silently computes in float32."""

import jax.numpy as jnp


def log_likelihood(residuals, variance):
    residuals = jnp.asarray(residuals, dtype=jnp.float64)  # JAX501: silently float32
    return -0.5 * jnp.sum(residuals**2 / variance + jnp.log(2 * jnp.pi * variance))


if __name__ == "__main__":  # a program: enabling x64 is this module's job (library modules are not checked)
    print(log_likelihood(jnp.ones(3), 1.0))
