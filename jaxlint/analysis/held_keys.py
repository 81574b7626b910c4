"""Attributes an object keeps as built: set by its class's constructors (or declared as dataclass/Module
fields) and assigned nowhere else in the module. A key held in one is the same key on every call of a method
that draws from it (`self.key` stored in `__init__`, `jax.random.normal(self.key)` in `noise`), so two calls
of that method on one object draw the same numbers (JAX301, `keys.py`)."""

from __future__ import annotations

from collections import Counter

import libcst as cst

from ..syntax import own_nodes, str_literal, walk
from .classes import CONSTRUCTORS, self_writes
from .index import ModuleIndex, Unit


def kept_attributes(index: ModuleIndex, cls: cst.ClassDef) -> frozenset[str]:
    """The attributes of `cls`'s instances that only construction sets."""
    memo = index.root.memo
    key = f"kept_attributes {id(cls)}"
    if key not in memo:
        built: set[str] = set()
        replaced: set[str] = set()
        for related in _related_classes(index, cls):
            for statement in related.body.body:
                if type(statement) is cst.FunctionDef and statement.params.params:
                    writes = self_writes(statement.body, statement.params.params[0].name.value, nested=True)
                    constructor = statement.name.value in CONSTRUCTORS
                    (
                        built if constructor and related is cls else replaced if not constructor else set()
                    ).update(writes)
                elif type(statement) is cst.SimpleStatementLine and related is cls:
                    for small in statement.body:
                        if type(small) is cst.AnnAssign and type(small.target) is cst.Name:
                            built.add(small.target.value)  # a field: the generated `__init__` sets it
        elsewhere = _assigned_elsewhere(index) | replaced
        memo[key] = frozenset() if "*" in elsewhere else frozenset(built - elsewhere)
    return memo[key]


def _related_classes(index: ModuleIndex, cls: cst.ClassDef) -> list[cst.ClassDef]:
    """`cls`, the module's classes it names as bases and those that name it as a base (their methods may
    replace what `cls`'s methods read)."""
    names = {b.value.value for b in cls.bases if type(b.value) is cst.Name}
    related = [cls]
    for other in index.classes.values():
        if other is None or other is cls:
            continue
        if other.name.value in names or any(
            type(b.value) is cst.Name and b.value.value == cls.name.value for b in other.bases
        ):
            related.append(other)
    return related


def _assigned_elsewhere(index: ModuleIndex) -> frozenset[str]:
    """Attribute names assigned (`x.a = ...`, `x.a += ...`, `setattr(x, "a", ...)`; not through `self`) anywhere
    in the module outside a constructor: such an attribute may be replaced between two calls ("*": a setattr whose name is
    not a literal)."""
    memo = index.root.memo
    if "assigned_elsewhere" not in memo:
        everywhere = writes_outside_constructors(index.module)
        memo["assigned_elsewhere"] = frozenset(name for name, count in everywhere.items() if count > 0)
    return memo["assigned_elsewhere"]


def writes_outside_constructors(root: cst.CSTNode) -> Counter[str]:
    """The attribute writes under `root` that `_assigned_elsewhere` counts (a sum over the module's top-level
    statements: the server's per-unit reuse compares one statement's before and after an edit)."""
    found = _attribute_writes(root)
    for node in walk(root):
        if type(node) is cst.FunctionDef and node.name.value in CONSTRUCTORS:
            found.subtract(_attribute_writes(node.body))
    return found


def _attribute_writes(root: cst.CSTNode) -> Counter[str]:
    found: Counter[str] = Counter()
    for node in walk(root):
        if type(node) is cst.Assign:
            for target in node.targets:
                found.update(_attribute_targets(target.target))
        elif type(node) is cst.AugAssign or type(node) is cst.AnnAssign:
            found.update(_attribute_targets(node.target))
        elif type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "setattr":
            name = str_literal(node.args[1].value) if len(node.args) > 1 else None
            found[name if name is not None else "*"] += 1
    return found


def _attribute_targets(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [name for e in target.elements for name in _attribute_targets(e.value)]
    if type(target) is cst.StarredElement:
        return _attribute_targets(target.value)
    while type(target) is cst.Subscript:
        target = target.value  # `x.a[i] = v` changes what `x.a` holds
    if type(target) is not cst.Attribute or type(target.value) is cst.Name and target.value.value == "self":
        return []  # `self.a = ...`: the class's own (kept_attributes reads its methods)
    return [target.attr.value]


def held_value(
    index: ModuleIndex, node: cst.BaseExpression, unit: Unit
) -> tuple[cst.BaseExpression, Unit] | None:
    """`self._f` read in a method (or a function nested in one) of a module class whose constructor binds
    `self._f = value` once and which nothing else in the module assigns (`kept_attributes`): the value and
    the constructor's unit to read it in (`self._f = jax.jit(self._g)` in `__init__`: calling `self._f`
    calls the jitted method). None otherwise."""
    if type(node) is not cst.Attribute or type(node.value) is not cst.Name:
        return None
    name = node.value.value
    method: Unit | None = unit
    while method is not None and not method.is_method:
        if name in method.local_names or method.parent is None:
            return None
        method = method.parent
    if method is None or type(method.node) is not cst.FunctionDef:
        return None
    params = [*method.node.params.posonly_params, *method.node.params.params]
    cls = method.class_node
    if (
        not params
        or params[0].name.value != name
        or cls is None
        or index.classes.get(cls.name.value) is not cls
    ):
        return None
    attribute = node.attr.value
    if attribute not in kept_attributes(index, cls):
        return None
    key = f"held_values {id(cls)}"
    table = index.root.memo.get(key)
    if table is None:
        table = index.root.memo[key] = _held_values(index, cls)
    return table.get(attribute)


def _held_values(index: ModuleIndex, cls: cst.ClassDef) -> dict[str, tuple[cst.BaseExpression, Unit] | None]:
    """Each attribute the class's constructors bind with one plain `self.a = value` statement (None: several)."""
    found: dict[str, tuple[cst.BaseExpression, Unit] | None] = {}
    for statement in cls.body.body:
        if type(statement) is not cst.FunctionDef or statement.name.value not in CONSTRUCTORS:
            continue
        constructor = index.units.get(id(statement))
        params = statement.params.params
        if constructor is None or not params:
            continue
        own = params[0].name.value
        for node in own_nodes(statement):
            if type(node) is cst.Assign:
                targets = [t.target for t in node.targets]
            elif type(node) is cst.AnnAssign:
                targets = [node.target]
            else:
                continue
            value = node.value
            for target in targets:
                if (
                    type(target) is cst.Attribute
                    and type(target.value) is cst.Name
                    and target.value.value == own
                ):
                    attribute = target.attr.value
                    if attribute in found or len(targets) != 1 or value is None:
                        found[attribute] = None
                    else:
                        found[attribute] = (value, constructor)
    return found
