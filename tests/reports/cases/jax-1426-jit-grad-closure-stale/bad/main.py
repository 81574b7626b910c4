import jax
import jax.numpy as jnp


def run():
    a = 10.0

    def loss_sum(val):
        return jnp.sum(val[:2] ** 2 + val[2:] ** 3) * a  # expect: JAX202

    grad = jax.jit(jax.grad(loss_sum))
    point = jnp.array([2.0, 3.0, 4.0, 5.0])
    first = grad(point)
    a = 20.0
    second = grad(point)
    if jnp.allclose(first, second):
        print(f"OBSERVED: after a = {a} the jitted gradient is unchanged: {second}")


run()
