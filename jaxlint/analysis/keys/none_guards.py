"""`if P is None:` decided per call (JAX301): a callee that consumes a key only when another parameter is None
consumes nothing at a call passing that parameter a literal that is not None, and vice versa.

The key dataflow walks such a callee again with what the call shows (`KeyAnalysis.call_summary(unit, facts)`):
`P is None` true where the call passes `None` or leaves `P` at its default `None`, false where it passes a
literal of another kind (a number, a string, a tuple, a lambda...). The test is decided only while `P` still
holds what the call passed (not re-bound on the path); any other test, or an argument of unknown value, leaves
both branches to the walk as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from ...syntax import own_nodes
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params, static_spec
from .model import _bind

# What a call argument shows about being None: literals only.
_NOT_NONE = (
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Tuple,
    cst.List,
    cst.Dict,
    cst.Set,
    cst.Lambda,
)

Facts = tuple[tuple[str, bool], ...]  # (parameter, is None), sorted


def none_tested(unit: Unit) -> frozenset[str]:
    """The parameters of a function that its own code compares with `is None` / `is not None`."""
    memo = unit.memo
    found = memo.get("none_tested")
    if found is None:
        node = unit.node
        names: set[str] = set()
        if type(node) is cst.FunctionDef:
            params = {p.name.value for p in [*positional_params(node.params), *node.params.kwonly_params]}
            for child in own_nodes(node):
                tested = _tested_name(child)
                if tested is not None and tested[0] in params:
                    names.add(tested[0])
        found = memo["none_tested"] = frozenset(names)
    return found


def call_facts(callee: Unit, bound_self: bool, args: Sequence[cst.Arg]) -> Facts:
    """What a call shows about the callee's None-tested parameters (`none_tested`)."""
    tested = none_tested(callee)
    if not tested or any(a.star for a in args):
        return ()
    params = callee.params
    positional = [p.name.value for p in positional_params(params)]
    if bound_self and callee.is_method:
        positional = positional[1:]
    mapping = _bind(positional, {p.name.value for p in params.kwonly_params}, args)
    defaults = {p.name.value: p.default for p in [*positional_params(params), *params.kwonly_params]}
    facts = []
    for name in sorted(tested):
        arg = mapping.get(name)
        value = arg.value if arg is not None else defaults.get(name)
        if type(value) is cst.Name and value.value == "None":
            facts.append((name, True))
        elif isinstance(value, _NOT_NONE) or (type(value) is cst.Name and value.value in ("True", "False")):
            facts.append((name, False))
    return tuple(facts)


def with_mapped_facts(
    facts: Facts, callee: Unit, bound_self: bool, mapping: cst.Call, scope: Unit, index: ModuleIndex
) -> Facts:
    """`facts`, and for a call through a map (`jax.vmap(f, in_axes=(None, 0))(key, us)`, `mapping` the map
    written in `scope`) whose `in_axes` maps one argument alone (`StaticSpec.never_none`): that parameter is not
    None. Only for a function named plainly (a `partial` shifts the positions)."""
    found = index.transform_of(mapping.func, scope)
    if found is None or type(mapping.args[0].value) not in (cst.Name, cst.Attribute):
        return facts
    spec = static_spec([*mapping.args[1:], *found[1]], found[0])
    tested = none_tested(callee)
    if not spec.never_none or not tested:
        return facts
    positional = [p.name.value for p in positional_params(callee.params)]
    if bound_self and callee.is_method:
        positional = positional[1:]
    known = dict(facts)
    for i in spec.never_none:
        if i < len(positional) and positional[i] in tested:
            known[positional[i]] = False
    return tuple(sorted(known.items()))


def decide_none_test(
    test: cst.BaseExpression, facts: dict[str, bool], unchanged: Callable[[str], bool]
) -> bool | None:
    """Which branch `if P is None` (`is not`, under `not`) takes given the facts; `unchanged(P)` says whether `P`
    still holds what the call passed."""
    negate = False
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, negate = test.expression, not negate
    tested = _tested_name(test)
    if tested is None or tested[0] not in facts or not unchanged(tested[0]):
        return None
    is_none = facts[tested[0]]
    return (is_none if tested[1] else not is_none) != negate


def _tested_name(node: cst.CSTNode) -> tuple[str, bool] | None:
    """`P is None` -> (P, True); `P is not None` -> (P, False); else None."""
    if type(node) is not cst.Comparison or len(node.comparisons) != 1 or type(node.left) is not cst.Name:
        return None
    comparison = node.comparisons[0]
    if not (type(comparison.comparator) is cst.Name and comparison.comparator.value == "None"):
        return None
    if type(comparison.operator) is cst.Is:
        return node.left.value, True
    if type(comparison.operator) is cst.IsNot:
        return node.left.value, False
    return None
