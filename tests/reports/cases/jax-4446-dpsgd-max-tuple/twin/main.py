import jax
import jax.numpy as jnp
from jax.tree_util import tree_flatten, tree_unflatten


def loss(params, batch):
    inputs, targets = batch
    preds = jnp.tanh(inputs @ params["w"] + params["b"])
    return jnp.mean((preds - targets) ** 2)


def clipped_grad(params, l2_norm_clip, single_example_batch):
    grads = jax.grad(loss)(params, single_example_batch)
    leaves, tree_def = tree_flatten(grads)
    total_grad_norm = jnp.linalg.norm(jnp.stack([jnp.linalg.norm(g.ravel()) for g in leaves]))
    divisor = jnp.maximum(total_grad_norm / l2_norm_clip, 1.0)
    return tree_unflatten(tree_def, [g / divisor for g in leaves])


params = {"w": jnp.ones((3, 1)), "b": jnp.zeros(1)}
example = (jnp.ones((1, 3)), jnp.zeros((1, 1)))
print(clipped_grad(params, 0.5, example))
