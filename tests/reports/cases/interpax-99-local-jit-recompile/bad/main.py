import jax.numpy as jnp
from interp import TRACES, interp1d

x = jnp.linspace(0.0, 1.0, 50)
f = jnp.sin(x)
for step in range(5):
    xq = jnp.linspace(0.0, 1.0, 20) * (1.0 - 0.1 * step)
    values = interp1d(xq, x, f)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 5 calls with the same shapes")
