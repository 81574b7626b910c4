import jax
import jax.numpy as jnp
from rwmetropolis import sample

chain = sample(jax.random.PRNGKey(0), 200, jnp.zeros(2))
moves = {tuple(row) for row in jnp.diff(chain, axis=0).round(5).tolist()} - {(0.0, 0.0)}
if len(moves) <= 1:
    print(
        f"OBSERVED: 200 Metropolis steps made {len(moves)} distinct move(s): every step proposed the same one"
    )
