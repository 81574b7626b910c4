"""Record classes: classes whose instances hold fixed fields that cannot be reassigned, so that what a
constructor call is given is what the instance's fields hold (`abstract.Value` of kind "instance").

A record is a class of the module that is a `typing.NamedTuple`, a `flax.struct.PyTreeNode` or
`flax.struct.dataclass`, an `equinox.Module`, or a `dataclasses.dataclass(frozen=True)`, with no other base
(whose fields would come first) and no `__init__`, `__new__`, `__post_init__`, field converter, `init=`
field, `KW_ONLY` or `InitVar` (which change what the constructor takes or the fields hold). Its fields are its annotated names in order (not `ClassVar`s):
positional arguments fill them in that order, keywords by name. Assigning a field raises on each of them.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..syntax import argument
from .index import ModuleIndex
from .library import (
    CLASS_VAR,
    CONSTRUCTOR_ANNOTATIONS,
    DATACLASS,
    RECORD_BASES,
    RECORD_DECORATORS,
    RUNS_ON_CONSTRUCTION,
)

_MEMO = "record_fields"


def record_fields(index: ModuleIndex, cls: cst.ClassDef) -> tuple[str, ...] | None:
    """The fields of a record class, in order; None when `cls` is not a record (kept with the module)."""
    memo: dict[int, tuple[str, ...] | None] = index.root.memo.setdefault(_MEMO, {})
    key = id(cls)
    if key not in memo:
        memo[key] = _fields(index, cls)
    return memo[key]


def _fields(index: ModuleIndex, cls: cst.ClassDef) -> tuple[str, ...] | None:
    imports = index.imports
    based = [imports.qualname(b.value) for b in cls.bases]
    if cls.keywords or any(b.star for b in cls.bases):
        return None
    decorated = [_decorator(d.decorator, imports) for d in cls.decorators]
    if based:
        if len(based) != 1 or based[0] not in RECORD_BASES or cls.decorators:
            return None
    elif len(decorated) != 1 or not decorated[0]:
        return None
    fields: list[str] = []
    for statement in cls.body.body:
        if type(statement) is cst.FunctionDef:
            if statement.name.value in RUNS_ON_CONSTRUCTION:
                return None
            continue
        if type(statement) is not cst.SimpleStatementLine:
            if type(statement) is cst.ClassDef:
                continue
            return None  # an `if` in the body: the fields are not known
        for small in statement.body:
            if type(small) is cst.AnnAssign and type(small.target) is cst.Name:
                head = _head(small.annotation.annotation) or ""
                if head == CLASS_VAR:
                    continue
                if head in CONSTRUCTOR_ANNOTATIONS:
                    return None  # the constructor's parameters are not the fields in order
                value = small.value
                if type(value) is cst.Call and (
                    argument(value, None, "converter") is not None
                    or argument(value, None, "init") is not None
                ):
                    return None  # a converted field, or one the constructor does not take
                fields.append(small.target.value)
    return tuple(fields)


def _decorator(node: cst.BaseExpression, imports: Any) -> bool:
    """`@flax.struct.dataclass`, `@dataclass(frozen=True)`."""
    if imports.qualname(node) in RECORD_DECORATORS:
        return True
    if type(node) is cst.Call and imports.qualname(node.func) == DATACLASS:
        frozen = argument(node, None, "frozen")
        return frozen is not None and type(frozen.value) is cst.Name and frozen.value.value == "True"
    return False


def _head(node: cst.BaseExpression) -> str | None:
    if type(node) is cst.Subscript:
        node = node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    return node.value if type(node) is cst.Name else None
