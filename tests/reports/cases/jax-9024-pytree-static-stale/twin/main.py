import jax.numpy as jnp
from jax import jit
from jax.tree_util import register_pytree_node


class Buffer:
    def __init__(self, data):
        self.data = data


register_pytree_node(Buffer, lambda b: ((b.data,), None), lambda _, data: Buffer(*data))


def get_data(buffer):
    return buffer.data


jit_get_data = jit(get_data)

buffer = Buffer(jnp.arange(4))
print(jit_get_data(buffer))
buffer.data += 1
seen = jit_get_data(buffer)
if not bool((seen == buffer.data).all()):
    print(f"OBSERVED: the jitted read returned {seen.tolist()} after the data became {buffer.data.tolist()}")
