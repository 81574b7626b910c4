"""What a function object created inside a function depends on: the enclosing locals it refers to or calls.

A lambda or inner def closes over the enclosing function's locals; whether it is "the same function" from one
call (or iteration) to the next depends on them. `extra` names are treated as locals too (comprehension
variables, which are not locals of the function but vary like them).
"""

from __future__ import annotations

import libcst as cst

from ...syntax import attribute_root, bound_names, children, none_comparison, parameter_names, walk
from ..binding.index import Unit
from ..context import RuleContext
from ..kinds import NONE
from ..semantics.library import PARTIAL


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
    assert type(function) is cst.FunctionDef or type(function) is cst.Lambda
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Attribute:
            stack.append(node.value)
            continue
        if (
            type(node) is cst.Name
            and (node.value in local or node.value in extra)
            and node.value not in own_names
        ):
            found.add(node.value)
        stack.extend(children(node))
    return frozenset(found)


def called_locals(fn: cst.CSTNode, ctx: RuleContext, extra: frozenset[str] = frozenset()) -> set[str]:
    """Enclosing locals that a function expression calls (or is): the parts that decide *which* code runs."""
    local = ctx.unit.local_names
    if type(fn) is cst.Name or type(fn) is cst.Attribute:
        head = attribute_root(fn)
        if head is None or (head not in local and head not in extra):
            return set()
        if type(fn) is cst.Name:
            targets = ctx.index.resolve_function(fn, ctx.unit)
            if len(targets) == 1 and targets[0][0].parent is ctx.unit:
                return called_locals(targets[0][0].node, ctx, extra)
        return {head}
    if type(fn) is cst.Call:
        positional = [a.value for a in fn.args if a.keyword is None and not a.star]
        callee = ctx.qualname(fn.func)
        if positional and (callee == PARTIAL or ctx.index.transform_of(fn.func, ctx.unit)):
            return called_locals(positional[0], ctx, extra)
        return set()
    if type(fn) is cst.Lambda or type(fn) is cst.FunctionDef:
        own = ctx.index.units.get(id(fn))
        own_names = own.local_names if own is not None else set()
        found: set[str] = set()
        for node in walk(fn.body):
            if type(node) is cst.Call:
                head = attribute_root(node.func)
                if head is not None and (head in local or head in extra) and head not in own_names:
                    found.add(head)
        return found
    return set()


# -- closure variables a transformed inner function sees as not None --------------------------------------


def closure_none_test(test: cst.BaseExpression, unit: Unit) -> bool | None:
    """`if v is None:` (or `is not None`) on a closure variable `v` of `unit` that is never None wherever a
    transformation runs `unit`: whether the body runs under the trace (None when that is not known)."""
    negate = False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        negate, test = True, test.expression
    tested = none_comparison(test)
    if tested is None:
        return None
    name, is_none = tested
    if unit.parent is None or unit.parent.kind != NONE:
        return None  # the enclosing function is traced itself: its direct calls run the function traced too
    if name in unit.local_names or name not in _non_none_closures(unit):
        return None
    return (not is_none) != negate


def _non_none_closures(unit: Unit) -> frozenset[str]:
    """Parameters of the enclosing (untraced) function that are not None wherever `unit` is handed on:
    `if neighbors is None: return f(...)` (directly or through `nbrs = neighbors`) before every reference to
    `unit` other than a direct call, or all such references inside `if neighbors is not None:` (jax-md's
    neighbor list: the branch of the `lax.cond` never sees `neighbors is None`). Computed once per unit."""
    found = unit.memo.get("non_none_closures")
    if found is None:
        found = unit.memo["non_none_closures"] = frozenset(_scan_guards(unit))
    return found


def _scan_guards(unit: Unit) -> set[str]:
    parent = unit.parent
    node = unit.node
    if (
        not unit.is_target
        or parent is None
        or type(node) is not cst.FunctionDef
        or type(parent.node) is not cst.FunctionDef
        or type(parent.node.body) is not cst.IndentedBlock
    ):
        return set()
    # Parameters never rebound in the enclosing function (nor by `nonlocal` in the inner one).
    params = parameter_names(parent.node.params) - set(parent.bindings) - unit.declared_nonlocals
    name = node.name.value
    statements = parent.node.body.body
    referring = [i for i, statement in enumerate(statements) if _refers(statement, name, node)]
    if not params or not referring:
        return set()
    known: set[str] = set()
    aliases: dict[str, str] = {}  # `nbrs = neighbors`: nbrs -> neighbors, until nbrs is rebound
    first = referring[0]
    for statement in statements[:first]:
        guard = _early_exit_none_guard(statement)
        if guard is not None:
            root = guard if guard in params else aliases.get(guard)
            if root is not None:
                known.add(root)
            continue
        assigned = _assigned_names(statement)
        for alias in [a for a in aliases if a in assigned]:
            del aliases[alias]
        if (
            type(statement) is cst.SimpleStatementLine
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign)
            and len(statement.body[0].targets) == 1
            and isinstance(statement.body[0].targets[0].target, cst.Name)
            and isinstance(statement.body[0].value, cst.Name)
        ):
            source = statement.body[0].value.value
            root = source if source in params else aliases.get(source)
            if root is not None:
                aliases[statement.body[0].targets[0].target.value] = root
    wrapper = statements[first]
    if len(referring) == 1 and type(wrapper) is cst.If:
        tested = none_comparison(wrapper.test)
        if (
            tested is not None
            and not tested[1]
            and not _refers(wrapper.test, name, node)
            and (wrapper.orelse is None or not _refers(wrapper.orelse, name, node))
        ):
            root = tested[0] if tested[0] in params else aliases.get(tested[0])
            if root is not None:
                known.add(root)
    return known


def _early_exit_none_guard(statement: cst.CSTNode) -> str | None:
    """`if name is None: ...; return ...` (or raise), without an else: the name tested."""
    if type(statement) is not cst.If or statement.orelse is not None:
        return None
    tested = none_comparison(statement.test)
    body = statement.body.body
    last = body[-1] if body else None
    if type(last) is cst.SimpleStatementLine:
        last = last.body[-1]
    if tested is None or not tested[1] or not (type(last) is cst.Return or type(last) is cst.Raise):
        return None
    return tested[0]


def _refers(start: cst.CSTNode, name: str, function: cst.FunctionDef) -> bool:
    """Whether `start` mentions `name` other than as the function of a direct call (an eager call in the
    untraced enclosing function) or in the definition `function` itself."""
    stack: list[cst.CSTNode] = [start]
    while stack:
        node = stack.pop()
        if node is function:
            continue
        if type(node) is cst.Name and node.value == name:
            return True
        if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == name:
            stack.extend(node.args)
            continue
        stack.extend(children(node))
    return False


def _assigned_names(statement: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    for node in walk(statement):
        if type(node) is cst.Assign:
            for target in node.targets:
                names.update(bound_names(target.target))
        elif (
            type(node) is cst.AugAssign
            or type(node) is cst.AnnAssign
            or type(node) is cst.For
            or type(node) is cst.NamedExpr
        ):
            names.update(bound_names(node.target))
        elif type(node) is cst.WithItem and node.asname is not None:
            names.update(bound_names(node.asname.name))
        elif type(node) is cst.FunctionDef or type(node) is cst.ClassDef:
            names.add(node.name.value)
    return names
