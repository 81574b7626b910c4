"""How a function uses a name: as an array (`x.at`, `x * 2`, `jnp.sum(x)`) or as a container (`d["k"]`,
`xs.append`). A traced parameter may be a whole pytree; rules that need an array ask for evidence here.
"""

from __future__ import annotations

import libcst as cst

from ..syntax import walk

_CONTAINER_METHODS = frozenset(
    {"append", "extend", "items", "keys", "values", "get", "update", "setdefault", "pop", "insert"}
)
_ARRAY_ATTRIBUTES = frozenset(
    {
        "at",
        "shape",
        "ndim",
        "dtype",
        "size",
        "T",
        "astype",
        "reshape",
        "sum",
        "mean",
        "max",
        "min",
        "dot",
        "block_until_ready",
    }
)


class NameUsage:
    def __init__(self, function: cst.CSTNode) -> None:
        self.containers: set[str] = set()
        self.arrays: set[str] = set()
        for node in walk(function):
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
                if node.attr.value in _CONTAINER_METHODS:
                    self.containers.add(node.value.value)
                elif node.attr.value in _ARRAY_ATTRIBUTES:
                    self.arrays.add(node.value.value)
            elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
                if any(
                    isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString)
                    for e in node.slice
                ):
                    self.containers.add(node.value.value)
            elif isinstance(node, cst.BinaryOperation):
                for side in (node.left, node.right):
                    if isinstance(side, cst.Name):
                        self.arrays.add(side.value)

    def is_array(self, name: str) -> bool:
        """Used like an array somewhere, and never like a dict or list."""
        return name in self.arrays and name not in self.containers


_CACHE: dict[int, tuple[cst.CSTNode, NameUsage]] = {}


def usage_of(function: cst.CSTNode) -> NameUsage:
    cached = _CACHE.get(id(function))
    if cached is None or cached[0] is not function:
        if len(_CACHE) > 256:
            _CACHE.clear()
        cached = (function, NameUsage(function))
        _CACHE[id(function)] = cached
    return cached[1]
