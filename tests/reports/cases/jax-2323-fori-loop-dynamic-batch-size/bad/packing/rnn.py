from jax import lax
import jax.numpy as jnp


def run_packed(packed_input, batch_sizes, weight):
    def body_fun(i, val):
        offset, acc = val
        batch_size = batch_sizes[i]
        batch = lax.dynamic_slice_in_dim(packed_input, offset, batch_size)  # expect: JAX102
        acc = acc + jnp.sum(jnp.tanh(batch @ weight))
        return offset + batch_size, acc

    return lax.fori_loop(0, batch_sizes.shape[0], body_fun, (0, 0.0))[1]
