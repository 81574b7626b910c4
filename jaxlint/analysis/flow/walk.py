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

from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst

from ...syntax import CHILDREN_REVERSED, COMPREHENSIONS, LEAF, children, is_expression
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import ARRAY_ANNOTATIONS, annotation_name
from ..kinds import ARRAY, BOOL, HOLDS_TRACED, LIST, NONE, STRICT, TRACED
from ..module_facts import ModuleFacts
from ..objects.instances import transformed_applies
from ..objects.receivers import list_parameter
from ..semantics.library import TREE_MAPS
from ..values.abstract import NOTHING, Value, plain
from ..values.closures import closure_none_test
from ..values.flags import (
    evaluate,
)
from .calls import FlowCalls, filtering, is_property
from .frame import MODULE, flags_of, merge_envs
from .frame import Frame as Frame  # re-exported: the rules' `ctx`
from .guards import constant_guard, leaves, narrowing, tracer_check, tracer_errors_caught
from .paths import PathWalk

_BITWISE_ASSIGN = (cst.BitAndAssign, cst.BitOrAssign, cst.BitXorAssign)

Report = Callable[[Any, cst.CSTNode, str, "Frame", Any], None]
_COMPREHENSIONS = frozenset(COMPREHENSIONS)  # a set: the walk tests type identity
_TREE_MAPS = frozenset(name for name, leaf in TREE_MAPS.items() if leaf == 0)  # the leaf is the argument
_MAX_ROUNDS = 8


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


class FlowWalker(FlowCalls, PathWalk[dict[str, Value], None]):
    # The flow walk's policies on the path engine: paths that leave are merged, handlers start after the body,
    # every loop runs a silent round then a reporting one, and `match` joins from the no-case path.
    LOOP_DEPTH = 1 << 30
    SILENT_FIRST_ROUND = True
    HANDLERS_AFTER_BODY = True
    NO_MATCH_FIRST = True
    KEEP_EXIT_PATHS = True

    def __init__(
        self,
        index: ModuleIndex,
        hooks: dict[str, list[Callable]],
        report: Report,
        project: ModuleFacts | None = None,
        only: frozenset[int] = frozenset(),
    ) -> None:
        self.index = index
        # The server's per-unit reuse (`unit_reuse.py`): when given, the ids of the top-level defs to walk; of
        # the rest of the module only its top-level import lines are walked (what those defs may read).
        self.only = only
        self.top = 0  # id of the top-level statement being walked (0: `on_module`, the module's `on_unit`)
        self.reached: set[int] = set()  # the top-level statements the walk reached (a dead end stops it)
        self._tops: dict[int, int] = {}  # id(unit) -> `top` where it was first walked (for its later rounds)
        self.hooks = hooks
        self._by_type = _HooksByType(hooks)
        self._steps = _steps(hooks)
        self._report = report
        self.project = project
        self.silent = 0
        self._caught = 0  # inside a `try` body whose handlers catch tracer errors
        self.loops = []
        self.exits = []
        self.frame: Frame  # the frame the statements walk in (set while `run` runs)
        self._left = False  # a decided `if`'s branch left: the rest of the block is dead
        self._seen: set[tuple[Any, int]] = set()
        self._parent_frames: dict[int, Frame] = {}
        self._dirty: dict[int, Unit] = {}
        # Units called from traced code whose body is staged out, and from an eager vmap's body.
        self._staged_calls: set[int] = set()
        self._eager_calls: set[int] = set()
        self._walked_eager: set[int] = set()  # units last walked as an eager vmap's code
        # The names of the module's properties: reading one on an object built from tracers runs its getter.
        self._properties = frozenset(
            unit.name for unit in index.units.values() if unit.class_node is not None and is_property(unit)
        )
        # Another project module's function this module calls returns an instance of its class: any attribute
        # read on such a result may run that class's property (`FlowCalls._foreign_result_read`).
        self._foreign_results = project is not None and any(e.returns_class for e in project.exports.values())

    def run(self) -> None:
        root = self.frame = Frame(self, self.index.root, None, NONE, "")
        transformed_applies(self.index)
        if self.project is not None and self.project.exports:
            self.index.forward_imported(self.project.exports)
        self._call_sites()
        if self.project is not None:
            self._receive(root)
        for hook in self.hooks.get("on_module", ()):
            hook(self.index.module, root)
        try:
            self.dispatch(self.index.root, root, "on_unit")
            if self.only:
                self._walk_only(root)
            else:
                self._body(self.index.module.body, root)
                self.top = 0
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
            del self.frame

    @property
    def walked(self) -> set[int]:
        """The ids of the units this walk walked."""
        return set(self._tops)

    def emit(self, rule: Any, node: cst.CSTNode, message: str, frame: Frame, fix: Any) -> None:
        key = (rule, id(node))
        if self.silent or key in self._seen or self._caught and rule.trace_error:
            return
        self._seen.add(key)
        self._report(rule, node, message, frame, fix)

    def try_body(self, node: cst.Try | cst.TryStar, state: dict[str, Value]) -> dict[str, Value] | None:
        """A `try` body whose handlers catch the errors tracing raises (`haiku`'s `try: if rate < 0: ...
        except jax.errors.ConcretizationTypeError: pass`) reports none of them."""
        caught = tracer_errors_caught(node, self.index, self._at(state).unit)
        self._caught += caught
        try:
            return super().try_body(node, state)
        finally:
            self._caught -= caught

    def dispatch(self, node: Any, frame: Frame, name: str | None = None) -> None:
        for hook in self.hooks.get(name, ()) if name is not None else self._by_type[type(node)]:
            hook(node, frame)

    # -- functions ---------------------------------------------------------------------------------------

    def _walk_only(self, root: Frame) -> None:
        """The reuse walk: the top-level import lines in order (all a reused def may read of the module scope,
        `unit_reuse.py`), and the defs named in `only` where they stand, as the whole walk meets them."""
        outer, self.frame = self.frame, root
        state: dict[str, Value] | None = root.env
        try:
            for statement in self.index.module.body:
                self.top = id(statement)
                if state is None:
                    break
                if id(statement) in self.only:
                    self.reached.add(id(statement))
                    state = self.statement(statement, state)
                elif type(statement) is cst.SimpleStatementLine:
                    for small in statement.body:
                        if type(small) is cst.Import or type(small) is cst.ImportFrom:
                            self.small_statement(small, self._at(state))
        finally:
            self.frame = outer
            self._left = False
            self.top = 0
        if state is not None:
            root.env = state

    def walk_unit(self, unit: Unit, parent: Frame) -> None:
        """Walk a function's body; again when callers show that more of its parameters are traced."""
        top = self._tops.setdefault(id(unit), self.top)
        outer_top, self.top = self.top, top
        try:
            self._walk_unit(unit, parent)
        finally:
            self.top = outer_top

    def _walk_unit(self, unit: Unit, parent: Frame) -> None:
        self._parent_frames[id(unit)] = parent
        kind, context = unit.kind, unit.context
        if kind == NONE and parent.kind > NONE:
            # Defined inside traced code: it runs (if at all) while the outer function is traced.
            kind, context = parent.kind, f"'{unit.name}' (defined in {parent.context})"
        frame = Frame(self, unit, parent, kind, context)
        frame.staged = self._stages(unit, parent, kind)
        if kind >= STRICT and self.index.eager_bodies:  # its eager control flow traces its bodies here
            for body in self.index.trace_eager_bodies(unit):
                if id(body) in self._parent_frames:  # already walked: walk it again
                    self._dirty[id(body)] = body
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
                if not is_array and list_parameter(self.index, unit, name):
                    frame.env[name] = plain(
                        LIST | HOLDS_TRACED
                    )  # every caller passes a list: its leaves traced
                    continue
                frame.env[name] = plain(TRACED | ARRAY if is_array else TRACED)
            elif name in unit.container_params:
                frame.env[name] = plain(HOLDS_TRACED)
            elif name in unit.eager_arrays:
                # An eager caller passes a JAX array: it stays one, or (filter_jit) becomes a traced one.
                frame.env[name] = plain(TRACED | ARRAY if kind >= STRICT and filtering(unit) else ARRAY)
            else:
                frame.env[name] = NOTHING
        if unit.traced_fields and unit.is_method:
            # `self` of an object built from tracers: those fields are tracers (read, passed on to its methods)
            first = [*params.posonly_params, *params.params][:1]
            if first and first[0].name.value not in unit.traced_params:
                fields = tuple(sorted(unit.traced_fields))
                frame.env[first[0].name.value] = Value(
                    HOLDS_TRACED,
                    "object",
                    items=tuple(plain(unit.traced_fields[f]) for f in fields),
                    keys=fields,
                    definition=unit.class_node,
                )
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                held = star.name.value in unit.traced_params or star.name.value in unit.container_params
                flags = HOLDS_TRACED if held else 0
                # `**kwargs` is a dict: iterating it gives its keys, never tracers (`for k in kwargs`)
                frame.env[star.name.value] = (
                    Value(flags, "dict") if star is params.star_kwarg else plain(flags)
                )
        self.dispatch(unit, frame, "on_unit")
        if type(node) is cst.FunctionDef:
            self._body(node.body.body, frame)
        elif type(node) is cst.Lambda:
            self.expression(node.body, frame)

    def _function_header(self, node: cst.FunctionDef | cst.Lambda, frame: Frame) -> None:
        """Decorators, defaults and annotations run in the enclosing scope."""
        if type(node) is cst.FunctionDef:
            for decorator in node.decorators:
                self.expression(decorator.decorator, frame)
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if param.default is not None:
                self.expression(param.default, frame)

    def _enter_function(self, node: cst.FunctionDef | cst.Lambda, frame: Frame) -> None:
        self._function_header(node, frame)
        unit = self.index.units.get(id(node))
        if unit is not None:
            self.walk_unit(unit, frame)

    # -- statements: the path engine's hooks (`flow.paths.PathWalk`), one state per path being a frame's env --------

    def _at(self, state: dict[str, Value]) -> Frame:
        """The frame being walked, on this path."""
        frame = self.frame
        frame.env = state
        return frame

    def _body(self, statements: Sequence[cst.CSTNode], frame: Frame) -> None:
        """A unit's or a class's statements, in its own frame."""
        outer, self.frame = self.frame, frame
        try:
            end = self.block(statements, frame.env)
        finally:
            self.frame = outer
            self._left = False
        if end is not None:
            frame.env = end

    def block(
        self, statements: Sequence[cst.CSTNode], state: dict[str, Value] | None
    ) -> dict[str, Value] | None:
        """Statements in order, up to one that leaves after a decided `if` (the rest is dead); its state goes on."""
        top = statements is self.index.module.body
        for statement in statements:
            if state is None:
                return None
            if top:
                self.top = id(statement)
                self.reached.add(id(statement))
            state = self.statement(statement, state)
            if self._left:
                break
        return state

    def suite(self, suite: cst.BaseSuite, state: dict[str, Value] | None) -> dict[str, Value] | None:
        end = self.block(suite.body, state)
        self._left = False  # only a decided `if` passes on that its branch left
        return end

    def orelse(self, orelse: cst.If | cst.Else, state: dict[str, Value]) -> dict[str, Value] | None:
        end = super().orelse(orelse, state)
        self._left = False
        return end

    def decided(self, body: cst.BaseSuite, state: dict[str, Value]) -> dict[str, Value] | None:
        end = self.block(body.body, state)
        if not self._left:
            self._left = leaves(body)  # a taken branch that returns or raises: what follows is dead
        return end

    def enter(self, node: cst.CSTNode, state: dict[str, Value]) -> None:
        if type(node) is not cst.While:  # a while's hooks run with each round's environment
            self.dispatch(node, self._at(state))

    def decide(self, test: cst.BaseExpression, state: dict[str, Value]) -> bool | None:
        frame = self._at(state)
        taken = constant_guard(test, frame)
        if taken is None:
            taken = tracer_check(test, frame)
        if taken is None and frame.own_names is None and frame.kind > NONE and frame.unit.parent is not None:
            taken = closure_none_test(test, frame.unit)
        return taken  # only one branch runs whenever this function is traced

    def narrow(self, test: cst.BaseExpression, then: dict[str, Value], other: dict[str, Value]) -> Any:
        narrowed = narrowing(test, self._at(then))
        if narrowed is None:
            return None
        name, in_body, in_else = narrowed
        before = then[name]
        if in_body is not None:
            then[name] = plain(in_body)
        if in_else is not None:
            other[name] = plain(in_else)
        return name, before, in_body, in_else

    def widen(self, token: Any, state: dict[str, Value] | None, in_body: bool) -> None:
        name, before, in_body_flags, in_else = token
        shown = in_body_flags if in_body else in_else
        if state is not None and shown is not None and flags_of(state.get(name)) == shown:
            state[name] = before  # what the test showed holds inside the branch only

    def define(self, node: cst.FunctionDef | cst.ClassDef, state: dict[str, Value]) -> None:
        frame = self._at(state)
        if type(node) is cst.FunctionDef:
            unit = self.index.units.get(id(node))
            if unit is not None:
                self.walk_unit(unit, frame)
            state[node.name.value] = Value(0, "function", definition=unit)
            return
        class_frame = Frame(self, frame.unit, frame, frame.kind, frame.context)
        class_frame.own_names = set()
        class_frame.staged = frame.staged
        self._body(node.body.body, class_frame)
        state[node.name.value] = Value(0, "class", definition=node)

    def loop_head(self, node: cst.For | cst.While, state: dict[str, Value]) -> None:
        frame = self._at(state)
        if isinstance(node, cst.For):
            frame.bind_iteration(node.target, node.iter, frame)
            self.expression(node.target, frame, store=True)
        else:
            self.dispatch(node, frame)
            self.expression(node.test, frame)

    def match_case(self, case: cst.MatchCase, state: dict[str, Value]) -> None:
        pass  # the flow walk binds no pattern names and walks no guard

    def expr(self, node: cst.CSTNode, state: dict[str, Value]) -> None:
        self.expression(node, self._at(state))

    def assign(
        self,
        target: cst.BaseExpression,
        version: None,
        value: cst.BaseExpression | None,
        state: dict[str, Value],
    ) -> None:
        self._at(state).bind(target, 0)  # a `with … as` or `except … as` name

    def join(self, states: Sequence[dict[str, Value] | None]) -> dict[str, Value] | None:
        merged = None
        for state in states:
            if state is not None:
                merged = state if merged is None else merge_envs(merged, state)
        return merged

    def fresh(self, name: str, state: dict[str, Value]) -> None:
        pass  # imports and defs bind in `small_statement` and `define`

    def other(self, node: cst.CSTNode, state: dict[str, Value]) -> dict[str, Value] | None:
        # What the flow walk has always done with these: its expressions walked, nothing bound (a one-line
        # suite's `x = 1` binds no `x`: a known gap, kept so that findings do not change with the engine).
        for child in children(node):
            if isinstance(child, cst.BaseExpression):
                self.expression(child, self._at(state))
            elif isinstance(child, (cst.BaseSuite, cst.CSTNode)):
                self.statement(child, state)
        return state

    def small(self, node: cst.CSTNode, state: dict[str, Value]) -> dict[str, Value]:
        self.small_statement(node, self._at(state))
        return state  # `return`, `raise`, `break`, `continue` end no path here

    def small_statement(self, node: cst.CSTNode, frame: Frame) -> None:
        self.dispatch(node, frame)
        if type(node) is cst.Assign:  # type identity: a failed isinstance() on libcst's ABCs is slow
            self.expression(node.value, frame)
            flags = evaluate(node.value, frame)
            for target in node.targets:
                self._store(target.target, node.value, node, frame)
                frame.bind(target.target, flags, node.value)
        elif type(node) is cst.AnnAssign:
            if node.value is not None:
                self.expression(node.value, frame)
                self._store(node.target, node.value, node, frame)
                frame.bind(node.target, evaluate(node.value, frame), node.value)
        elif type(node) is cst.AugAssign:
            self.expression(node.value, frame)
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
                self.expression(deleted, frame, store=True)
        elif type(node) is cst.Global or type(node) is cst.Nonlocal:
            frame.declared_global.update(n.name.value for n in node.names)
        elif type(node) is cst.Import or type(node) is cst.ImportFrom:
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    local = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                    frame.env[local] = MODULE
        else:
            for child in children(node):
                if is_expression(child):
                    self.expression(child, frame)

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
        if type(target) is not cst.Name:  # a stored name is neither visited nor walked into
            self.expression(target, frame, store=True)

    # -- expressions -------------------------------------------------------------------------------------

    def expression(self, start: cst.CSTNode, frame: Frame, store: bool = False) -> None:
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
                    if frame.kind > NONE and (node.attr.value in self._properties or self._foreign_results):
                        self._property_read(node, frame)
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
                if (
                    not store
                    and frame.kind > NONE
                    and (node.attr.value in self._properties or self._foreign_results)
                ):
                    self._property_read(node, frame)
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


def _delete_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [t for e in target.elements for t in _delete_targets(e.value)]
    return [target]
