import jax
import jax.numpy as jnp

from eqsolve.solver import solve

solve_jit = jax.jit(solve)
print(solve_jit(jnp.array([0.5, 1.0, 2.0])))
