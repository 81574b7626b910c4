import jax
import jax.numpy as jnp

from moe.layers import SparseExperts

model = SparseExperts(num_experts=4, hidden=16)
tokens = jnp.ones((8, 12))
logits = jnp.zeros((8, 4))
shapes = jax.eval_shape(model.init, jax.random.key(0), tokens, logits)
print(jax.tree_util.tree_map(lambda s: s.shape, shapes))
