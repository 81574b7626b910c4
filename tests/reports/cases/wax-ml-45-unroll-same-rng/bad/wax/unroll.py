import haiku as hk
import jax.numpy as jnp


def unroll(fun, xs, rng):
    model = hk.transform(fun)
    params = model.init(rng, xs[0])
    outputs = []
    for x in xs:
        outputs.append(model.apply(params, rng, x))  # expect: JAX301
    return jnp.stack(outputs)
