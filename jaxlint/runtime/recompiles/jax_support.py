"""What the JAX of this process supports of recompile counting, found by looking for the feature itself
(never by version number). The verify child, loaded as a package of its own, asks the same in
`verify/child/jax_features.py`. The oldest JAX the runtime mode supports is `OLDEST_JAX` (pyproject.toml
says the same; tests/runtime passes on it and on the newest release)."""

from __future__ import annotations

import inspect
from typing import Any

# jax.ShapeDtypeStruct(weak_type=), which every made-up input needs, arrived in 0.4.33. Before 0.9 (no
# per-call jit hook) recompiles are counted per function only and verify keeps no live calls; the header
# says so, and tests/runtime skips what needs them.
OLDEST_JAX = "0.4.33"

# JAX's private per-call jit hook (0.9 on): a jitted call's function, static arguments and abstract values.
TRACE_FOR_JIT_PARAMS = ["fun", "ji", "ctx_mesh", "dbg", "avals", "args", "kwargs"]


def trace_for_jit() -> Any:
    """JAX's own `pjit._trace_for_jit` (under any wrapper of ours) when it has the known parameters."""
    try:
        from jax._src import pjit
    except Exception:
        return None
    original = getattr(pjit, "_trace_for_jit", None)
    original = getattr(original, "_jaxlint_original", original)
    try:
        if original is None or list(inspect.signature(original).parameters) != TRACE_FOR_JIT_PARAMS:
            return None
    except (TypeError, ValueError):
        return None
    return original


def exact_signatures() -> bool:
    """Whether recompile counting records each trace's signature and retrace reason (else counts only)."""
    return trace_for_jit() is not None
