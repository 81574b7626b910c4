import jax
from jax.tree_util import register_pytree_node_class

TRACES = []


@register_pytree_node_class
class Uniform:
    def draw(self, key, shape):
        TRACES.append(1)
        return jax.random.uniform(key, shape)

    def tree_flatten(self):
        return (), {}

    @classmethod
    def tree_unflatten(cls, aux, leaves):
        return cls(*leaves, **aux)


dist = Uniform()
key = jax.random.PRNGKey(42)
for _ in range(3):
    key, subkey = jax.random.split(key)
    sample = jax.jit(dist.draw, static_argnums=1)(subkey, (2, 3, 4))  # expect: JAX401
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 3 draws of the same shape")
