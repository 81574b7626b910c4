"""What this JAX cannot give `--verify`, in words for its header (`verify: jax 0.4.33, cpu; this JAX
lacks …`). Found by looking for each feature, never by version number; recompiles/jax_support.py asks the
same for recompile counting (the two packages load apart, so neither imports the other)."""

from __future__ import annotations

import inspect

_TRACE_FOR_JIT_PARAMS = ["fun", "ji", "ctx_mesh", "dbg", "avals", "args", "kwargs"]


def missing_features() -> list[str]:
    try:
        from jax._src import pjit

        original = getattr(pjit, "_trace_for_jit", None)
        original = getattr(original, "_jaxlint_original", original)
        hooked = (
            original is not None and list(inspect.signature(original).parameters) == _TRACE_FOR_JIT_PARAMS
        )
    except Exception:
        hooked = False
    if hooked:
        return []
    # JAX before 0.9 has no per-call jit hook (`pjit._trace_for_jit`).
    return ["live calls of top-level code", "recompile signatures and reasons"]
