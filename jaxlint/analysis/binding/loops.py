"""Loops of a function: which loops run a node repeatedly, what a loop rebinds, and loops over configurations.

`Unit.loops_of(node)` and `Unit.varying(loop)` in `binding/index.py` are the per-unit, memoised entry points.
"""

from __future__ import annotations

import libcst as cst

from ...syntax import COMPREHENSIONS, bound_names, children, dotted_name, unit_body, walk
from ..context import RuleContext


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


# -- values carried from one iteration to the next ------------------------------------------------------------

# Methods that change a list or dict in place: a loop body calling one on `out` changes what `out[-1]` reads.
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault"})


def reads_carried(loop: cst.For, node: cst.CSTNode) -> bool:
    """Whether `node`, in the body of `loop`, reads a value an earlier iteration made: a name (or `a.b`) the
    body rebinds that is read before this iteration binds it (`x = step(x, row)`), a list the body appends to
    (`step(out[-1], row)`), or a name this iteration computed from one of those. Such a loop is sequential:
    its iterations cannot run side by side."""
    rebound, mutated = _bound_in(loop.body)
    fresh: set[str] = set()  # bound earlier in this iteration, from this iteration's values only
    tainted: set[str] = set()  # bound earlier in this iteration, from a carried value

    def carried(tree: cst.CSTNode) -> bool:
        for path in _read_paths(tree):
            if path in tainted or path in mutated or (path in rebound and path not in fresh):
                return True
        return False

    for statement in loop.body.body:
        if _contains(statement, node):
            return carried(node)
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assign:
                    targets = [p for t in small.targets for p in _target_paths(t.target)]
                    depends = carried(small.value)
                elif type(small) is cst.AnnAssign and small.value is not None:
                    targets, depends = _target_paths(small.target), carried(small.value)
                elif type(small) is cst.AugAssign:  # `x += v` reads `x` too
                    targets, depends = _target_paths(small.target), carried(small)
                else:
                    continue
                for path in targets:
                    (tainted if depends else fresh).add(path)
                    (fresh if depends else tainted).discard(path)
        elif carried(statement):  # an `if`, a nested loop: what it binds may keep an earlier value anyway
            tainted |= {p for p in rebound if _binds(statement, p)}
    return False


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(n is node for n in walk(tree))


def _read_paths(tree: cst.CSTNode) -> set[str]:
    """`a`, and `a.b` for `a.b.c`'s prefixes: the names and attribute paths an expression reads."""
    out: set[str] = set()
    skip: set[int] = set()  # the `b` of `a.b` and the keyword of `f(k=v)` are no reads of `b`, `k`
    for n in walk(tree):
        if type(n) is cst.Attribute:
            skip.add(id(n.attr))
            path = dotted_name(n)
            while path is not None and "." in path:
                out.add(path)
                path = path.rsplit(".", 1)[0]
        elif type(n) is cst.Arg and n.keyword is not None:
            skip.add(id(n.keyword))
        elif type(n) is cst.Name and id(n) not in skip:
            out.add(n.value)
    return out


def _target_paths(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Attribute:
        path = dotted_name(target)
        return [path] if path is not None else []
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [p for e in target.elements for p in _target_paths(e.value)]
    if type(target) is cst.StarredElement:
        return _target_paths(target.value)
    return bound_names(target)


def _bound_in(body: cst.CSTNode) -> tuple[set[str], set[str]]:
    """(names and attribute paths a loop body binds, containers it changes in place: `a[i] = ...`,
    `a.append(...)`)."""
    bound: set[str] = set()
    mutated: set[str] = set()
    for n in walk(body):
        targets: list[cst.BaseExpression]
        if type(n) is cst.Assign:
            targets = [t.target for t in n.targets]
        elif type(n) is cst.AugAssign or type(n) is cst.AnnAssign or type(n) is cst.NamedExpr:
            targets = [n.target]
        elif type(n) is cst.For:
            targets = [n.target]
        elif type(n) is cst.WithItem and n.asname is not None:
            targets = [n.asname.name]
        elif type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in _MUTATORS:
            path = dotted_name(n.func.value)
            if path is not None:
                mutated.add(path)
            continue
        else:
            continue
        for target in targets:
            bound.update(_target_paths(target))
            if type(target) is cst.Subscript:
                path = dotted_name(target.value)
                if path is not None:
                    mutated.add(path)
    return bound, mutated


def _binds(statement: cst.CSTNode, path: str) -> bool:
    return path in _bound_in(statement)[0]


def runs_at_least_once(loop: cst.CSTNode, unit) -> bool:
    """A `for` whose body surely runs: over a non-empty literal sequence, `range(n)` with `n` at least 1 (a
    literal, `max(..., 1)`, or a name bound once to one: `n_batch = max(len(x) // size, 1)`), or `range(a, b)`
    of literals with a < b. Paths that skip such a loop do not exist."""
    if type(loop) is not cst.For:
        return False
    assert isinstance(loop, cst.For)
    it = loop.iter
    if isinstance(it, (cst.List, cst.Tuple)):
        return bool(it.elements) and not any(type(e) is cst.StarredElement for e in it.elements)
    if (
        type(it) is not cst.Call
        or dotted_name(it.func) != "range"
        or any(a.keyword or a.star for a in it.args)
    ):
        return False
    if len(it.args) == 1:
        return _at_least_one(it.args[0].value, unit, 2)
    if len(it.args) == 2:
        start, stop = (_literal_int(a.value) for a in it.args)
        return start is not None and stop is not None and start < stop
    return False


def _at_least_one(node: cst.BaseExpression, unit, depth: int) -> bool:
    value = _literal_int(node)
    if value is not None:
        return value >= 1
    if type(node) is cst.Call and dotted_name(node.func) == "max":
        return any(not a.keyword and not a.star and _at_least_one(a.value, unit, depth) for a in node.args)
    if type(node) is cst.Name and depth > 0 and unit is not None:
        bound = unit.single_assignment(node.value)
        return bound is not None and _at_least_one(bound, unit, depth - 1)
    return False


def _literal_int(node: cst.BaseExpression) -> int | None:
    if type(node) is cst.Integer:
        return int(node.evaluated_value)
    return None
