"""Key versions on one path (`keys/dataflow.py`'s walk, over the path engine of `flow/paths.py`): what a name, attribute or
literal subscript holds, joins, consumption and reuse, mutation by unknown code, assignment and expressions."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from typing import Any

import libcst as cst

from ...syntax import LEAF, children, int_literal, source_of, walk
from ..binding.index import ModuleIndex, Unit
from ..flow.paths import MAX_LOOP_DEPTH, LoopFrame, PathWalk
from .held_draws import held_reuses
from .model import (
    _ALIGNING,
    _PATH_DEPTH,
    _RANDOM,
    EPOCHS,
    Held,
    KeyReuse,
    Site,
    State,
    Version,
    _chain,
    _in_test,
    _is_pseudo,
    _single_index,
    _string_index,
)


@functools.lru_cache(maxsize=1024)
def _pseudo_node(name: str) -> cst.BaseExpression:
    """The expression a pseudo-name was made from (`keys.model._chain` writes valid Python)."""
    return cst.parse_expression(name)


# Names that are never a key (Python 3 cannot rebind them): `f(x, dropout_rng=None)` passes no key.
_CONSTANTS = frozenset({"None", "True", "False"})


class KeyVersions(PathWalk[State, Version]):
    """The key domain of one body's walk: versions, joins, consumption, assignment and expressions."""

    analysis: Any  # the module's KeyAnalysis: summaries of the functions called
    index: ModuleIndex
    unit: Unit
    is_root: bool
    initial: dict[str, Version]
    elements: dict[tuple, Version]
    derived: dict[tuple, Version]
    reuses: list[KeyReuse]
    reported: set[int]
    origins: dict[tuple, list[cst.CSTNode | Held]]
    params: list[str]
    constant_params: set[str]
    loop_label: str | None
    repeat_kind: str
    frozen: tuple[str, str, frozenset[str]] | None
    captured: tuple[frozenset[str], str] | None
    split_part: tuple[int, int] | None = None  # (id of a call, the literal index its result is read at)

    def call(self, node: cst.Call, state: State) -> Version | None:
        """A call (`keys/calls.py`)."""
        raise NotImplementedError

    def fresh(self, name: str, state: State) -> None:
        state.env[name] = Version()

    def deleted(self, name: str, state: State) -> None:
        state.env[name] = Version()
        self._drop_pseudo(name, state)

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
            return self.lookup(node.value, state) if node.value not in _CONSTANTS else None
        if (
            type(node) is cst.Attribute or type(node) is cst.Subscript
        ):  # identity: isinstance() on libcst is slow
            pseudo = _chain(node)
            if pseudo is not None and pseudo in state.env:
                return state.env[pseudo]
            base = self.read(node.value, state)
            if base is None:
                return None
            if type(node) is cst.Attribute:
                return self.element(base, "." + node.attr.value, state.epoch)
            text = _string_index(node)  # type: ignore[arg-type]  # a Subscript here (identity tests do not narrow)
            if text is not None:
                return self.element(base, ("[", text), state.epoch)
            index = int_literal(_single_index(node))  # type: ignore[arg-type]
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
            epoch = a.epoch if a.epoch == b.epoch else next(EPOCHS)
            return State(dict(a.env), consumed, epoch, {**b.forks, **a.forks})
        phis: dict[tuple[int, int], Version] = {}
        env: dict[str, Version] = {}
        sides: dict[str, tuple[Version, Version]] = {}
        for name in a.env.keys() | b.env.keys():
            if _is_pseudo(name) and (name not in a.env or name not in b.env):
                # `self.key` bound on one side only (a loop body re-binding it, against the path that skips
                # the loop): the other side holds what reading it there gives. Dropped, it would be read
                # again in the joined state: the version from before the loop, which only the side that
                # replaced it consumed (a reuse on no path).
                va, vb = (
                    a.env.get(name) or self._read_pseudo(name, a),
                    b.env.get(name) or self._read_pseudo(name, b),
                )
                if va is None or vb is None:
                    continue  # forget it: it is read structurally again
            else:
                va = a.env.get(name) or self.initial_of(name)
                vb = b.env.get(name) or self.initial_of(name)
            if va is vb:
                env[name] = va
                continue
            sides[name] = (va, vb)
            phi = phis.get((id(va), id(vb)))
            if phi is None:
                phi = Version(immutable=va.immutable and vb.immutable)
                phis[(id(va), id(vb))] = phi
            env[name] = phi
        consumed = dict(a.consumed)
        for version, site in b.consumed.items():
            consumed.setdefault(version, site)
        # A merged version is consumed when the version it held on some side was consumed on that side.
        for name, (va, vb) in sides.items():
            version = env[name]
            if version in consumed:
                continue
            found = a.consumed.get(va) or b.consumed.get(vb)
            if found is not None:
                consumed[version] = found
        epoch = a.epoch if a.epoch == b.epoch else next(EPOCHS)
        return State(env, consumed, epoch, {**b.forks, **a.forks})

    def _read_pseudo(self, name: str, state: State) -> Version | None:
        """What reading the pseudo-name `self.key` / `d['k']` gives in `state` (`read`, from its text)."""
        return self.read(_pseudo_node(name), state)

    # -- consumption ---------------------------------------------------------------------------------

    def consume(
        self,
        version: Version | None,
        node: cst.CSTNode,
        consumer: str,
        state: State,
        text: str | None = None,
        noise: bool = False,
        part: int | None = None,
        held: Held | None = None,
    ) -> None:
        """`noise`: a library API that draws noise from the key (the table's `Api.noise`), judged in a mapped
        function as jax.random's samplers are. `part`: only that literal item of the key's split is used
        (`split(k)[part]`). `held`: the call of a method drawing from keys its receiver keeps as built."""
        if version is None:
            return
        text = text if text is not None else source_of(node)
        version.immutable = True
        loops = tuple((id(loop.node), round_) for loop, round_ in self.loops)
        site = Site(node, consumer, loops, None if part is None else frozenset((part,)))
        first = state.consumed.get(version)
        if first is not None:
            if part is not None and first.parts is not None and part not in first.parts:
                # Another subkey of the same split: no key is drawn from twice.
                state.consumed[version] = dataclasses.replace(first, parts=first.parts | {part})
                return
            self._report(node, text, consumer, first, loops, held)
            return
        state.consumed[version] = site
        if version.param is not None:
            origins = self.origins.setdefault(version.param, [])
            origin = held if held is not None else node
            if not any(o is origin for o in origins):
                origins.append(origin)
        frozen = self.frozen
        if frozen is not None and version.param is not None and version.param[0] == frozen[0]:
            path = version.param[1]
            if len(path) == 1 and isinstance(path[0], str) and path[0][1:] in frozen[2]:
                self._add(KeyReuse(node, text, consumer, site, "frozen", context=frozen[1]))
        captured = self.captured
        if (
            captured is not None
            and version.param == (version.root, ())
            and version.root in captured[0]
            and version.root not in self.unit.local_names
        ):
            self._add(KeyReuse(node, text, consumer, site, "captured", context=captured[1]))
        if self.loop_label is not None and version.root is not None:
            if (
                self.repeat_kind != "mapped"
                or noise
                or consumer.startswith(_RANDOM)
                and consumer not in _ALIGNING
            ):
                self._add(KeyReuse(node, text, consumer, site, self.repeat_kind, context=self.loop_label))
        elif version.seed is not None and not self.is_root and not _in_test(self.unit):
            if self.loop_label is not None:
                self._add(KeyReuse(node, text, consumer, site, "seed", context=self.loop_label))
            else:
                caller_loop = self.analysis.loop_call(self.unit)
                if caller_loop is not None:
                    context = f"'{self.unit.name}'"
                    self._add(KeyReuse(node, text, consumer, site, "seed", loop=caller_loop, context=context))

    def _report(
        self, node: cst.CSTNode, text: str, consumer: str, first: Site, loops: tuple, held: Held | None = None
    ) -> None:
        carried_by = None
        for loop_id, round_ in loops:
            if round_ == 2 and (loop_id, 1) in first.loops:
                carried_by = loop_id
                break
        loop = None
        if carried_by is not None:
            loop = next(loop.node for loop, _ in self.loops if id(loop.node) == carried_by)
        found = held_reuses(self.analysis, node, consumer, first, loop, held) if held is not None else []
        for reuse in found:  # at the draws in the method, or left to another module's (`keys/held_draws.py`)
            self._add(reuse)
        if found:
            return
        if loop is not None:
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
        state.epoch = next(EPOCHS)
        for name in [n for n in state.env if "." in n or "[" in n]:  # _is_pseudo, inline: env can be large
            del state.env[name]

    def mutated(self, name: str, state: State, pseudo: bool = True) -> None:
        """The object `name` holds may have changed in place (list item set, unknown method called).
        `pseudo=False`: the state holds no attribute or item versions to drop (`forget_attributes` just ran)."""
        old = self.lookup(name, state)
        if old.immutable:
            return
        new = Version(param=old.param, root=old.root)  # the same object, with contents that may differ
        env = state.env
        for other in [other for other, version in env.items() if version is old]:
            env[other] = new
        env[name] = new
        if pseudo:
            self._drop_pseudo(name, state)

    @staticmethod
    def _drop_pseudo(base: str, state: State) -> None:
        prefixes = (base + ".", base + "[")
        for name in [n for n in state.env if n.startswith(prefixes)]:
            del state.env[name]

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

    def expr(self, node: Any, state: State) -> Version | None:
        """Evaluate in order (consuming keys on the way); the version of the value when it is known."""
        # Type identity, not isinstance(): libcst's ABCs make a failed isinstance() slow (none is subclassed).
        kind = type(node)  # read once (`node` is `Any`: the checker does not narrow on `kind is X`)
        if kind is cst.Name:
            return self.lookup(node.value, state) if node.value not in _CONSTANTS else None
        if kind is cst.Call:
            return self.call(node, state)
        if LEAF[kind]:  # a literal: nothing to evaluate (what the last line answers, sooner)
            return None
        if kind is cst.Attribute or kind is cst.Subscript:
            if kind is cst.Subscript and type(node.value) is cst.Call:
                index = int_literal(_single_index(node))
                if index is not None and index >= 0:
                    self.split_part = (id(node.value), index)  # `split(k)[0]`: `call` reads it
            pseudo = _chain(node)
            if pseudo is None or pseudo not in state.env:
                self.expr(node.value, state)
            if kind is cst.Subscript:
                for element in node.slice:
                    self.expr(element.slice, state)
            return self.read(node, state)
        if kind is cst.Lambda or kind is cst.FunctionDef:
            if kind is cst.Lambda:
                self.defaults(node.params, state)
            return None
        if kind is cst.IfExp:
            self.expr(node.test, state)
            other = state.copy()
            first = self.expr(node.body, state)
            second = self.expr(node.orelse, other)
            joined = self.join([state, other])
            assert joined is not None
            self._replace(state, joined)
            return first if first is second else None
        if kind is cst.BooleanOperation:
            self.expr(node.left, state)
            other = state.copy()
            self.expr(node.right, other)
            joined = self.join([state, other])
            assert joined is not None
            self._replace(state, joined)
            return None
        if kind is cst.ListComp or kind is cst.SetComp or kind is cst.GeneratorExp or kind is cst.DictComp:
            self.comprehension(node, state)
            return None
        if kind is cst.NamedExpr:
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
        rounds = 2 if len(self.loops) < MAX_LOOP_DEPTH else 1
        head: State | None = entry
        frame: LoopFrame[State] = LoopFrame(node)
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
