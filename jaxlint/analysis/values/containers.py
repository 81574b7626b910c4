"""Which names of a function are lists or dicts that nothing can change: their entries stay as displayed.

A list or dict is mutable, and what mutates it need not name it (an alias, a callee, a closure). The walk keeps
a display's entries (`values.abstract.Value` of kind "list"/"dict") only for a name whose every use in its function
(nested functions and comprehensions included, whatever they bind) is one that neither changes it nor lets it
escape: reading an item (`d["w"]`, `xs[0]`, not storing or deleting one), a read-only method (`.get`, `.keys`,
`.items`, `.values`, `.copy`, `.index`, `.count`), `len`/`isinstance`/iteration/membership, `return d`, or
rebinding the name. Any other use (an item store, `.update`/`.pop`/`.setdefault`/`.append`, `d |= …`, an
argument, an alias `e = d`, an element of another display) drops the entries: when in doubt, unknown.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import CHILDREN_REVERSED, LEAF

_READ_METHODS = frozenset({"get", "keys", "items", "values", "copy", "index", "count"})
_READ_CALLS = frozenset({"len", "isinstance", "sorted", "list", "tuple", "set", "enumerate", "zip", "print"})
# Where a name is a binding or a declaration, not a use of the value it holds; and where it is only read. Sets
# tested by type identity: libcst has no subclasses of these, and isinstance() on its ABCs is slow.
_NAMING = frozenset(
    {cst.Param, cst.FunctionDef, cst.ClassDef, cst.NameItem, cst.AsName, cst.ImportAlias, cst.Del}
)
_READING = frozenset({cst.Comparison, cst.ComparisonTarget, cst.Return, cst.Index, cst.Decorator})
_HARMLESS_PARENTS = _NAMING | _READING
_MEMO = "changed_names"


def changed_names(index: Any, unit_node: cst.CSTNode) -> frozenset[str]:
    """The names that some use in `unit_node` may change or let escape (kept with the module)."""
    memo: dict[int, frozenset[str]] = index.root.memo.setdefault(_MEMO, {})
    key = id(unit_node)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _scan(unit_node)
    return found


def _scan(root: cst.CSTNode) -> frozenset[str]:
    changed: set[str] = set()
    stores: set[int] = set()  # subscripts being stored to or deleted
    stack: list[tuple[cst.CSTNode, Any, Any]] = [(root, None, None)]
    leaf, read = LEAF, CHILDREN_REVERSED
    while stack:
        node, parent, grand = stack.pop()
        if type(node) is cst.Name:
            name: Any = node
            if not _harmless(name, parent, grand, stores):
                changed.add(name.value)
            continue
        kind = type(node)
        if kind is cst.AssignTarget or kind is cst.AnnAssign or kind is cst.For or kind is cst.CompFor:
            _mark_stores(node.target, stores)  # type: ignore[attr-defined]
        elif kind is cst.AugAssign:
            _mark_stores(node.target, stores)  # type: ignore[attr-defined]
            if type(node.target) is cst.Name:  # type: ignore[attr-defined]
                changed.add(node.target.value)  # type: ignore[attr-defined]  # `xs += [v]` extends in place
        elif kind is cst.Del:
            _mark_stores(node.target, stores)  # type: ignore[attr-defined]
        elif kind is cst.WithItem and node.asname is not None:  # type: ignore[attr-defined]
            _mark_stores(node.asname.name, stores)  # type: ignore[attr-defined]
        if not leaf[kind]:
            for child in read[kind](node):
                if type(child) is cst.Name:  # judged here, with no entry on the stack: its stores are marked
                    if not _harmless(child, node, parent, stores):
                        changed.add(child.value)
                else:
                    stack.append((child, node, parent))
        if kind is cst.Attribute:
            stack.append((node.attr, node, parent))  # type: ignore[attr-defined]  # `.attr` may be unlisted
    return frozenset(changed)


def _mark_stores(target: cst.BaseExpression, stores: set[int]) -> None:
    if type(target) is cst.Subscript:
        stores.add(id(target))
    elif type(target) is cst.Tuple or type(target) is cst.List:
        for element in target.elements:
            _mark_stores(element.value, stores)
    elif type(target) is cst.StarredElement:
        _mark_stores(target.value, stores)


def _harmless(name: cst.Name, parent: Any, grand: Any, stores: set[int]) -> bool:
    kind = type(parent)
    if parent is None or kind in _HARMLESS_PARENTS:
        return True
    if kind is cst.Attribute:
        return parent.attr is name or parent.attr.value in _READ_METHODS
    if kind is cst.Subscript:
        return parent.value is not name or id(parent) not in stores
    if kind is cst.AssignTarget or kind is cst.AnnAssign or kind is cst.For or kind is cst.CompFor:
        return parent.target is name or getattr(parent, "iter", None) is name  # a rebinding, an iteration
    if kind is cst.Arg:
        if parent.keyword is name:
            return True
        func = getattr(grand, "func", None)
        return type(func) is cst.Name and func.value in _READ_CALLS
    if kind is cst.Call:
        return parent.func is name
    return False
