"""Calls that cannot be rebuilt by name, kept with cloudpickle: a flax `TrainState` holds `apply_fn` and an
optax transformation (closures) in its static part, which call_records' JSON cannot name.

The traced arguments' arrays are replaced by `jax.ShapeDtypeStruct` placeholders first (PRNG keys too, with
their key dtype), so a pickle holds the structure, the static part and no data; static arguments are kept
as they are. The record is `{"pickled": BASE64, "static_argnums": [...], "static_argnames": [...]}`, where
BASE64 is `cloudpickle.dumps({"args": tuple, "kwargs": dict})`; over `MAX_PICKLE_BYTES` it is not kept.
Unpickling runs code: the store signs each record (signature_store.py) and `--verify` refuses unsigned
ones.

Runs in the command's process: nothing here imports jax (the hooks hand it over) or cloudpickle until a
call needs it.
"""

from __future__ import annotations

import base64
from typing import Any

MAX_PICKLE_BYTES = 1 << 20


def pickle_call(
    jax: Any, args: tuple, kwargs: dict, static_argnums: tuple, static_argnames: tuple
) -> dict[str, Any]:
    """The call as a pickled record, or `{"unkept": why}`."""
    try:
        import cloudpickle
    except ImportError:
        return {"unkept": "cloudpickle is not installed in the command's Python"}
    statics = {i + len(args) if i < 0 else i for i in static_argnums}
    values = {
        "args": tuple(v if i in statics else _placeholders(jax, v) for i, v in enumerate(args)),
        "kwargs": {k: v if k in static_argnames else _placeholders(jax, v) for k, v in kwargs.items()},
    }
    try:
        data = cloudpickle.dumps(values)
    except Exception as error:  # anything a __reduce__ may raise
        return {"unkept": f"cloudpickle cannot pickle it ({type(error).__name__}: {str(error)[:100]})"}
    if len(data) > MAX_PICKLE_BYTES:
        return {"unkept": f"pickled, it takes {len(data)} bytes, over the {MAX_PICKLE_BYTES}-byte limit"}
    return {
        "pickled": base64.b64encode(data).decode("ascii"),
        "static_argnums": sorted(statics),
        "static_argnames": list(static_argnames),
    }


def _placeholders(jax: Any, value: Any) -> Any:
    def placeholder(leaf: Any) -> Any:
        if isinstance(leaf, jax.Array):
            aval = jax.typeof(leaf) if hasattr(jax, "typeof") else jax.core.get_aval(leaf)
            return jax.ShapeDtypeStruct(
                aval.shape, aval.dtype, weak_type=bool(getattr(aval, "weak_type", False))
            )
        return leaf

    return jax.tree_util.tree_map(placeholder, value)
