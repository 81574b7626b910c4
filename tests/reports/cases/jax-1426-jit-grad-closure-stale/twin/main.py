import jax
import jax.numpy as jnp


def run():
    def loss_sum(val, a):
        return jnp.sum(val[:2] ** 2 + val[2:] ** 3) * a

    grad = jax.jit(jax.grad(loss_sum))
    point = jnp.array([2.0, 3.0, 4.0, 5.0])
    first = grad(point, 10.0)
    second = grad(point, 20.0)
    if jnp.allclose(first, second):
        print(f"OBSERVED: after a = 20.0 the jitted gradient is unchanged: {second}")


run()
