"""The server's per-unit reuse: after an edit, walk only the top-level defs and classes it changed and keep
the other findings of the document's last lint, where that provably gives a full lint's findings (else: a full
lint).

A lint records (`UnitMemo`) each finding with the top-level statement whose walk emitted it (`FlowWalker.top`;
0 for `on_module` and the module's `on_unit`, which every lint runs again) and its place. The next lint of the
same document reuses it when all of these hold (`plan`); the reasons are in ARCHITECTURE.md (the server):
- same path and settings, the same facts from the project (or none), not a notebook; the parse reused every
  other top-level statement (the same node objects: `reparse.py`), and the changed ones (`changed`) are as
  many top-level defs or classes as before, which the last walk reached;
- each changed statement's tokens are its old tokens but for the values of numbers, comments and blank lines:
  nothing any module-wide fact reads (names, calls, attributes, strings, structure) changed; the findings kept
  lie outside the changed lines, those below move with the lines inserted or removed, and where lines moved
  none names a line number (`Rule.quotes_lines`);
- isolation: their names are nowhere else in the text (no other code calls them or reads a fact of theirs),
  and the names they mention are bound at module scope by top-level import lines only, or not at all (they
  call no other function of the module, read no module variable, mark no other unit).
"""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize
from typing import Any

import libcst as cst

from .reparse import _common_ends

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclasses.dataclass
class Placed:
    """One finding before `# noqa`: who emitted it (`top`), and what the engine needs to report it again."""

    top: int
    code: str
    name: str
    severity: Any
    node: cst.CSTNode
    message: str
    function: str | None
    fix: Any
    fix_text: str | None
    fix_safety: str | None
    quotes: bool  # its message names line numbers (`Rule.quotes_lines`)
    line: int
    column: int
    end_line: int
    end_column: int


@dataclasses.dataclass
class UnitMemo:
    """What the last lint of a document leaves for the next one (the engine fills it; `lint_text(units=)`)."""

    module: cst.Module | None = None
    source: str = ""
    path: str = ""
    settings: Any = None
    noqa: bool = True
    placed: list[Placed] = dataclasses.field(default_factory=list)
    reached: frozenset[int] = frozenset()
    words: dict[int, frozenset[str]] = dataclasses.field(default_factory=dict)  # id(statement) -> its words
    reused: int = 0  # how many lints in a row reused (for tests and the bench)
    refused: str = ""  # why the last lint did not reuse (for the bench)
    # Project mode: what the module received (reuse needs the same), the calls into other modules the walk
    # recorded by the statement whose walk made them, each unit's facts as the walk left them (by id of its
    # node), and the module's top-level functions as the summary lists them.
    received: Any = None
    sent: list[tuple[int, Any]] = dataclasses.field(default_factory=list)
    states: dict[int, tuple] = dataclasses.field(default_factory=dict)
    functions: tuple = ()
    project: Any = None  # the last lint's `ModuleFacts`: its summary's exports, computed after the lint

    def remember(
        self,
        module: cst.Module,
        source: str,
        path: str,
        settings: Any,
        noqa: bool,
        reuse: Reuse | None,
        placed: list[Placed],
        walked: Walked,
    ) -> list[Placed]:
        """This lint's findings (with those it kept, when it reused) become what the next lint starts from;
        all at once, after the lint succeeded, so that the memo always describes one module."""
        reached = walked.reached
        if reuse is not None:
            stale = _stale(self, module)
            placed = placed + reuse.kept(self, stale)
            reached = (self.reached - stale) | reached
            self.reused += 1
        else:
            self.reused = 0
        self.module, self.source, self.path, self.settings, self.noqa = module, source, path, settings, noqa
        self.placed, self.reached = placed, frozenset(reached)
        self.received, self.states, self.sent, self.functions, self.project = (
            walked.received,
            walked.states,
            walked.sent,
            walked.functions,
            walked.project,
        )
        return placed


def changed(old: cst.Module, new: cst.Module) -> tuple[list[cst.CSTNode], list[cst.CSTNode]]:
    """The top-level statements between the longest common prefix and suffix (by object identity)."""
    a, b = old.body, new.body
    head = 0
    while head < len(a) and head < len(b) and a[head] is b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] is b[-1 - tail]:
        tail += 1
    return list(a[head : len(a) - tail]), list(b[head : len(b) - tail])


_IGNORED = frozenset(
    {tokenize.COMMENT, tokenize.NL}
)  # comments, blank and comment lines: read by no analysis


def _tokens(code: str) -> list[tuple[int, str]] | None:
    """The def's tokens as the analysis could tell them apart: numbers' values and comments left out."""
    try:
        return [
            (t.type, "0" if t.type == tokenize.NUMBER else t.string)
            for t in tokenize.generate_tokens(io.StringIO(code).readline)
            if t.type not in _IGNORED
        ]
    except (tokenize.TokenError, SyntaxError):
        return None


@dataclasses.dataclass(frozen=True)
class Reuse:
    """A lint that walks only `only` (ids of top-level defs) and keeps the last lint's other findings; those
    after line `last` of the last text move by `delta` lines."""

    only: frozenset[int]
    last: int
    delta: int

    def kept(self, memo: UnitMemo, stale: set[int] | frozenset[int]) -> list[Placed]:
        out = []
        for placed in memo.placed:
            if placed.top == 0 or placed.top in stale:
                continue
            if placed.line > self.last and self.delta:
                placed = dataclasses.replace(
                    placed, line=placed.line + self.delta, end_line=placed.end_line + self.delta
                )
            out.append(placed)
        return out


def received(project: Any) -> Any:
    """What a module's walk receives from the project (`ModuleFacts`), comparable; None without a project."""
    if project is None:
        return None
    return (
        project.incoming,
        project.also,
        project.package,
        project.classes,
        project.exports,
        project.imported,
    )


def plan(
    memo: UnitMemo | None,
    module: cst.Module,
    source: str,
    path: str,
    settings: Any,
    noqa: bool,
    index: Any,
    project: Any = None,
) -> Reuse | None:
    """What to walk again and how to keep the rest, or None for a full lint."""
    if memo is None:
        return None
    if (
        memo.module is None
        or memo.path != path
        or memo.settings != settings
        or memo.noqa != noqa
        or memo.received != received(project)
    ):
        return _refuse(memo, "first lint or other inputs")
    before, after = changed(memo.module, module)
    if len(after) == len(module.body) > 2:
        return _refuse(memo, "parsed whole")
    if not after or len(before) != len(after):
        return _refuse(memo, "statements")
    for old, new in zip(before, after, strict=True):
        if type(old) not in _UNITS or type(new) is not type(old) or id(old) not in memo.reached:
            return _refuse(memo, "module-level code")
        old_code, new_code = memo.module.code_for_node(old), module.code_for_node(new)
        old_tokens = _tokens(old_code)
        if old_tokens is None or old_tokens != _tokens(new_code):
            return _refuse(memo, "tokens")
    why = _isolated(after, module, source, index, memo)
    if why:
        return _refuse(memo, why)
    # The kept findings lie outside the changed lines; where lines moved, none names a line number.
    head, tail = _common_ends(memo.source, source)
    first = memo.source.count("\n", 0, head) + 1
    last = memo.source.count("\n", 0, max(head, len(memo.source) - tail)) + 1
    delta = source.count("\n") - memo.source.count("\n")
    stale = {id(statement) for statement in before}
    for placed in memo.placed:
        if placed.top == 0 or placed.top in stale:
            continue
        if not (placed.end_line < first or placed.line > last) or (delta and placed.quotes):
            return _refuse(memo, "kept findings")
    memo.refused = ""
    return Reuse(frozenset(id(statement) for statement in after), last, delta)


def _refuse(memo: UnitMemo, why: str) -> None:
    memo.refused = why
    return None


# The top-level statements a reuse lint may walk alone: reached by their name only (a class's methods also
# through `self`/`cls` inside it, `index.resolve_function`).
_UNITS = (cst.FunctionDef, cst.ClassDef)


def _isolated(
    defs: list[cst.FunctionDef | cst.ClassDef], module: cst.Module, source: str, index: Any, memo: UnitMemo
) -> str:
    codes = [module.code_for_node(d) for d in defs]
    words = set().union(*(_WORD.findall(code) for code in codes))
    if "global" in words or "nonlocal" in words:
        return "global"
    for d in defs:  # its name nowhere but in the changed defs (the same names before: same tokens)
        pattern = re.compile(rf"\b{re.escape(d.name.value)}\b")
        if len(pattern.findall(source)) != sum(len(pattern.findall(code)) for code in codes):
            return "named elsewhere"
    if "*" in _import_star_names(module):
        return "star import"
    imported = _imported_names(module)
    for unit in index.units.values():
        if unit.declared_globals & words:
            return "global"
    own = {d.name.value for d in defs}  # bound by the changed defs alone (their names are nowhere else)
    root = index.root
    for name, bindings in root.bindings.items():
        if name in words and name not in own and not all(id(b.node) in imported for b in bindings):
            return "names a module binding"
    for name in root.defs:
        if name in words and name not in own:
            return "names a def"
    # Module-level code other than defs, classes and import lines may rebind or narrow an imported name
    # (`except ImportError as jnp`, `if jnp is None`): the changed defs must mention none of its words.
    kept = {}
    for statement in module.body:
        if (
            type(statement) is cst.ClassDef
            and statement.name.value in words
            and statement.name.value not in own
        ):
            return "names a class"
        if type(statement) in (cst.FunctionDef, cst.ClassDef) or id(statement) in imported:
            continue
        found = memo.words.get(id(statement))
        if found is None:
            found = frozenset(_WORD.findall(module.code_for_node(statement)))
        kept[id(statement)] = found
        if found & words or ("import" in found and "*" in module.code_for_node(statement)):
            return "module-level code names its words"  # (a star import below module level binds names no index lists)
    memo.words = kept
    return ""


def _imported_names(module: cst.Module) -> set[int]:
    """The import nodes of the module's top-level lines that hold only imports (and those lines)."""
    found: set[int] = set()
    for statement in module.body:
        if type(statement) is cst.SimpleStatementLine and all(
            type(s) is cst.Import or type(s) is cst.ImportFrom for s in statement.body
        ):
            found.add(id(statement))
            found.update(id(s) for s in statement.body)
    return found


def _import_star_names(module: cst.Module) -> set[str]:
    return {
        "*"
        for statement in module.body
        if type(statement) is cst.SimpleStatementLine
        for s in statement.body
        if type(s) is cst.ImportFrom and isinstance(s.names, cst.ImportStar)
    }


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


def _stale(memo: UnitMemo, module: cst.Module) -> frozenset[int]:
    """The last module's top-level statements this one no longer holds (the changed ones)."""
    assert memo.module is not None
    return frozenset(id(s) for s in memo.module.body) - {id(s) for s in module.body}


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
                if top != 0 and top not in stale:
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
