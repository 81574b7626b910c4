from jax import lax
import jax.numpy as jnp


def run_packed(packed_input, batch_sizes, weight, max_batch=4):
    padded = jnp.concatenate([packed_input, jnp.zeros((max_batch, packed_input.shape[1]))])

    def body_fun(i, val):
        offset, acc = val
        batch_size = batch_sizes[i]
        batch = lax.dynamic_slice_in_dim(padded, offset, max_batch)
        rows = jnp.arange(max_batch)[:, None] < batch_size
        acc = acc + jnp.sum(jnp.where(rows, jnp.tanh(batch @ weight), 0.0))
        return offset + batch_size, acc

    return lax.fori_loop(0, batch_sizes.shape[0], body_fun, (0, 0.0))[1]
