"""Whether a module's key dataflow (`keys.py`) can find anything at all: the cheap test run before it, so that
a module that draws no random numbers neither runs nor imports the dataflow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .index import ModuleIndex

RANDOM = "jax.random."


def uses_keys(index: ModuleIndex) -> bool:
    """Does the module call anything in jax.random, or another project module's function that consumes keys?"""
    project = index.project
    # Asked by JAX301 and several parts of the summary: answered once per index and project facts.
    found = index.root.memo.get("uses_keys")
    if found is None or found[0] is not project:
        found = index.root.memo["uses_keys"] = (project, _uses_keys(index, project))
    return found[1]


def _uses_keys(index: ModuleIndex, project: Any) -> bool:
    if project is not None and any(e.keys for e in project.exports.values()):
        return True
    if any(q == "jax" or q.startswith("jax.random") for q in index.imports.names.values()):
        # The index already holds every call: no second walk over the module (it was most of JAX301's time).
        return any(name.startswith(RANDOM) for name in index.callee_names)
    return False
