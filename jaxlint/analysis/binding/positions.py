"""Line/column of just the nodes that findings name, exactly as libcst's `PositionProvider` gives them.

`PositionProvider` regenerates the whole module and builds a `CodeRange` for every node (a context manager
per statement and expression, a regex split per token): on a 1,000-line file that was half the lint time.
Positions come out of code generation, so this runs the same `_codegen` but with a state that tracks
line/column without allocating, records only the wanted nodes (plus the children libcst hoists their
start/end from), and stops as soon as the last wanted node is closed. `tests/test_speed_equivalence.py`
checks it against `PositionProvider` node for node.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

_NEWLINE = re.compile(r"\r\n?|\n")  # PositionProvider's own token split

# A partial pass stops at the last wanted node, which in a long module may be near its end: after this many
# (batches resolved by rules and the engine, and single-node misses alike), one whole-module pass answers
# everything asked later. A module then costs at most this many passes plus one, however many questions its
# rules ask: time linear in its size (one pass per question made a 50,000-line module take 13 minutes).
_PASSES_BEFORE_FULL = 2


class _Stop(Exception):
    """Every wanted node is closed: the rest of the module need not be generated."""


class _NoRecord:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_RECORD = _NoRecord()


class _Syntactic:
    """`record_syntactic_position` for a wanted node (libcst's is a generator-based context manager)."""

    __slots__ = ("state", "node", "start_node", "end_node", "line", "column")

    def __init__(self, state: _RecordingState, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.line, self.column = self.state.line, self.state.column

    def __exit__(self, kind, value, trace) -> None:
        if kind is not None:
            return None
        state = self.state
        computed = state.computed
        start = (self.line, self.column) if self.start_node is None else computed[id(self.start_node)][0]
        end = (state.line, state.column) if self.end_node is None else computed[id(self.end_node)][1]
        computed[id(self.node)] = (start, end)  # overrides, as libcst's does
        return None


class _Everything:
    """The wanted set when every node is wanted (a lookup-heavy module): one pass, no early stop."""

    __slots__ = ()

    def __contains__(self, node: object) -> bool:
        return True

    def add(self, node: object) -> None:
        pass


class _RecordingState(CodegenState):
    """Generates nothing but the position; same arithmetic as `PositionProvidingCodegenState`."""

    def __init__(self, module: cst.Module, targets: set[Any] | None) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line = 1
        self.column = 0
        # Sets and maps of id(node): libcst's CSTNode.__hash__ is a Python-level call, id() is not.
        # The targets and the children their positions are hoisted from; None: every node.
        self.wanted: Any = _Everything() if targets is None else {id(node) for node in targets}
        self.pending = {id(node) for node in targets or ()}  # targets not closed yet
        self.computed: dict[int, tuple[tuple[int, int], tuple[int, int]]] = {}
        self.nodes: dict[int, Any] = {}  # id -> node, for every node recorded
        self.starts: list[tuple[int, int]] = []

    def _advance(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.tokens.append(token)
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def before_codegen(self, node) -> None:
        if id(node) in self.wanted:
            self.starts.append((self.line, self.column))

    def after_codegen(self, node) -> None:
        key = id(node)
        if key in self.wanted:
            start = self.starts.pop()
            if key not in self.computed:  # a syntactic position recorded inside wins, as in libcst
                self.computed[key] = (start, (self.line, self.column))
                self.nodes[key] = node
            pending = self.pending
            if key in pending:
                pending.discard(key)
                if not pending:
                    raise _Stop

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        if id(node) not in self.wanted:
            return _NO_RECORD
        self.nodes[id(node)] = node
        # The hoisted-from children are generated inside this context, so asking for them now is in time.
        if start_node is not None:
            self.wanted.add(id(start_node))
        if end_node is not None:
            self.wanted.add(id(end_node))
        return _Syntactic(self, node, start_node, end_node)


def _range(pair: tuple[tuple[int, int], tuple[int, int]]) -> CodeRange:
    (line, column), (end_line, end_column) = pair
    return CodeRange(CodePosition(line, column), CodePosition(end_line, end_column))


def positions_of(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, CodeRange]:
    """`PositionProvider`'s range of each of `nodes` found in `module` (a node not in it is left out)."""
    targets = set(nodes)
    if not targets:
        return {}
    state = _RecordingState(module, targets)
    try:
        module._codegen(state)
    except _Stop:
        pass
    computed = state.computed
    return {node: _range(computed[id(node)]) for node in targets if id(node) in computed}


def all_positions(module: cst.Module) -> dict[cst.CSTNode, CodeRange]:
    """`PositionProvider`'s range of every node of `module` (still about half its cost)."""
    state = _RecordingState(module, None)
    module._codegen(state)
    nodes = state.nodes
    return {nodes[key]: _range(pair) for key, pair in state.computed.items()}


Pair = tuple[tuple[int, int], tuple[int, int]]


class StatementPositions:
    """Every node's position in each top-level statement, counted from the statement's first line, kept per
    statement object across the lints of one document: the server's incremental parse (`reparse.py`) reuses
    an unchanged statement's nodes, so only new statements are generated again. A statement's code does not
    depend on where it stands (top-level statements start a line at column 0, with no indentation), so its
    positions in the module are these, moved down by the lines above it."""

    def __init__(self) -> None:
        self.statements: dict[
            int, tuple[cst.CSTNode, dict[int, Pair], int]
        ] = {}  # id -> (node, nodes, lines)
        self.where: dict[int, tuple[int, Pair]] = {}  # id(node) -> (id(its statement), position in it)
        self.shared: set[int] = set()  # nodes met in two statements: left to the module's own passes
        self.offsets: dict[int, int] = {}  # id(statement) -> lines above it in the current module
        self.config: tuple[str, str] | None = None

    def prepare(self, module: cst.Module) -> StatementPositions:
        """Make the memo answer for `module` (dropping statements it no longer holds)."""
        config = (module.default_indent, module.default_newline)
        if config != self.config:
            self.__init__()  # type: ignore[misc]
            self.config = config
        live = {id(statement) for statement in module.body}
        for key in [key for key in self.statements if key not in live]:
            for node_key in self.statements.pop(key)[1]:
                if self.where.get(node_key, (None,))[0] == key:
                    del self.where[node_key]
        self.offsets = {}
        above = len(module.header)  # one line each
        for statement in module.body:
            key = id(statement)
            kept = self.statements.get(key)
            if kept is None:
                kept = self._generate(module, statement)
                self.statements[key] = kept
                for node_key, pair in kept[1].items():
                    if node_key in self.where:
                        self.shared.add(node_key)
                    self.where[node_key] = (key, pair)
            self.offsets[key] = above
            above += kept[2]
        return self

    @staticmethod
    def _generate(module: cst.Module, statement: cst.CSTNode) -> tuple[cst.CSTNode, dict[int, Pair], int]:
        state = _RecordingState(module, None)
        statement._codegen(state)
        return statement, state.computed, state.line - 1

    def find(self, node: cst.CSTNode) -> CodeRange | None:
        key = id(node)
        hit = self.where.get(key)
        if hit is None or key in self.shared:
            return None
        offset = self.offsets.get(hit[0])
        if offset is None:
            return None
        (line, column), (end_line, end_column) = hit[1]
        return CodeRange(CodePosition(line + offset, column), CodePosition(end_line + offset, end_column))


class Positions(Mapping):
    """A module's node positions, computed only for the nodes asked about.

    `resolve(nodes)` computes a batch in one pass (the engine, for its findings); a lookup of a node not yet
    resolved runs a pass for that node alone. After `_PASSES_BEFORE_FULL` such passes, one whole-module pass
    answers the rest. With `statements` (the server's memo for one document), nodes inside top-level
    statements are answered from it.
    """

    def __init__(self, module: cst.Module, statements: StatementPositions | None = None) -> None:
        self.module = module
        self._known: dict[cst.CSTNode, CodeRange] = {}
        self._passes = 0
        self._full: Mapping[cst.CSTNode, CodeRange] | None = None
        self._statements = statements.prepare(module) if statements is not None else None

    def resolve(self, nodes: Iterable[cst.CSTNode]) -> Positions:
        if self._full is None:
            missing = [node for node in nodes if node not in self._known and not self._memo(node)]
            if missing:
                self._pass(missing)
        return self

    def _memo(self, node: cst.CSTNode) -> bool:
        """Whether the statements' memo knows `node` (then it is recorded as known)."""
        if self._statements is None:
            return False
        where = self._statements.find(node)
        if where is None:
            return False
        self._known[node] = where
        return True

    def _pass(self, missing: list[cst.CSTNode]) -> None:
        if self._passes < _PASSES_BEFORE_FULL:
            self._passes += 1
            self._known.update(positions_of(self.module, missing))
        else:
            self._full = all_positions(self.module)

    def _lookup(self, node: cst.CSTNode) -> CodeRange | None:
        if self._full is not None:
            return self._full.get(node)
        where = self._known.get(node)
        if where is not None:
            return where
        if self._memo(node):
            return self._known[node]
        self._pass([node])
        return self._full.get(node) if self._full is not None else self._known.get(node)

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        where = self._lookup(node)
        if where is None:
            raise KeyError(node)
        return where

    def get(self, node, default=None):
        where = self._lookup(node)
        return default if where is None else where

    def __contains__(self, node: object) -> bool:
        return self._lookup(node) is not None  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._full if self._full is not None else self._known)

    def __len__(self) -> int:
        return len(self._full if self._full is not None else self._known)
