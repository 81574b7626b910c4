import jax
import jax.numpy as jnp
import optax

params = {"embed": jnp.ones((256, 64)), "bias": jnp.zeros((64,))}
optimizer = optax.inject_hyperparams(optax.adafactor)(learning_rate=0.1)  # expect: JAX101
opt_state = jax.jit(optimizer.init)(params)
print(opt_state.hyperparams["learning_rate"])
