"""What the JAX hooks tell the recorders: which function was traced or compiled, and with what.

Plain data, no jax import, so the parent process and the tests can use it without JAX.
"""

from __future__ import annotations

import dataclasses

from .signatures import Signature


@dataclasses.dataclass(frozen=True)
class FunctionInfo:
    """A jitted Python function, identified by where it is written, so re-created lambdas share one entry."""

    module: str
    qualname: str
    path: str  # absolute path of the source file, as Python compiled it
    first_line: int  # the code object's first line: the first decorator line when decorated
    line: int  # the `def` (or `lambda`) line
    internal: bool = False  # defined inside jax or jaxlib: eager op-by-op dispatch, jnp helpers

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.path, self.first_line, self.qualname)


@dataclasses.dataclass(frozen=True)
class TraceEvent:
    """One execution of a jitted function's Python body (a tracing-cache miss), top-level or nested."""

    info: FunctionInfo
    signature: Signature = ()
    reason: str | None = None  # why this trace missed the cache; None for the function's first trace
    callsite: str | None = None  # "path:line" of the user code that made the call
    jax_hint: str | None = None  # JAX's own explanation (jax_explain_cache_misses), when it gave one


@dataclasses.dataclass(frozen=True)
class CompileEvent:
    """One XLA compile request (`backend_compile_duration`), with the function it was attributed to."""

    name: str  # the function name inside JAX's `jit(NAME)`
    info: FunctionInfo | None  # None: no traced function of that name (pmap, unknown)
    seconds: float = 0.0
    persistent_cache_hit: bool = False
