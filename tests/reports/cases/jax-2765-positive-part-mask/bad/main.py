import jax
import jax.numpy as jnp


@jax.jit
def mean_positive_energy(deposits, weights):
    energy = deposits * weights
    energy = energy[energy > 0]  # expect: JAX104
    return jnp.sum(energy**2) / energy.shape[0]


deposits = jnp.array([0.5, -1.0, 2.0, 0.0, 3.0])
print(mean_positive_energy(deposits, jnp.ones(5)))
print(jax.grad(mean_positive_energy, argnums=1)(deposits, jnp.ones(5)))
