import jax.numpy as jnp
from memory.experiential import ExperientialMemory, MemoryConfig

memory = ExperientialMemory(MemoryConfig(capacity=8, max_age=10**10))
entries = memory.init()
entries = memory.write(entries, jnp.ones(4))
print("active entries:", int(entries.active.sum()))
print("retrieved:", memory.query(entries, jnp.ones(4)))
