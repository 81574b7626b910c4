"""Where a key an object keeps as built is drawn again (JAX301's held keys): the draws in the method, reported
there rather than at the caller's repeated call (one finding per bug, where the fix goes).

A method's walk records where it first consumes each part of its parameters (`UnitResult.origins`): a key
expression given to a consumer, or a held-key call of another method (`self.detector.sample(x)`), followed
here to that method's draw (`draw_sites`). A caller's second call on one object reports the draws of a method of
its own module (`KeyVersions._report_held`); for another project module's method it leaves a fact
(`repeated_calls`: `project.CallFact.repeated`, with the line of the call or loop), which that module turns into
findings at its draws (`repeated_draws`, naming the caller's file and line)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import libcst as cst

from ...syntax import attribute_root, bound_names, own_nodes, source_of, walk
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params
from ..kinds import NONE
from ..objects.instances import class_methods, method_call
from ..project import CallFact, Export
from .model import _PATH_DEPTH, FOLD_IN, RECEIVER, SPLIT, Held, KeyReuse, Site, _held_paths


def draw_sites(
    analysis: Any, units: Sequence[Unit], path: tuple, depth: int = 0
) -> list[tuple[cst.CSTNode, str]]:
    """Where the methods `units` first consume the part `path` of their receiver (`self.key`): the key
    expressions given to a consumer, followed into the methods of held-key calls (`self.detector.sample()`
    in `render`: the draw in `sample`), each with the kept attribute's text there ("self.key"; "self._seed"
    for `key = jax.random.key(self._seed)`). `analysis`: the module's `keys.dataflow.KeyAnalysis`."""
    found: list[tuple[cst.CSTNode, str]] = []
    for unit in units:
        first = positional_params(unit.params)[:1]
        if depth > _PATH_DEPTH or not first:
            continue
        own = first[0].name.value
        for origin in analysis.result(unit).origins.get((own, path), ()):
            if isinstance(origin, Held):
                inner = draw_sites(analysis, origin.units, origin.path, depth + 1)
            else:
                inner = [(origin, own + "".join(path))]
            found.extend(site for site in inner if not any(site[0] is f[0] for f in found))
    return found


def held_reuses(
    analysis: Any, node: cst.CSTNode, consumer: str, first: Site, loop: cst.CSTNode | None, held: Held
) -> list[KeyReuse]:
    """A second call (`node`) of a method drawing from a key its receiver keeps as built: a reuse at each draw
    in the method, or, for another project module's method, one left to that module (`target`); [] when the
    draws are not found (the caller reports it at the call, then)."""
    if held.hands_back:
        return []  # a functional update the caller dropped: the fix is the caller's, reported at its call
    if held.target is not None:
        return [KeyReuse(node, "", consumer, first, "held", loop=loop, target=held.target)]
    return [
        KeyReuse(draw, source_of(draw), consumer, first, "held", loop=loop, caller=node, kept=kept)
        for draw, kept in draw_sites(analysis, held.units, held.path)
    ]


def repeated_draws(analysis: Any) -> list[KeyReuse]:
    """The draws from keys an object keeps as built in the methods that other project modules call repeatedly
    on one object (`project.CallFact.repeated`): one reuse per draw, `context` naming the call ("main.py:8")."""
    index = analysis.index
    project = index.project
    if project is None or not analysis.relevant:
        return []
    found: list[KeyReuse] = []
    for name, facts in project.incoming.items():
        repeated = [fact for fact in facts if fact.repeated]
        owner, _, method = name.partition(".")
        if not repeated or not method:
            continue
        for unit in class_methods(index, owner, method)[-1:]:
            for path in sorted(_held_paths(index, unit, analysis.call_summary(unit))):
                for draw, kept in draw_sites(analysis, [unit], path):
                    site = Site(draw, f"'{name}'")
                    where = repeated[0].context
                    found.append(
                        KeyReuse(draw, source_of(draw), site.consumer, site, "held", context=where, kept=kept)
                    )
    return found


def repeated_calls(index: ModuleIndex, exports: Mapping[str, Export], analysis: Any) -> set[CallFact]:
    """Other project modules' methods that draw from a key their object keeps as built (their exports name the
    receiver's keys) and that this module calls again on one object: a fact naming the line of the repeated
    call (or of the loop repeating it), so that their module reports the draw."""
    if not any(name == RECEIVER for export in exports.values() for name, _ in export.keys):
        return set()
    found: set[CallFact] = set()
    for unit in [index.root, *index.units.values()]:
        for reuse in analysis.reuses(unit):
            if reuse.target:
                where = reuse.loop if reuse.loop is not None else reuse.node
                index.positions().resolve([where])
                found.add(CallFact(reuse.target, NONE, str(index.line_of(where)), (), repeated=True))
    return found


def hands_back(index: ModuleIndex, units: Sequence[Unit], depth: int = 0) -> bool:
    """Whether each of the methods `units` returns the key it advanced from one its object keeps: `new_key, sub =
    split(self.key)` ... `return eqx.tree_at(lambda m: m.key, self, new_key), batch` (or returns a call of a
    method of its object that does). A functional update: the caller is to use the object returned, so a second
    call on the old object is the caller's reuse, reported at its call rather than at the draw."""
    return bool(units) and depth <= _PATH_DEPTH and all(_hands_back(index, unit, depth) for unit in units)


def _hands_back(index: ModuleIndex, unit: Unit, depth: int) -> bool:
    first = positional_params(unit.params)[:1]
    if type(unit.node) is not cst.FunctionDef or not first:
        return False
    own = first[0].name.value
    assignments: list[cst.Assign] = []
    returned: list[cst.BaseExpression] = []
    for node in own_nodes(unit.node):
        if type(node) is cst.Assign:
            assignments.append(node)
        elif type(node) is cst.Return and node.value is not None:
            returned.append(node.value)
    advanced: set[str] = set()  # names holding the advanced key, or a value built with it
    changed = True
    while changed:  # `own_nodes` is not in source order: until nothing new is bound
        changed = False
        for node in assignments:
            value = node.value
            drawn = (
                type(value) is cst.Call
                and value.args
                and index.qualname(value.func, unit) in (SPLIT, FOLD_IN)
                and type(value.args[0].value) is cst.Attribute
                and attribute_root(value.args[0].value) == own
            )
            if drawn or _mentions(value, advanced):
                names = {n for target in node.targets for n in bound_names(target.target)} - advanced
                if names:
                    advanced |= names
                    changed = True
    for value in returned:
        if _mentions(value, advanced):
            return True
        func = value.func if type(value) is cst.Call else None
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == own:
            method = method_call(index, func, unit)
            if method is not None and hands_back(index, method.units, depth + 1):
                return True
    return False


def _mentions(node: cst.CSTNode, names: set[str]) -> bool:
    return bool(names) and any(type(n) is cst.Name and n.value in names for n in walk(node))
