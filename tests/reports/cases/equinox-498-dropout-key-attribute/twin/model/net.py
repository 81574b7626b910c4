import equinox as eqx


class Encoder(eqx.Module):
    linear: eqx.nn.Linear
    dropout: eqx.nn.Dropout

    def __init__(self, key):
        self.linear = eqx.nn.Linear(8, 8, key=key)
        self.dropout = eqx.nn.Dropout(0.5)

    def __call__(self, x, *, key):
        return self.dropout(self.linear(x), key=key)
