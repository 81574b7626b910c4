import jax
import jax.numpy as jnp
import optax

params = {"embed": jnp.ones((256, 64)), "bias": jnp.zeros((64,))}
optimizer = optax.inject_hyperparams(optax.adafactor, static_args=("min_dim_size_to_factor",))(learning_rate=0.1)
opt_state = jax.jit(optimizer.init)(params)
print(opt_state.hyperparams["learning_rate"])
