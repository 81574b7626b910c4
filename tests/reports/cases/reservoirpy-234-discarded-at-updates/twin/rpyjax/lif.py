import jax


class LIF:
    def __init__(self, units, inhibitory, key):
        self.W = jax.random.uniform(key, (units, units))
        self.W = self.W.at[:, :inhibitory].multiply(-1)
