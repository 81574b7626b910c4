import jax


def derivative(f, x):
    return jax.jvp(f, (x,), (1.0,))[1]


def outer(x):
    def inner(y):
        return y * y

    return derivative(inner, x) * inner(x)


print(derivative(outer, 1.0))
