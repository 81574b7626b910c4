"""Whether a module's key dataflow (`keys/dataflow.py`) can find anything at all: the cheap test run before it, so that
a module that draws no random numbers neither runs nor imports the dataflow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..semantics.library import KEY_CONSUMING_APIS, KEY_METHODS

if TYPE_CHECKING:
    from ..binding.index import ModuleIndex

RANDOM = "jax.random."


def uses_keys(index: ModuleIndex) -> bool:
    """Does the module call anything in jax.random, a library API that consumes keys, or another project module's
    function that consumes keys?"""
    project = index.project
    # Asked by JAX301 and several parts of the summary: answered once per index and project facts.
    found = index.root.memo.get("uses_keys")
    if found is None or found[0] is not project:
        found = index.root.memo["uses_keys"] = (project, _uses_keys(index, project))
    return found[1]


def _uses_keys(index: ModuleIndex, project: Any) -> bool:
    if project is not None and any(e.keys for e in project.exports.values()):
        return True
    # The index already holds every call: no second walk over the module (it was most of JAX301's time).
    names = index.callee_names
    if any(q == "jax" or q.startswith("jax.random") for q in index.imports.names.values()):
        if any(name.startswith(RANDOM) for name in names):
            return True
    # A library call the table says consumes a key, or makes an object whose methods do (a module that only
    # passes its caller's key to `hk.transform(f).apply(params, rng, x)` in a loop).
    return any(
        name in KEY_CONSUMING_APIS
        or any(name == f or f.endswith(".") and name.startswith(f) for f in KEY_METHODS)
        for name in names
    )
