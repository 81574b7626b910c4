"""What an `if` test tells the flow walk (`flow/walk.py`): a branch that cannot run whenever the function is traced
(a literal default no traced caller passes, a tracer type check, a None test of a closure), and what the test
shows about a traced name inside each branch (`x is None`, `isinstance(x, jax.Array)`); whether a `try`'s
handlers catch the errors tracing raises."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import none_comparison
from ..context import RuleContext
from ..kinds import ARRAY, NONE, TRACED
from ..semantics.library import ARRAY_TYPES, NOT_TRACER_TYPES
from ..values.abstract import NOTHING
from .frame import Frame


def constant_guard(test: cst.BaseExpression, frame: Frame) -> bool | None:
    """`if flag:` / `if not flag:` in a helper traced only through its callers, where `flag` is a parameter
    with a literal default that no traced caller passes (nor the body rebinds): whether the body runs."""
    unit = frame.unit
    if unit.kind <= NONE or frame.own_names is not None:
        return None
    negate = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
    if negate:
        assert type(test) is cst.UnaryOperation
        test = test.expression
    is_none = False  # `flag is None` / `flag is not None`
    sentinel: str | None = None  # `flag is SENTINEL`, after `flag = SENTINEL if flag is None else flag`
    if (
        type(test) is cst.Comparison
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and isinstance(test.comparisons[0].comparator, cst.Name)
    ):
        compared = test.comparisons[0].comparator
        assert type(compared) is cst.Name
        is_none = compared.value == "None"
        sentinel = None if is_none else compared.value
        negate ^= isinstance(test.comparisons[0].operator, cst.IsNot)
        test = test.left
    if type(test) is not cst.Name:
        return None
    name = test.value
    if name in unit.passed_params or type(unit.node) is not cst.FunctionDef:
        return None
    if unit.is_target:  # run by transformations: only what they bind through partial is known
        found = _bound_none(unit, name, frame.index) if is_none and sentinel is None else None
        return None if found is None else found != negate
    if sentinel is not None or name in unit.bindings:
        # `flag = SENTINEL if flag is None else flag` (SENTINEL no local name), then `flag is SENTINEL`:
        # the default not passed, the test holds exactly when it was None.
        if sentinel is None or _sentinel_default(unit, name, before=test) != sentinel:
            return None
        is_none = True
    params = unit.node.params
    default = next((p.default for p in [*params.params, *params.kwonly_params] if p.name.value == name), None)
    if default is None:
        return None
    if is_none:
        none = type(default) is cst.Name and default.value == "None"
        return none != negate if _literal_truth(default) is not None else None
    truth = _literal_truth(default)
    return None if truth is None else truth != negate


def _bound_none(unit: Any, name: str, index: Any) -> bool | None:
    """Whether parameter `name` is None in a transformed `unit` that every application gives a keyword value
    through partial (`lax.cond(p, partial(f, k=v), ...)`, or `f = partial(f, k=v)` first): True for `k=None`,
    False for any other value (the caller sets what the default would leave unset); None when an application
    leaves it unbound, or traced code calls the def directly without it."""
    bound = [dict(app.bound_keywords).get(name) for app in unit.applications]
    if not bound or any(value is None for value in bound) or _called_without(unit, name, index):
        return None
    nones = {type(value) is cst.Name and value.value == "None" for value in bound}
    return nones.pop() if len(nones) == 1 else None


def _called_without(unit: Any, name: str, index: Any) -> bool:
    """Whether traced code (a transformed function or a helper it calls) calls `unit`'s def by its name without
    passing parameter `name` (by keyword, or positionally as far as its position)."""
    memo = unit.memo.get("called_without")
    if memo is None:
        memo = unit.memo["called_without"] = {}
    if name in memo:
        return memo[name]
    params = unit.node.params
    positions = [p.name.value for p in [*params.posonly_params, *params.params]]
    reach = positions.index(name) if name in positions else None
    found = False
    for call, caller, order in index.sites_calling(unit.node.name.value):
        if caller.kind <= NONE and not caller.is_target:
            continue
        if not any(callee is unit for callee, _ in index.resolve_function(call.func, caller, order)):
            continue
        if any(a.star for a in call.args):
            found = True
            break
        positional = sum(1 for a in call.args if a.keyword is None)
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if name not in keywords and (reach is None or positional <= reach):
            found = True
            break
    memo[name] = found
    return found


def _sentinel_default(unit: Any, name: str, before: cst.CSTNode) -> str | None:
    """The name SENTINEL when the only binding of parameter `name` in `unit` is a statement of its body
    `name = SENTINEL if name is None else name` (or `name if name is not None else SENTINEL`) preceding the
    statement that holds `before`, SENTINEL not a local name (a module-level or imported one, `dense`): with the
    default, `name is SENTINEL` holds, whatever SENTINEL is."""
    bindings = unit.bindings.get(name, ())
    if len(bindings) != 1 or not bindings[0].plain:
        return None
    value = bindings[0].value
    if type(value) is not cst.IfExp:
        return None
    tested = none_comparison(value.test)
    if tested is None or tested[0] != name:
        return None
    replaced, kept = (value.body, value.orelse) if tested[1] else (value.orelse, value.body)
    if not (type(kept) is cst.Name and kept.value == name and type(replaced) is cst.Name):
        return None
    if replaced.value in unit.bindings or replaced.value in unit.local_names:
        return None  # a local: it may hold something else by the time of the test
    statements = list(unit.node.body.body) if type(unit.node.body) is cst.IndentedBlock else []
    line = next(
        (
            i
            for i, s in enumerate(statements)
            if type(s) is cst.SimpleStatementLine and bindings[0].node in s.body
        ),
        None,
    )
    if line is None:
        return None  # not a statement the body runs whatever happens
    if not any(_holds(s, before) for s in statements[line + 1 :]):
        return None
    return replaced.value


def _holds(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Whether `target` is `node` or lies inside it."""
    if node is target:
        return True
    return any(_holds(child, target) for child in node.children)


def _literal_truth(node: cst.BaseExpression) -> bool | None:
    """The truth of a literal default (`False`, `None`, `0`, `"mean"`), or None when it is not one."""
    if type(node) is cst.Name and node.value in ("True", "False", "None"):
        return node.value == "True"
    if type(node) is cst.Integer or type(node) is cst.Float:
        return (
            bool(float(node.value.replace("_", ""))) if type(node) is cst.Float else bool(int(node.value, 0))
        )
    if type(node) is cst.SimpleString and isinstance(node.evaluated_value, str):
        return bool(node.evaluated_value)
    return None


def tracer_check(test: cst.BaseExpression, frame: RuleContext) -> bool | None:
    """`if isinstance(x, jax.core.Tracer):` on a traced `x` always runs its body, `if not isinstance(...)` never
    (equinox's `error_if` reads `pred` only after such a check). `isinstance(x, (int, float))`, `bool`, NumPy
    types: never true of a tracer, so the body does not run under the trace; `isinstance(x, jax.Array)` of a
    traced array always is, `isinstance(x, dict)` (or list, tuple) never."""
    if type(test) is cst.BooleanOperation:  # `_is_tracer(x) or x`: the right side is read only when needed
        left = tracer_check(test.left, frame)
        decisive = type(test.operator) is cst.Or
        return left if left is decisive else None
    negate = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
    if type(test) is cst.UnaryOperation and negate:
        test = test.expression
    test = _inlined_check(test, frame)
    kinds = _isinstance_types(test, frame)
    if kinds is None:
        return None
    assert type(test) is cst.Call
    flags = frame.flags(test.args[0].value)
    if not flags & TRACED:
        return None
    if all(k.startswith("jax.") and k.endswith(".Tracer") for k in kinds):
        return not negate
    if all(k in NOT_TRACER_TYPES for k in kinds):
        return negate
    if flags & ARRAY and any(k in ARRAY_TYPES for k in kinds):
        return not negate
    if flags & ARRAY and all(k in _CONTAINER_TYPES for k in kinds):
        return negate  # `isinstance(params, dict)` of a traced array: never (the array path is taken)
    return None


# Python containers: never the type of a (traced) JAX array.
_CONTAINER_TYPES = frozenset(f"builtins.{n}" for n in ("dict", "list", "tuple", "set", "frozenset"))


def _inlined_check(test: cst.BaseExpression, frame: RuleContext) -> cst.BaseExpression:
    """`_is_tracer(x)` of a same-module `def _is_tracer(v): return isinstance(v, T)`: `isinstance(x, T)` (T read
    in the helper's module, which is this one); else the test as it is."""
    if type(test) is not cst.Call or len(test.args) != 1 or test.args[0].keyword or test.args[0].star:
        return test
    found = frame.index.resolve_function(test.func, frame.unit)
    helper = found[0][0].node if len(found) == 1 and not found[0][1] else None
    if type(helper) is not cst.FunctionDef:
        return test
    params, body = helper.params, helper.body.body
    if len(params.params) != 1 or params.posonly_params or params.kwonly_params or len(body) != 1:
        return test
    line = body[0]
    if (
        type(line) is not cst.SimpleStatementLine
        or len(line.body) != 1
        or type(line.body[0]) is not cst.Return
    ):
        return test
    returned = line.body[0].value
    if not (
        type(returned) is cst.Call
        and len(returned.args) == 2
        and type(returned.args[0].value) is cst.Name
        and returned.args[0].value.value == params.params[0].name.value
        and frame.qualname(returned.func) == "builtins.isinstance"
    ):
        return test
    return returned.with_changes(
        args=[returned.args[0].with_changes(value=test.args[0].value), returned.args[1]]
    )


def _isinstance_types(test: cst.BaseExpression, frame: RuleContext) -> list[str] | None:
    """The qualified names of the types in `isinstance(x, T)` / `isinstance(x, (T1, T2))`; None when the test
    is not such a call or a type is not known by name."""
    if not (
        type(test) is cst.Call
        and len(test.args) == 2
        and not any(a.keyword or a.star for a in test.args)
        and frame.qualname(test.func) == "builtins.isinstance"
    ):
        return None
    spec = test.args[1].value
    nodes = [e.value for e in spec.elements] if type(spec) is cst.Tuple else [spec]
    kinds = [frame.qualname(n) for n in nodes]
    return None if not kinds or None in kinds else kinds  # type: ignore[return-value]


def narrowing(test: cst.BaseExpression, frame: Frame) -> tuple[str, int | None, int | None] | None:
    """What a test shows about a traced local name inside the branches: (name, flags in the body, flags in the
    else branch), None for "unchanged". `x is None` holds only when `x` is the Python None (a traced value
    never is); `isinstance(x, jax.Array)` makes `x` an array."""
    negate = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
    if type(test) is cst.UnaryOperation and negate:
        test = test.expression
    name: str | None = None
    body: int | None = None
    orelse: int | None = None
    tested = none_comparison(test)
    if tested is not None:
        name, is_none = tested
        if is_none:
            body = 0
        else:
            orelse = 0
    else:
        kinds = _isinstance_types(test, frame)
        if kinds is None or not all(k in ARRAY_TYPES for k in kinds):
            return None
        assert type(test) is cst.Call
        if not isinstance(test.args[0].value, cst.Name):
            return None
        name = test.args[0].value.value
        known = frame.env.get(name, NOTHING).flags
        body = known | ARRAY if known & TRACED else None
    found = frame.env.get(name)
    flags = found.flags if found is not None else None
    if flags is None or not flags & TRACED or (body is None and orelse is None):
        return None
    return (name, orelse, body) if negate else (name, body, orelse)


def leaves(body: cst.BaseSuite) -> bool:
    """A block whose last statement is `return` or `raise`."""
    last = body.body[-1] if body.body else None
    if type(last) is cst.SimpleStatementLine:
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    return type(body) is cst.SimpleStatementSuite and isinstance(body.body[-1], (cst.Return, cst.Raise))


# What a handler must name to catch the errors tracing raises (TracerBoolConversionError and the other
# concretization errors derive from TypeError; checked on JAX 0.10.2).
_CATCHING = frozenset({"Exception", "BaseException", "TypeError"})


def tracer_errors_caught(node: cst.Try | cst.TryStar, index: Any, unit: Any) -> int:
    """1 when a handler of the `try` catches the errors tracing raises (a bare `except`, `Exception`,
    `TypeError`, or a `jax.errors` class), else 0."""
    for handler in node.handlers:
        kinds = handler.type
        if kinds is None:
            return 1
        for kind in [e.value for e in kinds.elements] if type(kinds) is cst.Tuple else [kinds]:
            if type(kind) is cst.Name and kind.value in _CATCHING:
                return 1
            qualname = index.qualname(kind, unit) if type(kind) in (cst.Name, cst.Attribute) else None
            if qualname is not None and qualname.startswith(("jax.errors.", "jax.core.")):
                return 1
    return 0
