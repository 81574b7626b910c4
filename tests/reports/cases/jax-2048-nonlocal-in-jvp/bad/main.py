import jax


def derivative(f, x):
    return jax.jvp(f, (x,), (1.0,))[1]


def outer(x):
    def inner(y):
        nonlocal x
        x = y * y  # expect: JAX105
        return x

    return derivative(inner, x) * x


print(derivative(outer, 1.0))
