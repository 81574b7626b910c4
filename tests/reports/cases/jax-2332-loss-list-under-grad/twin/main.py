import jax.numpy as jnp
import numpy as np
from fourier.fit import FourierFit

t = jnp.linspace(0.0, 3.0, 50)
y = jnp.cos(2.0 * t)
fit = FourierFit(4)
coefficients = jnp.zeros(4)
for _ in range(5):
    coefficients = fit.update(coefficients, t, y)
history = np.asarray([float(v) for v in fit.loss_list])
print(history)
