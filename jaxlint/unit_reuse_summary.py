"""What a per-unit reuse walk (`unit_reuse.py`) leaves for the module's summary in project mode, as a full
walk leaves it: the facts each unit's walk wrote on it, the calls into other modules each top-level
statement's walk recorded (`SentFacts`), and the top-level functions' facts and exports of the statements it
did not walk (`after_walk`); and what every walk leaves for the next lint's memo (`Walked`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import libcst as cst

from .unit_reuse import Reuse, UnitMemo, _stale, received


class SentFacts(set):
    """`ModuleFacts.outgoing` while a lint records it: each call fact added, with the top-level statement
    whose walk added it (`FlowWalker.top`; 0 before the walk: the index's and the call sites' facts)."""

    def __init__(self, facts: set, walker: Any) -> None:
        super().__init__(facts)
        self.walker = walker
        self.sent: list[tuple[int, Any]] = []

    def add(self, fact: Any) -> None:
        self.add_from(getattr(self.walker, "top", 0), fact)

    def add_from(self, top: int, fact: Any) -> None:
        self.sent.append((top, fact))
        super().add(fact)


_STATE = (
    "kind",
    "context",
    "traced_params",
    "container_params",
    "array_params",
    "passed_params",
    "eager_arrays",
    "traced_receiver",
)


def unit_states(index: Any) -> dict[int, tuple]:
    """What the walk wrote on each unit (its marks), by the id of the unit's node."""
    return {
        id(unit.node): tuple(
            set(value) if isinstance(value, set) else value for value in (getattr(unit, f) for f in _STATE)
        )
        for unit in index.units.values()
    }


def restore_states(index: Any, states: dict[int, tuple], walked: Any) -> None:
    """Units the reuse walk did not walk get the facts the last walk left on them (the same node objects)."""
    for unit in index.units.values():
        if id(unit) in walked:
            continue
        state = states.get(id(unit.node))
        if state is not None:
            for field, value in zip(_STATE, state, strict=True):
                setattr(unit, field, set(value) if isinstance(value, set) else value)


@dataclasses.dataclass(frozen=True)
class Walked:
    """What a walk leaves for the memo (`UnitMemo.remember`)."""

    reached: frozenset[int]
    received: Any
    states: dict[int, tuple]
    sent: list[tuple[int, Any]]
    functions: tuple
    project: Any


def after_walk(
    memo: UnitMemo, index: Any, project: Any, walker: Any, reuse: Reuse | None, sent: SentFacts | None
) -> Walked:
    """After the walk, before the summary: a reuse walk's module is left as a full walk leaves it for the
    summary (project mode): the units it did not walk get the facts the last walk left on them, the calls into
    other modules those walks recorded count again, the top-level functions it did not walk keep their facts."""
    if reuse is not None and memo.module is not None:
        restore_states(index, memo.states, walker.walked)
        if project is not None and sent is not None:
            stale = _stale(memo, index.module)
            for top, fact in memo.sent:
                if top != 0 and top not in stale and top not in reuse.only:
                    sent.add_from(top, fact)
            own = {
                d.name.value for d in index.module.body if id(d) in reuse.only and type(d) is cst.FunctionDef
            }
            own |= {d.name.value for d in memo.module.body if id(d) in stale and type(d) is cst.FunctionDef}
            kept = [f for f in memo.functions if f.name not in own]
            project.functions = tuple(sorted(kept + [f for f in project.functions if f.name in own]))
            # The others' exports (keys consumed, one array returned, a timer) follow their bodies and their
            # callees', none of them a changed def: the last summary's stand.
            exported = getattr(memo.project, "exported", ())
            project.kept_exports = {
                base.name: (base, full) for base, full in exported if base.name not in own
            }
    walked = Walked(
        frozenset(walker.reached),
        received(project),
        unit_states(index) if project is not None else {},  # only the summary reads them
        list(sent.sent) if sent is not None else [],
        project.functions if project is not None else (),
        project,
    )
    if project is not None and sent is not None:
        project.outgoing = set(sent)  # (it pointed at the walker)
    return walked
