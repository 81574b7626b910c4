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
    {"header", "footer", "indent", "colon", "equal", "star", "dot", "lbracket", "rbracket", "lbrace", "rbrace"}
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
            if f.name not in _SKIP_FIELDS and not any(part in f.name for part in _SKIP_FIELD_PARTS)
        )
        _FIELDS[cls] = names
    return names


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The child nodes of `node` that can hold code, in source order (as far as the fields allow)."""
    for name in _code_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node` (itself included), depth first, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))
