import contextlib
import io

import jax
import jax.numpy as jnp
from listener.loss import update

messages = jax.random.normal(jax.random.PRNGKey(0), (16, 4))
targets = jnp.arange(16) % 3
params = jnp.zeros((4, 3))

shown = io.StringIO()
with contextlib.redirect_stdout(shown):
    for _ in range(3):
        params, outputs = update(params, messages, targets)
        print(outputs)
lines = shown.getvalue().splitlines()
print(*lines, sep="\n")
if any("Trace" in line for line in lines):
    print(f"OBSERVED: {len(lines)} line(s) printed for 3 steps, showing tracers instead of the loss")
