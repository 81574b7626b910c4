"""JAX's entry points as they were before the user's module was imported.

A module may replace them (`jax.jit = lambda f, **k: f` to debug, a wrapper that swallows errors): the
child traces with the ones taken here, never with the module's, and says when the module replaced one,
since its own code (a helper it jits at trace time, a function it wrapped) runs with the replacement and a
clean trace then proves nothing. `pin(jax)` is called once, before the import; `api()` is what every part
of the child uses as `jax`.
"""

from __future__ import annotations

import importlib
from typing import Any

# What the child calls to trace, to build inputs and to check: taken from the module `jax` before the import.
ENTRY_POINTS = (
    "jit",
    "make_jaxpr",
    "checking_leaks",
    "ShapeDtypeStruct",
    "clear_caches",
    "block_until_ready",
    "disable_jit",
    "config",
)


def _probe(x: Any) -> Any:
    return x


class PinnedJax:
    """The module `jax`, with `ENTRY_POINTS` as they were when pinned; any other attribute is the module's."""

    def __init__(self, jax: Any) -> None:
        self._jax = jax
        self._pinned = {name: getattr(jax, name) for name in ENTRY_POINTS if hasattr(jax, name)}
        # `.trace` of a jit object: a class attribute (JAX 0.5 on; a module could patch it there) or, before,
        # one each jit object gets from `jax.jit` itself.
        self._jit_class = type(jax.jit(_probe))
        self._trace = getattr(self._jit_class, "trace", None)

    def __getattr__(self, name: str) -> Any:
        pinned = self.__dict__["_pinned"]
        if name in pinned:
            return pinned[name]
        return getattr(self.__dict__["_jax"], name)

    def trace_jitted(self, jitted: Any, *args: Any, **kwargs: Any) -> Any:
        """`jitted.trace(*args, **kwargs)` through the method JAX defined, not one the module put there."""
        if self._trace is not None and type(jitted) is self._jit_class:
            return self._trace(jitted, *args, **kwargs)
        return jitted.trace(*args, **kwargs)

    def can_trace_jitted(self, jitted: Any) -> bool:
        return self._trace is not None or hasattr(jitted, "trace")

    def replaced_entry_points(self) -> list[str]:
        """The entry points the module has replaced since they were pinned (`jax.jit`, …)."""
        names = [f"jax.{n}" for n, value in self._pinned.items() if getattr(self._jax, n, None) is not value]
        if self._trace is not None and getattr(self._jit_class, "trace", None) is not self._trace:
            names.append("the `.trace` of jax.jit's objects")
        return names


_pinned: PinnedJax | None = None


def pin(jax: Any) -> PinnedJax:
    """Take JAX's entry points now (before the user's module is imported); `api()` returns them after."""
    global _pinned
    _pinned = PinnedJax(jax)
    return _pinned


def api() -> Any:
    """`jax` for the child's own use: the pinned entry points once `pin` ran, else the module itself."""
    return _pinned if _pinned is not None else importlib.import_module("jax")
