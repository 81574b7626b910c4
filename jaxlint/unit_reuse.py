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
  nothing any module-wide fact reads (names, calls, attributes, strings, structure) changed; or but for those
  and the spelling of names and strings where no module-wide fact can tell (`word_edits.py`; then the old
  statement's words tie too, and a respelled name the classes defining a method of that name); the
  findings kept lie outside the changed lines, those below move with the lines inserted or removed, and
  where lines moved none names a line number (`Rule.quotes_lines`);
- isolation: their names are nowhere else in the text (no other code calls them or reads a fact of theirs),
  and the names they mention are bound at module scope by top-level import lines only, or not at all (they
  call no other function of the module, read no module variable, mark no other unit).
"""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize
from typing import TYPE_CHECKING, Any

import libcst as cst

from .reparse import _common_ends

if TYPE_CHECKING:
    from .unit_reuse_summary import Walked

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
    words_of: cst.Module | None = None  # the module `words` describes
    spans: Any = None  # (module, text, starts): the server's parse (`reparse.Parsed`), for `words`
    reused: int = 0  # how many lints in a row reused (for tests and the bench)
    refused: str = ""  # why the last lint did not reuse (for the bench)
    pytrees: Any = None  # (a module, `word_edits.pytrees` of it): kept from the last plan that read it
    tied: int = 0  # how many statements the last reuse walked besides the changed ones (for tests)
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
            reached = (self.reached - stale - reuse.only) | reached
            self.reused += 1
            assert self.module is not None
            self.tied = len(reuse.only & {id(statement) for statement in self.module.body})  # (unchanged)
        else:
            self.reused = self.tied = 0
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
            if placed.top == 0 or placed.top in stale or placed.top in self.only:
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
    from .word_edits import pytrees, refusal  # here: a first lint (every CLI run) never compares edits

    before, after = changed(memo.module, module)
    if len(after) == len(module.body) > 2:
        return _refuse(memo, "parsed whole")
    if not after or len(before) != len(after):
        return _refuse(memo, "statements")
    renamed: dict[int, frozenset[str]] = {}  # changed statements whose words changed -> their old words
    respelled: set[str] = set()  # the names those edits respelled, both spellings
    for old, new in zip(before, after, strict=True):
        if type(old) not in _UNITS or type(new) is not type(old) or id(old) not in memo.reached:
            return _refuse(memo, "module-level code")
        old_code, new_code = memo.module.code_for_node(old), module.code_for_node(new)
        old_tokens = _tokens(old_code)
        if old_tokens is None:
            return _refuse(memo, "tokens")
        if old_tokens != _tokens(new_code):
            why, names = refusal(old, new, old_code, new_code, index, memo.module.code_for_node)
            if why:
                return _refuse(memo, why)
            respelled |= names
            renamed[id(new)] = frozenset(_WORD.findall(old_code))
    if renamed:  # the pytree model is a module-wide table read from classes' and functions' bodies
        kept = memo.pytrees
        old_pytrees = (
            kept[1] if kept is not None and kept[0] is memo.module else pytrees(memo.module, index.imports)
        )
        new_pytrees = pytrees(module, index.imports)
        memo.pytrees = (module, new_pytrees)  # (the next lint's old one, if this one succeeds)
        if old_pytrees != new_pytrees:
            return _refuse(memo, "pytree model")
    members, why = _component(after, module, index, memo, renamed, respelled)
    if why:
        return _refuse(memo, why)
    if members - {id(statement) for statement in after} - memo.reached:
        return _refuse(memo, "not reached")  # (a kept statement's id: the same object in both modules)
    # The kept findings lie outside the changed lines; where lines moved, none names a line number.
    head, tail = _common_ends(memo.source, source)
    first = memo.source.count("\n", 0, head) + 1
    last = memo.source.count("\n", 0, max(head, len(memo.source) - tail)) + 1
    delta = source.count("\n") - memo.source.count("\n")
    stale = {id(statement) for statement in before} | members
    for placed in memo.placed:
        if placed.top == 0 or placed.top in stale:
            continue
        if not (placed.end_line < first or placed.line > last) or (delta and placed.quotes):
            return _refuse(memo, "kept findings")
    memo.refused = ""
    return Reuse(frozenset(members), last, delta)


def _refuse(memo: UnitMemo, why: str) -> None:
    memo.refused = why
    return None


# The top-level statements a reuse lint may walk alone: reached by their name only (a class's methods also
# through `self`/`cls` inside it, `index.resolve_function`).
_UNITS = (cst.FunctionDef, cst.ClassDef)


def _component(
    changed: list[cst.CSTNode],
    module: cst.Module,
    index: Any,
    memo: UnitMemo,
    renamed: dict[int, frozenset[str]],
    respelled: set[str],
) -> tuple[set[int], str]:
    """The top-level statements to walk again (ids), with the reason for a full lint instead ("" when none):
    - the changed defs and classes, and every def, class or line that only reads (`_only_reads`) tied to
      them, step by step, by a name the module binds other than by import lines alone, either way (a call,
      a use of a class, a module variable one binds and the other reads);
    - the lines that bind a name they read whose value no def or class decides (`_provided`: `Array =
      jax.Array`, `EPS = 1e-6`), with what those lines read: walked for the value, not tied to its readers.
    Other module-level code that mentions a name they mention refuses (it may narrow or store into it)."""
    imported = _imported_names(module)
    if "*" in _import_star_names(module):
        return set(), "star import"
    words = _statement_words(module, imported, memo)
    root = index.root
    import_only = {
        name for name, bindings in root.bindings.items() if all(id(b.node) in imported for b in bindings)
    }
    bound = (set(root.bindings) - import_only) | set(root.defs)  # names another statement may bind
    # A method's callers are found by its name too (`obj.m(...)`: `receivers._sites_naming`, which reads the
    # arguments of calls resolved through `self`/`cls` only, the presence of the others): a name an edit
    # respelled ties the statements naming it to the classes defining a method of that name.
    methods = {u.name for u in index.units.values() if u.class_node is not None} & respelled
    bound |= methods
    names = bound | import_only
    declared = set().union(*(unit.declared_globals for unit in index.units.values()))
    by_name: dict[str, list[cst.CSTNode]] = {}
    binders: dict[str, list[cst.CSTNode]] = {}
    reads: dict[int, frozenset[str]] = {}  # lines that only read: id -> the names they bind
    code: set[str] = set()  # the names other module-level code mentions
    for statement in module.body:
        if id(statement) in imported:
            continue
        inert = _inert(statement)
        mentioned = (inert if inert is not None else words[id(statement)]) & names
        for name in mentioned:
            by_name.setdefault(name, []).append(statement)
        if type(statement) in _UNITS:
            binders.setdefault(statement.name.value, []).append(statement)  # type: ignore[attr-defined]
        elif inert is not None or _only_reads(statement, words[id(statement)]):
            reads[id(statement)] = targets = inert if inert is not None else _targets(statement)
            for name in targets:
                binders.setdefault(name, []).append(statement)
        else:
            code |= mentioned
    provided = _provided(binders, reads, words, names, import_only, code)
    members = {id(statement) for statement in changed}
    also: set[int] = set()
    todo = list(changed)
    seen: set[str] = set()
    while todo:
        statement = todo.pop()
        found = words[id(statement)] | renamed.get(id(statement), frozenset())  # (before the edit too)
        if found & declared:
            return members, "global"  # (a `global` in any unit: its name is bound from inside a def)
        for name in found & names:
            if name in seen:
                continue
            seen.add(name)
            if name in provided and name not in methods:
                _provide(name, binders, reads, words, names, provided, also)
                continue
            if name in import_only and name not in code and name not in methods:
                continue  # bound by the import lines (walked in both walks) and narrowed by no code
            for other in by_name.get(name, ()):
                if id(other) in members:
                    continue
                if type(other) not in _UNITS and id(other) not in reads:
                    # Module-level code that may narrow, delete or store into a name (`if jnp is None`,
                    # `except ImportError as jnp`, `del f`, `f.x = 1`) is not walked alone.
                    return members, "module-level code names its words"
                if name in bound:  # (a line that only reads an imported name changes nothing of it)
                    members.add(id(other))
                    todo.append(other)
    if len(members | also) >= len(words):
        return members, "every statement"  # (a full walk: nothing to keep)
    return members | also, ""


def _provided(
    binders: dict[str, list[cst.CSTNode]],
    reads: dict[int, frozenset[str]],
    words: dict[int, frozenset[str]],
    names: set[str],
    import_only: set[str],
    code: set[str],
) -> set[str]:
    """The names bound only by lines that only read, which read (besides what they bind) imported names no
    other module-level code mentions, or names provided likewise: their values follow from the import lines
    and those lines alone, the same in every walk whatever a def or class holds."""
    provided: set[str] = set()
    pending = [
        n
        for n in binders
        if n not in code and all(id(b) in reads and "lambda" not in words[id(b)] for b in binders[n])
    ]  # (a lambda is a unit: its callers mark it, so they are tied through it)
    changed = True
    while changed:  # a fixed point from below: a cycle provides nothing
        changed = False
        for name in pending:
            if name in provided:
                continue
            if all(
                other in provided or (other in import_only and other not in code)
                for binder in binders[name]
                for other in (words[id(binder)] & names) - reads[id(binder)]
            ):
                provided.add(name)
                changed = True
    return provided


def _provide(
    name: str,
    binders: dict[str, list[cst.CSTNode]],
    reads: dict[int, frozenset[str]],
    words: dict[int, frozenset[str]],
    names: set[str],
    provided: set[str],
    also: set[int],
) -> None:
    """The lines binding a provided name, and those binding the provided names they read, into `also`."""
    todo = [name]
    while todo:
        for binder in binders[todo.pop()]:
            if id(binder) in also:
                continue
            also.add(id(binder))
            todo.extend(n for n in (words[id(binder)] & names) - reads[id(binder)] if n in provided)


def _inert(statement: cst.CSTNode) -> frozenset[str] | None:
    """The names a line of strings binds (a docstring: none; `__all__ = ["f", "g"]`: `__all__`), or None
    for any other statement: such a line reads no name, so the names in its strings tie it to no def."""
    if type(statement) is not cst.SimpleStatementLine:
        return None
    targets: set[str] = set()
    for small in statement.body:
        if type(small) is cst.Expr and _strings(small.value):
            continue
        if (
            type(small) is cst.Assign
            and all(type(t.target) is cst.Name for t in small.targets)
            and _strings(small.value)
        ):
            targets.update(t.target.value for t in small.targets)  # type: ignore[attr-defined]
            continue
        return None
    return frozenset(targets)


def _only_reads(statement: cst.CSTNode, words: frozenset[str]) -> bool:
    """A line of expressions and assignments to plain names: it binds its targets (names of its own) and
    narrows, deletes or stores into nothing (no `assert`, `del`, `x += `, `a.b = `, `a[i] = `, `:=`)."""
    if type(statement) is not cst.SimpleStatementLine or ":=" in words:
        return False
    for small in statement.body:
        if type(small) is cst.Assign:
            if not all(type(t.target) is cst.Name for t in small.targets):
                return False
        elif type(small) is cst.AnnAssign:
            if type(small.target) is not cst.Name:
                return False
        elif type(small) is not cst.Expr and type(small) is not cst.Pass:
            return False
    return True


def _targets(statement: cst.SimpleStatementLine) -> frozenset[str]:
    """The names a line that only reads binds."""
    found = set()
    for small in statement.body:
        if type(small) is cst.Assign:
            found.update(t.target.value for t in small.targets)  # type: ignore[attr-defined]
        elif type(small) is cst.AnnAssign:
            found.add(small.target.value)  # type: ignore[attr-defined]
    return frozenset(found)


def _strings(value: cst.BaseExpression) -> bool:
    """A string literal (no f-string), or a list or tuple of them."""
    if type(value) in (cst.List, cst.Tuple):
        return all(
            type(e) is cst.Element and _strings(e.value)
            for e in value.elements  # type: ignore[attr-defined]
        )
    if type(value) is cst.ConcatenatedString:
        return _strings(value.left) and _strings(value.right)  # type: ignore[attr-defined]
    return type(value) is cst.SimpleString


def _statement_words(module: cst.Module, imported: set[int], memo: UnitMemo) -> dict[int, frozenset[str]]:
    """Each top-level statement's words but the import lines' (by id), kept from the last plan for the same
    statement objects: `memo.words_of` holds the module they were read from, so the ids are its live ones."""
    cached = memo.words if memo.words_of is memo.module else {}
    spans = memo.spans
    text, starts = (spans[1], spans[2]) if spans is not None and spans[0] is module else ("", ())
    words = {}
    for at, statement in enumerate(module.body):
        if id(statement) in imported:
            continue
        found = cached.get(id(statement))
        if found is None:
            if starts:  # the statement's text from the parse's spans (its leading lines, a last footer too)
                code = text[starts[at] : starts[at + 1] if at + 1 < len(starts) else len(text)]
            else:
                code = module.code_for_node(statement)
            found = frozenset(_WORD.findall(code))
            if ":=" in code:
                found |= {":="}  # (no name: `_only_reads` reads it)
        words[id(statement)] = found
    memo.words, memo.words_of = words, module
    return words


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


def _stale(memo: UnitMemo, module: cst.Module) -> frozenset[int]:
    """The last module's top-level statements this one no longer holds (the changed ones)."""
    assert memo.module is not None
    return frozenset(id(s) for s in memo.module.body) - {id(s) for s in module.body}
