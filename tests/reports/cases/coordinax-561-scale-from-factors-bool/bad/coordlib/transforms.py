import equinox as eqx
import jax
import jax.numpy as jnp


class Scale(eqx.Module):
    matrix: jax.Array

    @classmethod
    def from_factors(cls, factors):
        factors = jnp.asarray(factors)
        if bool(jnp.any(factors == 0)):  # expect: JAX101
            raise ValueError("scale factors must be non-zero")
        return cls(jnp.diag(factors))

    def __call__(self, x):
        return self.matrix @ x
