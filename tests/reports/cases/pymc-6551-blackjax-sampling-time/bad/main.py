import time

import jax
from sampling.jax_backend import sample_nuts

sample_nuts(jax.random.PRNGKey(0), chains=4, draws=200)  # warm-up: compile

start = time.perf_counter()
samples, stats = sample_nuts(jax.random.PRNGKey(1), chains=4, draws=200)
jax.block_until_ready(samples)
total = time.perf_counter() - start
if stats["sampling_time"] < 0.25 * total:
    print(
        f"OBSERVED: sampling time {stats['sampling_time']:.4f}s reported out of {total:.4f}s spent sampling"
    )
