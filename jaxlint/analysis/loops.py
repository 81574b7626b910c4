"""Loops of a function: which loops run a node repeatedly, what a loop rebinds, and loops over configurations.

`Unit.loops_of(node)` and `Unit.varying(loop)` in `index.py` are the per-unit, memoised entry points.
"""

from __future__ import annotations

import libcst as cst

from ..syntax import COMPREHENSIONS, bound_names, children, unit_body
from .context import RuleContext


def loop_map(unit_node: cst.CSTNode) -> dict[int, tuple[cst.CSTNode, ...]]:
    """id(node) -> the loops of this function (not of nested ones) that run `node` repeatedly, outermost first."""
    out: dict[int, tuple[cst.CSTNode, ...]] = {}
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(n, ()) for n in unit_body(unit_node)]
    while stack:
        node, loops = stack.pop()
        if loops:
            out[id(node)] = loops
        if type(node) is cst.FunctionDef or type(node) is cst.Lambda:
            # Decorators and defaults run where the function is defined; the body runs when it is called.
            if type(node) is cst.FunctionDef:
                stack.extend((d, loops) for d in node.decorators)
            params = node.params
            for p in [*params.posonly_params, *params.params, *params.kwonly_params]:
                if p.default is not None:
                    stack.append((p.default, loops))
            continue
        if type(node) is cst.For:
            inner = (*loops, node)
            stack.append((node.iter, loops))
            stack.extend([(node.target, inner), (node.body, inner)])
            if node.orelse is not None:
                stack.append((node.orelse, loops))
            continue
        if type(node) is cst.While:
            inner = (*loops, node)
            stack.extend([(node.test, inner), (node.body, inner)])
            if node.orelse is not None:
                stack.append((node.orelse, loops))
            continue
        if isinstance(node, COMPREHENSIONS):
            inner = (*loops, node)
            if isinstance(node, cst.DictComp):
                stack.extend([(node.key, inner), (node.value, inner)])
            else:
                stack.append((node.elt, inner))
            for_in: cst.CompFor | None = node.for_in
            first = True
            while for_in is not None:
                stack.append((for_in.iter, loops if first else inner))
                stack.append((for_in.target, inner))
                stack.extend((cond.test, inner) for cond in for_in.ifs)
                first = False
                for_in = for_in.inner_for_in
            continue
        stack.extend((child, loops) for child in children(node))
    return out


def loop_targets(loop: cst.CSTNode) -> set[str]:
    """Names a loop binds on each iteration."""
    if type(loop) is cst.For:
        return set(bound_names(loop.target))
    if isinstance(loop, COMPREHENSIONS):
        names: set[str] = set()
        for_in: cst.CompFor | None = loop.for_in
        while for_in is not None:
            names.update(bound_names(for_in.target))
            for_in = for_in.inner_for_in
        return names
    return set()


def in_while_test(node: cst.CSTNode, loop: cst.While) -> bool:
    stack: list[cst.CSTNode] = [loop.test]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(children(current))
    return False


_SWEEP_CALLS = frozenset(
    "builtins." + n for n in ("range", "enumerate", "zip", "reversed", "sorted", "list", "tuple")
) | frozenset("itertools." + n for n in ("product", "permutations", "combinations", "chain"))


def config_sweep(loop: cst.CSTNode, ctx: RuleContext) -> bool:
    """A loop over literal configurations (`for n in (4, 8)`, `itertools.product(...)`, `range(...)`)."""
    if type(loop) is cst.For:
        iterable = loop.iter
    elif isinstance(loop, COMPREHENSIONS):
        iterable = loop.for_in.iter
    else:
        return False
    return _sweep(iterable, ctx, 0)


def _sweep(node: cst.BaseExpression, ctx: RuleContext, depth: int) -> bool:
    if depth > 3:
        return False
    if type(node) is cst.Tuple or type(node) is cst.List or type(node) is cst.Set:
        return True
    if type(node) is cst.Call:
        name = ctx.qualname(node.func)
        if name == "builtins.range":
            return True
        return name in _SWEEP_CALLS and all(
            _sweep(a.value, ctx, depth + 1) for a in node.args if a.keyword is None
        )
    if type(node) is cst.Name:
        value = ctx.unit.single_assignment(node.value)
        return value is not None and _sweep(value, ctx, depth + 1)
    return False
