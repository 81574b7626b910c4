import jax
import jax.numpy as jnp


def encode(labels, num_classes):
    return jax.nn.one_hot(labels, num_classes)  # expect: JAX102


encode_jit = jax.jit(encode)
print(encode_jit(jnp.array([0, 2, 1]), 3))
