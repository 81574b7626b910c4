"""The flow walk: every statement of every function in order, with the abstract value of each local name.

Rules ride on this walk. For each node the walker calls the rules' `visit_<NodeType>(node, ctx)` hooks, where
`ctx` is the `Frame` of the function being walked: it answers "is this traced?" with the environment as it is
at that point (assignments before it, branches merged, loop bodies run to a fixed point). Assignments and
deletions also call `on_assign(target, value, statement, ctx)` and `on_delete(target, statement, ctx)`.

Phases: `on_module(module, ctx)` once, before anything else; `on_unit(unit, ctx)` each time the body of a unit
(the module, a function, a lambda) is about to be walked, with the unit's own frame. A def or lambda is
visited (`visit_FunctionDef`, `visit_Lambda`) where it is defined, in the enclosing frame; the module node is
not visited.

Helpers called from traced code with traced arguments become traced themselves (arrays stay arrays); their
bodies are walked again until nothing changes (a few rounds at most). Before the walk, call sites that pass a
Python bool/int/float to a non-static parameter of a jitted function make that parameter a traced scalar.
With a `ModuleFacts` (project mode, `project.py`), the walk also applies the calls other modules make to this
module's functions, and records the calls this module makes to theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import libcst as cst

from ..syntax import CHILDREN_REVERSED, COMPREHENSIONS, LEAF, bound_names, children, none_comparison
from .abstract import NOTHING, Value, join, plain
from .closures import closure_none_test
from .index import ModuleIndex, Unit
from .instances import class_methods, module_apply, transformed_applies
from .jit import jitted_callable, jitted_def
from .kinds import ARRAY, BOOL, GRAD, HOLDS_TRACED, HOST, LITERAL, NONE, STRICT, TRACED
from .module_facts import ModuleFacts
from .project import CallFact, FunctionFacts
from .transforms import ARRAY_ANNOTATIONS, annotation_name, eager, positional_params
from .values import (
    ARRAY_TYPES,
    NOT_TRACER_TYPES,
    STRUCTURED,
    element_flags,
    element_values,
    evaluate,
    key_value_flags,
    structure,
)

_BITWISE_ASSIGN = (cst.BitAndAssign, cst.BitOrAssign, cst.BitXorAssign)

Report = Callable[[Any, cst.CSTNode, str, "Frame", Any], None]
_COMPREHENSIONS = frozenset(COMPREHENSIONS)  # a set: the walk tests type identity
_TREE_MAPS = frozenset({"jax.tree.map", "jax.tree_util.tree_map"})
_MAX_ROUNDS = 5


class _At:
    """Where `FlowWalker.expr` is: pushed on its stack where the frame or the store flag changes."""

    __slots__ = ("frame", "store")

    def __init__(self, frame: Frame, store: bool) -> None:
        self.frame, self.store = frame, store


class _HooksByType(dict):
    """Node type -> the hooks for it (a tuple, often empty): the walks look hooks up by the node's type, with no
    `__name__` read per node. Each walker's table starts as a copy of the types found hookless so far (`_NONE`),
    less those its own hooks name, so that a module's walk rarely meets a type it has not seen."""

    def __init__(self, hooks: dict[str, list[Callable]]) -> None:
        super().__init__(_NONE)
        self.hooks = hooks
        for name in hooks:
            for kind in _NONE_BY_NAME.get(name, ()):
                self.pop(kind, None)  # hooked in this walk: found by name when first met

    def __missing__(self, kind: type) -> tuple[Callable, ...]:
        found = self[kind] = tuple(self.hooks.get(kind.__name__, ()))
        if not found and kind not in _NONE:
            _NONE[kind] = found
            _NONE_BY_NAME.setdefault(kind.__name__, []).append(kind)
        return found


# Node types some walk found no hook for, and the same by name.
_NONE: dict[type, tuple[Callable, ...]] = {}
_NONE_BY_NAME: dict[str, list[type]] = {}


# What the expression walk does at a node, by its type (`_Steps`, one per set of hooked node types): skip
# it (a leaf no hook asks for: a Name, a literal, 40% of nodes), walk through it (no hook, nothing to track:
# most operators and brackets), read an attribute's object (no hook: `a.b` walks `a` only), take the general
# path (hooks, scopes, calls, store targets), or change frame (`_At`).
_SKIP, _WALK, _ATTRIBUTE, _GENERAL, _MOVE = range(5)
# Types the general path treats specially even without hooks (an attribute without one has its own step).
_SPECIAL = frozenset({cst.Lambda, cst.FunctionDef, cst.NamedExpr, cst.Call, *COMPREHENSIONS})


class _Steps(dict):
    def __init__(self, hooked: frozenset[str]) -> None:
        super().__init__()
        self.hooked = hooked  # the names of the node types some hook asks for

    def __missing__(self, kind: type) -> int:
        if kind is _At:
            step = _MOVE
        elif kind.__name__ in self.hooked:
            step = _GENERAL
        elif kind is cst.Attribute:
            step = _ATTRIBUTE
        elif kind in _SPECIAL:
            step = _GENERAL
        else:
            step = _SKIP if LEAF[kind] else _WALK
        self[kind] = step
        return step


# One table per set of hooked types, shared by the walks of every module (the same rules hook the same types).
_STEPS: dict[frozenset[str], _Steps] = {}


def _steps(hooks: dict[str, list[Callable]]) -> _Steps:
    hooked = frozenset(name for name, found in hooks.items() if found)
    table = _STEPS.get(hooked)
    if table is None:
        table = _STEPS[hooked] = _Steps(hooked)
    return table


class Frame:
    """One function (or comprehension, or the module) being walked: the rules' view of the analysis."""

    def __init__(self, walker: FlowWalker, unit: Unit, parent: Frame | None, kind: int, context: str) -> None:
        self.walker = walker
        self.unit = unit
        self.parent = parent
        self.kind = kind  # transforms.NONE / GRAD / STRICT / HOST
        self.context = context  # "jax.jit-compiled 'step'", for messages
        # JAX stages the body out (jit, lax bodies): every jnp result is a tracer. False in an eager vmap's body
        # (FlowWalker._stages), where only values computed from the mapped arguments are.
        self.staged = kind >= STRICT
        self.env: dict[str, Value] = {}  # each local name's value (`abstract.py`): flags and structure
        self.own_names: set[str] | None = None  # comprehension targets; None for a function's frame
        self.declared_global: set[str] = set()
        self._named: cst.CSTNode | None = None  # the node `qualname` last answered for, and its answer
        self._name: str | None = None

    # -- queries for rules ------------------------------------------------------------------------------

    @property
    def index(self) -> ModuleIndex:
        return self.walker.index

    @property
    def function(self) -> str | None:
        return self.unit.qualname or None

    def flags(self, node: cst.BaseExpression) -> int:
        return evaluate(node, self)

    def traced(self, node: cst.BaseExpression) -> bool:
        return bool(evaluate(node, self) & TRACED)

    def qualname(self, node: cst.BaseExpression) -> str | None:
        # Most rules ask for the name of the same call's function in turn: the last answer is kept.
        if node is self._named:
            return self._name
        name = self.walker.index.qualname(node, self.unit)
        self._named, self._name = node, name
        return name

    def is_module_global(self, name: str) -> bool:
        """Whether `name` here refers to a module-level binding (declared global, or not bound locally)."""
        frame: Frame | None = self
        while frame is not None and frame.own_names is not None:
            if name in frame.own_names:
                return False
            frame = frame.parent
        if frame is None or frame.unit is self.walker.index.root:
            return True
        if name in frame.declared_global:
            return True
        return name not in frame.unit.local_names

    def report(self, rule: Any, node: cst.CSTNode, message: str, fix: Any = None) -> None:
        self.walker.emit(rule, node, message, self, fix)

    # -- the Scope protocol used by values.evaluate ------------------------------------------------------

    def lookup(self, name: str) -> int:
        return self.lookup_value(name).flags

    def lookup_value(self, name: str) -> Value:
        found = self.env.get(name)
        if found is not None:
            return found
        if (
            self.own_names is None
            and self.unit is not self.walker.index.root
            and name in self.unit.local_names
        ):
            if name not in self.declared_global:
                return NOTHING  # a local not bound yet on this path
        if self.parent is None:
            return NOTHING
        found = self.parent.lookup_value(name)
        return plain(found.flags & ~TRACED) if self.kind == HOST and found.flags & TRACED else found

    def comprehension(self, node: cst.BaseExpression) -> Frame:
        frame = Frame(self.walker, self.unit, self, self.kind, self.context)
        frame.own_names = set()
        frame.staged = self.staged
        assert isinstance(node, COMPREHENSIONS)  # values.Scope's signature is wider than its callers
        first: cst.CompFor | None = node.for_in
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
            held = structure(value, self) if value is not None and type(value) in STRUCTURED else None
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

    def bind_value(self, target: cst.BaseExpression, value: Value) -> None:
        """Bind a target to a value known with its structure (an element of an unpacked tuple)."""
        if type(target) is cst.Name:
            self.env[target.value] = value
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

    def bind_iteration(
        self, target: cst.BaseExpression, iterable: cst.BaseExpression, evaluate_in: Frame
    ) -> None:
        """Bind a `for` target from what iterating `iterable` yields."""
        name = evaluate_in.qualname(iterable.func) if type(iterable) is cst.Call else None
        if name == "builtins.range":
            self.bind(target, 0)
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
            items = [
                element_flags(evaluate(a.value, evaluate_in)) for a in iterable.args if a.keyword is None
            ]
            if name == "builtins.enumerate":
                items = [0, items[0]]
            if (type(target) is cst.Tuple or type(target) is cst.List) and len(target.elements) == len(items):
                for element, flags in zip(target.elements, items, strict=True):
                    self.bind(element.value, flags)
                return
            self.bind(target, HOLDS_TRACED if any(f & TRACED for f in items) else 0)
            return
        self.bind(target, element_flags(evaluate(iterable, evaluate_in)))


class FlowWalker:
    def __init__(
        self,
        index: ModuleIndex,
        hooks: dict[str, list[Callable]],
        report: Report,
        project: ModuleFacts | None = None,
    ) -> None:
        self.index = index
        self.hooks = hooks
        self._by_type = _HooksByType(hooks)
        self._steps = _steps(hooks)
        self._report = report
        self.project = project
        self.silent = 0
        self._seen: set[tuple[Any, int]] = set()
        self._parent_frames: dict[int, Frame] = {}
        self._dirty: dict[int, Unit] = {}
        # Units called from traced code whose body is staged out, and from an eager vmap's body.
        self._staged_calls: set[int] = set()
        self._eager_calls: set[int] = set()
        self._walked_eager: set[int] = set()  # units last walked as an eager vmap's code

    def run(self) -> None:
        root = Frame(self, self.index.root, None, NONE, "")
        transformed_applies(self.index)
        self._call_sites()
        if self.project is not None:
            self._receive(root)
        for hook in self.hooks.get("on_module", ()):
            hook(self.index.module, root)
        try:
            self.dispatch(self.index.root, root, "on_unit")
            self.block(self.index.module.body, root)
            for _ in range(_MAX_ROUNDS):
                if not self._dirty:
                    break
                dirty, self._dirty = list(self._dirty.values()), {}
                for unit in dirty:
                    self.walk_unit(unit, self._parent_frames[id(unit)])
            if self.project is not None:
                self.project.functions = self._functions(root)
        finally:
            # Frames point back at the walker: dropping them here lets reference counting free the walk
            # (and the tree it holds) as soon as the engine lets go, with no work for the cyclic collector.
            self._parent_frames.clear()
            self._dirty.clear()

    def _functions(self, root: Frame) -> tuple[FunctionFacts, ...]:
        """The module's top-level functions as the walk leaves them (for `ModuleFacts.summary`)."""
        facts = []
        for name, defs in self.index.root.defs.items():
            unit = defs[-1]  # what an importer sees: the module's last binding of the name
            params = unit.params
            jitted = jitted_def(unit, self.index) if len(defs) > 1 else jitted_callable(cst.Name(name), root)
            facts.append(
                FunctionFacts(
                    name,
                    tuple(p.name.value for p in positional_params(params)),
                    tuple(p.name.value for p in params.kwonly_params),
                    unit.kind,
                    tuple(sorted(unit.traced_params | unit.container_params)),
                    tuple(sorted(unit.array_params & unit.traced_params)),
                    jitted is not None and jitted.unit is unit,
                    tuple(sorted(unit.passed_params)),
                )
            )
        return tuple(sorted(facts))

    def emit(self, rule: Any, node: cst.CSTNode, message: str, frame: Frame, fix: Any) -> None:
        key = (rule, id(node))
        if self.silent or key in self._seen:
            return
        self._seen.add(key)
        self._report(rule, node, message, frame, fix)

    def dispatch(self, node: Any, frame: Frame, name: str | None = None) -> None:
        for hook in self.hooks.get(name, ()) if name is not None else self._by_type[type(node)]:
            hook(node, frame)

    # -- call-site evidence --------------------------------------------------------------------------------

    def _call_sites(self) -> None:
        """`step(x, True)` with `step` jitted: `True` becomes a traced bool inside `step` (unless static).
        Calls into other project modules with such arguments are recorded for them (project mode)."""
        project = self.project
        frames: dict[int, Frame] = {}
        for call, unit, _ in self.index._sites:
            literal = _literal_arguments(call, unit, self.index)
            if literal is None:
                continue
            frame = frames.get(id(unit))
            if frame is None:
                frame = frames[id(unit)] = Frame(self, unit, None, NONE, "")
            jitted = jitted_callable(call.func, frame)
            if jitted is not None:
                self._traced_scalars(jitted, *literal)
            elif project is not None and not self.index.resolve_function(call.func, unit):
                target = frame.qualname(call.func)
                if project.records(target):
                    assert target is not None
                    positional, keywords = literal
                    project.outgoing.add(
                        CallFact(target, NONE, "", tuple(LITERAL if p else 0 for p in positional), keywords)
                    )

    @staticmethod
    def _traced_scalars(jitted: Any, positional: list[bool], keywords: tuple[tuple[str, int], ...]) -> None:
        """Parameters of a jitted function that receive Python scalars and are not static: traced arrays."""
        params = positional_params(jitted.params)
        static_indices, static_names = jitted.static_parameters()
        names: set[str] = set()
        for i, is_literal in enumerate(positional):
            index = i + jitted.offset
            if is_literal and index < len(params) and index not in static_indices:
                names.add(params[index].name.value)
        known = {p.name.value for p in [*params, *jitted.params.kwonly_params]}
        names |= {name for name, flags in keywords if flags & LITERAL and name in known}
        names -= static_names
        unit = jitted.unit
        unit.traced_params |= names
        unit.array_params |= names

    def _receive(self, root: Frame) -> None:
        """Apply the calls other modules make to this module's top-level functions."""
        assert self.project is not None
        for name, facts in self.project.incoming.items():
            defs = self.index.root.defs.get(name)
            bound = not defs and "." in name  # "MLP.__call__": a method, called on an instance
            if bound:
                owner, _, method = name.partition(".")
                defs = class_methods(self.index, owner, method)
            if not defs:
                continue
            callee = defs[-1]  # what an importer sees: the module's last binding of the name
            for fact in facts:
                if any(f & LITERAL for f in fact.positional) or any(f & LITERAL for _, f in fact.keywords):
                    jitted = (
                        jitted_def(callee, self.index)
                        if len(defs) > 1 and not bound
                        else jitted_callable(cst.Name(name), root)
                    )
                    if jitted is not None and jitted.unit is callee:
                        self._traced_scalars(
                            jitted, [bool(f & LITERAL) for f in fact.positional], fact.keywords
                        )
                if fact.kind > NONE and callee.kind != HOST:
                    positional, keywords = list(fact.positional), dict(fact.keywords)
                    self._pass(callee, bound, positional, keywords, fact.kind, fact.context, fact.starred)
                elif fact.kind == NONE:  # an eager caller passing JAX arrays
                    self._mark_eager_arrays(callee, bound, fact.positional, dict(fact.keywords))

    # -- functions ---------------------------------------------------------------------------------------

    def walk_unit(self, unit: Unit, parent: Frame) -> None:
        """Walk a function's body; again when callers show that more of its parameters are traced."""
        self._parent_frames[id(unit)] = parent
        kind, context = unit.kind, unit.context
        if kind == NONE and parent.kind > NONE:
            # Defined inside traced code: it runs (if at all) while the outer function is traced.
            kind, context = parent.kind, f"'{unit.name}' (defined in {parent.context})"
        frame = Frame(self, unit, parent, kind, context)
        frame.staged = self._stages(unit, parent, kind)
        if kind >= STRICT and not frame.staged:
            self._walked_eager.add(id(unit))
        else:
            self._walked_eager.discard(id(unit))
        node = unit.node
        params = unit.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            name = param.name.value
            if name in unit.traced_params:
                # A traced parameter may be a whole pytree; an annotation or a call site says it is one array.
                is_array = name in unit.array_params or annotation_name(param) in ARRAY_ANNOTATIONS
                frame.env[name] = plain(TRACED | ARRAY if is_array else TRACED)
            elif name in unit.container_params:
                frame.env[name] = plain(HOLDS_TRACED)
            elif name in unit.eager_arrays:
                # An eager caller passes a JAX array: it stays one, or (filter_jit) becomes a traced one.
                frame.env[name] = plain(TRACED | ARRAY if kind >= STRICT and _filtering(unit) else ARRAY)
            else:
                frame.env[name] = NOTHING
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                frame.env[star.name.value] = plain(
                    HOLDS_TRACED if star.name.value in unit.traced_params else 0
                )
        self.dispatch(unit, frame, "on_unit")
        if type(node) is cst.FunctionDef:
            self.block(node.body, frame)
        elif type(node) is cst.Lambda:
            self.expr(node.body, frame)

    def _stages(self, unit: Unit, parent: Frame, kind: int) -> bool:
        """Whether JAX stages the unit's body out. Not when only eager vmaps map it (`jax.vmap(f)(xs)` outside
        jit) and no staged code defines or calls it: vmap traces only its mapped arguments, so `jnp.zeros(3)`
        or `split(closed_key)` there are concrete arrays (checked on jax 0.10)."""
        if kind < STRICT:
            return False
        if parent.staged or id(unit) in self._staged_calls:
            return True
        if unit.is_target:
            apps = [app for app in unit.applications if app.kind >= STRICT]
            return not apps or not all(eager(app) for app in apps)
        if unit.kind == NONE:
            return False  # defined in an eager vmap's body, runs there
        # Traced through its callers: eager only when all of them are.
        return id(unit) not in self._eager_calls

    def _function_header(self, node: cst.FunctionDef | cst.Lambda, frame: Frame) -> None:
        """Decorators, defaults and annotations run in the enclosing scope."""
        if type(node) is cst.FunctionDef:
            for decorator in node.decorators:
                self.expr(decorator.decorator, frame)
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if param.default is not None:
                self.expr(param.default, frame)

    def _enter_function(self, node: cst.FunctionDef | cst.Lambda, frame: Frame) -> None:
        self._function_header(node, frame)
        unit = self.index.units.get(id(node))
        if unit is not None:
            self.walk_unit(unit, frame)

    # -- statements --------------------------------------------------------------------------------------

    def block(self, body: cst.BaseSuite | Sequence[cst.CSTNode], frame: Frame) -> bool:
        """Walk statements in order; True when one of them is known to leave the block (the rest is dead)."""
        statements = body.body if isinstance(body, cst.BaseSuite) else body
        for statement in statements:
            if self.statement(statement, frame):
                return True
        return False

    def statement(self, node: cst.CSTNode, frame: Frame) -> bool | None:
        """Walk one statement; True only after a constant guard whose taken branch returns or raises."""
        if type(node) is cst.SimpleStatementLine:
            for small in node.body:
                self.small_statement(small, frame)
            return None
        if type(node) is not cst.While:  # a while's hooks run with each round's environment
            self.dispatch(node, frame)
        if type(node) is cst.If:
            self.expr(node.test, frame)
            taken = self._constant_guard(node.test, frame)
            if taken is None:
                taken = _tracer_check(node.test, frame)
            if (
                taken is None
                and frame.own_names is None
                and frame.kind > NONE
                and frame.unit.parent is not None
            ):
                taken = closure_none_test(node.test, frame.unit)
            if taken is not None:  # only one branch runs whenever this function is traced
                if taken:
                    return self.block(node.body, frame) or _leaves(node.body)
                if type(node.orelse) is cst.If:
                    return self.statement(node.orelse, frame)
                if node.orelse is not None:
                    return self.block(node.orelse.body, frame) or _leaves(node.orelse.body)
                return None
            before = dict(frame.env)
            narrowed = _narrowing(node.test, frame)
            if narrowed is not None and narrowed[1] is not None:
                frame.env[narrowed[0]] = plain(narrowed[1])
            self.block(node.body, frame)
            after_body, frame.env = frame.env, before
            if narrowed is not None:
                name, in_body, in_else = narrowed
                if in_body is not None and _flags(after_body.get(name)) == in_body:
                    after_body[name] = before[name]  # what the test showed holds inside the branch only
                if in_else is not None:
                    frame.env = dict(before)
                    frame.env[name] = plain(in_else)
            if type(node.orelse) is cst.If:
                self.statement(node.orelse, frame)
            elif node.orelse is not None:
                self.block(node.orelse.body, frame)
            if (
                narrowed is not None
                and narrowed[2] is not None
                and _flags(frame.env.get(narrowed[0])) == narrowed[2]
            ):
                frame.env[narrowed[0]] = before[narrowed[0]]
            frame.env = _merge(after_body, frame.env)
        elif type(node) is cst.For or type(node) is cst.While:
            self._loop(node, frame)
        elif type(node) is cst.Try or type(node) is cst.TryStar:
            before = dict(frame.env)
            self.block(node.body, frame)
            after = _merge(before, frame.env)
            ends = []
            for handler in node.handlers:
                frame.env = dict(after)
                self.dispatch(handler, frame)
                if handler.type is not None:
                    self.expr(handler.type, frame)
                if handler.name is not None:
                    frame.bind(handler.name.name, 0)
                self.block(handler.body, frame)
                ends.append(frame.env)
            frame.env = dict(after)
            if node.orelse is not None:
                self.block(node.orelse.body, frame)
            for end in ends:
                frame.env = _merge(frame.env, end)
            if node.finalbody is not None:
                self.block(node.finalbody.body, frame)
        elif type(node) is cst.With:
            for item in node.items:
                self.expr(item.item, frame)
                if item.asname is not None:
                    frame.bind(item.asname.name, 0)
            self.block(node.body, frame)
        elif type(node) is cst.FunctionDef:
            self._enter_function(node, frame)
            frame.env[node.name.value] = Value(0, "function", definition=self.index.units.get(id(node)))
        elif type(node) is cst.ClassDef:
            for decorator in node.decorators:
                self.expr(decorator.decorator, frame)
            for arg in [*node.bases, *node.keywords]:
                self.expr(arg.value, frame)
            class_frame = Frame(self, frame.unit, frame, frame.kind, frame.context)
            class_frame.own_names = set()
            class_frame.staged = frame.staged
            self.block(node.body, class_frame)
            frame.env[node.name.value] = Value(0, "class", definition=node)
        elif type(node) is cst.Match:
            self.expr(node.subject, frame)
            before, ends = dict(frame.env), []
            for case in node.cases:
                frame.env = dict(before)
                self.block(case.body, frame)
                ends.append(frame.env)
            frame.env = before
            for end in ends:
                frame.env = _merge(frame.env, end)
        else:
            for child in children(node):
                if isinstance(child, cst.BaseExpression):
                    self.expr(child, frame)
                elif isinstance(child, (cst.BaseSuite, cst.CSTNode)):
                    self.statement(child, frame)
        return None

    @staticmethod
    def _constant_guard(test: cst.BaseExpression, frame: Frame) -> bool | None:
        """`if flag:` / `if not flag:` in a helper traced only through its callers, where `flag` is a parameter
        with a literal default that no traced caller passes (nor the body rebinds): whether the body runs."""
        unit = frame.unit
        if unit.kind <= NONE or unit.is_target or frame.own_names is not None:
            return None
        negate = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
        if negate:
            assert type(test) is cst.UnaryOperation
            test = test.expression
        is_none = False  # `flag is None` / `flag is not None`
        if (
            type(test) is cst.Comparison
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
            and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == "None"
        ):
            is_none = True
            negate ^= isinstance(test.comparisons[0].operator, cst.IsNot)
            test = test.left
        if type(test) is not cst.Name:
            return None
        name = test.value
        if name in unit.passed_params or name in unit.bindings or type(unit.node) is not cst.FunctionDef:
            return None
        params = unit.node.params
        default = next(
            (p.default for p in [*params.params, *params.kwonly_params] if p.name.value == name), None
        )
        if default is None:
            return None
        if is_none:
            none = type(default) is cst.Name and default.value == "None"
            return none != negate if _literal_truth(default) is not None else None
        truth = _literal_truth(default)
        return None if truth is None else truth != negate

    def _loop(self, node: cst.For | cst.While, frame: Frame) -> None:
        if type(node) is cst.For:
            self.expr(node.iter, frame)
        entry = dict(frame.env)
        # First round silently, to learn what the body makes of the names it reassigns; then for real, so
        # that `while err > tol: err = jnp.abs(...)` is seen with `err` traced.
        self.silent += 1
        self._loop_body(node, frame)
        self.silent -= 1
        frame.env = _merge(entry, frame.env)
        self._loop_body(node, frame)
        frame.env = _merge(entry, frame.env)
        if node.orelse is not None:
            self.block(node.orelse.body, frame)

    def _loop_body(self, node: cst.For | cst.While, frame: Frame) -> None:
        if isinstance(node, cst.For):
            frame.bind_iteration(node.target, node.iter, frame)
            self.expr(node.target, frame, store=True)
        else:
            self.dispatch(node, frame)
            self.expr(node.test, frame)
        self.block(node.body, frame)

    def small_statement(self, node: cst.CSTNode, frame: Frame) -> None:
        self.dispatch(node, frame)
        if type(node) is cst.Assign:  # type identity: a failed isinstance() on libcst's ABCs is slow
            self.expr(node.value, frame)
            flags = evaluate(node.value, frame)
            for target in node.targets:
                self._store(target.target, node.value, node, frame)
                frame.bind(target.target, flags, node.value)
        elif type(node) is cst.AnnAssign:
            if node.value is not None:
                self.expr(node.value, frame)
                self._store(node.target, node.value, node, frame)
                frame.bind(node.target, evaluate(node.value, frame), node.value)
        elif type(node) is cst.AugAssign:
            self.expr(node.value, frame)
            self._store(node.target, node.value, node, frame)
            if type(node.target) is cst.Name:
                flags = evaluate(node.target, frame) | evaluate(node.value, frame)
                if not isinstance(node.operator, _BITWISE_ASSIGN):
                    flags &= ~BOOL  # as for `a + b`: `count += mask` is a number, not a mask
                frame.bind(node.target, flags & TRACED and flags | ARRAY or flags)
        elif type(node) is cst.Del:
            for deleted in _delete_targets(node.target):
                for hook in self.hooks.get("on_delete", ()):
                    hook(deleted, node, frame)
                self.expr(deleted, frame, store=True)
        elif type(node) is cst.Global or type(node) is cst.Nonlocal:
            frame.declared_global.update(n.name.value for n in node.names)
        elif type(node) is cst.Import or type(node) is cst.ImportFrom:
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    local = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                    frame.env[local] = _MODULE
        else:
            for child in children(node):
                if isinstance(child, cst.BaseExpression):
                    self.expr(child, frame)

    def _store(
        self, target: cst.BaseExpression, value: cst.BaseExpression, statement: cst.CSTNode, frame: Frame
    ) -> None:
        for hook in self.hooks.get("on_assign", ()):
            hook(target, value, statement, frame)
        if type(target) is cst.Tuple or type(target) is cst.List:
            for element in target.elements:
                inner = element.value.value if type(element.value) is cst.StarredElement else element.value
                if type(inner) is cst.Subscript or type(inner) is cst.Attribute:
                    for hook in self.hooks.get("on_assign", ()):
                        hook(inner, None, statement, frame)
        self.expr(target, frame, store=True)

    # -- expressions -------------------------------------------------------------------------------------

    def expr(self, start: cst.CSTNode, frame: Frame, store: bool = False) -> None:
        """Dispatch hooks over an expression tree, parents first. Store targets skip the target node itself."""
        # Type identity checks, not isinstance(): libcst's abstract bases make isinstance() slow on this hot path.
        # The stack holds nodes, and an `_At` wherever the frame or the store flag changes (a comprehension's
        # parts, a store target's subscript or attribute): pushed below the nodes it does not apply to, so the
        # hot loop builds no tuple per node. Nodes are `Any`: the checker does not narrow on `type(node) is X`.
        hooks, steps = self._by_type, self._steps
        stack: list[Any] = [start]
        read = CHILDREN_REVERSED  # last child first: the stack pops them in source order
        while stack:
            node = stack.pop()
            kind = type(node)
            step = steps[kind]
            if step == _SKIP:
                continue
            if not store:
                if step == _WALK:
                    stack += read[kind](node)
                    continue
                if step == _ATTRIBUTE:
                    stack.append(node.value)
                    continue
            if step == _MOVE:
                frame, store = node.frame, node.store
                continue
            if kind is cst.Lambda or kind is cst.FunctionDef:
                for hook in hooks[kind]:
                    hook(node, frame)
                self._enter_function(node, frame)
                continue
            if store:
                if kind is cst.Name:
                    continue
                if kind is cst.Tuple or kind is cst.List:
                    stack.extend([e.value for e in reversed(node.elements)])
                    continue
                if kind is cst.StarredElement:
                    stack.append(node.value)
                    continue
                # What a subscript or an attribute target evaluates is read, not stored to.
                stack.append(_At(frame, True))
                store = False
                if kind is cst.Subscript:
                    stack += read[kind](node)
                    continue
                if kind is cst.Attribute:
                    stack.append(node.value)
                    continue
            for hook in hooks[kind]:
                hook(node, frame)
            if kind in _COMPREHENSIONS:
                stack.append(_At(frame, store))
                for part, part_frame, part_store in reversed(self._comprehension_parts(node, frame)):
                    stack.append(part)
                    stack.append(_At(part_frame, part_store))
                continue
            if kind is cst.Attribute:
                stack.append(node.value)
                continue
            if kind is cst.NamedExpr:
                stack.append(node.value)
                frame.bind(node.target, evaluate(node.value, frame))
                continue
            if kind is cst.Call:
                if frame.kind > NONE:
                    self._propagate(node, frame)
                elif node.args:
                    self._eager_arrays(node, frame)
            stack += read[kind](node)

    def _comprehension_parts(
        self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp, frame: Frame
    ) -> list[tuple[cst.CSTNode, Frame, bool]]:
        """The first iterable runs in the enclosing scope; the rest in the comprehension's own."""
        inner = frame.comprehension(node)
        for_in: cst.CompFor | None = node.for_in
        parts: list[tuple[cst.CSTNode, Frame, bool]] = []
        first = True
        while for_in is not None:
            parts.append((for_in.iter, frame if first else inner, False))
            parts.extend((cond.test, inner, False) for cond in for_in.ifs)
            first = False
            for_in = for_in.inner_for_in
        if isinstance(node, cst.DictComp):
            parts += [(node.key, inner, False), (node.value, inner, False)]
        else:
            parts.append((node.elt, inner, False))
        return parts

    def _propagate(self, call: cst.Call, frame: Frame) -> None:
        """A same-module function called with traced arguments is traced too (another module's: recorded)."""
        if frame.qualname(call.func) in _TREE_MAPS and call.args:
            # Each parameter receives the leaves of the tree in its position.
            trees = [a for a in call.args[1:] if a.keyword is None and not a.star]
            traced = [bool(evaluate(a.value, frame) & (TRACED | HOLDS_TRACED)) for a in trees]
            starred = any(a.star for a in call.args[1:])
            for callee, _ in self.index.resolve_function(call.args[0].value, frame.unit):
                self._called_from(callee, frame)
                params = positional_params(callee.params)
                names = {p.name.value for p, t in zip(params, traced, strict=False) if t}
                leaves = params if starred else params[: len(trees)]
                callee.passed_params |= {p.name.value for p in leaves}
                self._mark(callee, names, frame.kind, frame.context)
            return
        through = self._called_through(call, frame)
        args, target = call.args, None
        applied = module_apply(self.index, call, frame.unit)
        if applied is not None:  # `model.apply(variables, x)` runs `__call__(x)`; `obj.m(x)` runs `m`
            callees, args, target = [(u, applied.bound) for u in applied.units], applied.args, applied.target
        elif through:  # `jax.grad(f)(t, i - 1)`: f receives these arguments
            callees = through
        else:
            callees = self.index.resolve_function(call.func, frame.unit, self.index.call_order(call))
        if not callees and self.project is None:
            return
        positional: list[int] = []
        starred = any(arg.star for arg in args)
        for arg in args:
            if arg.keyword is None:
                if arg.star:
                    break
                positional.append(evaluate(arg.value, frame))
        keywords = {a.keyword.value: evaluate(a.value, frame) for a in args if a.keyword is not None}
        if not callees:
            assert self.project is not None
            target = target or frame.qualname(call.func)
            if self.project.records(target) and any(
                f & (TRACED | HOLDS_TRACED) for f in [*positional, *keywords.values()]
            ):
                assert target is not None
                fact = CallFact(
                    target,
                    frame.kind,
                    frame.context,
                    tuple(positional),
                    tuple(sorted(keywords.items())),
                    starred,
                )
                self.project.outgoing.add(fact)
            return
        for callee, bound_self in callees:
            if callee.kind == HOST or type(callee.node) is cst.Module:
                continue
            self._called_from(callee, frame)
            if callee.is_target:
                self._mark(callee, set(), frame.kind, frame.context)
                if through or any(app.kind == GRAD for app in callee.applications):
                    # A transformed function nested in traced code gets tracers where its caller passes them.
                    self._pass(callee, bound_self, positional, keywords, frame.kind, frame.context, starred)
                continue
            self._pass(callee, bound_self, positional, keywords, frame.kind, frame.context, starred)

    def _eager_arrays(self, call: cst.Call, frame: Frame) -> None:
        """`update(jnp.zeros(3))` in eager code: the function's parameter holds a JAX array there (an item
        assignment to it fails; `.astype(jnp.float64)` on it asks JAX for float64). Another module's function:
        recorded for it (project mode)."""
        applied = module_apply(self.index, call, frame.unit)
        target = None
        args: Sequence[cst.Arg] = call.args
        if applied is not None:
            callees, args, target = [(u, applied.bound) for u in applied.units], applied.args, applied.target
        else:
            callees = self.index.resolve_function(call.func, frame.unit, self.index.call_order(call))
        if not callees and self.project is None:
            return
        positional: list[int] = []
        keywords: dict[str, int] = {}
        starred = False
        for arg in args:
            if arg.star:
                starred = True
                break
            flags = ARRAY if evaluate(arg.value, frame) & ARRAY else 0
            if arg.keyword is None:
                positional.append(flags)
            else:
                keywords[arg.keyword.value] = flags
        if not any(positional) and not any(keywords.values()):
            return
        if not callees:
            assert self.project is not None
            target = target or frame.qualname(call.func)
            if self.project.records(target):
                assert target is not None
                facts = tuple(sorted(keywords.items()))
                self.project.outgoing.add(CallFact(target, NONE, "", tuple(positional), facts, starred))
            return
        for callee, bound_self in callees:
            self._mark_eager_arrays(callee, bound_self, positional, keywords)

    def _mark_eager_arrays(
        self, callee: Unit, bound_self: bool, positional: Sequence[int], keywords: Mapping[str, int]
    ) -> None:
        """The parameters of an untraced function that an eager caller passes JAX arrays; also of a function
        under a filtering transformation (`eqx.filter_jit`), which traces exactly its array arguments."""
        if type(callee.node) is cst.Module or (callee.kind != NONE and not _filtering(callee)):
            return
        params = positional_params(callee.params)
        if callee.is_method and bound_self:
            params = params[1:]
        names = {
            params[i].name.value for i, flags in enumerate(positional) if flags & ARRAY and i < len(params)
        }
        named = {p.name.value for p in [*params, *callee.params.kwonly_params]}
        names |= {name for name, flags in keywords.items() if flags & ARRAY and name in named}
        if names - callee.eager_arrays:
            callee.eager_arrays |= names
            if id(callee) in self._parent_frames:  # already walked: walk it again
                self._dirty[id(callee)] = callee

    def _called_from(self, callee: Unit, frame: Frame) -> None:
        """Note whether traced code that stages its body out calls `callee` (see `_stages`)."""
        if frame.staged:
            if id(callee) not in self._staged_calls:
                self._staged_calls.add(id(callee))
                if id(callee) in self._walked_eager:  # walked as eager code: again, staged
                    self._dirty[id(callee)] = callee
        else:
            self._eager_calls.add(id(callee))

    def _called_through(self, call: cst.Call, frame: Frame) -> list[tuple[Unit, bool]]:
        """`jax.grad(f)(...)`, `jax.vmap(f)(...)` (or `g = jax.grad(f)` then `g(...)`): the function the outer
        call runs, when `f` is ours."""
        func = call.func
        if type(func) is cst.Name and (
            type(frame.unit.node) is cst.FunctionDef or type(frame.unit.node) is cst.Lambda
        ):
            func = frame.unit.single_assignment(func.value) or func
        if type(func) is not cst.Call or not func.args or func.args[0].keyword is not None:
            return []
        if self.index.transform_of(func.func, frame.unit) is None:
            return []
        return self.index.resolve_function(func.args[0].value, frame.unit)

    def _pass(
        self,
        callee: Unit,
        bound_self: bool,
        positional: list[int],
        keywords: dict[str, int],
        kind: int,
        context: str,
        starred: bool = False,
    ) -> None:
        """`callee` is called from code under `kind` with arguments of these flags (`starred`: and with
        `*args`/`**kwargs` too, which may pass any parameter)."""
        params = positional_params(callee.params)
        if callee.is_method and bound_self:
            params = params[1:]
        passed = [(params[i].name.value, flags) for i, flags in enumerate(positional) if i < len(params)]
        all_names = {p.name.value for p in [*params, *callee.params.kwonly_params]}
        passed += [(name, flags) for name, flags in keywords.items() if name in all_names]
        given = all_names if starred else {name for name, _ in passed}
        if kind > NONE and not given <= callee.passed_params:
            callee.passed_params |= given
            if id(callee) in self._parent_frames:
                self._dirty[id(callee)] = callee
        names: set[str] = set()
        arrays: set[str] = set()
        containers: set[str] = set()
        for name, flags in passed:
            if flags & TRACED:
                names.add(name)
                if flags & ARRAY:
                    arrays.add(name)
            elif flags & HOLDS_TRACED:
                containers.add(name)
        force = bool(containers - callee.container_params or arrays - callee.array_params)
        callee.container_params |= containers
        callee.array_params |= arrays
        if force or names:
            self._mark(callee, names, kind, context, force=force)

    def _mark(self, callee: Unit, names: set[str], kind: int, context: str, force: bool = False) -> None:
        changed = force or not names <= callee.traced_params
        callee.traced_params |= names
        if callee.kind < kind:
            callee.kind = kind
            if not callee.is_target:
                callee.context = f"'{callee.name}' (called from {context})"
            changed = True
        if changed and id(callee) in self._parent_frames:  # already walked: walk it again
            self._dirty[id(callee)] = callee


_MODULE = Value(0, "module")


def _flags(value: Value | None) -> int | None:
    return value.flags if value is not None else None


def _merge(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    merged = dict(a)
    for name, value in b.items():
        known = merged.get(name)
        merged[name] = value if known is None else join(known, value)
    return merged


def _delete_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [t for e in target.elements for t in _delete_targets(e.value)]
    return [target]


_NUMBERS = (cst.Integer, cst.Float)


def _is_scalar_literal(node: cst.BaseExpression) -> bool:
    """`True`, `3`, `-0.5`: a Python bool, int or float written out."""
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:  # identity: ABCs are slow
        node = node.expression
    return type(node) in _NUMBERS or (type(node) is cst.Name and node.value in ("True", "False"))


def _literal_arguments(
    call: cst.Call, unit: Unit, index: ModuleIndex
) -> tuple[list[bool], tuple[tuple[str, int], ...]] | None:
    """Which arguments of a call are Python scalars (literals, or names bound once to one); None when none."""
    positional: list[bool] = []
    keywords: list[tuple[str, int]] = []
    found = False
    for arg in call.args:
        if arg.star:
            break
        is_literal = _is_scalar_literal(arg.value) or _names_literal(arg.value, unit, index)
        found = found or is_literal
        if arg.keyword is None:
            positional.append(is_literal)
        elif is_literal:
            keywords.append((arg.keyword.value, LITERAL))
    return (positional, tuple(keywords)) if found else None


def _names_literal(node: cst.BaseExpression, unit: Unit, index: ModuleIndex) -> bool:
    """A name whose only binding (in its function, or at module level) is `name = <scalar literal>`."""
    if type(node) is not cst.Name or node.value in ("True", "False", "None"):
        return False
    owner = unit if unit is not index.root and node.value in unit.local_names else index.root
    value = owner.single_assignment(node.value)
    return value is not None and _is_scalar_literal(value)


def _literal_truth(node: cst.BaseExpression) -> bool | None:
    """The truth of a literal default (`False`, `None`, `0`, `"mean"`), or None when it is not one."""
    if type(node) is cst.Name and node.value in ("True", "False", "None"):
        return node.value == "True"
    if type(node) is cst.Integer or type(node) is cst.Float:
        return (
            bool(float(node.value.replace("_", ""))) if type(node) is cst.Float else bool(int(node.value, 0))
        )
    if type(node) is cst.SimpleString and isinstance(node.evaluated_value, str):
        return bool(node.evaluated_value)
    return None


def _tracer_check(test: cst.BaseExpression, frame: Frame) -> bool | None:
    """`if isinstance(x, jax.core.Tracer):` on a traced `x` always runs its body, `if not isinstance(...)` never
    (equinox's `error_if` reads `pred` only after such a check). `isinstance(x, (int, float))`, `bool`, NumPy
    types: never true of a tracer, so the body does not run under the trace; `isinstance(x, jax.Array)` of a
    traced array always is."""
    negate = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
    if type(test) is cst.UnaryOperation and negate:
        test = test.expression
    kinds = _isinstance_types(test, frame)
    if kinds is None:
        return None
    assert type(test) is cst.Call
    flags = frame.flags(test.args[0].value)
    if not flags & TRACED:
        return None
    if all(k.startswith("jax.") and k.endswith(".Tracer") for k in kinds):
        return not negate
    if all(k in NOT_TRACER_TYPES for k in kinds):
        return negate
    if flags & ARRAY and any(k in ARRAY_TYPES for k in kinds):
        return not negate
    return None


def _isinstance_types(test: cst.BaseExpression, frame: Frame) -> list[str] | None:
    """The qualified names of the types in `isinstance(x, T)` / `isinstance(x, (T1, T2))`; None when the test
    is not such a call or a type is not known by name."""
    if not (
        type(test) is cst.Call
        and len(test.args) == 2
        and not any(a.keyword or a.star for a in test.args)
        and frame.qualname(test.func) == "builtins.isinstance"
    ):
        return None
    spec = test.args[1].value
    nodes = [e.value for e in spec.elements] if type(spec) is cst.Tuple else [spec]
    kinds = [frame.qualname(n) for n in nodes]
    return None if not kinds or None in kinds else kinds  # type: ignore[return-value]


def _narrowing(test: cst.BaseExpression, frame: Frame) -> tuple[str, int | None, int | None] | None:
    """What a test shows about a traced local name inside the branches: (name, flags in the body, flags in the
    else branch), None for "unchanged". `x is None` holds only when `x` is the Python None (a traced value
    never is); `isinstance(x, jax.Array)` makes `x` an array."""
    negate = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
    if type(test) is cst.UnaryOperation and negate:
        test = test.expression
    name: str | None = None
    body: int | None = None
    orelse: int | None = None
    tested = none_comparison(test)
    if tested is not None:
        name, is_none = tested
        if is_none:
            body = 0
        else:
            orelse = 0
    else:
        kinds = _isinstance_types(test, frame)
        if kinds is None or not all(k in ARRAY_TYPES for k in kinds):
            return None
        assert type(test) is cst.Call
        if not isinstance(test.args[0].value, cst.Name):
            return None
        name = test.args[0].value.value
        known = frame.env.get(name, NOTHING).flags
        body = known | ARRAY if known & TRACED else None
    found = frame.env.get(name)
    flags = found.flags if found is not None else None
    if flags is None or not flags & TRACED or (body is None and orelse is None):
        return None
    return (name, orelse, body) if negate else (name, body, orelse)


def _leaves(body: cst.BaseSuite) -> bool:
    """A block whose last statement is `return` or `raise`."""
    last = body.body[-1] if body.body else None
    if type(last) is cst.SimpleStatementLine:
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    return type(body) is cst.SimpleStatementSuite and isinstance(body.body[-1], (cst.Return, cst.Raise))


def _filtering(unit: Unit) -> bool:
    """Whether a filtering transformation (equinox's `filter_jit`) applies to `unit` itself: it traces the
    arguments that are arrays and keeps every other one static."""
    return any(app.kind == STRICT and app.spec.filtering for app in unit.applications)
