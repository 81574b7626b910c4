import jax


def shifted(x, offsets):
    return x + offsets[0]


shifted_jit = jax.jit(shifted, static_argnums=(1,))
print(shifted_jit(1, (2, 3)))
print(shifted_jit(1, (2, 3)))
