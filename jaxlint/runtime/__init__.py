"""Runtime mode: confirm findings by tracing, and count recompiles in real runs.

Importing this package never imports jax (static mode imports it); names that need jax are loaded on
first access.
"""

from __future__ import annotations

from typing import Any

__all__ = ["count_compiles"]


def __getattr__(name: str) -> Any:
    if name == "count_compiles":
        from jaxlint.runtime.recompiles.counting import count_compiles

        return count_compiles
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
