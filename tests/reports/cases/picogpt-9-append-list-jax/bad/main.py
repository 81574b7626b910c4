import jax
import jax.numpy as np


def gpt2(inputs, wte, wpe, w_out):
    x = wte[np.array(inputs)] + wpe[np.arange(len(inputs))]
    return np.tanh(x) @ w_out


def generate(inputs, params, n_tokens_to_generate):
    for _ in range(n_tokens_to_generate):
        logits = gpt2(inputs, **params)
        next_id = np.argmax(logits[-1])
        inputs = np.append(inputs, [next_id])  # expect: JAX502
    return list(inputs[len(inputs) - n_tokens_to_generate :])


key = jax.random.PRNGKey(0)
k1, k2, k3 = jax.random.split(key, 3)
params = {
    "wte": jax.random.normal(k1, (50, 16)),
    "wpe": jax.random.normal(k2, (64, 16)),
    "w_out": jax.random.normal(k3, (16, 50)),
}
prompt_ids = [3, 17, 42]
print("generated:", generate(prompt_ids, params, 4))
