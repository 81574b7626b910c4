from functools import partial

import jax


@jax.custom_vjp
def power(z, x):
    sq = int(x)  # expect: JAX102
    return z**sq


def power_fwd(z, x):
    sq = int(x)  # expect: JAX102
    return power(z, x), (z, sq)


def power_bwd(residual, g):
    z, sq = residual
    return g * sq * z ** (sq - 1), None


power.defvjp(power_fwd, power_bwd)


@partial(jax.jit, static_argnums=1)
def f(z, x):
    return power(z, x)


print(jax.grad(f)(3.0, 2))
