import flax.linen as nn
import jax
import jax.numpy as jnp


class ExpertMLP(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        return nn.Dense(x.shape[-1])(nn.gelu(nn.Dense(self.hidden)(x)))


class SparseExperts(nn.Module):
    num_experts: int
    hidden: int

    @nn.compact
    def __call__(self, tokens, router_logits):
        weights = jax.nn.softmax(router_logits, axis=-1)
        chosen = jnp.argmax(weights, axis=-1)
        out = jnp.zeros_like(tokens)
        for e in range(self.num_experts):
            (rows,) = jnp.nonzero(chosen == e)  # expect: JAX104
            y = ExpertMLP(self.hidden, name=f"expert_{e}")(tokens[rows])
            out = out.at[rows].add(y * weights[rows, e][:, None])
        return out
