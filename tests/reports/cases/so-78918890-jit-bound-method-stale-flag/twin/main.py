import jax


@jax.tree_util.register_pytree_node_class
class Scaler:
    def __init__(self, factor, mul):
        self.factor = factor
        self.mul = mul

    def tree_flatten(self):
        return (self.factor,), (self.mul,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)

    @jax.jit
    def calc(self, y):
        if self.mul:
            return self.factor * y
        return y


scaler = Scaler(2, True)
first = float(scaler.calc(3.0))
scaler.mul = False
second = float(scaler.calc(3.0))
if second != 3.0:
    print(
        f"OBSERVED: after mul=False the jitted method still returned {second} (expected 3.0; first {first})"
    )
