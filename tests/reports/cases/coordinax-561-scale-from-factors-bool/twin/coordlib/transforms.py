import equinox as eqx
import jax
import jax.numpy as jnp


class Scale(eqx.Module):
    matrix: jax.Array

    @classmethod
    def from_factors(cls, factors):
        factors = jnp.asarray(factors)
        factors = eqx.error_if(factors, jnp.any(factors == 0), "scale factors must be non-zero")
        return cls(jnp.diag(factors))

    def __call__(self, x):
        return self.matrix @ x
