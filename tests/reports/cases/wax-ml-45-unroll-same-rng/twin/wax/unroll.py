import haiku as hk
import jax
import jax.numpy as jnp


def unroll(fun, xs, rng):
    model = hk.transform(fun)
    rng, init_rng = jax.random.split(rng)
    params = model.init(init_rng, xs[0])
    outputs = []
    for x in xs:
        rng, step_rng = jax.random.split(rng)
        outputs.append(model.apply(params, step_rng, x))
    return jnp.stack(outputs)
