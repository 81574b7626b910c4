import jax
import jax.numpy as jnp


class Chopper:
    def __init__(self, period):
        self.period = period
        self.next_switch = period

    def step(self, t, v):
        on = t < self.next_switch
        self.next_switch = self.next_switch + self.period  # expect: JAX202
        return jnp.where(on, v + 1.0, v - 1.0)


def run(step_fn, steps):
    v = jnp.zeros(())
    trace = []
    for k in range(steps):
        v = step_fn(jnp.asarray(k * 0.5), v)
        trace.append(float(v))
    return trace


eager = run(Chopper(1.0).step, 6)
jitted = run(jax.jit(Chopper(1.0).step), 6)
if eager != jitted:
    print(f"OBSERVED: jit changed the waveform: {eager} without jit, {jitted} with it")
