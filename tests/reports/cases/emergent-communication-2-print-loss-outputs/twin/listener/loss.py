from typing import NamedTuple

import jax
import jax.numpy as jnp


class ListenerLossOutputs(NamedTuple):
    loss: jax.Array
    accuracy: jax.Array


def listener_loss(params, messages, targets):
    logits = messages @ params
    log_probs = jax.nn.log_softmax(logits)
    loss = -jnp.mean(jnp.take_along_axis(log_probs, targets[:, None], axis=1))
    accuracy = jnp.mean(jnp.argmax(logits, axis=1) == targets)
    return loss, ListenerLossOutputs(loss=loss, accuracy=accuracy)


@jax.jit
def update(params, messages, targets):
    grads, outputs = jax.grad(listener_loss, has_aux=True)(params, messages, targets)
    return params - 0.1 * grads, outputs
