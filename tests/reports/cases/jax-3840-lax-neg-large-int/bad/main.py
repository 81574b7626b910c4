from jax import lax

OFFSET = 1 << 32

negated = lax.neg(OFFSET)  # expect: JAX503
print("negated offset:", negated)
