import jax
import jax.numpy as jnp
from flowmc.proposal import TRACES, NFProposal

proposal = NFProposal(jnp.array([0.5, -0.2]), jnp.array([1.0, 2.0]))
key = jax.random.PRNGKey(0)
for _step in range(4):
    key, subkey = jax.random.split(key)
    positions = proposal.sample(subkey, jnp.zeros(2), 50)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times in 4 sampling steps of the same size")
