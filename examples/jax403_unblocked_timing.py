"""JAX403: timing a jitted call without waiting for it measures only the dispatch."""

import time

import jax
import jax.numpy as jnp


@jax.jit
def matmul_chain(a, b):
    return jnp.tanh(a @ b) @ b


def benchmark(a, b, repeats=10):
    matmul_chain(a, b).block_until_ready()  # warm up: compile outside the timed region
    start = time.perf_counter()
    for _ in range(repeats):
        out = matmul_chain(a, b)
    elapsed = time.perf_counter() - start  # JAX403: add jax.block_until_ready(out) before this line
    return out, elapsed / repeats
