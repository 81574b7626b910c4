import jax


@jax.jit
def bump(calls):
    return calls + 1


calls = 0
results = []
for _ in range(3):
    calls = bump(calls)
    results.append(int(calls))
if results == [1, 1, 1]:
    print(f"OBSERVED: the jitted counter returned {results}: the increment ran once, at trace time")
