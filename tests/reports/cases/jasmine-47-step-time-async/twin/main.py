import time

import jax
import jax.numpy as jnp
import optax

optimizer = optax.adam(1e-3)


@jax.jit
def train_step(params, opt_state, batch):
    def loss_fn(p):
        hidden = jnp.tanh(batch @ p["w1"])
        return jnp.mean((hidden @ p["w2"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


key = jax.random.PRNGKey(0)
params = {"w1": jax.random.normal(key, (1024, 1024)) / 32, "w2": jnp.ones((1024, 1)) / 32}
opt_state = optimizer.init(params)
batch = jnp.ones((1024, 1024))
params, opt_state, loss = jax.block_until_ready(train_step(params, opt_state, batch))

steps = 3
start = time.time()
for _step in range(steps):
    params, opt_state, loss = train_step(params, opt_state, batch)
jax.block_until_ready(loss)
step_time = (time.time() - start) / steps
waited = time.time()
jax.block_until_ready(loss)
still_running = time.time() - waited
if still_running > step_time:
    print(f"OBSERVED: logged step_time {step_time:.5f}s, the step then ran {still_running:.5f}s more")
