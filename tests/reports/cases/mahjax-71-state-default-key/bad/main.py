import jax
import jax.numpy as jnp
from mahjong.env import init, next_round

second = [next_round(init(jax.random.PRNGKey(seed))).wall for seed in (1, 2, 3)]
if all(bool(jnp.all(second[0] == wall)) for wall in second[1:]):
    print("OBSERVED: seeds 1, 2 and 3 deal the same second wall")
