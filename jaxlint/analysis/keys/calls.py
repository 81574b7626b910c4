"""Calls in the key dataflow (`keys/dataflow.py`'s walk): `jax.random` samplers, `split` and `fold_in`, lax loops, flax
and haiku `init`, library APIs that consume keys (`semantics/library.py`), calls of known functions (`keys/callees.py`),
and unknown code, which may change attributes and the lists it is given."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from ...syntax import argument, int_literal, source_of
from ..kinds import LINEN
from ..objects.held import self_class
from ..objects.held_fields import field_method_call, held_chain
from ..objects.instances import (
    haiku_transformed,
    imported_haiku,
    method_call,
    module_class_kind,
    parameter_method_call,
)
from ..objects.pytrees import pytree_model
from ..semantics.library import (
    FIRST_ORDER_PREFIXES,
    HIGHER_ORDER_ARRAY_FUNCTIONS,
    KEY_CONSUMING_APIS,
    KEY_DICT_KEYWORDS,
)
from ..summaries.call_targets import call_targets
from .callees import KeyCallees
from .library_methods import called_object_places, key_method_places
from .model import (
    _IMPURE_BUILTINS,
    _LAX_BRANCHES,
    _LAX_CALLS,
    _LIBRARY_KEY_METHODS,
    _LINEN_INITS,
    _PURE_METHODS,
    _PURE_PREFIXES,
    _RANDOM,
    _SEEDED,
    FOLD_IN,
    KEY_MAKERS,
    SAMPLERS,
    SPLIT,
    KeyReuse,
    Site,
    State,
    Version,
    _literal,
    _split_count,
    imported_consumer,
)
from .none_guards import call_facts, with_mapped_facts


class KeyCalls(KeyCallees):
    """What each call consumes and gives."""

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
        if (
            name is not None
            and name.startswith(FIRST_ORDER_PREFIXES)
            and name not in _IMPURE_BUILTINS
            and name not in KEY_CONSUMING_APIS
            and name.rpartition(".")[2] not in HIGHER_ORDER_ARRAY_FUNCTIONS
        ):
            return None  # `jnp.sum(x)`, `math.sqrt(n)`: a new value; nothing consumed, nothing changed, no callee

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

        method = None
        if type(func) is cst.Attribute:  # `self.detector.sample(x)`: a field's class, when it keeps it
            method = (
                method_call(self.index, func, self.unit)
                or field_method_call(self.index, func, self.unit)
                or parameter_method_call(self.index, func, self.unit)  # `dist.sample(key)`: what callers pass
            )
        callees = (
            []
            if method is not None or type(func) is cst.Call
            else self.index.resolve_function(func, self.unit)
        )
        if method is not None:  # `self.m(key)`, `env.reset(key)`: the class's method (and its overrides)
            assert type(func) is cst.Attribute  # method_call answers only for attributes
            self._apply_method(method, func, node, arg_versions, state)
        elif (type(func) is cst.Name or type(func) is cst.Attribute) and not callees:
            # `model(x)` of a project class's instance, `self.block(x)` of a field holding one: `__call__`
            looked_up = cst.Attribute(value=func, attr=cst.Name("__call__"))
            if type(func) is cst.Name:
                method = method_call(self.index, looked_up, self.unit)
            else:
                method = field_method_call(self.index, looked_up, self.unit)
            if method is not None:
                self._apply_method(method, looked_up, node, arg_versions, state, at=func)
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
        args: Sequence[cst.Arg] = node.args
        if method is None and through is None and not callees:
            # `partial(f, a)(key)`, `OPS["f"](key)`, `fn(key)` with `fn` passed a function: what it runs
            callees, args = call_targets(self.index, node, self.unit)
        if len(callees) > 1:  # defs joined (`if`/`else` at module level): one call runs one of them
            summaries = {self.analysis.call_summary(callee) for callee, _ in callees}
            callees = callees[:1] if len(summaries) == 1 else []
        for callee, bound_self in callees:
            facts = call_facts(callee, bound_self, args)
            if through and type(transformed) is cst.Call:  # (a map that shows an argument not None)
                facts = with_mapped_facts(facts, callee, bound_self, transformed, scope, self.index)
            summary = self.analysis.call_summary(callee, facts)
            if summary:
                self._apply(summary, callee, bound_self, node, args, arg_versions, state)
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
        """Keys a library API consumes, as the table (`semantics/library.py`) says: `handlers.seed(model, key)`,
        `dist.Normal(0, 1).sample(key)`, `model.apply(x, rngs={"dropout": key})`."""
        func = node.func
        api = KEY_CONSUMING_APIS.get(name) if name is not None else None
        places: list[tuple[int | None, str]] = list(api.keys) if api is not None else []
        if api is None:  # `dropout(x, key=k)` of a library object that draws when called
            places += called_object_places(self.index, func, self.unit)
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
                self.consume(version, arg.value, consumer, state, noise=api is not None and api.noise)

    def _random_call(self, node: cst.Call, name: str, versions: dict[int, Version | None], state: State):
        key_arg = argument(node, 0, "key")
        key = versions.get(id(key_arg)) if key_arg is not None else None
        if name in SAMPLERS or name == SPLIT:
            if key_arg is not None:
                part = None
                if name == SPLIT and key is not None:
                    self._split_and_folded(key, key_arg.value, True, _split_count(node), state)
                    if self.split_part is not None and self.split_part[0] == id(node):
                        part = self.split_part[1]
                self.consume(key, key_arg.value, name, state, part=part)
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
            if name in _SEEDED and key_arg is not None:
                cls = self_class(self.index, key_arg.value, self.unit)
                path = ("." + key_arg.value.attr.value,) if type(key_arg.value) is cst.Attribute else ()
                if cls is not None and held_chain(self.index, cls, path):
                    # `jax.random.key(self._seed)` of a seed the object keeps as built: one key on every call,
                    # the seed's own version (a held key, as `self.key` is: `_held_paths`)
                    return self.read(key_arg.value, state)
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
        module defines (`objects.instances.module_class_kind`); only an instance built right there or bound once in
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
