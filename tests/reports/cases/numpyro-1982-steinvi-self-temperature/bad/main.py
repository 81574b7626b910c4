import jax.numpy as jnp
from stein.inference import AnnealedStein

svi = AnnealedStein(num_steps=10)
particles = svi.run(jnp.ones((4, 2)))
print("final temperature:", float(svi.loss_temperature))
