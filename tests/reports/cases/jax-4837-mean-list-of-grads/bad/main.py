import jax.numpy
import numpy

gradients = [numpy.random.random((4, 2)) for _ in range(3)]
print("numpy:", numpy.mean(gradients, axis=0).shape)
average = jax.numpy.mean(gradients, axis=0)  # expect: JAX502
print("jax:", average.shape)
