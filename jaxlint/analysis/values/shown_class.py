"""The class the code itself shows a name to hold: `assert isinstance(x, C)` before the node in its block or an
enclosing one, or `if isinstance(x, C):` around it. A JAX array is never an instance of a class the project
defines, so such a name is not an array whatever the dataflow guessed (a gradient pytree, a method's result):
`grads.partition(mask)` after `assert isinstance(grads, Params)` is `Params.partition`, not NumPy's."""

from __future__ import annotations

import libcst as cst

from ...syntax import walk
from ..binding.index import ModuleIndex, Unit

_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite, cst.Module)


def shows_project_instance(index: ModuleIndex, unit: Unit, name: str, node: cst.CSTNode) -> bool:
    """Whether `name` (never rebound in `unit`) is shown, at `node`, to be an instance of a class of this
    module or of the project (not a `Protocol`, which an array may satisfy)."""
    if name in unit.assigned_names():
        return False
    parents = unit.memo.get("shown_class_parents")
    if parents is None:
        parents = unit.memo["shown_class_parents"] = {
            id(child): parent for parent in walk(unit.node) for child in _children(parent)
        }
    current: cst.CSTNode = node
    while current is not unit.node:
        parent = parents.get(id(current))
        if parent is None:
            return False
        if type(parent) in _BLOCKS:
            body = parent.body
            for statement in body[: next(i for i, s in enumerate(body) if s is current)]:
                if _asserted(statement, name, index, unit):
                    return True
        elif type(parent) is cst.If and current is parent.body:
            if _project_class(_isinstance_of(parent.test, name), index, unit):
                return True
        current = parent
    return False


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    return list(node.children)


def _asserted(statement: cst.CSTNode, name: str, index: ModuleIndex, unit: Unit) -> bool:
    if type(statement) is not cst.SimpleStatementLine:
        return False
    return any(
        type(small) is cst.Assert and _project_class(_isinstance_of(small.test, name), index, unit)
        for small in statement.body
    )


def _isinstance_of(test: cst.BaseExpression, name: str) -> cst.BaseExpression | None:
    """`C` of `isinstance(name, C)`."""
    if (
        type(test) is cst.Call
        and type(test.func) is cst.Name
        and test.func.value == "isinstance"
        and len(test.args) == 2
        and not any(a.keyword or a.star for a in test.args)
        and type(test.args[0].value) is cst.Name
        and test.args[0].value.value == name
    ):
        return test.args[1].value
    return None


def _project_class(cls: cst.BaseExpression | None, index: ModuleIndex, unit: Unit) -> bool:
    if cls is None or type(cls) not in (cst.Name, cst.Attribute):
        return False
    if type(cls) is cst.Name:
        node = index.classes.get(cls.value)
        if node is not None and cls.value not in unit.local_names:
            return not any(_is_protocol(base.value, index, unit) for base in node.bases)
    qualname = index.qualname(cls, unit)
    project = index.project
    return qualname is not None and project is not None and project.records(qualname)


def _is_protocol(base: cst.BaseExpression, index: ModuleIndex, unit: Unit) -> bool:
    head = base.value if type(base) is cst.Subscript else base
    return (index.qualname(head, unit) or "").endswith(".Protocol")
