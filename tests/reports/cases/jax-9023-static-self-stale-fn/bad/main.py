from functools import partial

from jax import jit


class Transformer:
    def __init__(self):
        self.fn = None

    @partial(jit, static_argnums=(0,))  # expect: JAX405
    def apply(self, x):
        return self.fn(x)

    def assign_fn(self, fn):
        self.fn = fn


t = Transformer()
t.assign_fn(lambda x: x + 1)
first = t.apply(1)
t.assign_fn(lambda x: x + 2)
second = t.apply(1)
if int(second) != int(t.fn(1)):
    print(
        f"OBSERVED: apply returned {int(second)} after the function changed, the new function gives {int(t.fn(1))}"
    )
