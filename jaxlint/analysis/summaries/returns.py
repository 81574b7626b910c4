"""What a helper returns, when that is sure: an array computed by JAX.

Under jit, vmap and lax bodies every `jnp`/`lax`/`jax.random` result is a tracer, even on constants, so a
helper whose every `return` gives such a result returns a tracer to a traced caller (`float(loss_fn(p, x))`
raises); outside traced code such a helper gives a JAX array too. Only plain functions qualify, or jitted ones
(`@jax.jit`, a name bound to `jax.jit(f)`: a jitted call gives what the function returns, as arrays), and only
when every return value is built from a JAX call by arithmetic, indexing, array methods, a local bound once, or
another such helper; anything else is unknown. One whose every return is a tuple display of such values gives
traced code a tuple of tracers (`a, b = f(x)`: `several`); `self.m(...)` is the enclosing class's method `m`.
In project mode the module's summary says which of its top-level functions qualify (`function_returns_array`),
and a module calling one of them receives that (`imported_returns_array`): a JAX array in eager code, a
tracer in traced code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst

from ...syntax import children, own_nodes
from ..objects.receivers import module_instance, parameter_class
from ..semantics.library import ARRAY_METHODS
from .jit import jit_call

_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_MEMO = "returns_array"
_TUPLE_MEMO = "returns_arrays"
_CALLS_MEMO = "returns_array calls"
_DEPTH = 4


def returns_array(
    func: cst.Name | cst.Attribute,
    unit: Any,
    index: Any,
    is_array_function: Callable[[str | None], bool],
    several: bool = False,
) -> bool:
    """Whether calling the same-module function(s) named `func` (or the method `self.m`) from `unit` surely
    gives a JAX array, or with `several` a tuple of them (`return jnp.log(m), v`: what `a, b = f(x)` unpacks).
    Kept per call with the unit: the flow walk asks it of every call of a local name, in every round. Once
    answered, it holds: what it reads is the index's (static) and the targets' own answers, final when this
    one returns."""
    calls = unit.memo.setdefault(_CALLS_MEMO, {})
    key = (id(func), id(is_array_function), several)
    entry = calls.get(key)
    if entry is None:  # the node is kept in the entry, so its id cannot be reused while the entry lives
        method = type(func) is cst.Attribute
        targets = index.resolve_function(func, unit) or (
            _jit_bound(func.value, unit, index) if type(func) is cst.Name else []
        )
        answer = bool(targets) and all(
            (method or not bound)
            and _function_returns_array(target, index, is_array_function, _DEPTH, several)
            for target, bound in targets
        )
        entry = calls[key] = (func, answer)
    return entry[1]


def _jit_bound(name: str, unit: Any, index: Any) -> list:
    """The defs behind `name = jax.jit(f, ...)`, bound once in `unit` or (a global there) at module level."""
    owner = unit if unit is not index.root and name in unit.local_names else index.root
    value = jit_call(owner, name, index)
    if value is None:
        return []
    return [(target, app.bound_self) for target, app in index.applications(value, owner)]


def function_returns_array(unit: Any, index: Any, is_array_function: Callable[[str | None], bool]) -> bool:
    """Whether calling `unit` (a top-level function) surely gives a JAX array: for the project summary."""
    return _function_returns_array(unit, index, is_array_function, _DEPTH)


def imported_returns_array(index: Any, name: str | None) -> bool:
    """Whether `name` is another project module's function that surely returns a JAX array (project mode:
    the facts its summary gives this module, `project.Export`)."""
    project = getattr(index, "project", None)
    if name is None or project is None:
        return False
    found = project.exports.get(name)
    return found is not None and found.returns


def _function_returns_array(
    unit: Any,
    index: Any,
    is_array_function: Callable[[str | None], bool],
    depth: int,
    several: bool = False,
) -> bool:
    memo = unit.memo
    slot = _TUPLE_MEMO if several else _MEMO
    if slot in memo:
        return bool(memo[slot])
    memo[slot] = False  # recursion answers "unknown"
    node = unit.node
    answer = False
    if (
        type(node) is cst.FunctionDef
        and node.asynchronous is None
        and depth > 0
        and _plain_or_jitted(unit, index)
    ):
        values = _return_values(node)
        if several:  # every return a tuple display of arrays (any length: the caller only unpacks it)
            answer = values is not None and all(
                type(v) is cst.Tuple
                and bool(v.elements)
                and all(
                    type(e) is cst.Element and _is_array(e.value, unit, index, is_array_function, depth)
                    for e in v.elements
                )
                for v in values
            )
        else:
            answer = values is not None and all(
                _is_array(v, unit, index, is_array_function, depth) for v in values
            )
    memo[slot] = answer
    return answer


def _plain_or_jitted(unit: Any, index: Any) -> bool:
    """No decorator, or only `jax.jit` (`@jax.jit`, `@partial(jax.jit, static_argnums=...)`)."""
    scope = unit.parent or index.root
    for decorator in unit.node.decorators:
        found = index.transform_of(decorator.decorator, scope)
        if found is None or found[0] != "jax.jit":
            return False
    return True


def _return_values(function: cst.FunctionDef) -> list[cst.BaseExpression] | None:
    """The values of the function's own `return` statements; None for a generator, a bare `return` or none.
    Only statements are walked, not expressions (every module's functions are asked in project mode): a
    `yield` counts where it is a statement or an assignment's value, as generators write it."""
    values: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.SimpleStatementLine or type(node) is cst.SimpleStatementSuite:
            for small in node.body:
                if type(small) is cst.Return:
                    if small.value is None:
                        return None
                    values.append(small.value)
                elif type(getattr(small, "value", None)) in _GENERATING:  # identity: ABCs are slow
                    return None
            continue
        if _not_entered(type(node)):
            continue
        stack.extend(children(node))
    return values or None


_GENERATING = (cst.Yield, cst.Await)
_NOT_ENTERED: dict[type, bool] = {}


def _not_entered(kind: type) -> bool:
    """Definitions and expressions, which `_return_values` does not walk into: isinstance() answered once per
    node type (libcst's `BaseExpression` is an abstract base, slow to test against)."""
    found = _NOT_ENTERED.get(kind)
    if found is None:
        found = _NOT_ENTERED[kind] = issubclass(kind, (cst.FunctionDef, cst.ClassDef, cst.BaseExpression))
    return found


def _is_array(
    node: cst.BaseExpression,
    unit: Any,
    index: Any,
    is_array_function: Callable[[str | None], bool],
    depth: int,
    seen: frozenset[str] = frozenset(),  # names being followed: `x = x / jnp.max(x)` must not loop
) -> bool:
    if type(node) is cst.Call:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in ARRAY_METHODS:
            if _is_array(func.value, unit, index, is_array_function, depth, seen):
                return True
        name = index.qualname(func, unit)
        if name is not None:
            return is_array_function(name) or imported_returns_array(index, name)
        if type(func) is cst.Name:
            targets = index.resolve_function(func, unit)
            return bool(targets) and all(
                not bound and _function_returns_array(t, index, is_array_function, depth - 1)
                for t, bound in targets
            )
        return False
    if type(node) is cst.BinaryOperation:
        if isinstance(node.left, _STRINGS) or isinstance(node.right, _STRINGS):
            return False  # `"%s" % x`: text
        return _is_array(node.left, unit, index, is_array_function, depth, seen) or _is_array(
            node.right, unit, index, is_array_function, depth, seen
        )
    if type(node) is cst.UnaryOperation and type(node.operator) is not cst.Not:
        return _is_array(node.expression, unit, index, is_array_function, depth, seen)
    if type(node) is cst.Subscript:
        return _is_array(node.value, unit, index, is_array_function, depth, seen)
    if type(node) is cst.Attribute and node.attr.value in ("T", "real", "imag"):
        return _is_array(node.value, unit, index, is_array_function, depth, seen)
    if type(node) is cst.Name and node.value in unit.local_names and node.value not in seen:
        value = unit.single_assignment(node.value)
        return value is not None and _is_array(
            value, unit, index, is_array_function, depth, seen | {node.value}
        )
    return False


# Return annotations that declare a Python dict (its items may be tracers; it is no array).
_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping"})


def method_returns_mapping(index: Any, receiver: cst.BaseExpression, method: str, unit: Any) -> bool:
    """`obj.m(...)` with `obj` a parameter annotated with (or given) a class of this module whose method `m`
    declares it returns a dict (`-> dict[str, jax.Array]`, or a module-level alias of one, `State = dict[...]`):
    a Python dict, whatever it holds, not an array."""
    found = parameter_class(index, receiver, unit)
    if found is None or type(found[0]) is not cst.Name:
        return False
    node = index.classes.get(found[0].value)
    methods: list[Any] = index.class_methods.get(id(node), {}).get(method, []) if node is not None else []
    return bool(methods) and all(_declares_mapping(m.node, index) for m in methods)


def _declares_mapping(function: Any, index: Any) -> bool:
    returns = function.returns if type(function) is cst.FunctionDef else None
    node = returns.annotation if returns is not None else None
    if type(node) is cst.SimpleString and isinstance(node.evaluated_value, str):
        name = node.evaluated_value.split("[")[0].split(".")[-1]
        node = cst.Name(name) if name.isidentifier() else None
    for _ in range(2):  # the annotation, then a module-level alias it names
        if type(node) is cst.Subscript:
            node = node.value
        if type(node) is cst.Attribute:
            return node.attr.value in _MAPPINGS
        if type(node) is not cst.Name:
            return False
        if node.value in _MAPPINGS:
            return True
        node = index.root.single_assignment(node.value)
    return False


def returned_class(unit: Any, index: Any) -> str:
    """The module's top-level class every `return` of the function (`unit`) builds an instance of
    (`return SinkhornOutput(f, g, errors)`), its name; "" when a return gives anything else, or none does."""
    if type(unit.node) is not cst.FunctionDef:
        return ""
    found = ""
    for node in own_nodes(unit.node):
        if type(node) is not cst.Return:
            continue
        value = node.value
        if type(value) is not cst.Call or type(value.func) is not cst.Name:
            return ""
        name = value.func.value
        if index.classes.get(name) is None or name in unit.local_names or found not in ("", name):
            return ""
        found = name
    return found


def imported_result_class(index: Any, receiver: cst.BaseExpression, unit: Any) -> tuple[str, cst.Call] | None:
    """`out` bound once to `solve(...)` of another project module whose every return builds an instance of one
    of its classes (`project.Export.returns_class`, project mode): that class's qualified name as this module's
    imports reach it, and the call."""
    project = getattr(index, "project", None)
    if project is None or type(receiver) is not cst.Name:
        return None
    made = module_instance(index, receiver, unit)
    if made is None:
        return None
    qualname = index.qualname(made.func, unit)
    found = project.exports.get(qualname) if qualname is not None else None
    if found is None or not found.returns_class:
        return None
    return f"{qualname.rpartition('.')[0]}.{found.returns_class}", made
