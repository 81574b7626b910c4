import jax.numpy as jnp
from stein.inference import AnnealedStein

svi = AnnealedStein(num_steps=10)
particles, temperature = svi.run(jnp.ones((4, 2)))
print("final temperature:", float(temperature))
