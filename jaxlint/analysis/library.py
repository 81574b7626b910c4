"""What library functions and classes do to values under JAX: one table, data only.

The value model (`values.py`), the transform model (`transforms.py`) and the pytree model (`pytrees.py`)
read these tables; rules never hard-code a library fact themselves. Every entry states what is true at run
time, checked on JAX 0.10.2 (`lax.psum(1, "i")` under `vmap`, `jit(vmap)` and `pmap`) where not documented.
"""

from __future__ import annotations

# What a call returns, keyed by qualified name.
PYTHON_IF_OPERAND_IS = "python-if-operand-is-python"  # a Python value when its operand is a Python value
CONCRETE = "concrete"  # a Python value whatever the arguments
TRACED_RESULT = "traced"  # a tracer even on constant arguments

CALL_RESULTS: dict[str, str] = {
    # Collectives reduce Python scalars eagerly: `psum(1, axis)` is the axis size as an `int`, `pmean(1, axis)`
    # is `1.0`. (`pmax`/`pmin` give a TypedInt under vmap but a tracer under pmap: not listed.)
    "jax.lax.psum": PYTHON_IF_OPERAND_IS,
    "jax.lax.pmean": PYTHON_IF_OPERAND_IS,
    # The size of a named axis is known while tracing; the index along it is not.
    "jax.lax.axis_size": CONCRETE,
    "jax.lax.axis_index": TRACED_RESULT,
}

# Host callbacks: the function they are given runs outside the trace, on concrete NumPy values.
HOST_CALLBACKS = frozenset(
    {
        "jax.debug.callback",
        "jax.pure_callback",
        "jax.io_callback",
        "jax.experimental.host_callback.call",
        "jax.experimental.host_callback.id_tap",
    }
)

# Pytree classes that libraries ship: qualified name -> (static fields, data fields).
LIBRARY_PYTREES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "flax.training.train_state.TrainState": (
        frozenset({"apply_fn", "tx"}),
        frozenset({"step", "params", "opt_state"}),
    ),
}

# How a class becomes a pytree, and where its static fields are declared:
FIELDS = "fields"  # a dataclass: static fields are marked per field (see FIELD_FUNCTIONS, STATIC_METADATA)
FLATTEN = "flatten"  # `tree_flatten` returns (children, aux data): fields read into the aux data are static
ALL_STATIC = "all-static"  # the whole instance is aux data: no leaves at all
ALL_DATA = "all-data"  # every field is a child (NamedTuple, chex.dataclass)

# Class decorators (or registration calls taking the class first) -> how.
PYTREE_DECORATORS: dict[str, str] = {
    "flax.struct.dataclass": FIELDS,
    "chex.dataclass": ALL_DATA,
    "jax.tree_util.register_dataclass": FIELDS,  # or explicit data_fields=/meta_fields=
    "jax.tree_util.register_pytree_node_class": FLATTEN,
    "jax.tree_util.register_pytree_with_keys_class": FLATTEN,
    "jax.tree_util.register_static": ALL_STATIC,
}
# Base classes -> how their subclasses are pytrees.
PYTREE_BASES: dict[str, str] = {
    "flax.struct.PyTreeNode": FIELDS,
    "equinox.Module": FIELDS,
    "typing.NamedTuple": ALL_DATA,
}
# flax.linen modules: dataclass fields are hyperparameters, static under `apply`.
LINEN_MODULE_BASES = frozenset({"flax.linen.Module", "flax.linen.module.Module"})

# Field constructors and how each marks a field static: (keyword, value meaning static).
FIELD_FUNCTIONS: dict[str, tuple[str, bool]] = {
    "flax.struct.field": ("pytree_node", False),
    "equinox.field": ("static", True),
    "equinox.static_field": ("", True),  # every field it makes is static
    "dataclasses.field": ("metadata", True),
}
# Keys of `field(metadata={...})` that mark a field static, with the value that does.
STATIC_METADATA: dict[str, bool] = {"pytree_node": False, "static": True}
