import jax

jax.config.update("jax_debug_key_reuse", True)

key = jax.random.key(0)


@jax.jit
def draw():
    return jax.random.bits(key)


first = draw()
second = draw()  # expect: JAX301
if int(first) == int(second):
    print("OBSERVED: two calls of the jitted sampler returned the same bits")
