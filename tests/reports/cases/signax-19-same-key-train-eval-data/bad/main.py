import jax.numpy as jnp
import jax.random as jrandom
from experiment.data import get_bm_noise, get_ou_signal

random_key = jrandom.PRNGKey(0)
n_points = 32
train_dataset = get_bm_noise(n_points=n_points, num_samples=16, random_key=random_key)
eval_dataset = get_bm_noise(n_points=n_points, num_samples=16, random_key=random_key)  # expect: JAX301
signals = get_ou_signal(random_key, 16, n_points)  # expect: JAX301

if bool(jnp.all(train_dataset == eval_dataset)):
    print("OBSERVED: the evaluation paths are exactly the training paths")
