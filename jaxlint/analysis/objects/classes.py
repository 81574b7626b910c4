"""Facts about the module's classes: hashability, methods that set up state, pytree registration by name.

The module's class table is `ModuleIndex.classes`; the pytree model (registrations, flax/equinox bases) is
`analysis/objects/pytrees.py`, the protocol methods and plain bases are rows of the library table (`semantics/classes.py`).
"""

from __future__ import annotations

import libcst as cst

from ...syntax import assigned_targets, bound_names, own_nodes, str_literal, walk
from ..binding.index import ModuleIndex
from ..semantics.library import DATACLASS, PLAIN_BASES


def plain_class(index: ModuleIndex, name: str, depth: int = 0) -> bool:
    """A top-level class of the module whose bases are only the module's own plain classes (or `object`,
    `abc.ABC`), with no metaclass: its methods are plain functions, so each `obj.m` is a new bound method. A
    library base (an equinox or flax Module) may wrap its methods in objects of its own."""
    node = index.classes.get(name)
    if node is None or depth > 5:
        return False
    for base in node.bases:
        if base.keyword is not None or type(base.value) is not cst.Name:
            return False
        if index.classes.get(base.value.value) is not None:
            if not plain_class(index, base.value.value, depth + 1):
                return False
        elif index.qualname(base.value) not in PLAIN_BASES:
            return False
    return True


def sets_instance_attribute(index: ModuleIndex, name: str, attribute: str, depth: int = 0) -> bool:
    """Whether a top-level class of the module, or one of its bases there, assigns `self.<attribute>` in some
    method (`self.step = jax.jit(self.step)`): then `obj.<attribute>` may be that value, not a bound method."""
    node = index.classes.get(name)
    if node is None or depth > 5:
        return False
    for statement in node.body.body:
        if type(statement) is cst.FunctionDef and statement.params.params:
            written = self_writes(statement, statement.params.params[0].name.value, nested=True)
            if attribute in written or "*" in written:
                return True
    return any(
        base.keyword is None
        and type(base.value) is cst.Name
        and sets_instance_attribute(index, base.value.value, attribute, depth + 1)
        for base in node.bases
    )


def identity_hashed_class(index: ModuleIndex, name: str, depth: int = 0) -> bool:
    """A top-level class of the module whose instances hash and compare by identity: a plain class (its bases
    the module's own plain classes or `object`), undecorated, with no `__eq__` or `__hash__` of its own or of
    its bases there."""
    node = index.classes.get(name)
    if node is None or depth > 5 or node.decorators or not plain_class(index, name):
        return False
    for statement in node.body.body:
        if type(statement) is cst.FunctionDef and statement.name.value in ("__eq__", "__hash__"):
            return False
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assign and any(
                    n in ("__eq__", "__hash__") for t in small.targets for n in bound_names(t.target)
                ):
                    return False
    return all(
        identity_hashed_class(index, base.value.value, depth + 1)
        for base in node.bases
        if type(base.value) is cst.Name and index.classes.get(base.value.value) is not None
    )


def unhashable_class(cls: cst.ClassDef, index: ModuleIndex) -> str | None:
    """Why instances of `cls` are unhashable: a plain `@dataclass` (eq without frozen/unsafe_hash sets
    `__hash__` to None), or `__eq__` defined without `__hash__`; None when they are (or may be) hashable."""
    body_names = set()
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef):
            body_names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        body_names.update(bound_names(target.target))
    if "__hash__" in body_names:
        return None
    if not cls.decorators:
        return "a class that defines __eq__ without __hash__" if "__eq__" in body_names else None
    if len(cls.decorators) != 1:
        return None  # a registration or another decorator may decide hashing
    expr = cls.decorators[0].decorator
    call = expr if isinstance(expr, cst.Call) else None
    if index.qualname(call.func if call is not None else expr) != DATACLASS:
        return None  # flax.struct.dataclass, chex.dataclass, ...: not the stdlib's rules
    for arg in call.args if call is not None else ():
        if arg.keyword is None:
            return None
        literal = arg.value.value if isinstance(arg.value, cst.Name) else None
        key = arg.keyword.value
        if key in ("frozen", "unsafe_hash") and literal != "False":
            return None
        if key == "eq" and literal != "True":
            return None
    return "a non-frozen dataclass"


def self_writes(body: cst.CSTNode, self_name: str, *, nested: bool = False) -> set[str]:
    """`self.x = ...`, `self.x += ...` and `setattr(self, "x", ...)` in a body (in nested functions too with
    `nested`); a `setattr(self, name, ...)` whose name is not a literal counts as "*"."""
    found: set[str] = set()
    for node in walk(body) if nested else own_nodes(body):
        for target in assigned_targets(node):
            for element in _flatten(target):
                while isinstance(element, (cst.Subscript, cst.Attribute)) and not _is_self_attribute(
                    element, self_name
                ):
                    element = element.value  # `self.x[i] = v`, `self.x.y = v` change what `self.x` holds
                if _is_self_attribute(element, self_name):
                    assert isinstance(element, cst.Attribute)
                    found.add(element.attr.value)
        if (
            type(node) is cst.Call
            and isinstance(node.func, cst.Name)
            and node.func.value == "setattr"
            and len(node.args) >= 2
            and isinstance(node.args[0].value, cst.Name)
            and node.args[0].value.value == self_name
        ):
            value = str_literal(node.args[1].value)
            found.add(value if value is not None else "*")
    return found


def _flatten(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [t for e in target.elements for t in _flatten(e.value)]
    if isinstance(target, cst.StarredElement):
        return _flatten(target.value)
    return [target]


def _is_self_attribute(node: cst.BaseExpression, self_name: str) -> bool:
    return (
        isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == self_name
    )


def changes_what_is_read(
    writer: cst.CSTNode,
    writer_self: str,
    reader: cst.CSTNode,
    reader_self: str,
    attribute: str,
    cls: cst.ClassDef | None = None,
) -> bool:
    """Whether `writer`'s writes of `self.<attribute>` can change what `reader` reads through it. Reassigning it,
    or an entry of it, always can; `self.actor.state = s` changes only `actor.state`: a reader of
    `self.actor.apply` sees the change only if `apply` is (in `cls`, the class of the object held there, when
    the module has it) a method or property reading what the write sets. Of an object of an unknown class,
    reading another attribute is no sign that it changed."""
    parts: set[str | None] = set()
    for node in own_nodes(writer):
        for target in assigned_targets(node):
            for element in _flatten(target):
                part = None
                while isinstance(element, (cst.Subscript, cst.Attribute)) and not _is_self_attribute(
                    element, writer_self
                ):
                    part = element.attr.value if isinstance(element, cst.Attribute) else None
                    element = element.value
                if _is_self_attribute(element, writer_self):
                    assert isinstance(element, cst.Attribute)
                    if element.attr.value == attribute:
                        parts.add(part)
    if not parts or None in parts:
        return True
    uses = _uses(reader, reader_self, attribute)
    if None in uses or uses & parts:
        return True
    if cls is None:
        return False
    members = {s.name.value: s for s in cls.body.body if type(s) is cst.FunctionDef}  # a setter last
    for part in list(parts):
        if part in members:  # `actor.learning_state = s` through its property setter: what the setter sets
            parts |= set(self_writes(members[part].body, "self"))
    if uses & parts:
        return True
    return any(use in members and _reads_any(members[use], parts) for use in uses)


def _uses(body: cst.CSTNode, self_name: str, attribute: str) -> set[str | None]:
    """How `body` uses `self.<attribute>`: the names of its attributes read (`self.actor.apply`), None for any
    other use (passed on, called, indexed)."""
    found: set[str | None] = set()
    attributes = [n for n in walk(body) if type(n) is cst.Attribute]
    inner = {id(n.value) for n in attributes}
    for node in attributes:
        if _is_self_attribute(node, self_name) and node.attr.value == attribute and id(node) not in inner:
            found.add(None)
        value = node.value
        if (
            type(value) is cst.Attribute
            and _is_self_attribute(value, self_name)
            and value.attr.value == attribute
        ):
            found.add(node.attr.value)
    return found


def _reads_any(method: cst.FunctionDef, names: set[str | None]) -> bool:
    return any(
        type(n) is cst.Attribute and _is_self_attribute(n, "self") and n.attr.value in names
        for n in walk(method.body)
    )
