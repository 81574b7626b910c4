"""PRNG key dataflow: which key values each execution path consumes, flow-sensitively (JAX301).

The model. Every value a name (or `self.attr`, `d["k"]`, `keys[0]`) holds is a `Version`: a key's identity.
Sampling (`jax.random.normal(key, ...)`) and `jax.random.split(key)` *consume* the version they are given;
`split` then returns fresh keys, `fold_in`/`clone`/`key`/`PRNGKey`/`wrap_key_data` only make fresh ones, and
`key_data` or storing a key in a pytree does nothing. Consuming a version that is already consumed on some
path reaching this point is a reuse. Re-binding a name (`key, sub = split(key)`) gives it a new version, so
only the values matter, never the names.

Per path the state is `State`: the version each name holds and the versions consumed so far (with where).
At joins the consumed facts are united (may-reuse); a name bound to different versions on the two sides gets
a merged version, consumed when the version it held on some side was consumed on that side. `return`,
`raise`, `break` and `continue` end their path; a loop body is walked twice, the second time from the join
of the entry with the end of the first round, which finds reuse carried from one iteration to the next.

Across functions: a function's `Summary` says which of its parameters (and closed-over names) it may consume;
a call of a same-module function consumes the caller's arguments accordingly, also through `jax.jit(f)(...)`,
`lax.scan(f, init, ...)` and friends. A method call is such a call when the receiver's class is known
(`instances.method_call`: `self`, an object built by `Env(...)`, a parameter annotated with a class); where the
receiver may be a subclass instance, only what the method and every same-module override consume counts
(dynamic dispatch: an abstract base method draws nothing). The bodies of `lax.scan`/`fori_loop`/`while_loop`/`map` run once per
iteration: a key they close over, or receive through `partial`, is the same on every iteration, and a carried
key returned unchanged after being consumed is consumed again by the next iteration. The same holds for a
function mapped by `jax.vmap`/`equinox.filter_vmap` (every element) and a `jax.tree.map` callback (every leaf),
for draws of noise (`normal`, `uniform`, ...); draws that pick or mask entries (`permutation`, `choice`,
`randint`, `bernoulli`, ...) share a key across a batch on purpose, to keep its parts aligned.
A key made from a literal seed (`jax.random.key(0)`) is the same key on every run of the function that makes
it: consumed in one of those bodies, or in a function that some loop of the module calls (directly or through
its jitted binding; not a loop over a literal list of configurations), every run draws the same numbers.
Inside tests (`test_*` functions, `Test*` classes) fixed seeds are deliberate and not reported.

Precision comes first: calls of unknown functions consume nothing; attributes and dict entries are forgotten
as soon as unknown code could change them; anything not understood gets a fresh version, which can only hide
a reuse, never invent one.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import libcst as cst

from ..syntax import argument, children, int_literal, own_nodes, source_of, walk
from .held_keys import kept_attributes
from .index import ModuleIndex, Unit
from .instances import (
    MethodCall,
    haiku_transformed,
    imported_haiku,
    local_method_units,
    method_call,
    module_class_kind,
)
from .key_relevance import RANDOM as _RANDOM
from .key_relevance import uses_keys
from .kinds import LINEN
from .library import KEY_CONSUMING_APIS, KEY_DICT_KEYWORDS, KEY_METHODS
from .library_keys import key_method_places
from .pytrees import pytree_model
from .transforms import positional_params

# Everything in jax.random that draws random bits from its key (its first argument, or `key=`).
SAMPLERS = frozenset(
    _RANDOM + name
    for name in (
        "ball bernoulli beta binomial bits categorical cauchy chisquare choice dirichlet double_sided_maxwell "
        "exponential f gamma generalized_normal geometric gumbel laplace loggamma logistic lognormal maxwell "
        "multinomial multivariate_normal normal orthogonal pareto permutation poisson rademacher randint "
        "rayleigh shuffle t triangular truncated_normal uniform wald weibull_min random_bits"
    ).split()
)
SPLIT = _RANDOM + "split"
FOLD_IN = _RANDOM + "fold_in"
# flax.linen Module methods that draw the parameters from the key they are given (argument 0 or `rngs=`).
_LINEN_INITS = frozenset({"init", "init_with_output"})
# Method names some library object consumes a key through (library.KEY_METHODS, KEY_DICT_KEYWORDS).
_LIBRARY_KEY_METHODS = frozenset(
    {m for methods in KEY_METHODS.values() for m in methods} | set(KEY_DICT_KEYWORDS)
)
# Functions that make a fresh key without consuming one.
KEY_MAKERS = frozenset(_RANDOM + n for n in ("key", "PRNGKey", "clone", "wrap_key_data"))

# What a lax loop passes its body: label used by the index -> position of the carry parameter (None: no carry).
LOOP_BODIES = {"lax.scan body": 0, "lax.fori_loop body": 1, "lax.while_loop body": 0, "lax.map body": None}
# lax calls: qualified name -> (position and keyword of the function(s), position of the carry/operands
# argument, position of the carry among the function's parameters).
_LAX_CALLS: dict[str, tuple[tuple[tuple[int, str], ...], int | None, int]] = {
    "jax.lax.scan": (((0, "f"),), 1, 0),
    "jax.lax.fori_loop": (((2, "body_fun"),), 3, 1),
    "jax.lax.while_loop": (((0, "cond_fun"), (1, "body_fun")), 2, 0),
    "jax.lax.map": (((0, "f"),), None, 0),
}
_LAX_BRANCHES = frozenset({"jax.lax.cond", "jax.lax.switch"})
# Transformations that run their function once per element (labels as `transforms.TRANSFORMS` gives them).
_MAPPING_LABELS = frozenset({"jax.vmap-mapped", "equinox.filter_vmap-mapped"})
# Draws that pick or mask entries: one key across the elements or leaves of a batch keeps them aligned (brax
# permutes every leaf of a transition batch with one key), so a mapped function sharing a key for these is
# deliberate. Helpers are not judged either: what they draw is not known here.
_ALIGNING = frozenset(
    _RANDOM + n
    for n in "permutation shuffle choice randint bits random_bits categorical bernoulli split".split()
)
# Calls that run their first argument once per leaf.
_TREE_MAPS = frozenset(
    {"jax.tree.map", "jax.tree_util.tree_map", "jax.tree.map_with_path", "jax.tree_util.tree_map_with_path"}
)
# Key makers whose literal first argument makes the same key on every run.
_SEEDED = frozenset({_RANDOM + "key", _RANDOM + "PRNGKey"})
# Wrappers that call their function with the arguments they get: `jax.jit(f)(key)` calls f(key).
_CALL_THROUGH = frozenset(
    {"jax.jit", "jax.checkpoint", "jax.vmap", "jax.pmap", "equinox.filter_jit", "equinox.filter_vmap"}
)

# Calls that cannot change a Python object the function holds (attributes, list items).
_PURE_PREFIXES = (
    "jax.",
    "numpy.",
    "math.",
    "builtins.",
    "functools.",
    "operator.",
    "typing.",
    "optax.",
    "chex.",
)
_IMPURE_BUILTINS = frozenset({"builtins.setattr", "builtins.delattr", "builtins.exec", "builtins.eval"})
_PURE_METHODS = frozenset(
    (
        "reshape astype sum mean max min std var squeeze transpose ravel flatten swapaxes take get items keys "
        "values copy format join startswith endswith lower upper strip set add multiply divide power apply_gradients "
        "replace tree_flatten block_until_ready dot argmax argmin cumsum prod any all clip round conj real imag"
    ).split()
)
# Decorators (besides the transformations) that call the function with the arguments it is given.
_TRANSPARENT_DECORATORS = frozenset({"jax.custom_jvp", "jax.custom_vjp", "jax.named_call"})
_MAX_LOOP_DEPTH = 3  # deeper loops are walked once (no loop-carried reuse below this depth)
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


@dataclasses.dataclass(frozen=True, eq=False)
class KeyReuse:
    """A second consumption of one key on some path."""

    node: cst.CSTNode  # the reused key expression at the second use
    key: str  # its source text
    consumer: str  # what consumes it the second time
    first: Site
    # "reuse" | "loop" (carried around a Python loop) | "closure" | "carry" (lax loop bodies) | "mapped" (a key
    # closed over by a function run per element or leaf: vmap, tree.map) | "seed" (a literal-seed key in a
    # function that runs repeatedly)
    kind: str
    loop: cst.CSTNode | None = (
        None  # kind "loop": the loop or comprehension; "seed": the loop calling it, if any
    )
    context: str = (
        ""  # kinds "closure"/"carry"/"mapped"/"seed": e.g. "lax.scan body 'step'", "jax.vmap-mapped 'f'"
    )


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


_epochs = itertools.count(1)


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
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return node.slice[0].slice.value


def _string_index(node: cst.Subscript) -> str | None:
    value = _single_index(node)
    if type(value) is cst.SimpleString and isinstance(value.evaluated_value, str):
        return value.evaluated_value
    return None


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


class _Loop:
    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node
        self.breaks: list[State] = []
        self.continues: list[State] = []


class KeyAnalysis:
    """The key dataflow of one module, function by function, computed on demand and cached."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._results: dict[int, UnitResult] = {}
        self._running: set[int] = set()
        self.relevant = uses_keys(index)
        self._per_leaf: dict[int, tuple[str, int, frozenset[str]]] | None = None
        self._loop_calls: dict[int, cst.CSTNode] | None = None

    def result(self, unit: Unit) -> UnitResult:
        found = self._results.get(id(unit))
        if found is not None:
            return found
        if not self.relevant or id(unit) in self._running:
            return UnitResult([], Summary())
        self._running.add(id(unit))
        try:
            result = _UnitWalk(self, unit).run()
        except RecursionError:
            result = UnitResult([], Summary())
        finally:
            self._running.discard(id(unit))
        self._results[id(unit)] = result
        return result

    def reuses(self, unit: Unit) -> list[KeyReuse]:
        return self.result(unit).reuses

    def per_leaf(self, unit: Unit) -> tuple[str, int, frozenset[str]] | None:
        """For a `jax.tree.map` callback: (its label, positional parameters bound by partial, names bound)."""
        if self._per_leaf is None:
            self._per_leaf = {}
            index = self.index
            scopes = []
            if not _TREE_MAPS.isdisjoint(index.callee_names):
                # Only the scopes the index's sites put a tree-map call in need the walk below (a site names
                # its unit for a call in a class body or a def's header too, which the walk then passes over).
                mapping = {
                    id(unit)
                    for call, unit, _ in index._sites
                    if index.qualname(call.func, unit) in _TREE_MAPS
                }
                scopes = [scope for scope in [index.root, *index.units.values()] if id(scope) in mapping]
            for scope in scopes:
                for node in own_nodes(scope.node):
                    if type(node) is not cst.Call or index.qualname(node.func, scope) not in _TREE_MAPS:
                        continue
                    arg = argument(node, 0, "f")
                    if arg is None:
                        continue
                    function, bound, names = arg.value, 0, frozenset[str]()
                    if (
                        type(function) is cst.Call
                        and index.qualname(function.func, scope) == "functools.partial"
                        and function.args
                        and not any(a.star for a in function.args)
                    ):
                        bound = sum(1 for a in function.args[1:] if a.keyword is None)
                        names = frozenset(a.keyword.value for a in function.args[1:] if a.keyword is not None)
                        function = function.args[0].value
                    label = str(index.qualname(node.func, scope))
                    for target, _ in index.resolve_function(function, scope):
                        self._per_leaf[id(target)] = (f"{label} callback", bound, names)
        return self._per_leaf.get(id(unit))

    def loop_call(self, unit: Unit) -> cst.CSTNode | None:
        """A loop of the module that calls `unit` (by name, or through a name bound to `jax.jit(unit)`), if any.
        Loops over a literal list of configurations (`for n in (4, 8)`) do not count."""
        if self._loop_calls is None:
            self._loop_calls = {}
            index = self.index
            for scope in [index.root, *index.units.values()]:
                for node in own_nodes(scope.node):
                    if type(node) is not cst.Call:  # identity: isinstance() on libcst ABCs is slow
                        continue
                    loops = [
                        loop
                        for loop in scope.loops_of(node)
                        if not (
                            type(loop) is cst.For
                            and (
                                type(loop.iter) is cst.Tuple
                                or type(loop.iter) is cst.List
                                or type(loop.iter) is cst.Set
                            )
                        )
                    ]
                    if not loops:
                        continue
                    for target in self._called(node.func, scope):
                        self._loop_calls.setdefault(id(target), loops[-1])
        return self._loop_calls.get(id(unit))

    def _called(self, func: cst.BaseExpression, scope: Unit) -> list[Unit]:
        index = self.index
        found = [u for u, _ in index.resolve_function(func, scope)]
        if found or type(func) is not cst.Name:
            return found
        owner: Unit | None = scope
        while owner is not None and owner is not index.root and func.value not in owner.local_names:
            owner = owner.parent
        if owner is None:
            return []
        value = owner.single_assignment(func.value)
        if type(value) is cst.Call and index.transform_of(value.func, owner) is not None:
            return [u for u, _ in index.applications(value, owner)]
        return []

    def summary(self, unit: Unit) -> Summary:
        return self.result(unit).summary

    def call_summary(self, unit: Unit) -> Summary:
        """The summary that holds for a call of `unit` by name: none when an unknown decorator wraps it."""
        node = unit.node
        if type(node) is cst.FunctionDef:
            for decorator in node.decorators:
                if not self._transparent(decorator.decorator, unit.parent or self.index.root):
                    return Summary()
        return self.summary(unit)

    def _transparent(self, decorator: cst.BaseExpression, scope: Unit) -> bool:
        """Decorators that call the function with the arguments it is given, in order."""
        if type(decorator) is cst.Name and decorator.value in ("staticmethod", "classmethod"):
            return True
        if self.index.imports.qualname(decorator) in _TRANSPARENT_DECORATORS:
            return True
        return self.index.transform_of(decorator, scope) is not None


def key_analysis(index: ModuleIndex) -> KeyAnalysis:
    """The key dataflow of a module. In project mode it is computed once, kept with the module's facts
    (`project.ModuleFacts.keys`, which live as long as the module's lint): JAX301 and the summary share it."""
    project = index.project
    if project is None:
        return KeyAnalysis(index)
    analysis = project.keys
    if analysis is None or analysis.index is not index:
        analysis = project.keys = KeyAnalysis(index)
    return analysis


def imported_consumer(index: ModuleIndex, name: str | None) -> Any:
    """The `project.Export` of another project module's function that consumes keys (project mode), else None."""
    project = index.project
    if name is None or project is None:
        return None
    found = project.exports.get(name)
    return found if found is not None and found.keys else None


def method_keys(index: ModuleIndex, class_name: str, method: str) -> frozenset[tuple[str, tuple]]:
    """What calling `method` on an instance of the module's top-level class `class_name` (or of a subclass the
    module defines) surely consumes, by the parameter names of the method the class itself runs (own or
    inherited from the module's classes): what another module's `obj.method(...)` consumes (project mode)."""
    found = local_method_units(index, class_name, method)
    if not found:
        return frozenset()
    analysis = key_analysis(index)
    if not analysis.relevant:
        return frozenset()
    common: set[tuple[object, tuple]] | None = None
    for unit in found:
        slots = _parameter_slots(unit)
        summary = analysis.call_summary(unit)
        parts = {(slots[name], path) for name, path in summary.params if name in slots}
        parts |= {(RECEIVER, path) for path in _held_paths(index, unit, summary)}
        common = parts if common is None else common & parts
        if not common:
            return frozenset()
    names = {slot: name for name, slot in _parameter_slots(found[0]).items()}
    names[RECEIVER] = RECEIVER
    return frozenset((names[slot], path) for slot, path in common or ())


# The receiver of a method call, in an exported method's keys: its kept attributes the method draws from.
RECEIVER = "<receiver>"


def _held_paths(index: ModuleIndex, unit: Unit, summary: Summary) -> set[tuple]:
    """The (".attr",) paths of a method's `self` that it consumes and that only construction sets
    (`held_keys.kept_attributes`): the same key on every call."""
    first = positional_params(unit.params)[:1] if summary.params else []
    if not unit.is_method or not first or unit.class_node is None:
        return set()
    drawn = {
        path
        for param, path in summary.params
        if param == first[0].name.value and len(path) == 1 and isinstance(path[0], str)
    }
    if not drawn:
        return drawn  # the common case: no attribute of `self` consumed, and the class is not read
    kept = kept_attributes(index, unit.class_node)
    return {path for path in drawn if path[0][1:] in kept}


def _parameter_slots(unit: Unit) -> dict[str, object]:
    """A method's parameters after `self` by what a call fills them from: position, or keyword only."""
    positional = [p.name.value for p in positional_params(unit.params)]
    if unit.is_method:
        positional = positional[1:]
    slots: dict[str, object] = {name: i for i, name in enumerate(positional)}
    slots.update({p.name.value: p.name.value for p in unit.params.kwonly_params})
    return slots


def path_json(path: tuple) -> tuple[int | str, ...]:
    """A key's index path in a JSON-able form (summaries travel into the findings cache): ints and ".attr"
    stay, a dict entry ("[", "k") becomes "[k"."""
    return tuple(f"[{p[1]}" if isinstance(p, tuple) else p for p in path)


def key_path(path: tuple[int | str, ...]) -> tuple:
    """The inverse of `path_json`."""
    return tuple(("[", p[1:]) if isinstance(p, str) and p.startswith("[") else p for p in path)


def analyze_module(index: ModuleIndex) -> dict[str, list[KeyReuse]]:
    """Every unit's reuses, by unit qualname ("" for the module body): for tests and --verify."""
    analysis = KeyAnalysis(index)
    out = {"": analysis.reuses(index.root)}
    for unit in index.units.values():
        out[unit.qualname] = analysis.reuses(unit)
    return out


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


class _UnitWalk:
    """The walk over one function body (or the module body)."""

    def __init__(self, analysis: KeyAnalysis, unit: Unit) -> None:
        self.analysis = analysis
        self.index = analysis.index
        self.unit = unit
        self.is_root = unit is self.index.root
        self.initial: dict[str, Version] = {}
        self.elements: dict[tuple, Version] = {}
        self.derived: dict[tuple, Version] = {}
        self.reuses: list[KeyReuse] = []
        self.reported: set[int] = set()
        self.loops: list[tuple[_Loop, int]] = []
        self.exits: list[State] = []
        self.params: list[str] = []
        self.constant_params: set[str] = set()
        self.loop_label: str | None = (
            None  # set for lax loop bodies, vmapped functions and tree.map callbacks
        )
        self.repeat_kind = "closure"  # what a closed-over key consumed there is: "closure" (lax) or "mapped"
        self.carry: str | None = None  # the carry parameter of a lax loop body
        self.carry_in_tuple = False  # scan bodies return (carry, y)
        self._setup()

    # -- setup ---------------------------------------------------------------------------------------

    def _setup(self) -> None:
        node = self.unit.node
        if not (type(node) is cst.FunctionDef or type(node) is cst.Lambda):
            return
        params = node.params
        positional = [p.name.value for p in positional_params(params)]
        self.params = [*positional, *(p.name.value for p in params.kwonly_params)]
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                self.params.append(star.name.value)
        for app in self.unit.applications:
            if app.label not in LOOP_BODIES:
                continue
            self.loop_label = f"{app.label} '{self.unit.name}'"
            own = positional
            if app.bound_self and self.unit.is_method:
                own = own[1:]
            self.constant_params = set(own[: app.bound_positional]) | set(app.bound_names)
            own = own[app.bound_positional :]
            position = LOOP_BODIES[app.label]
            if position is not None and position < len(own):
                self.carry = own[position]
                self.carry_in_tuple = app.label == "lax.scan body"
            break
        if self.loop_label is not None:
            return
        per_leaf = self.analysis.per_leaf(self.unit)
        mapped = next((a for a in self.unit.applications if a.label in _MAPPING_LABELS), None)
        if per_leaf is not None:
            label, bound, names = per_leaf
        elif mapped is not None:
            label, bound, names = mapped.label, mapped.bound_positional, mapped.bound_names
            if mapped.bound_self and self.unit.is_method:
                positional = positional[1:]
        else:
            return
        self.loop_label = f"{label} '{self.unit.name}'"
        self.repeat_kind = "mapped"
        self.constant_params = set(positional[:bound]) | set(names)
        if per_leaf is None and mapped is not None:  # `in_axes=None`: every element gets the same argument
            unbatched = {bound + i for i in mapped.spec.unbatched if 0 <= i}
            self.constant_params |= {positional[i] for i in unbatched if i < len(positional)}

    def run(self) -> UnitResult:
        state = State({}, {}, 0)
        node = self.unit.node
        if type(node) is cst.Module:
            end = self.block(node.body, state)
        elif type(node) is cst.FunctionDef:
            end = self.block(node.body.body, state)
        else:
            assert type(node) is cst.Lambda
            self.expr(node.body, state)
            self._return(node.body, state)
            end = state
        if end is not None:
            self.exits.append(end)
        return UnitResult(self.reuses, self._summary())

    def _summary(self) -> Summary:
        if self.is_root:
            return Summary()
        params: set[tuple[str, tuple]] = set()
        free: set[tuple[str, tuple]] = set()
        for state in self.exits:
            for version in state.consumed:
                if version.param is not None:
                    (params if version.param[0] in self.params else free).add(version.param)
        return Summary(frozenset(params), frozenset(free))

    # -- versions ------------------------------------------------------------------------------------

    def initial_of(self, name: str) -> Version:
        """The value a name holds on entry: a parameter, a closed-over or global name."""
        version = self.initial.get(name)
        if version is None:
            free = not self.is_root and name not in self.unit.local_names
            constant = free or name in self.constant_params
            tracked = name in self.params or free
            version = Version(param=(name, ()) if tracked else None, root=name if constant else None)
            self.initial[name] = version
        return version

    def element(self, parent: Version, index: object, epoch: int | None) -> Version:
        """`parent[index]` (or an attribute): the same version every time, until the parent may change."""
        key = (parent, index, None if parent.immutable else epoch)
        version = self.elements.get(key)
        if version is None:
            param = None
            if parent.param is not None and len(parent.param[1]) < _PATH_DEPTH:
                param = (parent.param[0], (*parent.param[1], index))
            version = Version(immutable=parent.immutable, param=param, root=parent.root)
            self.elements[key] = version
        return version

    def lookup(self, name: str, state: State) -> Version:
        version = state.env.get(name)
        return version if version is not None else self.initial_of(name)

    def read(self, node: cst.BaseExpression, state: State) -> Version | None:
        """The version of a name, attribute chain or literal subscript, without evaluating anything."""
        if type(node) is cst.Name:
            return self.lookup(node.value, state)
        if isinstance(node, cst.Attribute) or isinstance(node, cst.Subscript):
            pseudo = _chain(node)
            if pseudo is not None and pseudo in state.env:
                return state.env[pseudo]
            base = self.read(node.value, state)
            if base is None:
                return None
            if isinstance(node, cst.Attribute):
                return self.element(base, "." + node.attr.value, state.epoch)
            text = _string_index(node)
            if text is not None:
                return self.element(base, ("[", text), state.epoch)
            index = int_literal(_single_index(node))
            if index is not None:
                return self.element(base, index, None)
        return None

    # -- joins ---------------------------------------------------------------------------------------

    def join(self, states: Iterable[State | None]) -> State | None:
        result: State | None = None
        for state in states:
            if state is None:
                continue
            result = state.copy() if result is None else self._join2(result, state)
        return result

    def _join2(self, a: State, b: State) -> State:
        if a.env == b.env:  # the same version of every name (Version compares by identity): no phi to make
            consumed = dict(a.consumed)
            for version, site in b.consumed.items():
                consumed.setdefault(version, site)
            epoch = a.epoch if a.epoch == b.epoch else next(_epochs)
            return State(dict(a.env), consumed, epoch, {**b.forks, **a.forks})
        phis: dict[tuple[int, int], Version] = {}
        env: dict[str, Version] = {}
        for name in a.env.keys() | b.env.keys():
            pseudo = _is_pseudo(name)
            if pseudo and (name not in a.env or name not in b.env):
                continue  # forget it: it is read structurally again
            va = a.env.get(name) or self.initial_of(name)
            vb = b.env.get(name) or self.initial_of(name)
            if va is vb:
                env[name] = va
                continue
            phi = phis.get((id(va), id(vb)))
            if phi is None:
                phi = Version(immutable=va.immutable and vb.immutable)
                phis[(id(va), id(vb))] = phi
            env[name] = phi
        consumed = dict(a.consumed)
        for version, site in b.consumed.items():
            consumed.setdefault(version, site)
        # A merged version is consumed when the version it held on some side was consumed on that side.
        for name, version in env.items():
            if version in consumed:
                continue
            va = a.env.get(name) or self.initial_of(name)
            vb = b.env.get(name) or self.initial_of(name)
            if va is vb:
                continue
            found = a.consumed.get(va) or b.consumed.get(vb)
            if found is not None:
                consumed[version] = found
        epoch = a.epoch if a.epoch == b.epoch else next(_epochs)
        return State(env, consumed, epoch, {**b.forks, **a.forks})

    # -- consumption ---------------------------------------------------------------------------------

    def consume(
        self, version: Version | None, node: cst.CSTNode, consumer: str, state: State, text: str | None = None
    ) -> None:
        if version is None:
            return
        text = text if text is not None else source_of(node)
        version.immutable = True
        loops = tuple((id(loop.node), round_) for loop, round_ in self.loops)
        site = Site(node, consumer, loops)
        first = state.consumed.get(version)
        if first is not None:
            self._report(node, text, consumer, first, loops)
            return
        state.consumed[version] = site
        if self.loop_label is not None and version.root is not None:
            if self.repeat_kind != "mapped" or (consumer.startswith(_RANDOM) and consumer not in _ALIGNING):
                self._add(KeyReuse(node, text, consumer, site, self.repeat_kind, context=self.loop_label))
        elif version.seed is not None and not self.is_root and not _in_test(self.unit):
            if self.loop_label is not None:
                self._add(KeyReuse(node, text, consumer, site, "seed", context=self.loop_label))
            else:
                caller_loop = self.analysis.loop_call(self.unit)
                if caller_loop is not None:
                    context = f"'{self.unit.name}'"
                    self._add(KeyReuse(node, text, consumer, site, "seed", loop=caller_loop, context=context))

    def _report(self, node: cst.CSTNode, text: str, consumer: str, first: Site, loops: tuple) -> None:
        carried_by = None
        for loop_id, round_ in loops:
            if round_ == 2 and (loop_id, 1) in first.loops:
                carried_by = loop_id
                break
        if carried_by is not None:
            loop = next(loop.node for loop, _ in self.loops if id(loop.node) == carried_by)
            self._add(KeyReuse(node, text, consumer, first, "loop", loop=loop))
        else:
            self._add(KeyReuse(node, text, consumer, first, "reuse"))

    def _add(self, reuse: KeyReuse) -> None:
        if id(reuse.node) in self.reported:
            return
        self.reported.add(id(reuse.node))
        self.reuses.append(reuse)

    # -- mutation ------------------------------------------------------------------------------------

    def forget_attributes(self, state: State) -> None:
        """Unknown code ran: attributes and dict entries may have changed."""
        state.epoch = next(_epochs)
        for name in [n for n in state.env if "." in n or "[" in n]:  # _is_pseudo, inline: env can be large
            del state.env[name]

    def mutated(self, name: str, state: State, pseudo: bool = True) -> None:
        """The object `name` holds may have changed in place (list item set, unknown method called).
        `pseudo=False`: the state holds no attribute or item versions to drop (`forget_attributes` just ran)."""
        old = self.lookup(name, state)
        if old.immutable:
            return
        new = Version(param=old.param, root=old.root)  # the same object, with contents that may differ
        for other, version in list(state.env.items()):
            if version is old:
                state.env[other] = new
        state.env[name] = new
        if pseudo:
            self._drop_pseudo(name, state)

    @staticmethod
    def _drop_pseudo(base: str, state: State) -> None:
        prefixes = (base + ".", base + "[")
        for name in [n for n in state.env if n.startswith(prefixes)]:
            del state.env[name]

    # -- statements ----------------------------------------------------------------------------------

    def block(self, statements: Sequence[cst.CSTNode], state: State | None) -> State | None:
        for statement in statements:
            if state is None:
                return None
            state = self.statement(statement, state)
        return state

    def suite(self, suite: cst.BaseSuite, state: State | None) -> State | None:
        return self.block(suite.body, state)

    def statement(self, node: cst.CSTNode, state: State) -> State | None:
        if type(node) is cst.SimpleStatementLine:
            current: State | None = state
            for small in node.body:
                if current is None:
                    return None
                current = self.small(small, current)
            return current
        if type(node) is cst.If:
            self.expr(node.test, state)
            other = state.copy()
            then = self.suite(node.body, state)
            rest: State | None = other
            if type(node.orelse) is cst.If:
                rest = self.statement(node.orelse, other)
            elif node.orelse is not None:
                rest = self.suite(node.orelse.body, other)
            return self.join([then, rest])
        if type(node) is cst.For or type(node) is cst.While:
            return self.loop(node, state)
        if type(node) is cst.Try or type(node) is cst.TryStar:
            return self.try_(node, state)
        if type(node) is cst.With:
            for item in node.items:
                self.expr(item.item, state)
                if item.asname is not None:
                    self.bind(item.asname.name, None, state)
            return self.suite(node.body, state)
        if type(node) is cst.FunctionDef:
            for decorator in node.decorators:
                self.expr(decorator.decorator, state)
            self._defaults(node.params, state)
            state.env[node.name.value] = Version()
            return state
        if type(node) is cst.ClassDef:
            for decorator in node.decorators:
                self.expr(decorator.decorator, state)
            for arg in [*node.bases, *node.keywords]:
                self.expr(arg.value, state)
            state.env[node.name.value] = Version()
            return state
        if type(node) is cst.Match:
            self.expr(node.subject, state)
            ends = []
            for case in node.cases:
                branch = state.copy()
                for sub in walk(case.pattern):
                    if type(sub) is cst.MatchAs and sub.name is not None:
                        branch.env[sub.name.value] = Version()
                if case.guard is not None:
                    self.expr(case.guard, branch)
                ends.append(self.suite(case.body, branch))
            ends.append(state)  # no case matched
            return self.join(ends)
        return state

    def _defaults(self, params: cst.Parameters, state: State) -> None:
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if param.default is not None:
                self.expr(param.default, state)

    def small(self, node: cst.CSTNode, state: State) -> State | None:
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
                self._return(node.value, state)
            self.exits.append(state)
            return None
        if type(node) is cst.Raise:
            if node.exc is not None:
                self.expr(node.exc, state)
            return None
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
                    state.env[gone.value] = Version()
                    self._drop_pseudo(gone.value, state)
                else:
                    self.assign(gone, None, None, state)
            return state
        if type(node) is cst.Assert:
            self.expr(node.test, state)
            return state
        if type(node) is cst.Import or type(node) is cst.ImportFrom:
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    local = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                    state.env[local] = Version()
            return state
        return state

    def loop(self, node: cst.For | cst.While, state: State) -> State | None:
        if type(node) is cst.For:
            self.expr(node.iter, state)
        entry = state
        rounds = 2 if len(self.loops) < _MAX_LOOP_DEPTH else 1
        head: State | None = entry
        frame = _Loop(node)
        for round_ in range(1, rounds + 1):
            assert head is not None
            body = head.copy()
            self.loops.append((frame, round_))
            try:
                if isinstance(node, cst.For):
                    self.assign(node.target, None, None, body)
                else:
                    self.expr(node.test, body)
                end = self.suite(node.body, body)
            finally:
                self.loops.pop()
            head = self.join([entry, end, *frame.continues])
        infinite = type(node) is cst.While and type(node.test) is cst.Name and node.test.value == "True"
        exit_state = None if infinite else head
        if exit_state is not None and node.orelse is not None:
            exit_state = self.suite(node.orelse.body, exit_state)
        return self.join([exit_state, *frame.breaks])

    def try_(self, node: cst.Try | cst.TryStar, state: State) -> State | None:
        # A handler starts from the state before any statement of the body (the one that raised).
        snapshots = []
        current: State | None = state
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
                self.bind(handler.name.name, None, branch)
            ends.append(self.suite(handler.body, branch))
        after = self.join(ends)
        if node.finalbody is not None:
            if after is None:
                assert failed is not None
                self.suite(node.finalbody.body, failed.copy())
                return None
            after = self.suite(node.finalbody.body, after)
        return after

    # -- assignment ----------------------------------------------------------------------------------

    def bind(self, target: cst.BaseExpression, version: Version | None, state: State) -> None:
        self.assign(target, version, None, state)

    def assign(
        self,
        target: cst.BaseExpression,
        version: Version | None,
        value: cst.BaseExpression | None,
        state: State,
    ) -> None:
        if type(target) is cst.Name:
            state.env[target.value] = version if version is not None else Version()
            self._drop_pseudo(target.value, state)
            return
        if type(target) is cst.Tuple or type(target) is cst.List:
            elements = target.elements
            starred = any(type(e) is cst.StarredElement for e in elements)
            if (
                (type(value) is cst.Tuple or type(value) is cst.List)
                and len(value.elements) == len(elements)
                and not starred
                and not any(type(e) is cst.StarredElement for e in value.elements)
            ):
                for element, item in zip(elements, value.elements, strict=True):
                    self.assign(element.value, self.read(item.value, state), item.value, state)
                return
            seen_star = False
            for i, element in enumerate(elements):
                if type(element) is cst.StarredElement:
                    seen_star = True
                    self.assign(element.value, None, None, state)
                    continue
                part = self.element(version, i, None) if version is not None and not seen_star else None
                self.assign(element.value, part, None, state)
            return
        if type(target) is cst.StarredElement:
            self.assign(target.value, None, None, state)
            return
        if type(target) is cst.Attribute or type(target) is cst.Subscript:
            pseudo = _chain(target)
            if type(target) is cst.Subscript:
                for index in target.slice:
                    self.expr(index.slice, state)
            if pseudo is not None:
                state.env[pseudo] = version if version is not None else Version()
                self._drop_pseudo(pseudo, state)
                return
            if type(target) is cst.Subscript and type(target.value) is cst.Name:
                self.mutated(target.value.value, state)  # `keys[0] = new`
            else:
                self.expr(target.value, state)

    # -- expressions ---------------------------------------------------------------------------------

    def expr(self, node: cst.CSTNode, state: State) -> Version | None:
        """Evaluate in order (consuming keys on the way); the version of the value when it is known."""
        # Type identity, not isinstance(): libcst's ABCs make a failed isinstance() slow (none is subclassed).
        if type(node) is cst.Name:
            return self.lookup(node.value, state)
        if type(node) is cst.Call:
            return self.call(node, state)
        if type(node) is cst.Attribute or type(node) is cst.Subscript:
            pseudo = _chain(node)
            if pseudo is None or pseudo not in state.env:
                self.expr(node.value, state)
            if type(node) is cst.Subscript:
                for element in node.slice:
                    self.expr(element.slice, state)
            return self.read(node, state)
        if type(node) is cst.Lambda or type(node) is cst.FunctionDef:
            if type(node) is cst.Lambda:
                self._defaults(node.params, state)
            return None
        if type(node) is cst.IfExp:
            self.expr(node.test, state)
            other = state.copy()
            first = self.expr(node.body, state)
            second = self.expr(node.orelse, other)
            joined = self.join([state, other])
            assert joined is not None
            self._replace(state, joined)
            return first if first is second else None
        if type(node) is cst.BooleanOperation:
            self.expr(node.left, state)
            other = state.copy()
            self.expr(node.right, other)
            joined = self.join([state, other])
            assert joined is not None
            self._replace(state, joined)
            return None
        if (
            type(node) is cst.ListComp
            or type(node) is cst.SetComp
            or type(node) is cst.GeneratorExp
            or type(node) is cst.DictComp
        ):
            self.comprehension(node, state)
            return None
        if type(node) is cst.NamedExpr:
            version = self.expr(node.value, state)
            self.assign(node.target, version, node.value, state)
            return version
        for child in children(node):
            self.expr(child, state)
        return None

    @staticmethod
    def _replace(state: State, other: State) -> None:
        state.env, state.consumed, state.epoch, state.forks = (
            other.env,
            other.consumed,
            other.epoch,
            other.forks,
        )

    def comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp, state: State
    ) -> None:
        for_in = node.for_in
        self.expr(for_in.iter, state)
        targets: list[str] = []
        current: cst.CompFor | None = for_in
        while current is not None:
            targets.extend(n.value for n in walk(current.target) if type(n) is cst.Name)
            current = current.inner_for_in
        saved = {name: state.env.get(name) for name in targets}
        entry = state.copy()
        rounds = 2 if len(self.loops) < _MAX_LOOP_DEPTH else 1
        head: State | None = entry
        frame = _Loop(node)
        for round_ in range(1, rounds + 1):
            assert head is not None
            body = head.copy()
            self.loops.append((frame, round_))
            try:
                current = for_in
                first = True
                while current is not None:
                    if not first:
                        self.expr(current.iter, body)
                    first = False
                    self.assign(current.target, None, None, body)
                    for condition in current.ifs:
                        self.expr(condition.test, body)
                    current = current.inner_for_in
                element = body.copy()
                if isinstance(node, cst.DictComp):
                    self.expr(node.key, element)
                    self.expr(node.value, element)
                else:
                    self.expr(node.elt, element)
                end = self.join([body, element])
            finally:
                self.loops.pop()
            head = self.join([entry, end])
        assert head is not None
        for name, version in saved.items():
            if version is None:
                head.env.pop(name, None)
            else:
                head.env[name] = version
        self._replace(state, head)

    # -- calls ---------------------------------------------------------------------------------------

    def call(self, node: cst.Call, state: State) -> Version | None:
        func = node.func
        name = self.index.qualname(func, self.unit)
        if type(func) is cst.Attribute and name is None:
            self.expr(func.value, state)
        elif type(func) is cst.Call:
            self.expr(func, state)
        values = [self.expr(arg.value, state) for arg in node.args]
        arg_versions = {id(arg): value for arg, value in zip(node.args, values, strict=True)}

        if name is not None and name.startswith(_RANDOM):
            return self._random_call(node, name, arg_versions, state)
        if name in _LAX_CALLS:
            self._lax_loop(node, name, arg_versions, state)
            return None
        if name in _LAX_BRANCHES:
            self._lax_branches(node, name, arg_versions, state)
            return None

        initialised = self._module_init(func)
        if initialised is not None:  # flax: `model.init(key, x)` draws the parameters from `key` (haiku too)
            arg = argument(node, 0, "rngs") or argument(node, 0, "rng")
            version = arg_versions.get(id(arg)) if arg is not None else None
            first = state.consumed.get(version) if version is not None else None
            # The same module initialised twice from one key is a copy on purpose (a target network that
            # starts equal to the online one), not a reuse.
            if arg is not None and (first is None or first.consumer != initialised):
                self.consume(version, arg.value, initialised, state)
            return None

        method = method_call(self.index, func, self.unit) if type(func) is cst.Attribute else None
        if method is not None:  # `self.m(key)`, `env.reset(key)`: the class's method (and its overrides)
            assert type(func) is cst.Attribute  # method_call answers only for attributes
            self._apply_method(method, func, node, arg_versions, state)
            callees = []
        else:
            callees = self.index.resolve_function(func, self.unit) if type(func) is not cst.Call else []
        transformed, scope = func, self.unit
        if method is None and not callees and type(func) is cst.Name:
            bound = self._bound_transform(func)  # `step = jax.jit(env.step)` ... `step(state, key)`
            if bound is not None:
                transformed, scope = bound
        through = self._call_through(transformed, scope)
        if through is not None:
            callees = through
            inner = transformed.args[0].value if type(transformed) is cst.Call else None
            if not through and type(inner) is cst.Attribute:  # `jax.jit(env.step)(state, action, key)`
                inner_method = method_call(self.index, inner, scope)
                if inner_method is not None:
                    self._apply_method(inner_method, inner, node, arg_versions, state)
            elif not through and inner is not None:  # `jax.jit(imported_f)(key)`: its export says
                export = imported_consumer(self.index, self.index.qualname(inner, scope))
                if export is not None:
                    self._apply_export(export, transformed, node, arg_versions, state)
        elif type(func) is cst.Call:
            sampler = self._wrapped_sampler(func)
            if sampler is not None:
                arg = argument(node, 0, None)
                if arg is not None:
                    self.consume(arg_versions.get(id(arg)), arg.value, sampler, state)
                return None
        if len(callees) > 1:  # defs joined (`if`/`else` at module level): one call runs one of them
            summaries = {self.analysis.call_summary(callee) for callee, _ in callees}
            callees = callees[:1] if len(summaries) == 1 else []
        for callee, bound_self in callees:
            summary = self.analysis.call_summary(callee)
            if summary:
                self._apply(summary, callee, bound_self, node, node.args, arg_versions, state)
        imported = imported_consumer(self.index, name) if not callees else None
        if imported is not None:  # another project module's function (project mode): its summary says
            self._apply_export(imported, func, node, arg_versions, state)
        elif not callees and (
            method is None or not method.units and imported_consumer(self.index, method.target) is None
        ):
            self._library_keys(
                node, name, arg_versions, state
            )  # library code: the table says what it consumes
        if name is not None and name.startswith(_PURE_PREFIXES) and name not in _IMPURE_BUILTINS:
            return None
        if type(func) is cst.Attribute and func.attr.value in _PURE_METHODS:
            return None
        # Unknown code: it may change attributes, dict entries and the lists it is given.
        self.forget_attributes(state)
        if type(func) is cst.Attribute and type(func.value) is cst.Name and not callees and not method:
            self.mutated(func.value.value, state, pseudo=False)
        for arg in node.args:
            if type(arg.value) is cst.Name:
                self.mutated(arg.value.value, state, pseudo=False)
        return None

    def _library_keys(
        self, node: cst.Call, name: str | None, versions: dict[int, Version | None], state: State
    ) -> None:
        """Keys a library API consumes, as the table (`library.py`) says: `handlers.seed(model, key)`,
        `dist.Normal(0, 1).sample(key)`, `model.apply(x, rngs={"dropout": key})`."""
        func = node.func
        api = KEY_CONSUMING_APIS.get(name) if name is not None else None
        places: list[tuple[int | None, str]] = list(api.keys) if api is not None else []
        if type(func) is cst.Attribute and func.attr.value in _LIBRARY_KEY_METHODS:
            method = func.attr.value
            places += key_method_places(self.index, func, self.unit)
            keyword = KEY_DICT_KEYWORDS.get(method)
            given = argument(node, None, keyword) if keyword is not None else None
            if given is not None and type(given.value) is cst.Dict:
                for element in given.value.elements:
                    # Only a name: its value was read with the call's arguments, and reading it is pure. flax
                    # draws from `fold_in`s of the key, so the key's own draws stay independent: what is
                    # consumed is that derived stream, the same for the same collection name.
                    if type(element) is cst.DictElement and type(element.value) is cst.Name:
                        version = self.expr(element.value, state)
                        token = ("rngs", _literal(element.key))
                        if version is not None and token[1] is not None:
                            version.immutable = True
                            derived = self.element(version, token, None)  # a caller's key: its summary says
                            self.consume(derived, element.value, f"'{source_of(func)}'", state)
        if not places:
            return
        consumer = f"'{source_of(func)}'"
        for position, keyword in places:
            arg = argument(node, position, keyword)
            version = versions.get(id(arg)) if arg is not None else None
            first = state.consumed.get(version) if version is not None else None
            if api is not None and api.replays and first is not None and first.consumer == consumer:
                continue  # seeded again on purpose: the model and its guide, or a dry run, replay one stream
            if arg is not None and not (type(arg.value) is cst.Name and arg.value.value == "None"):
                self.consume(version, arg.value, consumer, state)

    def _random_call(self, node: cst.Call, name: str, versions: dict[int, Version | None], state: State):
        key_arg = argument(node, 0, "key")
        key = versions.get(id(key_arg)) if key_arg is not None else None
        if name in SAMPLERS or name == SPLIT:
            if key_arg is not None:
                if name == SPLIT and key is not None:
                    self._split_and_folded(key, key_arg.value, True, _split_count(node), state)
                self.consume(key, key_arg.value, name, state)
            return Version(immutable=True) if name == SPLIT else None
        if name == FOLD_IN:
            if key is not None:
                key.immutable = True
                data = argument(node, 1, "data")
                assert key_arg is not None
                index = int_literal(data.value) if data is not None else None
                self._split_and_folded(key, key_arg.value, False, index, state)
                token = _literal(data.value) if data is not None else None
                if token is not None:
                    derived = self.derived.get((key, token))
                    if derived is None:
                        derived = self.derived[(key, token)] = Version(immutable=True)
                    return derived
            return Version(immutable=True)
        if name in KEY_MAKERS:
            if name in _SEEDED and key_arg is not None and int_literal(key_arg.value) is not None:
                return Version(immutable=True, seed=source_of(node))
            return Version(immutable=True)
        return None

    def _split_and_folded(
        self, key: Version, node: cst.BaseExpression, is_split: bool, number: int | None, state: State
    ) -> None:
        """One key both split and folded in: `fold_in(k, i)` is `split(k)[i]` (JAX 0.10.2, threefry keys), so
        a literal `i` below the split's literal count gives a key equal to a split one. `number`: the split's
        literal count, or the folded literal index (None: not a literal)."""
        site = (Site(node, SPLIT if is_split else FOLD_IN, ()), number)
        state.forks.setdefault((key, is_split), site)
        found = state.forks.get((key, not is_split))  # on this path: branches that never meet do not collide
        if found is None:
            return
        count, index = (number, found[1]) if is_split else (found[1], number)
        if index is None or count is None or index >= count:
            # `fold_in(k, n)` after `split(k, n)` (evosax) has no split key's index; a data that is not a
            # literal may never be one of them either: only literals make the collision certain.
            return
        split_site = found[0] if not is_split else site[0]
        self._add(KeyReuse(node, source_of(node), site[0].consumer, split_site, "folded"))

    def _module_init(self, func: cst.BaseExpression) -> str | None:
        """`Model().init` / `model.init` (also `init_with_output`) of a flax.linen Module class, or `net.init` of
        a haiku transformation (`net = hk.transform(f)`) of this module: the consumer's
        name for messages, or None. The class is one of this module, or (project mode) one another project
        module defines (`instances.module_class_kind`); only an instance built right there or bound once in
        this function (or at module level) counts; anything else is unknown code, which consumes nothing."""
        if type(func) is not cst.Attribute or func.attr.value not in _LINEN_INITS:
            return None
        if func.attr.value == "init" and (
            haiku_transformed(self.index, func.value, self.unit) is not None
            or imported_haiku(self.index, func.value, self.unit) is not None
        ):
            return f"'{source_of(func)}'"  # `hk.transform(f).init(rng, x)` draws the parameters from `rng`
        receiver: cst.BaseExpression | None = func.value
        if type(receiver) is cst.Name:
            receiver = self.unit.single_assignment(receiver.value) or self.index.root.single_assignment(
                receiver.value
            )
        if type(receiver) is not cst.Call:
            return None
        cls = (
            pytree_model(self.index).classes.get(receiver.func.value)
            if type(receiver.func) is cst.Name
            else None
        )
        if (
            cls is not None
            and cls.how == "linen"
            or module_class_kind(self.index, receiver.func, self.unit) == LINEN
        ):
            return f"'{source_of(func)}'"
        return None

    def _apply_export(
        self,
        export: Any,
        func: cst.BaseExpression,
        call: cst.Call,
        versions: dict[int, Version | None],
        state: State,
    ) -> None:
        """Consume what another project module's function (or method: its parameters after `self`) consumes."""
        mapping = _bind(list(export.positional), set(export.keyword_only), call.args)
        label = f"'{source_of(func)}'"
        for param, path in sorted(export.keys, key=lambda p: (p[0], len(p[1]))):
            arg = mapping.get(param)
            if arg is not None:
                found, version = self._follow(arg.value, versions.get(id(arg)), key_path(path), state)
                self.consume(version, found, label, state)

    def _apply_method(
        self,
        method: MethodCall,
        func: cst.Attribute,
        call: cst.Call,
        versions: dict[int, Version | None],
        state: State,
    ) -> None:
        """Consume what every candidate of a method call consumes: the class's method and, when the receiver
        may be a subclass instance (`self`, an annotated parameter), each same-module override. Only what all
        of them consume counts (an override that draws nothing, or an abstract method, makes the call draw
        nothing); overrides in other modules are not known."""
        if method.target is not None:
            export = imported_consumer(self.index, method.target)
            if export is not None:
                self._apply_export(export, func, call, versions, state)
                params = {*export.positional, *export.keyword_only}
                held = [path[0] for name, path in export.keys if name == RECEIVER and name not in params]
                self._consume_held(func, held, state)
            return
        self._held_keys(method, func, state)
        common: set[tuple] | None = None
        for callee in method.units:
            summary = self.analysis.call_summary(callee)
            mapping = self._bind_arguments(callee, True, call.args)
            parts = {(id(mapping[p]), path) for p, path in summary.params if p in mapping}
            common = parts if common is None else common & parts
            if not common:
                return
        if common is None:
            return
        receiver = func.value
        own = type(receiver) is cst.Name and receiver.value in ("self", "cls")
        label = f"'{method.units[0].name}'" if own else f"'{source_of(func)}'"
        by_id = {id(arg): arg for arg in call.args}
        for arg_id, path in sorted(common, key=lambda p: (len(p[1]), str(p[1]))):
            arg = by_id[arg_id]
            found, version = self._follow(arg.value, versions.get(arg_id), path, state)
            self.consume(version, found, label, state)

    def _held_keys(self, method: MethodCall, func: cst.Attribute, state: State) -> None:
        """`env.noise()` where every candidate method draws from `self.key`, an attribute only construction
        sets (`held_keys.kept_attributes`): each call draws from the receiver's same key."""
        common: set[str] | None = None
        for callee in method.units:
            own = {path[0] for path in _held_paths(self.index, callee, self.analysis.call_summary(callee))}
            common = own if common is None else common & own
            if not common:
                return
        self._consume_held(func, sorted(common or ()), state)

    def _consume_held(self, func: cst.Attribute, attributes: Sequence[object], state: State) -> None:
        """Consume the receiver's kept attributes (".key") that the method `func` draws from."""
        base = self.read(func.value, state) if attributes else None
        for attribute in attributes:
            if not isinstance(attribute, str) or not attribute.startswith("."):
                continue
            held = cst.Attribute(value=func.value, attr=cst.Name(attribute[1:]))
            pseudo = _chain(held)
            version = state.env.get(pseudo) if pseudo is not None else None  # assigned here: that key
            if version is None and base is not None:
                version = self.element(base, attribute, None)  # as built: the same on every call
            text = f"{source_of(func.value)}{attribute}"
            self.consume(version, func, f"'{source_of(func)}'", state, text=text)

    def _call_through(self, func: cst.BaseExpression, scope: Unit) -> list[tuple[Unit, bool]] | None:
        """`jax.jit(f)(...)` (written in `scope`): the function `f` that the outer call runs."""
        if type(func) is not cst.Call or not func.args or func.args[0].keyword is not None:
            return None
        found = self.index.transform_of(func.func, scope)
        if found is None or found[0] not in _CALL_THROUGH:
            return None
        return self.index.resolve_function(func.args[0].value, scope)

    def _bound_transform(self, func: cst.Name) -> tuple[cst.Call, Unit] | None:
        """A name bound once (in this function, or at module level when not local) to `jax.jit(...)`-like
        call: the call, and the scope it is written in."""
        unit, root = self.unit, self.index.root
        value = unit.single_assignment(func.value)
        scope = unit
        if value is None and (unit is root or func.value not in unit.local_names):
            value, scope = root.single_assignment(func.value), root
        return (value, scope) if type(value) is cst.Call else None

    def _wrapped_sampler(self, func: cst.Call) -> str | None:
        """`jax.vmap(jax.random.normal)(keys)` / `jax.vmap(partial(jax.random.normal, shape=s))(keys)`."""
        if not func.args or func.args[0].keyword is not None:
            return None
        found = self.index.transform_of(func.func, self.unit)
        if found is None or found[0] not in _CALL_THROUGH:
            return None
        inner = func.args[0].value
        if type(inner) is cst.Call and self.index.qualname(inner.func, self.unit) == "functools.partial":
            if len(inner.args) != 1 + sum(1 for a in inner.args if a.keyword is not None):
                return None  # positional arguments bound: the key is not the first one any more
            inner = inner.args[0].value
        name = self.index.qualname(inner, self.unit)
        return name if name in SAMPLERS or name == SPLIT else None

    def _apply(
        self,
        summary: Summary,
        callee: Unit,
        bound_self: bool,
        call: cst.Call,
        args: Sequence[cst.Arg],
        versions: dict[int, Version | None],
        state: State,
        mapping: dict[str, cst.Arg] | None = None,
    ) -> None:
        """Consume what the callee's summary says it consumes of the arguments it gets here."""
        label = f"'{callee.name}'"
        if mapping is None:
            mapping = self._bind_arguments(callee, bound_self, args)
        for param, path in sorted(summary.params, key=lambda p: (p[0], len(p[1]))):
            arg = mapping.get(param)
            if arg is None:
                continue
            node, version = self._follow(arg.value, versions.get(id(arg)), path, state)
            self.consume(version, node, label, state)
        for free_name, path in sorted(summary.free, key=lambda p: (p[0], len(p[1]))):
            if self._scope_of(free_name, callee.parent) is not self._scope_of(free_name, self.unit):
                continue
            version = self.lookup(free_name, state)
            for index in path:
                version = self.element(version, index, state.epoch)
            self.consume(version, call, label, state, text=_path_text(free_name, path))

    def _follow(
        self, node: cst.BaseExpression, version: Version | None, path: tuple, state: State
    ) -> tuple[cst.CSTNode, Version | None]:
        """The argument's part at `path`: through tuple literals, else through element versions."""
        for i, index in enumerate(path):
            if (type(node) is cst.Tuple or type(node) is cst.List) and isinstance(index, int):
                items = node.elements
                if any(type(e) is cst.StarredElement for e in items) or not -len(items) <= index < len(items):
                    return node, None
                node = items[index].value
                version = self.read(node, state)
                continue
            if version is None:
                return node, None
            for rest in path[i:]:
                version = self.element(version, rest, state.epoch)
            return node, version
        return node, version

    def _bind_arguments(self, callee: Unit, bound_self: bool, args: Sequence[cst.Arg]) -> dict[str, cst.Arg]:
        params = callee.params
        positional = [p.name.value for p in positional_params(params)]
        if bound_self and callee.is_method:
            positional = positional[1:]
        return _bind(positional, {p.name.value for p in params.kwonly_params}, args)

    def _scope_of(self, name: str, unit: Unit | None) -> Unit | None:
        while unit is not None:
            if unit is self.index.root or name in unit.local_names:
                return unit
            unit = unit.parent
        return None

    def _lax_loop(self, node: cst.Call, name: str, versions: dict[int, Version | None], state: State) -> None:
        functions, carry_position, param_position = _LAX_CALLS[name]
        init = argument(node, carry_position, None) if carry_position is not None else None
        if carry_position is not None and init is None:
            init = argument(node, None, "init" if name == "jax.lax.scan" else "init_val")
        for position, keyword in functions:
            arg = argument(node, position, keyword)
            if arg is None:
                continue
            for callee, bound_self in self.index.resolve_function(arg.value, self.unit):
                summary = self.analysis.call_summary(callee)
                if not summary:
                    continue
                positional = [p.name.value for p in positional_params(callee.params)]
                if bound_self and callee.is_method:
                    positional = positional[1:]
                mapping: dict[str, cst.Arg] = {}
                if init is not None and param_position < len(positional):
                    mapping[positional[param_position]] = init
                self._apply(summary, callee, bound_self, node, (), versions, state, mapping)

    def _lax_branches(
        self, node: cst.Call, name: str, versions: dict[int, Version | None], state: State
    ) -> None:
        positional = [a for a in node.args if a.keyword is None]
        if any(a.star for a in positional):
            return
        if name == "jax.lax.cond":
            functions = positional[1:3]
        else:
            branches = positional[1].value if len(positional) > 1 else None
            if not (type(branches) is cst.List or type(branches) is cst.Tuple):
                return
            functions = [cst.Arg(e.value) for e in branches.elements]
        operands = positional[3:] if name == "jax.lax.cond" else positional[2:]
        ends = []
        for function in functions:
            for callee, bound_self in self.index.resolve_function(function.value, self.unit):
                summary = self.analysis.call_summary(callee)
                if summary:
                    branch = state.copy()
                    self._apply(summary, callee, bound_self, node, operands, versions, branch)
                    ends.append(branch)
        if ends:
            joined = self.join(ends)
            assert joined is not None
            self._replace(state, joined)

    # -- lax loop bodies -----------------------------------------------------------------------------

    def _return(self, value: cst.BaseExpression, state: State) -> None:
        """In a lax loop body: a consumed carried key returned unchanged is consumed again next iteration."""
        if self.carry is None:
            return
        carry = value
        if self.carry_in_tuple:
            if type(carry) is not cst.Tuple or not carry.elements:
                return
            carry = carry.elements[0].value
        stack: list[tuple[cst.BaseExpression, tuple]] = [(carry, ())]
        while stack:
            node, path = stack.pop()
            if type(node) is cst.Tuple or type(node) is cst.List:
                if len(path) < _PATH_DEPTH and not any(type(e) is cst.StarredElement for e in node.elements):
                    stack.extend((e.value, (*path, i)) for i, e in enumerate(node.elements))
                continue
            version = self.read(node, state)
            if version is None or version.param != (self.carry, path):
                continue
            first = state.consumed.get(version)
            if first is not None:
                label = self.loop_label or ""
                self._add(KeyReuse(node, source_of(node), first.consumer, first, "carry", context=label))
