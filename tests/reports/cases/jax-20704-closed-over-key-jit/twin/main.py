import jax

jax.config.update("jax_debug_key_reuse", True)

key = jax.random.key(0)


@jax.jit
def draw(k):
    return jax.random.bits(k)


key, first_key, second_key = jax.random.split(key, 3)
first = draw(first_key)
second = draw(second_key)
if int(first) == int(second):
    print("OBSERVED: two calls of the jitted sampler returned the same bits")
