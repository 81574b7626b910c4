import jax
from jax import lax

jax.config.update("jax_enable_x64", True)

OFFSET = 1 << 32

negated = lax.neg(OFFSET)
print("negated offset:", negated)
