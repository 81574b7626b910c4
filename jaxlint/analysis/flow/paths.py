"""The path engine: a function body's statements in order, one state per execution path.

A domain (the PRNG key versions of `keys/dataflow.py`) plugs in its state, its values and what its statements do;
the engine owns the control flow, the same for every domain:

- a state goes in, the state after the statement comes out, or None when no path gets past it (`return`,
  `raise`, `break`, `continue`, an infinite `while True` left only by `break`);
- `if`, `match`, `try` and the end of loops join their paths (`join`, the domain's);
- a loop body runs twice (`MAX_LOOP_DEPTH` loops deep, below that once), the second round from the join of
  the entry with the first round's end and `continue`s, so facts carried from one iteration to the next are
  seen; `loops` says which loops and rounds the walk is in (a domain labels what it finds with them);
- a `try` handler starts from the join of the states before each statement of the body (any may raise);
- nested defs and classes are bound, not walked (a call runs them through the domain's summaries).

A domain may change these by policy (the flow walk of `flow/walk.py` does): `LOOP_DEPTH` (how deep loops get two
rounds), `SILENT_FIRST_ROUND` (round one only learns: `silent` is raised while it runs),
`HANDLERS_AFTER_BODY` (handlers and `else` start from the join of the states before and after the whole body,
and are walked before `else`), `NO_MATCH_FIRST` (the no-case path leads a `match`'s join), and by hooks:
`enter` (a compound statement or handler is met), `decide` (an `if` test known to take one branch),
`narrow`/`widen` (what a test shows inside each branch), `define` (a def or class), `loop_head` (a loop's
target or test each round), `match_case` (a case's pattern and guard), `small` (a simple statement: a domain
whose `small` lets the state go on after `return`/`raise`/`break`/`continue` keeps those paths in the joins).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

import libcst as cst

from ...syntax import walk

MAX_LOOP_DEPTH = (
    3  # deeper loops are walked once (nothing carried between iterations is seen below this depth)
)


class PathState(Protocol):
    def copy(self) -> Any: ...


S = TypeVar("S", bound=PathState)  # one path's state
V = TypeVar("V")  # what an expression evaluates to in the domain


class LoopFrame(Generic[S]):
    """A loop (or comprehension) being walked: the states its `break`s and `continue`s leave with."""

    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node
        self.breaks: list[S] = []
        self.continues: list[S] = []


class PathWalk(Generic[S, V]):
    """The statements of one body over a domain's states. Subclasses give the domain's hooks (below)."""

    loops: list[tuple[LoopFrame[S], int]]  # the loops being walked, innermost last, with their round
    exits: list[S]  # the states at each `return` (and the end of the body)

    # -- the domain's policies (see the module's docstring) ---------------------------------------------

    LOOP_DEPTH = MAX_LOOP_DEPTH
    SILENT_FIRST_ROUND = False
    HANDLERS_AFTER_BODY = False
    NO_MATCH_FIRST = False
    KEEP_EXIT_PATHS = False  # `return`/`raise`/`break`/`continue` end no path (the walk goes on after them)
    silent = 0  # raised while a silent first round runs

    # -- the domain's hooks ----------------------------------------------------------------------------

    def expr(self, node: cst.CSTNode, state: S) -> V | None:
        """Evaluate an expression on this path; its value when known."""
        raise NotImplementedError

    def assign(
        self, target: cst.BaseExpression, version: V | None, value: cst.BaseExpression | None, state: S
    ) -> None:
        """Bind a target to a domain value (`value`: the expression it came from, when there is one)."""
        raise NotImplementedError

    def join(self, states: Sequence[S | None]) -> S | None:
        """The state where these paths meet (None entries: no path); None when none reaches it."""
        raise NotImplementedError

    def fresh(self, name: str, state: S) -> None:
        """`name` now holds a value the domain knows nothing about (a def, a class, an import, `del`)."""
        raise NotImplementedError

    def deleted(self, name: str, state: S) -> None:
        """`del name`: by default the same as a fresh value."""
        self.fresh(name, state)

    def returned(self, value: cst.BaseExpression, state: S) -> None:
        """A `return value` on this path (before the path ends)."""

    def enter(self, node: cst.CSTNode, state: S) -> None:
        """A compound statement (or an `except` handler) is about to be walked."""

    def runs_once(self, node: cst.For | cst.While) -> bool:
        """Whether the loop's body surely runs at least once (then no path skips it). Default: not known."""
        return False

    def decide(self, test: cst.BaseExpression, state: S) -> bool | None:
        """Which branch an `if` test takes on this path, when only one can run."""
        return None

    def narrow(self, test: cst.BaseExpression, then: S, other: S) -> Any:
        """What the test shows in each branch: set it in `then` and `other`; a token for `widen`, or None."""
        return None

    def widen(self, token: Any, state: S | None, in_body: bool) -> None:
        """A branch narrowed by `narrow` ends: undo in `state` what held inside the branch only."""

    def define(self, node: cst.FunctionDef | cst.ClassDef, state: S) -> None:
        """A def or class (its header already evaluated) is bound here."""
        self.fresh(node.name.value, state)

    def loop_head(self, node: cst.For | cst.While, state: S) -> None:
        """The start of each round: the target bound, or the test evaluated."""
        if isinstance(node, cst.For):
            self.assign(node.target, None, None, state)
        else:
            self.expr(node.test, state)

    def match_case(self, case: cst.MatchCase, state: S) -> None:
        """A case's pattern binds its names and its guard runs, before its body."""
        for sub in walk(case.pattern):
            if type(sub) is cst.MatchAs and sub.name is not None:
                self.fresh(sub.name.value, state)
        if case.guard is not None:
            self.expr(case.guard, state)

    def other(self, node: cst.CSTNode, state: S) -> S | None:
        """A statement the engine does not walk (a simple statement of a one-line suite: `if c: x = 1`)."""
        return state

    def decided(self, body: cst.BaseSuite, state: S) -> S | None:
        """The one branch a decided `if` takes."""
        return self.suite(body, state)

    def orelse(self, orelse: cst.If | cst.Else, state: S) -> S | None:
        if type(orelse) is cst.If:
            return self.statement(orelse, state)
        return self.suite(orelse.body, state)

    # -- statements ------------------------------------------------------------------------------------

    def block(self, statements: Sequence[cst.CSTNode], state: S | None) -> S | None:
        for statement in statements:
            if state is None:
                return None
            state = self.statement(statement, state)
        return state

    def suite(self, suite: cst.BaseSuite, state: S | None) -> S | None:
        return self.block(suite.body, state)

    def statement(self, node: cst.CSTNode, state: S) -> S | None:
        if type(node) is cst.SimpleStatementLine:
            current: S | None = state
            for small in node.body:
                if current is None:
                    return None
                current = self.small(small, current)
            return current
        self.enter(node, state)
        if type(node) is cst.If:
            self.expr(node.test, state)
            taken = self.decide(node.test, state)
            if taken is not None:  # only one branch runs
                if taken:
                    return self.decided(node.body, state)
                if type(node.orelse) is cst.If:
                    return self.statement(node.orelse, state)
                if node.orelse is not None:
                    return self.decided(node.orelse.body, state)
                return state
            other = state.copy()
            token = self.narrow(node.test, state, other)
            then = self.suite(node.body, state)
            if token is not None:
                self.widen(token, then, True)
            rest: S | None = other
            if node.orelse is not None:
                rest = self.orelse(node.orelse, other)
            if token is not None:
                self.widen(token, rest, False)
            return self.join([then, rest])
        if type(node) is cst.For or type(node) is cst.While:
            return self.loop(node, state)
        if type(node) is cst.Try or type(node) is cst.TryStar:
            return self.try_(node, state)
        if type(node) is cst.With:
            for item in node.items:
                self.expr(item.item, state)
                if item.asname is not None:
                    self.assign(item.asname.name, None, None, state)
            return self.suite(node.body, state)
        if type(node) is cst.FunctionDef:
            for decorator in node.decorators:
                self.expr(decorator.decorator, state)
            self.defaults(node.params, state)
            self.define(node, state)
            return state
        if type(node) is cst.ClassDef:
            for decorator in node.decorators:
                self.expr(decorator.decorator, state)
            for arg in [*node.bases, *node.keywords]:
                self.expr(arg.value, state)
            self.define(node, state)
            return state
        if type(node) is cst.Match:
            self.expr(node.subject, state)
            ends: list[S | None] = []
            for case in node.cases:
                branch = state.copy()
                self.match_case(case, branch)
                ends.append(self.suite(case.body, branch))
            # No case matched.
            return self.join([state, *ends] if self.NO_MATCH_FIRST else [*ends, state])
        return self.other(node, state)

    def defaults(self, params: cst.Parameters, state: S) -> None:
        """A def's defaults run where it is defined."""
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if param.default is not None:
                self.expr(param.default, state)

    def small(self, node: cst.CSTNode, state: S) -> S | None:
        if type(node) is cst.Assign:
            value = self.expr(node.value, state)
            for target in node.targets:
                self.assign(target.target, value, node.value, state)
            return state
        if type(node) is cst.AnnAssign:
            if node.value is not None:
                value = self.expr(node.value, state)
                self.assign(node.target, value, node.value, state)
            return state
        if type(node) is cst.AugAssign:
            self.expr(node.value, state)
            self.assign(node.target, None, None, state)
            return state
        if type(node) is cst.Expr:
            self.expr(node.value, state)
            return state
        if type(node) is cst.Return:
            if node.value is not None:
                self.expr(node.value, state)
                self.returned(node.value, state)
            if self.KEEP_EXIT_PATHS:
                return state
            self.exits.append(state)
            return None
        if type(node) is cst.Raise:
            if node.exc is not None:
                self.expr(node.exc, state)
            return state if self.KEEP_EXIT_PATHS else None
        if self.KEEP_EXIT_PATHS and (type(node) is cst.Break or type(node) is cst.Continue):
            return state
        if type(node) is cst.Break:
            if self.loops:
                self.loops[-1][0].breaks.append(state)
            return None
        if type(node) is cst.Continue:
            if self.loops:
                self.loops[-1][0].continues.append(state)
            return None
        if type(node) is cst.Del:
            deleted: list[cst.BaseExpression] = [node.target]
            while deleted:
                gone = deleted.pop()
                if type(gone) is cst.Tuple or type(gone) is cst.List:
                    deleted.extend(e.value for e in gone.elements)
                elif type(gone) is cst.Name:
                    self.deleted(gone.value, state)
                else:
                    self.assign(gone, None, None, state)
            return state
        if type(node) is cst.Assert:
            self.expr(node.test, state)
            return state
        if type(node) is cst.Import or type(node) is cst.ImportFrom:
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    self.fresh(alias.evaluated_alias or alias.evaluated_name.split(".")[0], state)
            return state
        return state

    def loop(self, node: cst.For | cst.While, state: S) -> S | None:
        if type(node) is cst.For:
            self.expr(node.iter, state)
        entry = state
        rounds = 2 if len(self.loops) < self.LOOP_DEPTH else 1
        head: S | None = entry
        frame: LoopFrame[S] = LoopFrame(node)
        for round_ in range(1, rounds + 1):
            assert head is not None
            body = head.copy()
            self.loops.append((frame, round_))
            silent = self.SILENT_FIRST_ROUND and round_ == 1
            self.silent += silent
            try:
                self.loop_head(node, body)
                end = self.suite(node.body, body)
            finally:
                self.loops.pop()
                self.silent -= silent
            head = self.join([entry, end, *frame.continues])
        infinite = (
            not self.KEEP_EXIT_PATHS
            and type(node) is cst.While
            and type(node.test) is cst.Name
            and node.test.value == "True"
        )
        exit_state = None if infinite else head
        if exit_state is not None and self.runs_once(node):
            exit_state = self.join([end, *frame.continues])  # the path that skips the body does not exist
        if exit_state is not None and node.orelse is not None:
            exit_state = self.suite(node.orelse.body, exit_state)
        return self.join([exit_state, *frame.breaks])

    def try_(self, node: cst.Try | cst.TryStar, state: S) -> S | None:
        if self.HANDLERS_AFTER_BODY:
            return self.try_after_body(node, state)
        # A handler starts from the state before any statement of the body (the one that raised).
        snapshots = []
        current: S | None = state
        for statement in node.body.body:
            if current is None:
                break
            snapshots.append(current.copy())
            current = self.statement(statement, current)
        failed = self.join(snapshots) or state.copy()
        ends = []
        if node.orelse is not None and current is not None:
            current = self.suite(node.orelse.body, current)
        ends.append(current)
        for handler in node.handlers:
            assert failed is not None
            branch = failed.copy()
            if handler.type is not None:
                self.expr(handler.type, branch)
            if handler.name is not None:
                self.assign(handler.name.name, None, None, branch)
            ends.append(self.suite(handler.body, branch))
        after = self.join(ends)
        if node.finalbody is not None:
            if after is None:
                assert failed is not None
                self.suite(node.finalbody.body, failed.copy())
                return None
            after = self.suite(node.finalbody.body, after)
        return after

    def try_body(self, node: cst.Try | cst.TryStar, state: S) -> S | None:
        """A `try`'s body (`HANDLERS_AFTER_BODY`): a hook for a domain that cares what the handlers catch."""
        return self.suite(node.body, state)

    def try_after_body(self, node: cst.Try | cst.TryStar, state: S) -> S | None:
        """Handlers, then `else`, each from the join of the states before and after the whole body."""
        end = self.try_body(node, state.copy())
        after = self.join([state, end])
        if after is None:
            return None
        ends = []
        for handler in node.handlers:
            branch = after.copy()
            self.enter(handler, branch)
            if handler.type is not None:
                self.expr(handler.type, branch)
            if handler.name is not None:
                self.assign(handler.name.name, None, None, branch)
            ends.append(self.suite(handler.body, branch))
        current = after.copy()
        if node.orelse is not None:
            current = self.suite(node.orelse.body, current)
        joined = self.join([current, *ends])
        if joined is not None and node.finalbody is not None:
            joined = self.suite(node.finalbody.body, joined)
        return joined
