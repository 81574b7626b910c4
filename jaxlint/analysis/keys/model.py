"""The values and facts of the PRNG key dataflow (`keys/dataflow.py`): key versions, where they are consumed, what a
function's call consumes (`Summary`), one path's `State`, and the JAX and library functions the model knows."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import libcst as cst

from ...syntax import argument, int_literal, str_literal
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params
from ..objects.held_fields import held_chain
from ..semantics.library import (
    ALIGNING,
    BRANCHES,
    CONTROL_FLOW,
    IMPURE_CALLS,
    KEY_DICT_KEYWORDS,
    KEY_METHODS,
    LINEN_INIT_METHODS,
    LOOP,
    PURE_METHODS,
    PURE_PREFIXES,
    SEEDED_KEY_MAKERS,
    TRANSFORMATIONS,
    TRANSPARENT_DECORATORS,
    TREE_MAPS,
)
from ..semantics.library import (
    FOLD_IN as FOLD_IN,  # the jax.random rows of the table, named here for the key dataflow
)
from ..semantics.library import KEY_MAKERS as KEY_MAKERS
from ..semantics.library import SAMPLERS as SAMPLERS
from ..semantics.library import SPLIT as SPLIT
from .relevance import RANDOM

_RANDOM = RANDOM  # jax.random's prefix (key_calls and key_versions read it here)
_LINEN_INITS = LINEN_INIT_METHODS
# Method names some library object consumes a key through (library.KEY_METHODS, KEY_DICT_KEYWORDS).
_LIBRARY_KEY_METHODS = frozenset(
    {m for methods in KEY_METHODS.values() for m in methods} | set(KEY_DICT_KEYWORDS)
)

# The library table's control flow whose keys the model follows: loops (qualified name -> entry; their bodies'
# labels -> position of the carry parameter, None: no carry) and branches.
_LAX_CALLS = {name: flow for name, flow in CONTROL_FLOW.items() if flow.keys == LOOP}
LOOP_BODIES = {flow.label: flow.carry_param for flow in _LAX_CALLS.values()}
_CARRIES_IN_TUPLE = frozenset(flow.label for flow in _LAX_CALLS.values() if flow.carry_in_tuple)  # (carry, y)
_LAX_BRANCHES = frozenset(name for name, flow in CONTROL_FLOW.items() if flow.keys == BRANCHES)
# Transformations that run their function once per element, by label (the table's `per_element`).
_MAPPING_LABELS = frozenset(t.label for t in TRANSFORMATIONS.values() if t.per_element)
# The table's draws that pick or mask entries (a mapped function sharing a key for them is deliberate). Helpers
# are not judged either: what they draw is not known here.
_ALIGNING = ALIGNING
# Calls that run their first argument once per leaf.
_TREE_MAPS = frozenset(TREE_MAPS)
_SEEDED = SEEDED_KEY_MAKERS  # a literal seed: the same key on every run
# Wrappers that call their function with the arguments they get: `jax.jit(f)(key)` calls f(key).
_CALL_THROUGH = frozenset(name for name, t in TRANSFORMATIONS.items() if t.calls_through)

# The table's calls and methods that cannot change a Python object the function holds (attributes, list items).
_PURE_PREFIXES = PURE_PREFIXES
_IMPURE_BUILTINS = IMPURE_CALLS
_PURE_METHODS = PURE_METHODS
_TRANSPARENT_DECORATORS = TRANSPARENT_DECORATORS
_PATH_DEPTH = 3


class Version:
    """One value that may be a key. Identity is what matters; the fields help summaries and messages."""

    __slots__ = ("immutable", "param", "root", "seed")

    def __init__(
        self,
        immutable: bool = False,
        param: tuple | None = None,
        root: str | None = None,
        seed: str | None = None,
    ) -> None:
        self.immutable = immutable  # known to be a JAX key (or key array): unknown calls cannot change it
        self.param = param  # (parameter name, index path) when it is (part of) a parameter's initial value
        self.root = root  # closed-over name it comes from, when the same on every call/iteration
        self.seed = seed  # `jax.random.key(0)`: made from a literal seed, the same on every run

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Version param={self.param} root={self.root} immutable={self.immutable} at {id(self):#x}>"


@dataclasses.dataclass(frozen=True, eq=False)
class Site:
    """Where a version was consumed."""

    node: cst.CSTNode  # the key expression handed to the consumer (or the call, for closed-over keys)
    consumer: str  # "jax.random.normal", "'sample'"
    loops: tuple[tuple[int, int], ...] = ()  # (id(loop node), round) of the loops being walked
    # The subkeys taken so far when only literal items of the key's split were used (`split(k)[0]`); None: the
    # whole key. `split(k)[0]` and `split(k)[1]` are two different keys, one split written twice.
    parts: frozenset[int] | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class KeyReuse:
    """A second consumption of one key on some path."""

    node: cst.CSTNode  # the reused key expression at the second use
    key: str  # its source text
    consumer: str  # what consumes it the second time
    first: Site
    # "reuse" | "loop" (carried around a Python loop) | "closure" | "carry" (lax loop bodies) | "mapped" (a key
    # closed over by a function run per element or leaf: vmap, tree.map) | "seed" (a literal-seed key in a
    # function that runs repeatedly) | "frozen" (an attribute of `self` read by a method kept compiled as a bound
    # method, which another method advances: `objects.held.frozen_attributes`; `context` names the compilation)
    kind: str
    loop: cst.CSTNode | None = (
        None  # kind "loop": the loop or comprehension; "seed": the loop calling it, if any
    )
    context: str = (
        ""  # kinds "closure"/"carry"/"mapped"/"seed": e.g. "lax.scan body 'step'", "jax.vmap-mapped 'f'"
    )
    # kind "held": a key an object keeps as built, drawn again by a second call of a method on one object,
    # reported at the draw in the method (`node`); `caller`: the repeated call (`loop`: the loop repeating it),
    # or `context`: where another module repeats it ("main.py:8"). `target`: another project module's method
    # drawing it ("cryo.pipeline.Pipeline.render"): reported there (`project.CallFact.repeated`), not here.
    caller: cst.CSTNode | None = None
    target: str = ""
    kept: str = (
        ""  # kind "held": the attribute kept as built, as the method reads it ("self.key", "self._seed")
    )


@dataclasses.dataclass(frozen=True, eq=False)
class Held:
    """A call of a method that draws from keys its receiver keeps as built (`path`, from the receiver): the
    module's candidate methods (`units`), or another project module's method (`target`)."""

    units: tuple[Unit, ...]
    path: tuple
    target: str | None = None
    # The method returns the key it advanced (`keys.held_draws.hands_back`): a caller calling it again on the old
    # object dropped that key, and the reuse is reported at the caller's call.
    hands_back: bool = False


@dataclasses.dataclass(frozen=True)
class Summary:
    """What calling a function does to the keys it is given: (name, index path) pairs it may consume."""

    params: frozenset[tuple[str, tuple]] = frozenset()
    free: frozenset[tuple[str, tuple]] = frozenset()  # closed-over (or global) names

    def __bool__(self) -> bool:
        return bool(self.params or self.free)


@dataclasses.dataclass
class UnitResult:
    reuses: list[KeyReuse]
    summary: Summary
    # Where each part of a parameter (or of `self`) is first consumed on some path: the key expression given to
    # a consumer, or the held-key call that consumes it in a method (`Held`): `KeyAnalysis.draw_sites`.
    origins: dict[tuple, list[cst.CSTNode | Held]] = dataclasses.field(default_factory=dict)


class State:
    """One path's facts: the version each name holds, the versions consumed so far, and the keys split or
    folded in so far (`forks`: (version, is a split) -> the call and its literal count or index)."""

    __slots__ = ("env", "consumed", "epoch", "forks")

    def __init__(
        self,
        env: dict[str, Version],
        consumed: dict[Version, Site],
        epoch: int,
        forks: dict[tuple[Version, bool], tuple[Site, int | None]] | None = None,
    ) -> None:
        self.env = env
        self.consumed = consumed
        self.epoch = epoch  # attributes and dict entries read in different epochs are different values
        self.forks = forks if forks is not None else {}

    def copy(self) -> State:
        return State(dict(self.env), dict(self.consumed), self.epoch, dict(self.forks))


EPOCHS = itertools.count(1)  # attribute epochs: a fresh one wherever unknown code ran


def _is_pseudo(name: str) -> bool:
    return "." in name or "[" in name


def _chain(node: cst.BaseExpression) -> str | None:
    """`self.key` / `rngs["dropout"]` / `a.b["c"]` as a pseudo-name, None for anything else."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        base = _chain(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    if type(node) is cst.Subscript:
        literal = _string_index(node)
        if literal is not None:
            base = _chain(node.value)
            return None if base is None else f"{base}[{literal!r}]"
    return None


def _single_index(node: cst.Subscript) -> cst.BaseExpression | None:
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return None
    return node.slice[0].slice.value


def _string_index(node: cst.Subscript) -> str | None:
    return str_literal(_single_index(node))


def _literal(node: cst.BaseExpression) -> object:
    """A hashable token for a literal (fold_in data), None when not a literal."""
    value = int_literal(node)
    if value is not None:
        return ("int", value)
    if type(node) is cst.SimpleString:
        return ("str", node.value)
    return None


def _split_count(call: cst.Call) -> int | None:
    """The literal number of keys `split(k, num)` makes (2 by default); None when not a literal."""
    num = argument(call, 1, "num")
    return 2 if num is None else int_literal(num.value)


def _path_text(name: str, path: tuple) -> str:
    out = name
    for index in path:
        if isinstance(index, str):
            out += index  # ".attr"
        elif isinstance(index, tuple):
            out += f"[{index[1]!r}]"
        else:
            out += f"[{index}]"
    return out


def imported_consumer(index: ModuleIndex, name: str | None) -> Any:
    """The `project.Export` of another project module's function that consumes keys (project mode), else None."""
    project = index.project
    if name is None or project is None:
        return None
    found = project.exports.get(name)
    return found if found is not None and found.keys else None


def path_json(path: tuple) -> tuple[int | str, ...]:
    """A key's index path in a JSON-able form (summaries travel into the findings cache): ints and ".attr"
    stay, a dict entry ("[", "k") becomes "[k"."""
    return tuple(f"[{p[1]}" if isinstance(p, tuple) else p for p in path)


def key_path(path: tuple[int | str, ...]) -> tuple:
    """The inverse of `path_json`."""
    return tuple(("[", p[1:]) if isinstance(p, str) and p.startswith("[") else p for p in path)


def _in_test(unit: Unit | None) -> bool:
    """Inside a test (`test_*` function, `Test*`/`*Test` class): fixed seeds there are deliberate."""
    while unit is not None:
        if unit.name.startswith("test") or (
            unit.class_node is not None and "Test" in unit.class_node.name.value
        ):
            return True
        unit = unit.parent
    return False


def _bind(positional: list[str], keyword_only: set[str], args: Sequence[cst.Arg]) -> dict[str, cst.Arg]:
    """Parameter name -> the argument a call passes it (up to the first `*args`)."""
    names = set(positional) | keyword_only
    mapping: dict[str, cst.Arg] = {}
    index = 0
    for arg in args:
        if arg.keyword is not None:
            if arg.keyword.value in names:
                mapping[arg.keyword.value] = arg
            continue
        if arg.star:
            break
        if index < len(positional):
            mapping[positional[index]] = arg
        index += 1
    return mapping


# The receiver of a method call, in an exported method's keys: its kept attributes the method draws from.
RECEIVER = "<receiver>"


def _held_paths(index: ModuleIndex, unit: Unit, summary: Summary) -> set[tuple]:
    """The (".attr",) paths of a method's `self` that it consumes and that only construction sets
    (`objects.held.kept_attributes`), also through fields holding objects of the module's classes
    ((".detector", ".key"): `objects.held_fields.held_chain`): the same key on every call."""
    first = positional_params(unit.params)[:1] if summary.params else []
    if not unit.is_method or not first or unit.class_node is None:
        return set()
    drawn = {
        path
        for param, path in summary.params
        if param == first[0].name.value and path and all(isinstance(p, str) for p in path)
    }
    if not drawn:
        return drawn  # the common case: no attribute of `self` consumed, and the class is not read
    return {path for path in drawn if held_chain(index, unit.class_node, path)}
