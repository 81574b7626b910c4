"""The shared semantic model every rule queries (DESIGN §3).

- `names`: what a name means (imports and aliases to qualified names);
- `transforms` and `index`: which functions run under a transformation, which parameters are traced;
- `values`: whether an expression is traced (flags);
- `flow`: the ordered walk over each function that rules ride on.
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
