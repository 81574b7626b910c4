import jax
import jax.numpy as jnp


class Chopper:
    def __init__(self, period):
        self.period = period

    def step(self, t, v, next_switch):
        on = t < next_switch
        return jnp.where(on, v + 1.0, v - 1.0), next_switch + self.period


def run(step_fn, steps, period):
    v = jnp.zeros(())
    next_switch = jnp.asarray(period)
    trace = []
    for k in range(steps):
        v, next_switch = step_fn(jnp.asarray(k * 0.5), v, next_switch)
        trace.append(float(v))
    return trace


eager = run(Chopper(1.0).step, 6, 1.0)
jitted = run(jax.jit(Chopper(1.0).step), 6, 1.0)
if eager != jitted:
    print(f"OBSERVED: jit changed the waveform: {eager} without jit, {jitted} with it")
