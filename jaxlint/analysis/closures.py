"""What a function object created inside a function depends on: the enclosing locals it refers to or calls.

A lambda or inner def closes over the enclosing function's locals; whether it is "the same function" from one
call (or iteration) to the next depends on them. `extra` names are treated as locals too (comprehension
variables, which are not locals of the function but vary like them).
"""

from __future__ import annotations

import libcst as cst

from ..syntax import attribute_root, children, walk
from .context import RuleContext


def free_locals(
    function: cst.CSTNode, ctx: RuleContext, extra: frozenset[str] = frozenset()
) -> frozenset[str]:
    """Names of the enclosing function's locals (and `extra` names) that a lambda or inner def refers to."""
    own = ctx.index.units.get(id(function))
    own_names = own.local_names if own is not None else set()
    # Membership in two sets, not their union: copying the module's names for each of its functions
    # made this quadratic in the number of functions.
    local = ctx.unit.local_names
    found: set[str] = set()
    assert isinstance(function, (cst.FunctionDef, cst.Lambda))
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute):
            stack.append(node.value)
            continue
        if (
            isinstance(node, cst.Name)
            and (node.value in local or node.value in extra)
            and node.value not in own_names
        ):
            found.add(node.value)
        stack.extend(children(node))
    return frozenset(found)


def called_locals(fn: cst.CSTNode, ctx: RuleContext, extra: frozenset[str] = frozenset()) -> set[str]:
    """Enclosing locals that a function expression calls (or is): the parts that decide *which* code runs."""
    local = ctx.unit.local_names
    if isinstance(fn, (cst.Name, cst.Attribute)):
        head = attribute_root(fn)
        if head is None or (head not in local and head not in extra):
            return set()
        if isinstance(fn, cst.Name):
            targets = ctx.index.resolve_function(fn, ctx.unit)
            if len(targets) == 1 and targets[0][0].parent is ctx.unit:
                return called_locals(targets[0][0].node, ctx, extra)
        return {head}
    if isinstance(fn, cst.Call):
        positional = [a.value for a in fn.args if a.keyword is None and not a.star]
        callee = ctx.qualname(fn.func)
        if positional and (callee == "functools.partial" or ctx.index.transform_of(fn.func, ctx.unit)):
            return called_locals(positional[0], ctx, extra)
        return set()
    if isinstance(fn, (cst.Lambda, cst.FunctionDef)):
        own = ctx.index.units.get(id(fn))
        own_names = own.local_names if own is not None else set()
        found: set[str] = set()
        for node in walk(fn.body):
            if isinstance(node, cst.Call):
                head = attribute_root(node.func)
                if head is not None and (head in local or head in extra) and head not in own_names:
                    found.add(head)
        return found
    return set()
