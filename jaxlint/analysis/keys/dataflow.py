"""PRNG key dataflow: which key values each execution path consumes, flow-sensitively (JAX301).

The model. Every value a name (or `self.attr`, `d["k"]`, `keys[0]`) holds is a `Version`: a key's identity.
Sampling (`jax.random.normal(key, ...)`) and `jax.random.split(key)` *consume* the version they are given;
`split` then returns fresh keys, `fold_in`/`clone`/`key`/`PRNGKey`/`wrap_key_data` only make fresh ones, and
`key_data` or storing a key in a pytree does nothing. Consuming a version that is already consumed on some
path reaching this point is a reuse. Re-binding a name (`key, sub = split(key)`) gives it a new version, so
only the values matter, never the names.

Per path the state is `State`: the version each name holds and the versions consumed so far (with where).
At joins the consumed facts are united (may-reuse); a name bound to different versions on the two sides gets
a merged version, consumed when the version it held on some side was consumed on that side (an attribute or
entry bound on one side only holds, on the other, what reading it there gives: a loop body re-splitting
`self.key` against the path that skips the loop). `return`,
`raise`, `break` and `continue` end their path; a loop body is walked twice, the second time from the join
of the entry with the end of the first round, which finds reuse carried from one iteration to the next.

Across functions: a function's `Summary` says which of its parameters (and closed-over names) it may consume;
a call of a same-module function consumes the caller's arguments accordingly, also through `jax.jit(f)(...)`,
`lax.scan(f, init, ...)` and friends. A method call is such a call when the receiver's class is known
(`objects.instances.method_call`: `self`, an object built by `Env(...)`, a parameter annotated with a class); where the
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

import libcst as cst

from ...syntax import argument, own_nodes
from ..binding.index import ModuleIndex, Unit
from ..binding.loops import runs_at_least_once
from ..binding.transforms import positional_params
from ..objects.held import frozen_attributes, returned_compiled
from ..objects.instances import local_method_units
from ..semantics.library import PARTIAL
from ..summaries.call_targets import transparent_decorator
from .calls import KeyCalls
from .held_draws import repeated_draws
from .model import (
    _CARRIES_IN_TUPLE,
    _MAPPING_LABELS,
    _TRANSPARENT_DECORATORS,
    _TREE_MAPS,
    LOOP_BODIES,
    State,
    Summary,
    UnitResult,
    _held_paths,
)
from .model import RECEIVER as RECEIVER
from .model import SAMPLERS as SAMPLERS  # re-exported: the public names of the key dataflow
from .model import KeyReuse as KeyReuse
from .model import imported_consumer as imported_consumer
from .model import key_path as key_path
from .model import path_json as path_json
from .none_guards import Facts, decide_none_test
from .relevance import uses_keys


class KeyAnalysis:
    """The key dataflow of one module, function by function, computed on demand and cached."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._results: dict[int, UnitResult] = {}
        self._running: set[int] = set()
        self._assumed: dict[tuple[int, Facts], Summary] = {}  # summaries of calls showing None-ness
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
            walk = _UnitWalk(self, unit)
            mapped = walk.mapped_facts
            result = walk.run()
            if mapped:  # the reuses of the mapped calls, with what the mapping shows; the summary without
                walk = _UnitWalk(self, unit)
                walk.facts = dict(mapped)
                result = UnitResult(walk.run().reuses, result.summary, result.origins)
        except RecursionError:
            result = UnitResult([], Summary())
        finally:
            self._running.discard(id(unit))
        self._results[id(unit)] = result
        return result

    def reuses(self, unit: Unit) -> list[KeyReuse]:
        return self.result(unit).reuses

    def repeated_draws(self) -> list[KeyReuse]:
        """Draws of kept keys that other modules' calls repeat (`keys/held_draws.py`)."""
        return repeated_draws(self)

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
                        and index.qualname(function.func, scope) == PARTIAL
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

    def call_summary(self, unit: Unit, facts: Facts = ()) -> Summary:
        """The summary that holds for a call of `unit` by name: none when an unknown decorator wraps it. With
        `facts` (`keys.none_guards.call_facts`: which parameters the call shows None or not), of the walk that
        decides the callee's `is None` tests on them."""
        node = unit.node
        if type(node) is cst.FunctionDef:
            for decorator in node.decorators:
                if not self._transparent(decorator.decorator, unit.parent or self.index.root):
                    return Summary()
        general = self.summary(unit)
        if not facts or not general:
            return general
        key = (id(unit), facts)
        found = self._assumed.get(key)
        if found is None:
            self._assumed[key] = general  # a recursive call meanwhile gets the general summary
            running = id(unit) in self._running
            self._running.add(id(unit))
            try:
                walk = _UnitWalk(self, unit)
                walk.facts = dict(facts)
                found = walk.run().summary
            except RecursionError:
                found = general
            finally:
                if not running:
                    self._running.discard(id(unit))
            self._assumed[key] = found
        return found

    def _transparent(self, decorator: cst.BaseExpression, scope: Unit) -> bool:
        """Decorators that call the function with the arguments it is given, in order."""
        if type(decorator) is cst.Name and decorator.value in ("staticmethod", "classmethod"):
            return True
        if self.index.imports.qualname(decorator) in _TRANSPARENT_DECORATORS:
            return True
        if self.index.transform_of(decorator, scope) is not None:
            return True
        return transparent_decorator(self.index, decorator, scope)  # a wrapper made with functools.wraps


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


def _parameter_slots(unit: Unit) -> dict[str, object]:
    """A method's parameters after `self` by what a call fills them from: position, or keyword only."""
    positional = [p.name.value for p in positional_params(unit.params)]
    if unit.is_method:
        positional = positional[1:]
    slots: dict[str, object] = {name: i for i, name in enumerate(positional)}
    slots.update({p.name.value: p.name.value for p in unit.params.kwonly_params})
    return slots


def analyze_module(index: ModuleIndex) -> dict[str, list[KeyReuse]]:
    """Every unit's reuses, by unit qualname ("" for the module body): for tests and --verify."""
    analysis = KeyAnalysis(index)
    out = {"": analysis.reuses(index.root)}
    for unit in index.units.values():
        out[unit.qualname] = analysis.reuses(unit)
    return out


class _UnitWalk(KeyCalls):
    """The walk over one function body (or the module body)."""

    def __init__(self, analysis: KeyAnalysis, unit: Unit) -> None:
        self.analysis = analysis
        self.index = analysis.index
        self.unit = unit
        self.is_root = unit is self.index.root
        self.initial = {}
        self.elements = {}
        self.derived = {}
        self.reuses = []
        self.reported = set()
        self.origins = {}
        self.loops = []
        self.exits = []
        self.params = []
        self.constant_params = set()
        self.loop_label = None  # set for lax loop bodies, vmapped functions and tree.map callbacks
        self.repeat_kind = "closure"  # what a closed-over key consumed there is: "closure" (lax) or "mapped"
        self.carry = None  # the carry parameter of a lax loop body
        self.carry_in_tuple = False  # scan bodies return (carry, y)
        self.facts: dict[str, bool] = {}  # parameters a call shows None (True) or not (`call_summary`)
        # Parameters the mapping shows not None (`StaticSpec.never_none`): decided for the walk of the mapped
        # function's own reuses, not for its summary (a direct call may pass None there).
        self.mapped_facts: dict[str, bool] = {}
        # A method kept compiled as a bound method: (`self`'s name, the label, the attributes advanced elsewhere)
        self.frozen: tuple[str, str, frozenset[str]] | None = None
        # A compiled closure its factory returns: (the factory's parameters, a label naming the closure)
        self.captured: tuple[frozenset[str], str] | None = None
        self._setup()

    # -- setup ---------------------------------------------------------------------------------------

    def _setup(self) -> None:
        node = self.unit.node
        if not (type(node) is cst.FunctionDef or type(node) is cst.Lambda):
            return
        params = node.params
        positional = [p.name.value for p in positional_params(params)]
        self.params = [*positional, *(p.name.value for p in params.kwonly_params)]
        if self.unit.is_method and self.unit.class_node is not None and positional:
            found = frozen_attributes(self.index, self.unit.class_node, self.unit.name)
            if found is not None:
                self.frozen = (positional[0], f"{found[0]} '{self.unit.name}'", found[1])
        factory = returned_compiled(self.index, self.unit)
        if factory is not None:
            outer = factory[0].params
            names = frozenset(p.name.value for p in [*positional_params(outer), *outer.kwonly_params])
            self.captured = (names, f"{factory[1]} '{self.unit.name}' (returned by '{factory[0].name}')")
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
                self.carry_in_tuple = app.label in _CARRIES_IN_TUPLE
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
            # The argument mapped alone holds an array: `if u is None:` on it is dead (flashbax's sample), where
            # every mapping of the function says so.
            apps = [a for a in self.unit.applications if a.label in _MAPPING_LABELS]
            never = set.intersection(*({a.bound_positional + i for i in a.spec.never_none} for a in apps))
            self.mapped_facts = {positional[i]: False for i in sorted(never) if i < len(positional)}

    def runs_once(self, node: cst.For | cst.While) -> bool:
        return runs_at_least_once(node, self.unit)

    def decide(self, test: cst.BaseExpression, state: State) -> bool | None:
        """`if P is None:` on a parameter the call shows None or not, while `P` holds what the call passed."""
        if not self.facts:
            return None
        return decide_none_test(
            test, self.facts, lambda name: self.lookup(name, state) is self.initial_of(name)
        )

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
            self.returned(node.body, state)
            end = state
        if end is not None:
            self.exits.append(end)
        return UnitResult(self.reuses, self._summary(), self.origins)

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
