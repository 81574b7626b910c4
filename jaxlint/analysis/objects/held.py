"""Keys fixed when something is built, drawn again on each later call. Attributes an object keeps as built: set by its class's constructors (or declared as dataclass/Module
fields) and assigned nowhere else in the module. A key held in one is the same key on every call of a method
that draws from it (`self.key` stored in `__init__`, `jax.random.normal(self.key)` in `noise`), so two calls
of that method on one object draw the same numbers (JAX301, `keys/dataflow.py`). Also: the attributes a method kept
compiled reads at trace time (`frozen_attributes`), a dataclass field's default key (`defaulted_key`) and the
keys a factory's returned compiled closure captures (`returned_compiled`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import libcst as cst

from ...syntax import int_literal, own_nodes, source_of, str_literal, walk
from ..binding.index import ModuleIndex, Unit
from ..semantics.library import ALL_DATA, CONSTRUCTORS, DATACLASS, FIELDS, PYTREE_DECORATORS, TRANSFORMATIONS
from ..semantics.random_draws import SEEDED_KEY_MAKERS
from .classes import self_writes

# Class decorators that make a dataclass: its `__init__` takes the annotated fields, in order, with defaults.
_DATACLASSES = frozenset(
    {DATACLASS, *(name for name, how in PYTREE_DECORATORS.items() if how in (FIELDS, ALL_DATA))}
)
# Transformations that compile, and so keep what the function read at trace time until the callable is dropped.
_COMPILING = frozenset(name for name, t in TRANSFORMATIONS.items() if t.compiling)
_COMPILING_LABELS = frozenset(TRANSFORMATIONS[name].label for name in _COMPILING)


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


def frozen_attributes(
    index: ModuleIndex, cls: cst.ClassDef, method: str
) -> tuple[str, frozenset[str]] | None:
    """For a method of `cls` compiled as a bound method and kept (`self._loss = jax.jit(self._elbo)` in a method
    of the class): (the compiling transformation's label, the attributes of `self` another method of the class
    outside construction reassigns). The compiled callable read those at trace time and keeps what it read:
    reassigning one later changes nothing it computes (a key advanced in Python, `self.rng, _ =
    split(self.rng)`, is the same key in every call of `self._loss`). A `jax.jit(self.m)(x)` made afresh on
    every call traces again, and is not this, nor is a method that compiles afresh whenever it reassigns. None
    when the method is not kept compiled."""
    memo = index.root.memo
    key = f"frozen_attributes {id(cls)}"
    if key not in memo:
        compiled: dict[str, str] = {}
        advancing: list[tuple[cst.FunctionDef, str]] = []  # methods whose writes to `self` are read anew
        for statement in cls.body.body:
            if type(statement) is not cst.FunctionDef or not statement.params.params:
                continue
            name = statement.params.params[0].name.value
            unit = index.units.get(id(statement))
            rebuilds = False  # the method compiles afresh on every run: what it reassigns is read anew
            for node in walk(statement.body):
                if type(node) is not cst.Assign or type(node.value) is not cst.Call or unit is None:
                    continue
                call = node.value
                if not all(_is_self_attribute(t.target, name) for t in node.targets) or not call.args:
                    continue
                found = index.transform_of(call.func, unit)
                inner = call.args[0].value
                if found is not None and found[0] in _COMPILING and _is_self_attribute(inner, name):
                    assert type(inner) is cst.Attribute
                    compiled[inner.attr.value] = TRANSFORMATIONS[found[0]].label
                    direct = statement.body.body
                    rebuilds |= any(type(s) is cst.SimpleStatementLine and node in s.body for s in direct)
            if statement.name.value not in CONSTRUCTORS and not rebuilds:
                advancing.append((statement, name))
        memo[key] = (compiled, advancing)
    labels, advancing = memo[key]
    label = labels.get(method)
    if label is None:
        return None
    if (
        f"{key} replaced" not in memo
    ):  # the writes only when some method is kept compiled: they walk every method
        memo[f"{key} replaced"] = frozenset(
            attribute
            for statement, name in advancing
            for attribute in self_writes(statement.body, name, nested=True)
        )
    replaced = memo[f"{key} replaced"]
    return (label, replaced) if "*" not in replaced else None


def _is_self_attribute(node: cst.BaseExpression, name: str) -> bool:
    return type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == name


def defaulted_key(analysis: Any, call: cst.Call, unit: Unit) -> tuple[str, str] | None:
    """`RoundState(wall=wall)` in a function that consumes a key it is given, where `RoundState` is a dataclass
    of the module with a field whose default is a key made from a literal seed (`rng_key: jax.Array =
    field(default_factory=lambda: jax.random.PRNGKey(0))`), not given here, and that some function of the module
    consumes (`split(state.rng_key)`): every instance built here holds that one key, whatever key the function
    was given, so their draws are the same. (the field, the default key's text) or None. `analysis`: the
    module's `keys.dataflow.KeyAnalysis`."""
    index = analysis.index
    if type(call.func) is not cst.Name or unit is index.root or call.func.value in unit.local_names:
        return None
    cls = index.classes.get(call.func.value)
    if cls is None or any(a.star for a in call.args):
        return None
    fields = _dataclass_fields(index, cls)
    if not fields:
        return None
    given = {a.keyword.value for a in call.args if a.keyword is not None}
    given.update(name for name, _ in fields[: sum(1 for a in call.args if a.keyword is None)])
    missing = [(name, key) for name, key in fields if key is not None and name not in given]
    if not missing or not analysis.summary(unit).params:
        return None
    consumed = _consumed_attributes(analysis)
    return next(((name, key) for name, key in missing if name in consumed), None)


def _dataclass_fields(index: ModuleIndex, cls: cst.ClassDef) -> list[tuple[str, str | None]]:
    """A plain dataclass's fields in `__init__` order, each with the text of its default when that is a key made
    from a literal seed (else None); [] for anything else (bases, which may add fields first)."""
    if cls.bases or cls.keywords or len(cls.decorators) != 1:
        return []
    decorator = cls.decorators[0].decorator
    if index.qualname(decorator.func if type(decorator) is cst.Call else decorator) not in _DATACLASSES:
        return []
    fields: list[tuple[str, str | None]] = []
    for statement in cls.body.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.AnnAssign and type(small.target) is cst.Name:
                if "ClassVar" in source_of(small.annotation.annotation):
                    continue
                fields.append((small.target.value, _seeded_default(index, small.value)))
    return fields


def _seeded_default(index: ModuleIndex, value: cst.BaseExpression | None) -> str | None:
    """`field(default_factory=lambda: jax.random.PRNGKey(0))`: the key's text."""
    if type(value) is not cst.Call:
        return None
    for arg in value.args:
        made = arg.value
        if arg.keyword is None or arg.keyword.value != "default_factory" or type(made) is not cst.Lambda:
            continue
        body = made.body
        if (
            not made.params.params
            and type(body) is cst.Call
            and index.qualname(body.func) in SEEDED_KEY_MAKERS
            and body.args
            and int_literal(body.args[0].value) is not None
        ):
            return source_of(body)
    return None


def _consumed_attributes(analysis: Any) -> frozenset[str]:
    """The attributes some function of the module consumes as a key from a parameter (`split(state.rng_key)`)."""
    memo = analysis.index.root.memo
    if "consumed_attributes" not in memo:
        memo["consumed_attributes"] = frozenset(
            path[0][1:]
            for unit in analysis.index.units.values()
            for _, path in analysis.summary(unit).params
            if len(path) == 1 and isinstance(path[0], str) and path[0].startswith(".")
        )
    return memo["consumed_attributes"]


def returned_compiled(index: ModuleIndex, unit: Unit) -> tuple[Unit, str] | None:
    """A nested def that its enclosing function returns (`return log_likelihood`, `return jax.jit(f)`) and that a
    compiling transformation applies to: (the factory, the transformation's label). The keys the factory was
    given and the returned function closes over are fixed when the factory runs: every call of what it returns
    draws from the same key (gwkokab's Monte Carlo likelihood)."""
    parent = unit.parent
    if parent is None or parent is index.root or type(parent.node) is not cst.FunctionDef:
        return None
    if type(unit.node) is not cst.FunctionDef or unit.class_node is not None:
        return None
    label = next((a.label for a in unit.applications if a.label in _COMPILING_LABELS), None)
    if label is None:
        return None
    name = unit.node.name.value
    for node in own_nodes(parent.node):
        if type(node) is not cst.Return or node.value is None:
            continue
        value = node.value
        if type(value) is cst.Call and value.args and index.transform_of(value.func, parent) is not None:
            value = value.args[0].value
        if type(value) is cst.Name and value.value == name:
            return parent, label
    return None


def held_value(
    index: ModuleIndex,
    node: cst.BaseExpression,
    unit: Unit,
    wanted: Callable[[cst.BaseExpression, Unit], bool] | None = None,
) -> tuple[cst.BaseExpression, Unit] | None:
    """`self._f` read in a method (or a function nested in one) of a module class whose constructor binds
    `self._f = value` once and which nothing else in the module assigns (`kept_attributes`): the value and
    the constructor's unit to read it in (`self._f = jax.jit(self._g)` in `__init__`: calling `self._f`
    calls the jitted method). None otherwise, or when `wanted(value, constructor)` says the value is of no
    interest to the caller (asked before `kept_attributes`, which walks the module's methods)."""
    cls = self_class(index, node, unit)
    if cls is None:
        return None
    assert type(node) is cst.Attribute
    return kept_value(index, cls, node.attr.value, wanted)


def kept_value(
    index: ModuleIndex,
    cls: cst.ClassDef,
    attribute: str,
    wanted: Callable[[cst.BaseExpression, Unit], bool] | None = None,
) -> tuple[cst.BaseExpression, Unit] | None:
    """The value `cls`'s constructor binds to `self.<attribute>` once, when nothing else assigns it (`held_value`)."""
    key = f"held_values {id(cls)}"
    table = index.root.memo.get(key)
    if table is None:
        table = index.root.memo[key] = _held_values(index, cls)
    found = table.get(attribute)  # the constructors' own statements first: `kept_attributes` walks the module
    if found is None or (wanted is not None and not wanted(*found)):
        return None
    return found if attribute in kept_attributes(index, cls) else None


def self_class(index: ModuleIndex, node: cst.BaseExpression, unit: Unit) -> cst.ClassDef | None:
    """The module's top-level class whose method (or a function nested in one) reads `node`, an attribute of the
    method's first parameter (`self.f`); None for anything else."""
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
    return cls


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
