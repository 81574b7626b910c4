"""The library table's array-API rows: the functions that answer the namespace of the arrays they are given
(`xp = array_namespace(x)`). Given JAX arrays, traced or not, each answers `jax.numpy` itself, so calls through
the namespace are `jnp` calls (a tracer under jit); given NumPy arrays, a NumPy namespace. Data only, run by
tests/analysis/test_library_array_api.py on the versions named below (skipped where a library is absent).
"""

from __future__ import annotations

ARRAY_API_CHECKED = "jax 0.10.2, array-api-compat 1.16.0, scipy 1.17.1 (SCIPY_ARRAY_API=1)"

# The namespace the getters answer for JAX arrays (and the JAX array method `__array_namespace__`).
JAX_NAMESPACE = "jax.numpy"

# Namespace getters: the qualified name as an import spells it.
NAMESPACE_GETTERS = frozenset(
    {
        "array_api_compat.array_namespace",
        "array_api_compat.get_namespace",
        "scipy._lib._array_api.array_namespace",
        "scipy._lib.array_api_compat.array_namespace",
    }
)

# The method of an array that answers its namespace (a JAX array's: `jax.numpy`).
NAMESPACE_METHOD = "__array_namespace__"

# The modules a project's own getter may choose between (`jnp if isinstance(x, jax.Array) else np`).
CHOSEN_NAMESPACES = frozenset({JAX_NAMESPACE, "numpy"})
