"""Containers reached through an object that outlives the trace: `logger.values` of a module-level
`logger = Logger()` whose class binds `self.values = []`, or `STATE["hist"]` of a module-level
`STATE = {"hist": []}`. `objects.storage.container_storage` answers for plain names and `self.attr`; this module
adds one step through an outer object, and only where the code shows both the object and the container.
"""

from __future__ import annotations

import libcst as cst

from ..binding.index import Unit
from ..context import RuleContext
from ..kinds import TRACED
from ..semantics.library import PYTREE_CLASS_PREFIXES, PYTREE_DECORATORS
from .storage import StorageResolver, _is_container


def outer_object_container(
    receiver: cst.BaseExpression, ctx: RuleContext, resolver: StorageResolver
) -> str | None:
    """Describe the container `receiver` names, when it hangs off an outer object (else None)."""
    if not isinstance(receiver, (cst.Attribute, cst.Subscript)) or not isinstance(receiver.value, cst.Name):
        return None
    owner_name = receiver.value
    if ctx.flags(owner_name) & TRACED:
        return None
    found = resolver.locate(owner_name.value, ctx)
    if found is None:
        return None
    where, owner = found
    value = owner.single_assignment(owner_name.value)
    if value is None:
        return None
    if isinstance(receiver, cst.Attribute):
        class_node = _class_of_instance(value, owner, ctx)
        if class_node is None or receiver.attr.value not in resolver.class_containers(class_node):
            return None
    else:
        key = _string_key(receiver)
        if key is None or not isinstance(value, cst.Dict) or not _entry_is_container(value, key):
            return None
    text = cst.Module(body=[]).code_for_node(receiver)
    return f"'{text[:30]}' ({'a global' if where == 'global' else 'from an enclosing scope'})"


def _class_of_instance(value: cst.BaseExpression, owner: Unit, ctx: RuleContext) -> cst.ClassDef | None:
    """The same-module class (not a pytree) that `value` instantiates: `Logger()`."""
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
        return None
    scope: Unit | None = owner
    while scope is not None and value.func.value not in scope.bindings:
        scope = scope.parent
    bindings = scope.bindings.get(value.func.value, []) if scope is not None else []
    if len(bindings) != 1 or not isinstance(bindings[0].node, cst.ClassDef):
        return None
    class_node = bindings[0].node
    for decorator in class_node.decorators:
        target = (
            decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        )
        if ctx.qualname(target) in PYTREE_DECORATORS:
            return None  # a pytree: passed into the transformation as leaves, not closed over
    if any((ctx.qualname(base.value) or "").startswith(PYTREE_CLASS_PREFIXES) for base in class_node.bases):
        return None
    return class_node


def _string_key(node: cst.Subscript) -> str | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = node.slice[0].slice.value
    if isinstance(index, cst.SimpleString) and isinstance(index.evaluated_value, str):
        return index.evaluated_value
    return None


def _entry_is_container(value: cst.Dict, key: str) -> bool:
    for element in value.elements:
        if (
            isinstance(element, cst.DictElement)
            and isinstance(element.key, cst.SimpleString)
            and element.key.evaluated_value == key
        ):
            return _is_container(element.value)
    return False
