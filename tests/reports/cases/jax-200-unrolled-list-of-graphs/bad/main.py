import jax
import jax.numpy as jnp


def propagate(params, adjacencies, features):
    outputs = []
    for adj, feat in zip(adjacencies, features):  # expect: JAX404
        hidden = jnp.dot(adj, feat)
        hidden = jnp.dot(params["w"], hidden) + params["b"]
        outputs.append(jnp.tanh(hidden))
    return outputs


n_graphs = 64
key = jax.random.key(0)
keys = jax.random.split(key, 3)
adjacencies = list(jax.random.uniform(keys[0], (n_graphs, 5, 5)))
features = list(jax.random.normal(keys[1], (n_graphs, 5, 4)))
params = {"w": jax.random.normal(keys[2], (5, 5)), "b": jnp.zeros((5, 4))}

jaxpr = jax.make_jaxpr(propagate)(params, adjacencies, features)
outputs = jax.jit(propagate)(params, adjacencies, features)
if len(jaxpr.eqns) >= 3 * n_graphs:
    print(
        f"OBSERVED: the traced forward has {len(jaxpr.eqns)} equations for {n_graphs} graphs: the loop is unrolled"
    )
