import equinox as eqx
import jax
import jax.numpy as jnp


class Scaled(eqx.Module):
    weight: jax.Array
    options: dict

    def __call__(self, x):
        return self.weight * x * self.options["gain"]


def merge(parameters, static, x):
    return eqx.combine(parameters, static)(x)


model = Scaled(jnp.ones(3), {"gain": 2.0})
parameters, static = eqx.partition(model, eqx.is_array)
merged = jax.jit(merge, static_argnames="static")
print(merged(parameters, static=static, x=jnp.arange(3.0)))  # expect: JAX402
