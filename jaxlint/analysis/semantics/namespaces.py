"""The JAX namespaces whose functions compute on arrays, and the NumPy functions that build arrays.

One definition, and the narrower sets some rules need, each with the reason it is narrower. All are
qualified-name prefixes (with the trailing dot), as `ModuleIndex.qualname` spells them.
"""

from __future__ import annotations

NAMESPACES_CHECKED = "jax 0.10.2, numpy 2.4.6, python 3.11.7"  # tests/analysis/test_namespaces.py

# Host numerics: their functions convert array arguments on the host, so a tracer raises. NumPy's:
# TracerArrayConversionError (but see NUMPY_DELEGATING); the stdlib's `math`: ConcretizationTypeError.
NUMPY = "numpy."
MATH = "math."
# NumPy's namespaces of dtypes (`np.dtype(x.dtype)`, `np.dtypes.Float32DType`): they take a dtype, not values.
NUMPY_DTYPE = "numpy.dtype"
JAX_NUMPY = "jax.numpy."

# Namespaces whose functions take and return JAX arrays (so they dispatch device work and, under a
# transformation, return tracers). A few of their functions answer static questions instead:
# `semantics.library.CONCRETE_JAX_FUNCTIONS` / `CONCRETE_JAX_PREFIXES`.
ARRAY_NAMESPACES = (
    JAX_NUMPY,
    "jax.lax.",
    "jax.random.",
    "jax.nn.",
    "jax.scipy.",
    "jax.image.",
    "jax.ops.",
)

# The ones whose calls dispatch work asynchronously, for JAX403 (timing): `jax.ops` is left out, as it was
# when the rule was written (its functions are deprecated aliases of `.at[]` updates).
DISPATCHING_NAMESPACES = tuple(n for n in ARRAY_NAMESPACES if n != "jax.ops.")

# The ones whose results JAX402 names "a JAX array" when passed as a static argument: the array builders users
# reach for there (`jnp.zeros`, `jax.random.normal`, `lax.iota`, `nn.one_hot`); `jax.scipy`, `jax.image`
# and `jax.ops` calls are not seen as configuration values.
ARRAY_BUILDING_NAMESPACES = ("jax.numpy.", "jax.random.", "jax.lax.", "jax.nn.")

# NumPy functions that call the method (`real`, `imag`: read the attribute) of the same name on their first
# argument when it has one: on a JAX array (a tracer under jit) they give what the method gives, a JAX array,
# and raise nothing (`np.real`/`np.imag` checked on jax 0.10.2 under jit).
NUMPY_DELEGATING = frozenset(
    "numpy." + n
    for n in (
        "sum mean max min amax amin prod std var any all argmax argmin cumsum cumprod round around transpose "
        "reshape squeeze swapaxes repeat searchsorted real imag"
    ).split()
)

# NumPy functions that build arrays (NumPy scalars such as `np.float32(1.0)` are hashable and not listed).
NUMPY_ARRAYS = frozenset(
    "numpy." + n
    for n in (
        "array asarray zeros ones empty full arange linspace logspace geomspace eye identity zeros_like "
        "ones_like full_like empty_like stack concatenate vstack hstack diag tri tril triu meshgrid"
    ).split()
)
