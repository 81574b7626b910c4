"""Which findings the runtime can confirm, written once: by tracing (`--verify`, one expectation per code
in the child's table) and by counting recompiles in a real run (`--run`). `Rule.confirmable` must say the
same; tests/runtime/test_confirmable.py checks it."""

from __future__ import annotations

from .verify.child.expectations import CONFIRMABLE_CODES as VERIFY_CODES

RECOMPILE_CODES: frozenset[str] = frozenset({"JAX401", "JAX402"})

CONFIRMABLE_CODES: frozenset[str] = VERIFY_CODES | RECOMPILE_CODES

__all__ = ["CONFIRMABLE_CODES", "RECOMPILE_CODES", "VERIFY_CODES"]
