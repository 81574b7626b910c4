import jax.numpy as jnp
from probpipe_mini.lift import LiftedFunction, Normal

twice = LiftedFunction(lambda x: 2 * x, seed=114514, n_samples=16)
x = Normal(0.0, 1.0)
a = twice(x)
b = twice(x)
if jnp.array_equal(a, b):
    print("OBSERVED: two lifted calls returned the same Monte Carlo batch")
