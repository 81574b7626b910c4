import jax
from sim.simulator import Simulator

sim = Simulator(dt=0.01)
sim.step = jax.jit(sim.step)
first = sim.step()
print(first)
print(sim.position + 1.0)
