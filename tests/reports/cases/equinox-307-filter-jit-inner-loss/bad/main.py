import equinox as eqx
import jax
import jax.numpy as jnp
import optax

TRACES = []


def train(optim, opt_state, model, observations, actions, rewards):
    @eqx.filter_jit  # expect: JAX401
    def loss_fn(net, states, acts, rets):
        TRACES.append(1)
        logits = jax.vmap(net)(states)
        log_probs = jax.nn.log_softmax(logits)
        chosen = jnp.take_along_axis(log_probs, acts[:, None], axis=1)[:, 0]
        return -jnp.mean(chosen * rets)

    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, observations, actions, rewards)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


key = jax.random.PRNGKey(0)
model = eqx.nn.MLP(4, 2, 16, 2, key=key)
optim = optax.adam(1e-3)
opt_state = optim.init(eqx.filter(model, eqx.is_array))
for episode in range(4):
    obs = jax.random.normal(jax.random.fold_in(key, episode), (32, 4))
    acts = jnp.arange(32) % 2
    rets = jnp.linspace(1.0, 0.0, 32)
    model, opt_state, loss = train(optim, opt_state, model, obs, acts, rets)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 4 episodes of the same shapes")
