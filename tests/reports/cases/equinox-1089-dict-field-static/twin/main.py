import equinox as eqx
import jax
import jax.numpy as jnp


class Scaled(eqx.Module):
    weight: jax.Array
    options: dict

    def __call__(self, x):
        return self.weight * x * self.options["gain"]


@eqx.filter_jit
def apply(model, x):
    return model(x)


model = Scaled(jnp.ones(3), {"gain": 2.0})
print(apply(model, jnp.arange(3.0)))
