"""What a field an object keeps as built holds: the class of `self.f`, from the field's annotation in the class
body (`detector: GaussianDetector`, an equinox Module or dataclass field) or the one `self.f = Cls(...)` of the
constructor, when only construction sets it (`held.kept_attributes`). So `self.f.m(x)` runs that class's method,
`self.f(x)` its `__call__` (or a library object's, by its factory: `eqx.nn.Dropout`), and a key the inner object
keeps is kept by the outer one too (`self.detector.key`: `held_chain`), the same key on every call (JAX301)."""

from __future__ import annotations

import libcst as cst

from ..binding.index import ModuleIndex, Unit
from .held import kept_attributes, kept_value, self_class
from .instances import MODULE_METHODS, MethodCall, local_method_units


def field_class(
    index: ModuleIndex, node: cst.BaseExpression, unit: Unit
) -> tuple[cst.BaseExpression, Unit, bool] | None:
    """For `self.f` read in a method of the module's class: (the expression naming the class of what `f` holds,
    the scope to resolve it in, whether it is exactly that class: built by the constructor, not annotated)."""
    cls = self_class(index, node, unit)
    if cls is None:
        return None
    assert type(node) is cst.Attribute
    return _held_class(index, cls, node.attr.value)


def _held_class(
    index: ModuleIndex, cls: cst.ClassDef, name: str
) -> tuple[cst.BaseExpression, Unit, bool] | None:
    if name not in kept_attributes(index, cls):
        return None
    value = kept_value(index, cls, name)
    if value is not None:
        made = value[0]
        if type(made) is cst.Call and type(made.func) in (cst.Name, cst.Attribute):
            return made.func, value[1], True
        return None
    for statement in cls.body.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.AnnAssign and type(small.target) is cst.Name and small.target.value == name:
                annotation = small.annotation.annotation
                if type(annotation) in (cst.Name, cst.Attribute):
                    return annotation, index.root, False
    return None


def _module_class(index: ModuleIndex, found: tuple[cst.BaseExpression, Unit, bool]) -> str | None:
    """The name of the module's top-level class `found` names, if it is one."""
    cls, scope = found[0], found[1]
    if type(cls) is not cst.Name or (scope is not index.root and cls.value in scope.local_names):
        return None
    return cls.value if index.classes.get(cls.value) is not None else None


def field_method_call(index: ModuleIndex, func: cst.Attribute, unit: Unit) -> MethodCall | None:
    """`self.f.m(...)` (`m` "__call__" for `self.f(...)`): the methods it may run, as `instances.method_call` answers
    for a receiver of a known class; None when `f`'s class is not known."""
    method = func.attr.value
    if method in MODULE_METHODS or (method.startswith("__") and method != "__call__"):
        return None
    found = field_class(index, func.value, unit)
    if found is None:
        return None
    local = _module_class(index, found)
    if local is not None:
        units = local_method_units(index, local, method, found[2])
        return MethodCall(units) if units else None
    qualname = index.qualname(found[0], found[1])
    project = index.project
    if qualname is None or project is None or not project.records(qualname):
        return None
    return MethodCall([], f"{qualname}.{method}")


def field_factory(index: ModuleIndex, node: cst.BaseExpression, unit: Unit) -> str | None:
    """The qualified name of the class (or factory) whose object `self.f` holds, when known."""
    found = field_class(index, node, unit)
    return index.qualname(found[0], found[1]) if found is not None else None


def held_chain(index: ModuleIndex, cls: cst.ClassDef, path: tuple) -> bool:
    """Whether every attribute of `path` ((".detector", ".key")) is kept as built: the first by `cls`'s objects,
    each next one by the module's class that the field before it holds."""
    current: cst.ClassDef | None = cls
    for i, part in enumerate(path):
        if current is None or not isinstance(part, str) or not part.startswith("."):
            return False
        if part[1:] not in kept_attributes(index, current):
            return False
        if i + 1 < len(path):
            found = _held_class(index, current, part[1:])
            name = _module_class(index, found) if found is not None else None
            current = index.classes.get(name) if name is not None else None
    return True
