import jax
import jax.numpy as jnp
from flax import nnx

VOCAB = 16
EOS = 1


class TinyFAST(nnx.Module):
    def __init__(self, rngs):
        self.embed = nnx.Embed(VOCAB, 8, rngs=rngs)
        self.head = nnx.Linear(8, VOCAB, rngs=rngs)

    def sample_actions(self, rng, first_token, *, max_decoding_steps=6, temperature=0.0):
        last_logit = self.head(self.embed(first_token))
        output_tokens = jnp.zeros((first_token.shape[0], max_decoding_steps), dtype=jnp.int32)

        def step(carry):
            last_logit, output_tokens, _, i = carry
            if temperature > 0.0:  # expect: JAX101
                token = jax.random.categorical(rng, last_logit / temperature, axis=-1)  # expect: JAX301
            else:
                token = jnp.argmax(last_logit, axis=-1)
            output_tokens = output_tokens.at[:, i].set(token)
            all_eos = jnp.all(token == EOS)
            return self.head(self.embed(token)), output_tokens, all_eos, i + 1

        def cond(carry):
            _, _, all_eos, i = carry
            return (~all_eos) & (i < max_decoding_steps)

        carry = (last_logit, output_tokens, jnp.array(False), 0)
        return jax.lax.while_loop(cond, step, carry)[1]
