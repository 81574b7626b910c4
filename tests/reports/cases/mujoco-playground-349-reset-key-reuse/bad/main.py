import jax
from envs.finger import reset

states = jax.vmap(reset)(jax.random.split(jax.random.PRNGKey(0), 64))
if bool((states[:, 0] == states[:, 2]).all()):
    print("OBSERVED: the spinner angle equals the first joint angle in all 64 resets")
