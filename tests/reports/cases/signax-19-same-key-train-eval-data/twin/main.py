import jax.numpy as jnp
import jax.random as jrandom
from experiment.data import get_bm_noise, get_ou_signal

random_key = jrandom.PRNGKey(0)
train_key, eval_key, signal_key = jrandom.split(random_key, 3)
n_points = 32
train_dataset = get_bm_noise(n_points=n_points, num_samples=16, random_key=train_key)
eval_dataset = get_bm_noise(n_points=n_points, num_samples=16, random_key=eval_key)
signals = get_ou_signal(signal_key, 16, n_points)

if bool(jnp.all(train_dataset == eval_dataset)):
    print("OBSERVED: the evaluation paths are exactly the training paths")
