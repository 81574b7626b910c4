import jax
import jax.numpy as jnp

from rpyjax.lif import LIF
from rpyjax.nvar import NVAR

xs = jnp.sin(jnp.linspace(0.0, 3.0, 10))[:, None] * jnp.ones((10, 2))
features = NVAR(delay=2, dim=2).run(xs)
if not jnp.any(features != 0):
    print("OBSERVED: NVAR.run returned only zeros for a non-zero input")

lif = LIF(units=4, inhibitory=2, key=jax.random.key(0))
if not jnp.all(lif.W[:, :2] < 0):
    print("OBSERVED: inhibitory columns of W were not negated")
