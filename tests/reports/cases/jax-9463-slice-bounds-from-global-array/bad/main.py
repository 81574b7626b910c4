import jax
import jax.numpy as jnp

num_rows, num_cols = 4, 3
kvals = jnp.arange(0, (num_rows + 1) * num_cols, num_cols)


@jax.jit
def compute(p):
    par_log = jnp.log10(p)
    arr_1 = jnp.zeros((num_rows, num_cols))
    for i in range(num_rows):
        arr_1 = arr_1.at[i, :].set(par_log[kvals[i] : kvals[i + 1]])  # expect: JAX102
    return arr_1


print(compute(jnp.linspace(1.0, 10.0, num_rows * num_cols)))
