"""The shared semantic model every rule queries; facts more than one rule needs live here, once.

- `names`: what a name means (imports and aliases to qualified names);
- `transforms` and `index`: which functions run under a transformation, which parameters are traced; per
  function (`Unit`) what its statements bind, its `global`/`nonlocal` names and its loops;
- `values`: whether an expression is traced (flags), and its structure where known (`abstract.Value`: kind,
  literal, tuple elements, definition); `namespaces`: the JAX array namespaces;
- `flow`: the ordered walk over each function that rules ride on (`flow_frame`: the frame, `ctx`;
  `flow_calls`: what calls tell it; `flow_guards`: what `if` tests tell it); `context.RuleContext` is what a
  rule sees;
- `paths`: the path engine (statement order, joins, loop rounds) the key dataflow runs on; `keys` (with
  `key_model`, `key_versions`, `key_calls`, `key_callees`): the PRNG key dataflow;
- `jit`, `storage`, `classes`, `usage`: jitted callables, where stores land, class facts, how a name is used;
- `kinds`: the flags and kinds facts are made of; `project` and `module_facts`: facts across modules (the
  summaries, and how a module's walk draws its own).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .kinds import ARRAY, BOOL, GRAD, HOLDS_TRACED, HOST, LIST, NONE, STRICT, TRACED

if TYPE_CHECKING:
    from .flow import FlowWalker, Frame
    from .index import ModuleIndex, Unit

# The walk and the index are imported on first use: importing a libcst-free submodule (`project`, `kinds`,
# which a run answered from the findings cache reads) runs this file, and must not import libcst.
_LAZY = {"FlowWalker": "flow", "Frame": "flow", "ModuleIndex": "index", "Unit": "index"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = [
    "ARRAY",
    "BOOL",
    "GRAD",
    "HOLDS_TRACED",
    "HOST",
    "LIST",
    "NONE",
    "STRICT",
    "TRACED",
    "FlowWalker",
    "Frame",
    "ModuleIndex",
    "Unit",
]
