import equinox as eqx
import jax
import jax.numpy as jnp


@jax.jit
@jax.grad
def loss_fn(model, x, y):
    pred_y = jax.vmap(model)(x)
    return jnp.mean((y - pred_y) ** 2)


key_lin, key_mlp = jax.random.split(jax.random.PRNGKey(0))
model_lin = eqx.nn.Linear(2, 3, key=key_lin)
model_mlp = eqx.nn.MLP(2, 3, 8, 2, key=key_mlp)
x = jnp.zeros((32, 2))
y = jnp.zeros((32, 3))
grads_lin = loss_fn(model_lin, x, y)
grads_mlp = loss_fn(model_mlp, x, y)  # expect: JAX405
print(jax.tree_util.tree_structure(grads_mlp))
