import jax.numpy as jnp

from s2lib.trapani import compute_eighth

L = 8
dl = jnp.ones(2 * L - 1)
for el in range(1, 4):
    dl = compute_eighth(dl, el, L)
print(dl)
