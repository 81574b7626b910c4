"""What a call of a known function does to the keys it is given (`keys/dataflow.py`'s walk): its summary applied to the
arguments, through methods, other project modules' exports, `jax.jit(f)(...)` and lax loops and branches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import libcst as cst

from ...syntax import argument, source_of
from ..binding.index import Unit
from ..binding.transforms import positional_params
from ..objects.instances import (
    MethodCall,
)
from ..semantics.library import PARTIAL
from .held_draws import hands_back
from .model import (
    _CALL_THROUGH,
    _LAX_CALLS,
    _PATH_DEPTH,
    RECEIVER,
    SAMPLERS,
    SPLIT,
    Held,
    KeyReuse,
    State,
    Summary,
    Version,
    _bind,
    _chain,
    _held_paths,
    _path_text,
    imported_consumer,
    key_path,
)
from .none_guards import call_facts
from .versions import KeyVersions


class KeyCallees(KeyVersions):
    """Calls of functions whose summaries are known: same-module defs and methods, exports, lax bodies."""

    carry: str | None
    carry_in_tuple: bool

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
        at: cst.CSTNode | None = None,
    ) -> None:
        """Consume what every candidate of a method call consumes: the class's method and, when the receiver
        may be a subclass instance (`self`, an annotated parameter), each same-module override. Only what all
        of them consume counts (an override that draws nothing, or an abstract method, makes the call draw
        nothing); overrides in other modules are not known. `at`: where a held key's reuse is reported
        (`func` when written: `model(x)` is looked up as `model.__call__`)."""
        if method.target is not None:
            export = imported_consumer(self.index, method.target)
            if export is not None:
                self._apply_export(export, func, call, versions, state)
                params = {*export.positional, *export.keyword_only}
                held = sorted(
                    key_path(path) for name, path in export.keys if name == RECEIVER and name not in params
                )
                self._consume_held(func, held, state, at, (), method.target, export.hands_back)
            return
        self._held_keys(method, func, state, at)
        common: set[tuple] | None = None
        for callee in method.units:
            summary = self.analysis.call_summary(callee, call_facts(callee, True, call.args))
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

    def _held_keys(
        self, method: MethodCall, func: cst.Attribute, state: State, at: cst.CSTNode | None = None
    ) -> None:
        """`env.noise()` where every candidate method draws from `self.key`, an attribute only construction
        sets (`objects.held.kept_attributes`): each call draws from the receiver's same key."""
        common: set[tuple] | None = None
        for callee in method.units:
            own = _held_paths(self.index, callee, self.analysis.call_summary(callee))
            common = own if common is None else common & own
            if not common:
                return
        units = tuple(method.units)
        self._consume_held(func, sorted(common or ()), state, at, units, handed=hands_back(self.index, units))

    def _consume_held(
        self,
        func: cst.Attribute,
        paths: Sequence[tuple],
        state: State,
        at: cst.CSTNode | None = None,
        units: tuple[Unit, ...] = (),
        target: str | None = None,
        handed: bool = False,
    ) -> None:
        """Consume the receiver's kept attributes ((".key",), (".detector", ".key")) that the method `func` draws
        from: `units`, this module's candidates, or `target`, another project module's method (`handed`: it
        returns the key it advanced)."""
        base = self.read(func.value, state) if paths else None
        for path in paths:
            if not path or not all(isinstance(p, str) and p.startswith(".") for p in path):
                continue
            held: cst.BaseExpression = func.value
            for attribute in path:
                held = cst.Attribute(value=held, attr=cst.Name(attribute[1:]))
            pseudo = _chain(held)
            version = state.env.get(pseudo) if pseudo is not None else None  # assigned here: that key
            if version is None and base is not None:
                version = base
                for attribute in path:
                    version = self.element(version, attribute, None)  # as built: the same on every call
            text = f"{source_of(func.value)}{''.join(path)}"
            how = Held(units, path, target, handed)
            self.consume(version, at or func, f"'{source_of(at or func)}'", state, text=text, held=how)

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
        if type(inner) is cst.Call and self.index.qualname(inner.func, self.unit) == PARTIAL:
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
        flow = _LAX_CALLS[name]
        init = None
        if flow.init is not None:
            init = argument(node, flow.init[0], None) or argument(node, None, flow.init[1])
        param_position = flow.carry_param
        for position, keyword in flow.bodies:
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
                if init is not None and param_position is not None and param_position < len(positional):
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

    def returned(self, value: cst.BaseExpression, state: State) -> None:
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
