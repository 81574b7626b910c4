import jax.numpy
import numpy

gradients = [numpy.random.random((4, 2)) for _ in range(3)]
print("numpy:", numpy.mean(gradients, axis=0).shape)
average = jax.numpy.mean(jax.numpy.array(gradients), axis=0)
print("jax:", average.shape)
