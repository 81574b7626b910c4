import equinox as eqx
import jax


class EncoderLayer(eqx.Module):
    dense: eqx.nn.Linear
    dropout: eqx.nn.Dropout

    def __init__(self, size, key):
        self.dense = eqx.nn.Linear(size, size, key=key)
        self.dropout = eqx.nn.Dropout(0.5)

    def __call__(self, x, *, key):
        return self.dropout(jax.nn.gelu(self.dense(x)), key=key)


def batched_forward(layer, tokens, key):
    return jax.vmap(lambda x: layer(x, key=key))(tokens)  # expect: JAX301
