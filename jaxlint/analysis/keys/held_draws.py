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

from ...syntax import source_of
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params
from ..kinds import NONE
from ..objects.instances import class_methods
from ..project import CallFact, Export
from .model import _PATH_DEPTH, RECEIVER, Held, KeyReuse, Site, _held_paths


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
