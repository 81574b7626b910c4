"""Functions with custom derivatives (`@jax.custom_vjp`, `@jax.custom_jvp`): called from staged-out code, JAX
traces them again with every argument outside `nondiff_argnums` a tracer, and their rules with them
(library_transformations.py's CUSTOM_DERIVATIVES). The flow walk (`flow/calls.py`) asks which positions stay
what the caller gave and which defs of the module are their rules."""

from __future__ import annotations

import libcst as cst

from ...syntax import argument, int_literal
from ..binding.index import ModuleIndex, Unit
from ..semantics.library import CUSTOM_DERIVATIVES, CUSTOM_RULE_METHODS, PARTIAL

# A rule of a custom-derivative function: (its def, whether it takes the primal's arguments).
Rule = tuple[Unit, bool]


def nondiff_positions(index: ModuleIndex, unit: Unit) -> frozenset[int] | None:
    """The positions a def decorated with a custom-derivative decorator keeps as given (`nondiff_argnums`,
    also through `@partial(jax.custom_vjp, nondiff_argnums=(1,))`); None for any other def, or where the
    option is not written as literals."""
    node = unit.node
    if type(node) is not cst.FunctionDef:
        return None
    for decorator in node.decorators:
        expression = decorator.decorator
        options: list[cst.Arg] = []
        if type(expression) is cst.Call:
            head = index.qualname(expression.func, unit.parent or unit)
            if head == PARTIAL and expression.args:
                options = list(expression.args[1:])
                expression = expression.args[0].value
            else:
                options = list(expression.args)
                expression = expression.func
        name = index.qualname(expression, unit.parent or unit)
        if name not in CUSTOM_DERIVATIVES:
            continue
        given = next((a for a in options if a.keyword and a.keyword.value == CUSTOM_DERIVATIVES[name]), None)
        if given is None:
            return frozenset()
        value = given.value
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        positions = [int_literal(item) for item in items]
        if any(p is None for p in positions):
            return None
        return frozenset(p for p in positions if p is not None)
    return None


def custom_rules(index: ModuleIndex, unit: Unit) -> list[Rule]:
    """The module's defs registered as rules of `unit` (`f.defvjp(fwd, bwd)`: fwd; `@f.defjvp`: the jvp)."""
    key = "custom rules"
    table = index.root.memo.get(key)
    if table is None:
        table = index.root.memo[key] = _rules(index)
    return table.get(id(unit), [])


def _rules(index: ModuleIndex) -> dict[int, list[Rule]]:
    found: dict[int, list[Rule]] = {}
    for call, site, _ in index._sites:
        func = call.func
        if type(func) is not cst.Attribute or func.attr.value not in CUSTOM_RULE_METHODS:
            continue
        rule = argument(call, 0, "fwd" if CUSTOM_RULE_METHODS[func.attr.value] else "jvp")
        if rule is None:
            continue
        for primal, _ in index.resolve_function(func.value, site):
            for target, bound in index.resolve_function(rule.value, site):
                if not bound:
                    found.setdefault(id(primal), []).append((target, CUSTOM_RULE_METHODS[func.attr.value]))
    for unit in index.units.values():  # `@f.defjvp` over a def
        node = unit.node
        if type(node) is not cst.FunctionDef:
            continue
        for decorator in node.decorators:
            expression = decorator.decorator
            if type(expression) is cst.Attribute and expression.attr.value in CUSTOM_RULE_METHODS:
                for primal, _ in index.resolve_function(expression.value, unit.parent or unit):
                    found.setdefault(id(primal), []).append(
                        (unit, CUSTOM_RULE_METHODS[expression.attr.value])
                    )
    return found
