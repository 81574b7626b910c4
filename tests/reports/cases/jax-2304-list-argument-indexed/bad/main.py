import jax

calibration = [0.5, 0.75, 1.0, 1.25]  # comes from another library as a plain list


@jax.jit
def lookup(idx, table):
    return table[idx]  # expect: JAX102


print(lookup(2, calibration))
