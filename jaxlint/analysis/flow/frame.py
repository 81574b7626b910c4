"""The frame of the flow walk (`flow/walk.py`): one function, comprehension or the module being walked, with each
local name's abstract value (`values.abstract.Value`) as it is at the point the walk has reached. Rules see it as
`ctx`: it answers "is this traced?" (`values.flags.evaluate`) and binds what assignments and loops bind."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import COMPREHENSIONS, bound_names
from ..binding.index import ModuleIndex, Unit
from ..kinds import HOLDS_TRACED, HOST, STRICT, TRACED
from ..values.abstract import INSTANCES, MUTABLE, NOTHING, Value, join, plain
from ..values.containers import changed_names
from ..values.flags import (
    STRUCTURED,
    element_flags,
    element_values,
    evaluate,
    key_value_flags,
    structure,
    value_of,
)
from ..values.wide_dtypes import loop_dtype


class Frame:
    """One function (or comprehension, or the module) being walked: the rules' view of the analysis."""

    def __init__(self, walker: Any, unit: Unit, parent: Frame | None, kind: int, context: str) -> None:
        self.walker = walker  # the FlowWalker: its index, and where reports go
        self.index: ModuleIndex = walker.index  # an attribute, not a property: rules read it on every hook
        self.unit = unit
        self.parent = parent
        self.kind = kind  # transforms.NONE / GRAD / STRICT / HOST
        self.context = context  # "jax.jit-compiled 'step'", for messages
        # JAX stages the body out (jit, lax bodies): every jnp result is a tracer. False in an eager vmap's body
        # (FlowWalker._stages), where only values computed from the mapped arguments are.
        self.staged = kind >= STRICT
        self.env: dict[str, Value] = {}  # each local name's value (`values/abstract.py`): flags and structure
        self.own_names: set[str] | None = None  # comprehension targets; None for a function's frame
        self.declared_global: set[str] = set()
        self._named: cst.CSTNode | None = None  # the node `qualname` last answered for, and its answer
        self._name: str | None = None

    # -- queries for rules ------------------------------------------------------------------------------

    @property
    def function(self) -> str | None:
        return self.unit.qualname or None

    def flags(self, node: cst.BaseExpression) -> int:
        return evaluate(node, self)

    def traced(self, node: cst.BaseExpression) -> bool:
        return bool(evaluate(node, self) & TRACED)

    def value(self, node: cst.BaseExpression) -> Value:
        return value_of(node, self)

    def qualname(self, node: cst.BaseExpression) -> str | None:
        # Most rules ask for the name of the same call's function in turn: the last answer is kept.
        if node is self._named:
            name = self._name
        else:
            name = self.index.qualname(node, self.unit)
            self._named, self._name = node, name
        if name is None and type(node) is cst.Attribute:
            return self._module_member(node)
        return name

    def _module_member(self, node: cst.Attribute) -> str | None:
        """`xp.any` of a local name bound to a known module on this path (`xp = array_namespace(x)` of JAX
        arrays: `values.flags._namespace`), qualified as that module's member; None otherwise."""
        base = node.value
        if type(base) is cst.Name:
            held = self.lookup_value(base.value)
            prefix = held.literal if held.kind == "module" and type(held.literal) is str else None
        elif type(base) is cst.Attribute:
            prefix = self._module_member(base)
        else:
            prefix = None
        return f"{prefix}.{node.attr.value}" if prefix is not None else None

    def is_module_global(self, name: str) -> bool:
        """Whether `name` here refers to a module-level binding (declared global, or not bound locally)."""
        frame: Frame | None = self
        while frame is not None and frame.own_names is not None:
            if name in frame.own_names:
                return False
            frame = frame.parent
        if frame is None or frame.unit is self.index.root:
            return True
        if name in frame.declared_global:
            return True
        return name not in frame.unit.local_names

    def report(self, rule: Any, node: cst.CSTNode, message: str, fix: Any = None) -> None:
        self.walker.emit(rule, node, message, self, fix)

    # -- the Scope protocol used by values.evaluate ------------------------------------------------------

    def lookup(self, name: str) -> int:
        found = self.env.get(name)  # the common case first: bound in this frame on this path
        return found.flags if found is not None else self.lookup_value(name).flags

    def lookup_value(self, name: str) -> Value:
        found = self.env.get(name)
        if found is not None:
            return found
        if self.own_names is None and self.unit is not self.index.root and name in self.unit.local_names:
            if name not in self.declared_global:
                return NOTHING  # a local not bound yet on this path
        if self.parent is None:
            return NOTHING
        found = self.parent.lookup_value(name)
        if self.kind == HOST and (found.flags & TRACED or found.items is not None):
            return plain(found.flags & ~TRACED)  # a host callback sees concrete values, whatever held them
        return found

    def comprehension(self, node: cst.BaseExpression) -> Frame:
        frame = Frame(self.walker, self.unit, self, self.kind, self.context)
        frame.own_names = set()
        frame.staged = self.staged
        # values.Scope's signature is wider than its callers (type identity: isinstance() on libcst's types is slow)
        assert type(node) in _COMPREHENSIONS
        first: cst.CompFor | None = node.for_in  # type: ignore[attr-defined]
        for_in = first
        while for_in is not None:
            names = bound_names(for_in.target)
            frame.own_names.update(names)
            frame.bind_iteration(
                for_in.target, for_in.iter, evaluate_in=frame if for_in is not first else self
            )
            for_in = for_in.inner_for_in
        return frame

    # -- binding -----------------------------------------------------------------------------------------

    def bind(self, target: cst.BaseExpression, flags: int, value: cst.BaseExpression | None = None) -> None:
        if type(target) is cst.Name:
            held = structure(value, self, flags) if value is not None and type(value) in STRUCTURED else None
            if held is not None and held.kind in MUTABLE and self.changes(target.value):
                held = None  # a list or dict that something may change: its entries are not known
            self.env[target.value] = held if held is not None and held.flags == flags else plain(flags)
        elif type(target) is cst.Tuple or type(target) is cst.List:
            elements = target.elements
            if (
                (type(value) is cst.Tuple or type(value) is cst.List)
                and len(value.elements) == len(elements)
                and not any(type(e) is cst.StarredElement for e in (*elements, *value.elements))
            ):
                for element, item in zip(elements, value.elements, strict=True):
                    self.bind(element.value, evaluate(item.value, self), item.value)
                return
            held = structure(value, self) if value is not None and type(value) in STRUCTURED else None
            items = element_values(held, len(elements)) if held is not None else None
            if items is not None and not any(type(e) is cst.StarredElement for e in elements):
                for element, part in zip(elements, items, strict=True):  # `x, n = pair`: each its own
                    self.bind_value(element.value, part)
                return
            for element in elements:
                self.bind(element.value, element_flags(flags))
        elif type(target) is cst.StarredElement:
            self.bind(target.value, HOLDS_TRACED if flags & (TRACED | HOLDS_TRACED) else 0)
        elif type(target) is cst.Attribute and type(target.value) is cst.Name:
            self._store_field(target.value.value, target.attr.value, flags, value)

    def _store_field(self, name: str, field: str, flags: int, value: cst.BaseExpression | None) -> None:
        """`obj.f = v` on an instance known field by field (`values/abstract.py`'s "object"): `f` holds `v` now."""
        held = self.env.get(name)
        if held is None or held.keys is None or held.items is None or held.kind not in INSTANCES:
            return
        new = structure(value, self, flags) if value is not None and type(value) in STRUCTURED else None
        if new is None or new.flags != flags or new.kind in MUTABLE:
            new = plain(
                flags
            )  # a list or dict put in a field can change through it: its entries are not kept
        keys, items = list(held.keys), list(held.items)
        if field in keys:
            items[keys.index(field)] = new
        else:
            keys.append(field)
            items.append(new)
        holds = any(item.flags & (TRACED | HOLDS_TRACED) for item in items)
        self.env[name] = Value(
            HOLDS_TRACED if holds else 0,
            held.kind,
            items=tuple(items),
            keys=tuple(keys),
            definition=held.definition,
        )

    def bind_value(self, target: cst.BaseExpression, value: Value) -> None:
        """Bind a target to a value known with its structure (an element of an unpacked tuple)."""
        if type(target) is cst.Name:
            keep = value.kind not in MUTABLE or not self.changes(target.value)
            self.env[target.value] = value if keep else plain(value.flags)
            return
        items = (
            element_values(value, len(target.elements))
            if type(target) is cst.Tuple or type(target) is cst.List
            else None
        )
        if items is not None and not any(type(e) is cst.StarredElement for e in target.elements):  # type: ignore[attr-defined]
            for element, item in zip(target.elements, items, strict=True):  # type: ignore[attr-defined]
                self.bind_value(element.value, item)
        else:
            self.bind(target, value.flags)

    def changes(self, name: str) -> bool:
        """Whether some use of `name` in this function may change the list or dict it holds (`values/containers.py`)."""
        return self.own_names is not None or name in changed_names(self.index, self.unit.node)

    def bind_iteration(
        self, target: cst.BaseExpression, iterable: cst.BaseExpression, evaluate_in: Frame
    ) -> None:
        """Bind a `for` target from what iterating `iterable` yields."""
        name = evaluate_in.qualname(iterable.func) if type(iterable) is cst.Call else None
        if name == "builtins.range":
            self.bind(target, 0)
            return
        if type(iterable) is cst.Name and evaluate_in.lookup_value(iterable.value).kind == "dict":
            self.bind(target, 0)  # a dict's keys: never tracers (tracers are unhashable)
            return
        pairs = key_value_flags(iterable, evaluate_in)  # `for k, v in d.items()`: keys are never traced
        if (
            pairs is not None
            and (type(target) is cst.Tuple or type(target) is cst.List)
            and len(target.elements) == 2
        ):
            for element, flags in zip(target.elements, pairs, strict=True):
                self.bind(element.value, flags)
            return
        if type(iterable) is cst.Call and name in ("builtins.enumerate", "builtins.zip") and iterable.args:
            iterated = [a.value for a in iterable.args if a.keyword is None]
            items = [element_flags(evaluate(a, evaluate_in)) for a in iterated]
            if name == "builtins.enumerate":
                items, iterated = [0, items[0]], [None, iterated[0]]  # type: ignore[list-item]
            if (type(target) is cst.Tuple or type(target) is cst.List) and len(target.elements) == len(items):
                for element, flags, each in zip(target.elements, items, iterated, strict=True):
                    literal = _literal_items(each) if each is not None else None
                    if literal is not None:
                        self._bind_items(element.value, literal, evaluate_in)
                    else:
                        self.bind(element.value, flags)
                return
            self.bind(target, HOLDS_TRACED if any(f & TRACED for f in items) else 0)
            return
        literal = _literal_items(iterable)
        if literal is not None and (type(target) is cst.Tuple or type(target) is cst.List):
            self._bind_items(target, literal, evaluate_in)
            return
        if literal is not None and type(target) is cst.Name:
            dtype = loop_dtype(
                literal, evaluate_in
            )  # `for dt in (jnp.float32, jnp.float64)`: one round is 64-bit
            if dtype is not None and not evaluate(iterable, evaluate_in):
                self.env[target.value] = dtype
                return
        self.bind(target, element_flags(evaluate(iterable, evaluate_in)))

    def _bind_items(
        self, target: cst.BaseExpression, items: list[cst.BaseExpression], evaluate_in: Frame
    ) -> None:
        """Bind a `for` target to each item of a literal in turn (`for row, c in [(0, a), (n - 1, b)]`): position
        by position where every item is a tuple of the target's length, each name the join of what the items
        hold there (`row` a Python int, `c` traced)."""
        if type(target) is cst.Tuple or type(target) is cst.List:
            width = len(target.elements)
            split = [_literal_items(item) for item in items]
            if not any(type(e) is cst.StarredElement for e in target.elements) and all(
                parts is not None and len(parts) == width for parts in split
            ):
                for position, element in enumerate(target.elements):
                    self._bind_items(element.value, [parts[position] for parts in split], evaluate_in)  # type: ignore[index]
                return
        flags = 0
        for item in items:
            flags |= evaluate(item, evaluate_in)
        if type(target) is cst.Name and not flags:
            dtype = loop_dtype(
                items, evaluate_in
            )  # `for dt in (jnp.float32, jnp.float64)`: one round is 64-bit
            if dtype is not None:
                self.env[target.value] = dtype
                return
        self.bind(target, flags if type(target) is cst.Name else element_flags(flags))


def _literal_items(node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The items of a list or tuple literal without starred items, else None."""
    if (type(node) is cst.List or type(node) is cst.Tuple) and not any(
        type(e) is cst.StarredElement for e in node.elements
    ):
        return [e.value for e in node.elements]
    return None


MODULE = Value(0, "module")
_COMPREHENSIONS = frozenset(COMPREHENSIONS)


def flags_of(value: Value | None) -> int | None:
    return value.flags if value is not None else None


def merge_envs(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    merged = dict(a)
    for name, value in b.items():
        known = merged.get(name)
        if known is not value:  # most names hold the same value on both sides: join() would give it back
            merged[name] = value if known is None else join(known, value)
    return merged
