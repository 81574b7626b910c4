import jax
import numpy as np
from flax import struct


@struct.dataclass
class Model:
    scale: float
    weights: np.ndarray


@jax.jit
def predict(model, x):
    return model.scale * (x @ model.weights)


first = Model(scale=1.0, weights=np.ones(10))
second = Model(scale=2.0, weights=np.ones(10))
x = np.arange(10.0)
print(predict(first, x))
print(predict(second, x))
