import equinox as eqx

TRACES = []


@eqx.filter_jit
def scale(x, i):
    TRACES.append(1)
    return x * 2


for i in range(10):
    y = scale(2.0 * i, i)  # expect: JAX402
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times in 10 iterations")
