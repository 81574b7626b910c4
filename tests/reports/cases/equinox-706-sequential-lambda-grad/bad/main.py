import equinox as eqx
import jax
import jax.numpy as jnp

key, data_key = jax.random.split(jax.random.PRNGKey(42))
model = eqx.nn.Sequential([eqx.nn.Linear(100, 1, key=key), eqx.nn.Lambda(jax.nn.gelu)])


@eqx.filter_jit
def loss(model, x):
    return jnp.sum(jax.vmap(model)(x))


x = jax.random.normal(data_key, (1, 100))
print(jax.vmap(model)(x).shape)
value, grads = jax.value_and_grad(loss)(model, x)  # expect: JAX405
print(value)
