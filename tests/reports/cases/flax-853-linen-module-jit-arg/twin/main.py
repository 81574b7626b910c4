from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp


class Model(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        return nn.Dense(self.features)(x)


def compute_metrics(logits, labels):
    loss = -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, 3), -1))
    return {"loss": loss, "accuracy": jnp.mean(jnp.argmax(logits, -1) == labels)}


@partial(jax.jit, static_argnums=0)
def eval_step(model, params, batch):
    logits = model.apply({"params": params}, batch["X"])
    return compute_metrics(logits, batch["y"])


def eval_model(model, params, test_ds):
    metrics = eval_step(model, params, test_ds)
    metrics = jax.device_get(metrics)
    return float(metrics["loss"]), float(metrics["accuracy"])


model = Model(3)
test_ds = {"X": jnp.ones((8, 4)), "y": jnp.arange(8) % 3}
params = model.init(jax.random.PRNGKey(0), test_ds["X"])["params"]
print(eval_model(model, params, test_ds))
