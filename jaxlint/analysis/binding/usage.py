"""How a function uses a name: as an array (`x.at`, `x * 2`, `jnp.sum(x)`) or as a container (`d["k"]`,
`xs.append`). A traced parameter may be a whole pytree; rules that need an array ask for evidence here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

from ...syntax import children, unit_body, walk
from .index import Unit

_CONTAINER_METHODS = frozenset(
    {"append", "extend", "items", "keys", "values", "get", "update", "setdefault", "pop", "insert"}
)
_ARRAY_ATTRIBUTES = frozenset(
    {
        "at",
        "shape",
        "ndim",
        "dtype",
        "size",
        "T",
        "astype",
        "reshape",
        "sum",
        "mean",
        "max",
        "min",
        "dot",
        "block_until_ready",
    }
)


class NameUsage:
    def __init__(self, function: cst.CSTNode) -> None:
        self.containers: set[str] = set()
        self.arrays: set[str] = set()
        for node in walk(function):
            if type(node) is cst.Attribute and type(node.value) is cst.Name:
                if node.attr.value in _CONTAINER_METHODS:
                    self.containers.add(node.value.value)
                elif node.attr.value in _ARRAY_ATTRIBUTES:
                    self.arrays.add(node.value.value)
            elif type(node) is cst.Subscript and type(node.value) is cst.Name:
                if any(
                    type(e.slice) is cst.Index and type(e.slice.value) is cst.SimpleString for e in node.slice
                ):
                    self.containers.add(node.value.value)
            elif type(node) is cst.BinaryOperation:
                for side in (node.left, node.right):
                    if type(side) is cst.Name:
                        self.arrays.add(side.value)

    def is_array(self, name: str) -> bool:
        """Used like an array somewhere, and never like a dict or list."""
        return name in self.arrays and name not in self.containers


@dataclasses.dataclass(frozen=True)
class _Use:
    node: cst.Name
    nested: bool  # inside a nested def or lambda
    callee: bool  # the function of a call: `name(...)`
    header: int | None  # id of the name of the def whose decorators or signature hold it directly
    in_decorator: bool  # (with `header`) in a decorator, not in the parameters or the name itself
    outer_nested: bool  # (with `header`) whether that def is itself nested
    wrapper: cst.BaseExpression | None = None  # `w` of `w(name)(...)`: wrapped, and the result called at once


def called_outside_loops_only(
    unit: Unit,
    name: str,
    definitions: set[int],
    calling_wrapper: Callable[[cst.BaseExpression], bool] | None = None,
) -> bool:
    """Every use of local `name` in `unit` is a direct call outside any loop, and there is at least one.

    `definitions` holds the ids of the Name nodes that bind `name` (an assignment target, or the name of a
    def); for a def, its decorators count as uses where the def is and its signature does not count. Global
    and nonlocal declarations of the name make the answer False. One walk per unit answers every name.
    With `calling_wrapper`, `w(name)(...)` counts as a call too where `calling_wrapper(w)` says `w` gives a
    function that calls `name` (`eqx.filter_value_and_grad(loss)(model, x)`).
    """
    table = unit.memo.get("uses")
    if table is None:
        table = unit.memo["uses"] = _uses(unit)
    uses, declared = table
    if name in declared:
        return False
    calls = 0
    for use in uses.get(name, ()):
        if id(use.node) in definitions:
            continue
        nested = use.nested
        if use.header is not None and use.header in definitions:
            if not use.in_decorator:
                continue
            nested = use.outer_nested
        callee = use.callee or (
            use.wrapper is not None and calling_wrapper is not None and calling_wrapper(use.wrapper)
        )
        if nested or not callee or unit.loops_of(use.node):
            return False
        calls += 1
    return calls > 0


def _uses(unit: Unit) -> tuple[dict[str, list[_Use]], set[str]]:
    uses: dict[str, list[_Use]] = {}
    declared: set[str] = set()
    callees: set[int] = set()
    wrapped: dict[int, cst.BaseExpression] = {}  # id of `name` in `w(name)(...)` -> `w`
    # (node, nested, header, in_decorator, outer_nested)
    stack: list[tuple[cst.CSTNode, bool, int | None, bool, bool]] = [
        (n, False, None, False, False) for n in unit_body(unit.node)
    ]
    while stack:
        node, nested, header, in_decorator, outer_nested = stack.pop()
        if (type(node) is cst.FunctionDef or type(node) is cst.Lambda) and node is not unit.node:
            if type(node) is cst.FunctionDef:
                own = id(node.name)
                stack.extend((d, True, own, True, nested) for d in node.decorators)
                stack.append((node.body, True, None, False, False))
                rest = [c for c in children(node) if c is not node.body and type(c) is not cst.Decorator]
                stack.extend((c, True, own, False, nested) for c in rest)
            else:  # a lambda in a def's signature is part of that signature
                inside = header if header is not None and not in_decorator else None
                stack.extend((c, True, inside, False, False) for c in children(node))
            continue
        if type(node) is cst.Call:
            callees.add(id(node.func))
            inner = node.func
            if type(inner) is cst.Call and inner.args and inner.args[0].keyword is None:
                first = inner.args[0]
                if type(first.value) is cst.Name and not first.star:
                    wrapped[id(first.value)] = inner.func
        elif type(node) is cst.Name:
            use = _Use(
                node, nested, id(node) in callees, header, in_decorator, outer_nested, wrapped.get(id(node))
            )
            uses.setdefault(node.value, []).append(use)
        elif type(node) is cst.Global or type(node) is cst.Nonlocal:
            declared.update(n.name.value for n in node.names)
        stack.extend((c, nested, header, in_decorator, outer_nested) for c in children(node))
    return uses, declared
