import jax

calls = 0


@jax.jit
def bump():
    global calls
    calls = calls + 1  # expect: JAX202
    return calls


results = [int(bump()) for _ in range(3)]
if results == [1, 1, 1]:
    print(f"OBSERVED: the jitted counter returned {results}: the increment ran once, at trace time")
