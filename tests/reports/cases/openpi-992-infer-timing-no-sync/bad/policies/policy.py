import time

import jax
import jax.numpy as jnp
import numpy as np


def _sample_actions(weights, state, horizon):
    actions = []
    x = state
    for _ in range(horizon):
        x = jnp.tanh(weights @ jnp.outer(x, x) @ weights[0])
        actions.append(x[:8])
    return jnp.stack(actions)


class Policy:
    """Serves actions from a model: one jitted sampler, timing reported per request."""

    def __init__(self, hidden, horizon):
        self._weights = jnp.ones((hidden, hidden)) / hidden
        self._horizon = horizon
        self._sample_actions = jax.jit(_sample_actions, static_argnums=2)

    def infer(self, observation):
        start_time = time.monotonic()
        actions = self._sample_actions(self._weights, observation["state"], self._horizon)
        model_time = time.monotonic() - start_time  # expect: JAX403
        return {"actions": np.asarray(actions), "policy_timing": {"infer_ms": model_time * 1000}}
