import time

import jax.numpy as jnp
from policies.policy import Policy

policy = Policy(hidden=768, horizon=6)
observation = {"state": jnp.ones((768,))}
policy.infer(observation)  # warm-up: compile

start = time.monotonic()
result = policy.infer(observation)
total_ms = 1000 * (time.monotonic() - start)
reported = result["policy_timing"]["infer_ms"]
if reported < 0.25 * total_ms:
    print(f"OBSERVED: infer_ms {reported:.2f} reported for an inference that took {total_ms:.2f} ms")
