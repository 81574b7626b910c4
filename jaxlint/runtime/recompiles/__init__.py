"""Recompile counting: how often each jitted function is traced and compiled in a real run, and why.

Three ways in, one counter (`jax_hooks.install()`, once per process):

- `jaxlint --verify --run CMD` → `run_command()`: runs CMD with a `sitecustomize` on `PYTHONPATH`
  (chaining to any existing one) that hooks JAX in each of the command's Python processes when it
  imports jax, and writes one JSON report per process; the reports are merged, printed as a table
  (or JSON) and checked against the compile budget.
- the pytest plugin (`pytest --jaxlint-recompiles`): per-test and per-function counts.
- `jaxlint.runtime.count_compiles()`: a context manager for assertions in users' tests.

Budget: a function may compile at most `DEFAULT_MAX_COMPILES` (10) times in one process (one test
under pytest) unless `--max-compiles N` or `[tool.jaxlint] max-compiles-per-function` (keys
`"module:qualname"` or `"qualname"`; a script's module is `__main__`, its file stem also works) says
otherwise. Ten leaves room for the few shapes a real program meets (train and eval batches, a
last partial batch) and still catches a function that recompiles on every call of a loop. Budgets
apply per process because each process compiles for itself: eight xdist workers compiling `step`
once each is not a recompile.

What is counted, per jitted function (module, qualname, file and `def` line): traces (executions of
its Python body, nested jits included: a jit called inside another is traced, never compiled on its
own), compiles (XLA compile requests; grad/vmap of a jitted function compile extra executables
without a trace, so compiles can exceed traces), the distinct abstract signatures, and for each
retrace the reason, from diffing signatures (`arg 'x': f32[3] → f32[4]`, `static 'n': 2 → 3`) or
the function object (a lambda re-created per call), with JAX's own explanation kept as a hint.
JAX's internal functions (eager op-by-op dispatch) are counted apart; so is `jax.pmap`, which recent
JAX builds as jit of an internal shard_map wrapper that hides the user's function. Processes started with `python -I`, `-E` or `-S` skip the sitecustomize and are not
counted. `JAXLINT_RECOMPILES_PUBLIC_ONLY=1` forces the public-API fallback (see `jax_hooks`).

Importing this package does not import jax; only the hooks do.
"""

from __future__ import annotations

import os
from typing import Any

from .budget import DEFAULT_MAX_COMPILES

# The leaves shared with the other runtime package (`runtime/shared/`): submodules of this package, in the
# linter's process as under the private name this package is loaded by.
__path__.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shared"))

__all__ = ["DEFAULT_MAX_COMPILES", "count_compiles", "run_command"]


def __getattr__(name: str) -> Any:
    if name == "run_command":
        from .instrumented_run import run_command

        return run_command
    if name == "count_compiles":
        from .counting import count_compiles

        return count_compiles
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
