"""The path engine's policies and hooks (`analysis/flow/paths.py`), with a small domain: each name's possible literals.

The key dataflow runs on the engine's defaults and the flow walk on its policies; both are tested through the
CLI by their rules. These tests pin what each policy changes, one at a time, on the engine itself.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import libcst as cst

from jaxlint.analysis.flow.paths import PathWalk


class Names(dict):
    """name -> the literals it may hold on this path."""

    def copy(self) -> Names:
        return Names({name: set(held) for name, held in self.items()})


class Literals(PathWalk[Names, str]):
    """Records, at each `seen(name)` call, what `name` may hold; `silent` is read at each record."""

    def __init__(self) -> None:
        self.loops, self.exits = [], []
        self.seen: list[tuple[str, frozenset[str], int]] = []
        self.decisions: dict[str, bool] = {}

    def expr(self, node: cst.CSTNode, state: Names) -> str | None:
        if type(node) is cst.Integer:
            return node.value
        if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "seen":
            name = node.args[0].value
            assert type(name) is cst.Name
            self.seen.append((name.value, frozenset(state.get(name.value, ())), self.silent))
        return None

    def assign(self, target, version, value, state: Names) -> None:
        if type(target) is cst.Name:
            state[target.value] = {version} if version is not None else {"?"}

    def join(self, states: Sequence[Names | None]) -> Names | None:
        live = [s for s in states if s is not None]
        if not live:
            return None
        joined = Names()
        for state in live:
            for name, held in state.items():
                joined.setdefault(name, set()).update(held)
        return joined

    def fresh(self, name: str, state: Names) -> None:
        state[name] = {"?"}

    def decide(self, test: cst.BaseExpression, state: Names) -> bool | None:
        return self.decisions.get(test.value) if type(test) is cst.Name else None


def run(source: str, walk: Literals | None = None) -> Literals:
    walk = walk or Literals()
    body = cst.parse_module(textwrap.dedent(source)).body
    walk.block(body, Names())
    return walk


def seen(walk: Literals, name: str = "x") -> list[set[str]]:
    return [set(held) for seen_name, held, _ in walk.seen if seen_name == name]


RETURN_IN_BRANCH = """
    x = 1
    if c:
        x = 2
        return
    seen(x)
"""


def test_paths_that_return_end_by_default_and_join_when_kept():
    assert seen(run(RETURN_IN_BRANCH)) == [{"1"}]

    class Kept(Literals):
        KEEP_EXIT_PATHS = True

    assert seen(run(RETURN_IN_BRANCH, Kept())) == [{"1", "2"}]


TRY = """
    x = 1
    try:
        x = 2
        x = 3
    except E:
        seen(x)
"""


def test_handlers_start_before_each_statement_or_after_the_whole_body():
    assert seen(run(TRY)) == [{"1", "2"}]

    class AfterBody(Literals):
        HANDLERS_AFTER_BODY = True

    assert seen(run(TRY, AfterBody())) == [{"1", "3"}]


def test_a_decided_test_walks_one_branch():
    source = """
        x = 1
        if flag:
            x = 2
        else:
            x = 3
        seen(x)
    """
    assert seen(run(source)) == [{"2", "3"}]
    walk = Literals()
    walk.decisions["flag"] = False
    assert seen(run(source, walk)) == [{"3"}]


LOOP = """
    for i in xs:
        seen(x)
        x = 2
"""


def test_loop_rounds_and_a_silent_first_round():
    walk = run("x = 1\n" + textwrap.dedent(LOOP))
    assert [(set(held), silent) for _, held, silent in walk.seen] == [({"1"}, 0), ({"1", "2"}, 0)]

    class Silent(Literals):
        SILENT_FIRST_ROUND = True

    walk = run("x = 1\n" + textwrap.dedent(LOOP), Silent())
    assert [(set(held), silent) for _, held, silent in walk.seen] == [({"1"}, 1), ({"1", "2"}, 0)]
    assert walk.silent == 0

    class Shallow(Literals):
        LOOP_DEPTH = 0

    assert seen(run("x = 1\n" + textwrap.dedent(LOOP), Shallow())) == [{"1"}]
