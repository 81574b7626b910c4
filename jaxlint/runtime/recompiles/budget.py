"""The default compile budget, in its own module so that the package and its run driver both read it
without importing each other."""

from __future__ import annotations

# Ten leaves room for the few shapes a real program meets (train and eval batches, a last partial batch)
# and still catches a function that recompiles on every call of a loop.
DEFAULT_MAX_COMPILES = 10
