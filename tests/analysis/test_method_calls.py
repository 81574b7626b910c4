"""`instances.method_call`: which defs `receiver.m(...)` may run, for the key dataflow."""

from __future__ import annotations

import textwrap

import libcst as cst

from jaxlint.analysis.binding.index import ModuleIndex
from jaxlint.analysis.objects.instances import method_call, subclass_bases, subclasses

SOURCE = """
from lib import make_env

class Base:
    def reset(self, key):
        return key

    def run(self, key):
        self.reset(key)
        super().reset(key)
        self.env.reset(key)

class Env(Base):
    def step(self, key):
        return key

class Quiet(Env):
    def reset(self, key):
        return None

def built(key):
    env = Env()
    env.reset(key)

def annotated(env: Env, key):
    env.reset(key)

def unknown(key, other):
    make_env().reset(key)
    other.reset(key)
    Env().missing(key)
"""


def calls(index: ModuleIndex, function: str) -> list[tuple[cst.Attribute, object]]:
    unit = next(u for u in index.units.values() if u.qualname == function)
    found = []
    for call, owner, _ in index._sites:
        if owner is unit and isinstance(call.func, cst.Attribute):
            found.append((call.func, method_call(index, call.func, unit)))
    return found


def defs(found) -> list[str] | None:
    return None if found is None else [u.qualname for u in found.units]


def test_method_call_candidates() -> None:
    index = ModuleIndex(cst.parse_module(textwrap.dedent(SOURCE)))
    run = calls(index, "Base.run")
    # `self.reset` in Base: Base's def, and the override of Quiet (a subclass of a subclass)
    assert defs(run[0][1]) == ["Base.reset", "Quiet.reset"]
    assert run[1][1] is None and run[2][1] is None  # super(), an attribute of unknown class
    (built,) = calls(index, "built")
    assert defs(built[1]) == ["Base.reset"]  # exactly an Env: inherited, no overrides
    (annotated,) = calls(index, "annotated")
    assert defs(annotated[1]) == ["Base.reset", "Quiet.reset"]  # may be a Quiet
    assert [found for _, found in calls(index, "unknown")] == [None, None, None]
    assert sorted(subclasses(index, "Base")) == ["Env", "Quiet"] and subclass_bases(index, "Quiet") == [
        "Env",
        "Base",
    ]
