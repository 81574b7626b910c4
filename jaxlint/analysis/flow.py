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

from ..syntax import CHILDREN_REVERSED, COMPREHENSIONS, LEAF, children
from .abstract import NOTHING, Value, plain
from .closures import closure_none_test
from .flow_calls import FlowCalls, filtering
from .flow_frame import MODULE, flags_of, merge_envs
from .flow_frame import Frame as Frame  # re-exported: the rules' `ctx`
from .flow_guards import constant_guard, leaves, narrowing, tracer_check
from .index import ModuleIndex, Unit
from .instances import transformed_applies
from .kinds import ARRAY, BOOL, HOLDS_TRACED, NONE, STRICT, TRACED
from .module_facts import ModuleFacts
from .transforms import ARRAY_ANNOTATIONS, annotation_name
from .values import (
    evaluate,
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


class FlowWalker(FlowCalls):
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

    def emit(self, rule: Any, node: cst.CSTNode, message: str, frame: Frame, fix: Any) -> None:
        key = (rule, id(node))
        if self.silent or key in self._seen:
            return
        self._seen.add(key)
        self._report(rule, node, message, frame, fix)

    def dispatch(self, node: Any, frame: Frame, name: str | None = None) -> None:
        for hook in self.hooks.get(name, ()) if name is not None else self._by_type[type(node)]:
            hook(node, frame)

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
                frame.env[name] = plain(TRACED | ARRAY if kind >= STRICT and filtering(unit) else ARRAY)
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
            taken = constant_guard(node.test, frame)
            if taken is None:
                taken = tracer_check(node.test, frame)
            if (
                taken is None
                and frame.own_names is None
                and frame.kind > NONE
                and frame.unit.parent is not None
            ):
                taken = closure_none_test(node.test, frame.unit)
            if taken is not None:  # only one branch runs whenever this function is traced
                if taken:
                    return self.block(node.body, frame) or leaves(node.body)
                if type(node.orelse) is cst.If:
                    return self.statement(node.orelse, frame)
                if node.orelse is not None:
                    return self.block(node.orelse.body, frame) or leaves(node.orelse.body)
                return None
            before = dict(frame.env)
            narrowed = narrowing(node.test, frame)
            if narrowed is not None and narrowed[1] is not None:
                frame.env[narrowed[0]] = plain(narrowed[1])
            self.block(node.body, frame)
            after_body, frame.env = frame.env, before
            if narrowed is not None:
                name, in_body, in_else = narrowed
                if in_body is not None and flags_of(after_body.get(name)) == in_body:
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
                and flags_of(frame.env.get(narrowed[0])) == narrowed[2]
            ):
                frame.env[narrowed[0]] = before[narrowed[0]]
            frame.env = merge_envs(after_body, frame.env)
        elif type(node) is cst.For or type(node) is cst.While:
            self._loop(node, frame)
        elif type(node) is cst.Try or type(node) is cst.TryStar:
            before = dict(frame.env)
            self.block(node.body, frame)
            after = merge_envs(before, frame.env)
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
                frame.env = merge_envs(frame.env, end)
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
                frame.env = merge_envs(frame.env, end)
        else:
            for child in children(node):
                if isinstance(child, cst.BaseExpression):
                    self.expr(child, frame)
                elif isinstance(child, (cst.BaseSuite, cst.CSTNode)):
                    self.statement(child, frame)
        return None

    def _loop(self, node: cst.For | cst.While, frame: Frame) -> None:
        if type(node) is cst.For:
            self.expr(node.iter, frame)
        entry = dict(frame.env)
        # First round silently, to learn what the body makes of the names it reassigns; then for real, so
        # that `while err > tol: err = jnp.abs(...)` is seen with `err` traced.
        self.silent += 1
        self._loop_body(node, frame)
        self.silent -= 1
        frame.env = merge_envs(entry, frame.env)
        self._loop_body(node, frame)
        frame.env = merge_envs(entry, frame.env)
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
                    frame.env[local] = MODULE
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


def _delete_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [t for e in target.elements for t in _delete_targets(e.value)]
    return [target]
