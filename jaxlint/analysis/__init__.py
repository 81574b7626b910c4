"""The shared semantic model every rule queries; facts more than one rule needs live here, once.

- `names`: what a name means (imports and aliases to qualified names);
- `transforms` and `index`: which functions run under a transformation, which parameters are traced; per
  function (`Unit`) what its statements bind, its `global`/`nonlocal` names and its loops;
- `values`: whether an expression is traced (flags); `namespaces`: the JAX array namespaces;
- `flow`: the ordered walk over each function that rules ride on; `context.RuleContext` is what a rule sees;
- `jit`, `storage`, `classes`, `keys`, `usage`: jitted callables, where stores land, class facts, PRNG key
  dataflow, how a name is used.
"""

from .flow import FlowWalker, Frame
from .index import ModuleIndex, Unit
from .transforms import GRAD, HOST, NONE, STRICT
from .values import ARRAY, BOOL, HOLDS_TRACED, LIST, TRACED

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
