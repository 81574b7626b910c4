import jax.numpy as jnp

from optlib.lbfgs import GradientSolver


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


solver = GradientSolver(fun=rosenbrock, stepsize=1e-3, tol=1e-2)
print(solver.run(jnp.zeros(3)))
