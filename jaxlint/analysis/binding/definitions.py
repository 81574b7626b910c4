"""Definitions, not names: which of the defs that bind a name a reference to it means at a point.

Scripts and notebooks define a function twice (a cell edited and run again); each def is a function of its
own, and a call, a `jax.jit(f, ...)`, a summary or a key fact belongs to the def live where it is. The index
pass numbers units, calls and bindings in source order (`Unit.order`, a site's third item, `Binding.order`);
a reference in a unit's own code is at its call's number, one in a nested body at the number of the def that
holds it (that body runs after its definition, with the names bound then).
"""

from __future__ import annotations

from typing import Any

import libcst as cst


def named_defs(index: Any, node: cst.Name, unit: Any, before: int | None = None) -> list[Any]:
    """The same-module defs that `node`, read in `unit`, may run (`ModuleIndex.resolve_function`)."""
    name = node.value
    scope = unit
    inner = None  # the unit of the chain defined directly in `scope`
    while scope is not None:
        defs = scope.defs.get(name)
        if defs:
            if len(defs) > 1 or len(scope.bindings.get(name, ())) > 1:
                if inner is not None:  # a body refers to it: the defs live where the body is defined
                    point: int | None = inner.order + 1
                else:
                    point = before if before is not None else index.node_order(node)
                defs = live_defs(name, defs, scope, point, inner.node if inner is not None else node)
            return defs
        if name in scope.local_names and scope is not index.root:
            return []
        inner, scope = scope, scope.parent
    return []


def live_defs(
    name: str, defs: list[Any], scope: Any, point: int | None, at: cst.CSTNode | None = None
) -> list[Any]:
    """Which of the defs that bind `name` in `scope` are live at `point` (an `order`): those of the bindings
    made before it, from the last one `scope` makes unconditionally (a def, a class, an import, an assignment:
    then no def or only those that follow it) on; defs in an `if`/`try`/`with`/loop are joined (either may be
    live), and a join with another kind of binding is unknown (none). `f = jax.jit(f)` and other calls that
    take the name keep its def. With no point, or no binding before it (a body that calls a function defined
    further down), every def: the join. A binding in another branch of an `if` that holds `at` (the reference)
    never reaches it: `if timed: def check ...` / `else: def check ...; return jax.jit(check)`."""
    if point is None:
        return defs
    # Defs in a class body's `if` are in `defs` but bind class attributes, not names of `scope`.
    earlier = [b for b in scope.bindings.get(name, ()) if b.order < point]
    if at is not None and len(earlier) > 1:
        branches = _branches(scope)
        where = branches.get(id(at), ())
        earlier = [b for b in earlier if not _exclusive(branches.get(id(b.node), ()), where)]
    if not earlier:
        return defs
    direct = direct_statements(scope)
    by_node = {id(u.node): u for u in defs}
    live = []
    for binding in reversed(earlier):
        unit = by_node.get(id(binding.node))
        if unit is not None:
            live.append(unit)
        elif _rewraps(binding, name):
            continue
        elif id(binding.node) not in direct:
            return []  # `try: from fast import f` / `except: def f`: a join with something else is unknown
        if id(binding.node) in direct:
            break
    live.reverse()
    return live


def _rewraps(binding: Any, name: str) -> bool:
    """`f = jax.jit(f, ...)`, `f = partial(f, ...)`, `f = wrap(f)`: the name still runs its def."""
    value = binding.value
    return (
        type(value) is cst.Call
        and bool(value.args)
        and type(value.args[0].value) is cst.Name
        and value.args[0].value.value == name
    )


def direct_statements(scope: Any) -> set[int]:
    """The ids of the statements `scope` runs whatever happens: its body's, and the small statements on their
    lines (an `Assign` binds, not its line). Kept with the unit."""
    found = scope.memo.get("direct_statements")
    if found is None:
        node: Any = scope.node  # the Module, a FunctionDef or a Lambda (whose body is an expression)
        body = node.body if type(node) is cst.Module else getattr(node.body, "body", ())
        found = set()
        for statement in body:
            found.add(id(statement))
            if type(statement) is cst.SimpleStatementLine:
                found.update(id(small) for small in statement.body)
        scope.memo["direct_statements"] = found
    return found


Branch = tuple[
    tuple[int, int], ...
]  # the (id of an `if`, which branch) pairs a node is under, outermost first


def _exclusive(one: Branch, other: Branch) -> bool:
    """Nodes in different branches of one `if`: at most one of them runs."""
    taken = dict(one)
    return any(taken.get(statement, branch) != branch for statement, branch in other)


def _branches(scope: Any) -> dict[int, Branch]:
    """For every node of `scope`'s own code (nested bodies not entered), the `if` branches it is under. An `if`
    inside a loop is left out: a later iteration may take the other branch. Kept with the unit."""
    found = scope.memo.get("branches")
    if found is None:
        found = {}
        node: Any = scope.node
        body = node.body if type(node) is cst.Module else getattr(node.body, "body", ())
        for statement in body:
            _note_branches(statement, (), found)
        scope.memo["branches"] = found
    return found


def _note_branches(node: cst.CSTNode, path: Branch, found: dict[int, Branch]) -> None:
    found[id(node)] = path
    kind = type(node)
    if isinstance(node, cst.If):
        found[id(node.test)] = path
        _note_children(node.test, path, found)
        for statement in node.body.body:
            _note_branches(statement, (*path, (id(node), 0)), found)
        if node.orelse is not None:
            orelse = node.orelse
            otherwise = (*path, (id(node), 1))
            found[id(orelse)] = otherwise
            if type(orelse) is cst.If:
                _note_branches(orelse, otherwise, found)
            else:
                for statement in orelse.body.body:
                    _note_branches(statement, otherwise, found)
        return
    if kind in (cst.For, cst.While):
        _note_children(node, path, found, loop=True)
        return
    if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
        return  # its body runs elsewhere; the def statement itself is noted above
    _note_children(node, path, found)


def _note_children(node: cst.CSTNode, path: Branch, found: dict[int, Branch], loop: bool = False) -> None:
    for child in node.children:
        if loop:
            _note_all(child, path, found)
        else:
            _note_branches(child, path, found)


def _note_all(node: cst.CSTNode, path: Branch, found: dict[int, Branch]) -> None:
    """Inside a loop: every node keeps the loop's path (its `if`s may take either branch in turn)."""
    found[id(node)] = path
    if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
        return
    for child in node.children:
        _note_all(child, path, found)
