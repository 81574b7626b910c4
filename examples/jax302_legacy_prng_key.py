"""JAX302 (opt-in): a legacy raw PRNGKey hides key reuse from jax_debug_key_reuse; jax.random.key does not."""

import jax

key = jax.random.PRNGKey(0)  # JAX302: use jax.random.key(0)
typed_key = jax.random.key(0)
