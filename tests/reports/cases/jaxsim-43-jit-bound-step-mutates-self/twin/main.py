import jax
from sim.simulator import Simulator

sim = Simulator(dt=0.01)
step = jax.jit(sim.step)
state = step(sim.initial_state())
print(state[0])
print(state[0] + 1.0)
