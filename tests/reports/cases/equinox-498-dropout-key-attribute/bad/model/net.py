import equinox as eqx
import jax


class Encoder(eqx.Module):
    linear: eqx.nn.Linear
    dropout: eqx.nn.Dropout
    key: jax.Array

    def __init__(self, key):
        init_key, self.key = jax.random.split(key)
        self.linear = eqx.nn.Linear(8, 8, key=init_key)
        self.dropout = eqx.nn.Dropout(0.5)

    def __call__(self, x):
        return self.dropout(self.linear(x), key=self.key)  # expect: JAX301
