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
    keys = jax.random.split(key, tokens.shape[0])
    return jax.vmap(lambda x, k: layer(x, key=k))(tokens, keys)
