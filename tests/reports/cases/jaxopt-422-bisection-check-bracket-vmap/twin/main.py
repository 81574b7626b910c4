import jax
import jax.numpy as jnp

from rootlib.bisection import Bisection


def F(x, factor):
    return factor * x**3 - x - 2


def root(factor):
    bisec = Bisection(optimality_fun=F, lower=1.0, upper=2.0, check_bracket=False)
    return bisec.run(factor=factor)


print(jax.vmap(root)(jnp.array([2.0, 2.0])))
