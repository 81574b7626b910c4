"""Record classes: classes whose instances hold fixed fields that cannot be reassigned, so that what a
constructor call is given is what the instance's fields hold (`values.abstract.Value` of kind "instance").

A record is a class of the module that is a `typing.NamedTuple`, a `flax.struct.PyTreeNode` or
`flax.struct.dataclass`, an `equinox.Module`, or a `dataclasses.dataclass(frozen=True)`, with no other base
(whose fields would come first) and no `__init__`, `__new__`, `__post_init__`, field converter, `init=`
field, `KW_ONLY` or `InitVar` (which change what the constructor takes or the fields hold). Its fields are its annotated names in order (not `ClassVar`s):
positional arguments fill them in that order, keywords by name. Assigning a field raises on each of them.

`constructor` says more widely what a constructor call stores, for any class of the module: a record's
fields, a dataclass-like class's (an equinox Module's `__check_init__` only checks them), or the attributes
a plain class's `__init__` sets straight from its parameters (`self.coeff = coeff`). An instance built
from tracers holds them there (`values.flags._instance`): an object built in traced code carries its tracers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from ...syntax import argument
from ..binding.index import ModuleIndex
from ..semantics.library import (
    CLASS_VAR,
    CONSTRUCTOR_ANNOTATIONS,
    CONSTRUCTORS,
    DATACLASS,
    PLAIN_OBJECT,
    RECORD_BASES,
    RECORD_DECORATORS,
    RUNS_ON_CONSTRUCTION,
)
from .classes import self_writes

_MEMO = "record_fields"
_CONSTRUCTOR_MEMO = "constructors"
# Hooks that run on construction but change no field: a dataclass-like class with them stores what it is given.
CONSTRUCTION_CHECKS = _CHECKS_ONLY = frozenset({"__check_init__"})
# `dataclass(...)` options that leave the constructor taking the fields in order.
_DATACLASS_OPTIONS = frozenset({"frozen", "eq", "repr", "order", "unsafe_hash", "slots", "weakref_slot"})


@dataclass(frozen=True)
class Constructor:
    """What `Cls(...)` stores: the parameters its arguments fill (positional ones in order, then keyword-only
    ones), each parameter's default (None: none, or not a literal), and the field each parameter's value is
    stored in unchanged."""

    positional: tuple[str, ...]
    keyword_only: tuple[str, ...]
    defaults: tuple[tuple[str, cst.BaseExpression], ...]
    fields: tuple[tuple[str, str], ...]  # (field, parameter)


def constructor(index: ModuleIndex, cls: cst.ClassDef) -> Constructor | None:
    """What a constructor call of `cls` stores (kept with the module); None when not known."""
    memo: dict[int, Constructor | None] = index.root.memo.setdefault(_CONSTRUCTOR_MEMO, {})
    key = id(cls)
    if key not in memo:
        memo[key] = _constructor(index, cls)
    return memo[key]


def _constructor(index: ModuleIndex, cls: cst.ClassDef) -> Constructor | None:
    fields = record_fields(index, cls)
    if fields is not None:
        return Constructor(fields, (), (), tuple((f, f) for f in fields))
    if _writes_self(cls):
        return None  # a method changes the fields: what the constructor stored may not be there any more
    fields = _fields(index, cls, _CHECKS_ONLY)
    if fields is not None:
        return Constructor(fields, (), (), tuple((f, f) for f in fields))
    if cls.keywords or cls.decorators:
        return None
    if any(b.keyword is not None or index.imports.qualname(b.value) != PLAIN_OBJECT for b in cls.bases):
        return None  # a base may take the arguments, or set the attributes itself
    inits = [s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == "__init__"]
    if len(inits) != 1 or any(
        type(s) is cst.FunctionDef and s.name.value in ("__new__", "__post_init__") for s in cls.body.body
    ):
        return None
    init = inits[0]
    params = init.params
    if params.posonly_params or init.decorators or not params.params:
        return None
    if type(params.star_arg) is cst.Param or params.star_kwarg is not None:
        return None
    self_name = params.params[0].name.value
    positional = tuple(p.name.value for p in params.params[1:])
    keyword_only = tuple(p.name.value for p in params.kwonly_params)
    names = set(positional) | set(keyword_only)
    stored: dict[str, str] = {}
    for statement in init.body.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue  # only what every path stores before anything else can run
        for small in statement.body:
            for target, value in _assignments(small):
                if (
                    type(target) is cst.Attribute
                    and type(target.value) is cst.Name
                    and target.value.value == self_name
                ):
                    field = target.attr.value
                    named = type(value) is cst.Name and value.value in names and field not in stored
                    stored[field] = value.value if named else ""  # type: ignore[union-attr]
    defaults = tuple(
        (p.name.value, p.default)
        for p in [*params.params[1:], *params.kwonly_params]
        if p.default is not None
    )
    fields_of = tuple((field, param) for field, param in stored.items() if param)
    return Constructor(positional, keyword_only, defaults, fields_of) if fields_of else None


def shows_fields(index: ModuleIndex, cls: cst.ClassDef) -> bool:
    """Whether formatting an instance of `cls` shows its fields' values: a dataclass-like class (its generated
    `__repr__`), or one defining `__repr__`/`__str__`. A plain class shows `<Report object at 0x...>`."""
    if _fields(index, cls, _CHECKS_ONLY) is not None:
        return True
    return any(type(s) is cst.FunctionDef and s.name.value in ("__repr__", "__str__") for s in cls.body.body)


def _writes_self(cls: cst.ClassDef) -> bool:
    """Whether a method of the class other than the constructors assigns an attribute of its instance."""
    for statement in cls.body.body:
        if type(statement) is not cst.FunctionDef or statement.name.value in CONSTRUCTORS:
            continue
        params = statement.params.params
        if params and self_writes(statement.body, params[0].name.value, nested=True):
            return True
    return False


def _assignments(small: cst.BaseSmallStatement) -> list[tuple[cst.BaseExpression, cst.BaseExpression | None]]:
    """(target, value) pairs a simple statement binds, a tuple display unpacked item by item (`self.a, self.b
    = a, b`); a target whose value is not known gets None."""
    if type(small) is cst.AnnAssign:
        return [(small.target, small.value)]
    if type(small) is cst.AugAssign:
        return [(small.target, None)]
    if type(small) is not cst.Assign:
        return []
    out: list[tuple[cst.BaseExpression, cst.BaseExpression | None]] = []
    value = small.value
    for target in small.targets:
        node = target.target
        if (
            (type(node) is cst.Tuple or type(node) is cst.List)
            and (type(value) is cst.Tuple or type(value) is cst.List)
            and len(node.elements) == len(value.elements)
            and not any(type(e) is cst.StarredElement for e in (*node.elements, *value.elements))
        ):
            out.extend((e.value, v.value) for e, v in zip(node.elements, value.elements, strict=True))
        elif type(node) is cst.Tuple or type(node) is cst.List:
            out.extend((e.value, None) for e in node.elements if type(e) is not cst.StarredElement)
        else:
            out.append((node, value))
    return out


def record_fields(index: ModuleIndex, cls: cst.ClassDef) -> tuple[str, ...] | None:
    """The fields of a record class, in order; None when `cls` is not a record (kept with the module)."""
    memo: dict[int, tuple[str, ...] | None] = index.root.memo.setdefault(_MEMO, {})
    key = id(cls)
    if key not in memo:
        memo[key] = _fields(index, cls)
    return memo[key]


def _fields(
    index: ModuleIndex, cls: cst.ClassDef, allowed: frozenset[str] = frozenset()
) -> tuple[str, ...] | None:
    """The fields of a record class; with `allowed`, also of one that defines those construction hooks (and of
    a mutable dataclass: what its constructor stores is still what it is given)."""
    imports = index.imports
    based = [imports.qualname(b.value) for b in cls.bases]
    if cls.keywords or any(b.star for b in cls.bases):
        return None
    decorated = [_decorator(d.decorator, imports, bool(allowed)) for d in cls.decorators]
    if based:
        if len(based) != 1 or based[0] not in RECORD_BASES or cls.decorators:
            return None
    elif len(decorated) != 1 or not decorated[0]:
        return None
    fields: list[str] = []
    for statement in cls.body.body:
        if type(statement) is cst.FunctionDef:
            if statement.name.value in RUNS_ON_CONSTRUCTION and statement.name.value not in allowed:
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


def _decorator(node: cst.BaseExpression, imports: Any, mutable: bool = False) -> bool:
    """`@flax.struct.dataclass`, `@dataclass(frozen=True)` (with `mutable`: any `@dataclass`)."""
    if imports.qualname(node) in RECORD_DECORATORS:
        return True
    if mutable and imports.qualname(node) == DATACLASS:
        return True
    if type(node) is cst.Call and imports.qualname(node.func) == DATACLASS:
        if mutable:
            return all(a.keyword is not None and a.keyword.value in _DATACLASS_OPTIONS for a in node.args)
        frozen = argument(node, None, "frozen")
        return frozen is not None and type(frozen.value) is cst.Name and frozen.value.value == "True"
    return False


def _head(node: cst.BaseExpression) -> str | None:
    if type(node) is cst.Subscript:
        node = node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    return node.value if type(node) is cst.Name else None
