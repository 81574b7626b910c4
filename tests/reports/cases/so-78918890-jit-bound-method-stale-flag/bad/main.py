import jax


class Scaler:
    def __init__(self, factor, mul):
        self.factor = factor
        self.mul = mul

    def calc(self, y):
        if self.mul:
            return self.factor * y
        return y


scaler = Scaler(2, True)
fast_calc = jax.jit(scaler.calc)  # expect: JAX405
first = float(fast_calc(3.0))
scaler.mul = False
second = float(fast_calc(3.0))
if second != 3.0:
    print(
        f"OBSERVED: after mul=False the jitted bound method still returned {second} (expected 3.0; first {first})"
    )
