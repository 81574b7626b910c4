"""A cheap walk over libcst trees.

libcst's visitor machinery rebuilds the tree as it goes and costs about as much as the parse itself; reading
the dataclass fields directly costs a quarter of that. Whitespace, punctuation and comment fields never hold
code, so they are skipped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

_SKIP_FIELD_PARTS = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after")
_SKIP_FIELDS = frozenset(
    {
        "header",
        "footer",
        "indent",
        "colon",
        "equal",
        "star",
        "dot",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
    }
    | {"operator", "first_colon", "second_colon", "posonly_ind", "start", "end", "asynchronous", "conversion"}
    | {"trailing_whitespace", "newline", "keyword"}
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _code_fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _SKIP_FIELDS
            and not any(part in f.name for part in _SKIP_FIELD_PARTS)
            and f.type is not str  # `Name.value` and the like: never a node, so not worth a look per node
        )
        _FIELDS[cls] = names
    return names


_IS_NODE: dict[type, bool] = {}


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes of `node` that can hold code, in source order (as far as the fields allow)."""
    # isinstance() against libcst's abstract base classes is slow; a per-type answer is cached.
    is_node = _IS_NODE
    out = []
    fields = _FIELDS.get(type(node))
    for name in _code_fields(type(node)) if fields is None else fields:
        value = getattr(node, name)
        cls = type(value)
        if cls is tuple or cls is list:
            for item in value:
                known = is_node.get(type(item))
                if known is None:
                    known = is_node[type(item)] = issubclass(type(item), cst.CSTNode)
                if known:
                    out.append(item)
        else:
            known = is_node.get(cls)
            if known is None:
                known = is_node[cls] = issubclass(cls, cst.CSTNode)
            if known:
                out.append(value)
    return out


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node` (itself included), depth first, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))
