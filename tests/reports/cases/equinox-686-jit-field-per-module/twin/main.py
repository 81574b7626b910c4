from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

TRACES = []


def forward_kinematics(angles):
    return jnp.stack([jnp.cos(angles).sum(-1), jnp.sin(angles).sum(-1)], -1)


class Trajectory(eqx.Module):
    layer: eqx.nn.Linear
    forward: Callable

    def __init__(self, fk_fn, key):
        self.layer = eqx.nn.Linear(1, 3, key=key)
        self.forward = fk_fn

    def __call__(self, t):
        return self.forward(self.layer(t))


def loss(model, ts, targets):
    return jnp.mean((jax.vmap(model)(ts) - targets) ** 2)


@eqx.filter_jit
def step(model, opt_state, ts, targets, opt):
    TRACES.append(1)
    value, grads = eqx.filter_value_and_grad(loss)(model, ts, targets)
    updates, opt_state = opt.update(grads, opt_state, model)
    return value, eqx.apply_updates(model, updates), opt_state


opt = optax.adam(1e-2)
ts = jnp.linspace(0.0, 1.0, 16)[:, None]
targets = jnp.ones((16, 2))
for restart in range(2):
    model = Trajectory(forward_kinematics, jax.random.PRNGKey(restart))
    opt_state = opt.init(eqx.filter(model, eqx.is_array))
    for _ in range(3):
        value, model, opt_state = step(model, opt_state, ts, targets, opt)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 2 restarts of the same model")
