"""flax.nnx objects handed to a plain `jax.jit` function, whose Variable updates are dropped; and those that
draw from an Rngs stream closed over by one (`closed_stream`).

`jax.jit` flattens an nnx object argument and traces a copy built from its leaves: `model.count.value += 1`,
`model.w[...] = w` or `optimizer.update(model, grads)` there change the copy, and the object the caller passed
keeps its old values (`nnx.jit` propagates the updates; library.NNX_CLASSES). Returning the object
(or its `nnx.state`) hands the updated copy back, so a function that returns it is left alone.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ...syntax import assigned_targets, own_nodes, walk
from ..binding.transforms import positional_params
from ..kinds import NNX, NONE
from ..semantics.library import (
    NNX_CLASSES,
    NNX_MUTATING_METHODS,
    NNX_RNGS,
    NNX_STREAM_DRAWERS,
    TRANSFORMATIONS,
)
from .held import held_value
from .instances import class_methods, module_instance, subclass_bases
from .receivers import parameter_class

_PLAIN_JIT = TRANSFORMATIONS["jax.jit"].label


def updated_variable(target: cst.BaseExpression) -> cst.Name | None:
    """`model.count.value` / `model.count[...]` / `model.count.value[...]` as an assignment target: the
    object's name (`model`); None for anything else (`model.x = v` rebinds an attribute)."""
    updated = False
    if type(target) is cst.Subscript:
        target, updated = target.value, True
    if type(target) is cst.Attribute and target.attr.value == "value":
        target, updated = target.value, True
    if updated and type(target) is cst.Attribute and type(target.value) is cst.Name:
        return target.value
    return None


def dropped_object(name: cst.Name, ctx: Any) -> str | None:
    """Whether `name` is a parameter of the function being walked, which only plain `jax.jit` compiles, bound
    to a flax.nnx object (its class named by `objects.receivers.parameter_class`) that the function does not return:
    the class's qualified or local name, else None."""
    unit = ctx.unit
    node = unit.node
    if type(node) is not cst.FunctionDef or not unit.is_target:
        return None
    apps = [app for app in unit.applications if app.kind > NONE]
    if not apps or any(app.label != _PLAIN_JIT or app.spec.unknown for app in apps):
        return None
    params = positional_params(node.params)
    if name.value not in {p.name.value for p in [*params, *node.params.kwonly_params]}:
        return None
    position = next((i for i, p in enumerate(params) if p.name.value == name.value), None)
    for app in apps:  # a static argument is the object itself, not a copy
        static = {i + len(params) if i < 0 else i for i in app.spec.argnums}
        if name.value in app.spec.argnames or (position is not None and position in static):
            return None
    index = ctx.index
    found = parameter_class(index, name, unit)
    if found is None:
        return None
    cls, scope, _ = found
    kind = nnx_class(index, cls, scope)
    if kind is None or _returned(node, name.value):
        return None
    return kind


def _plain_jit_target(unit: Any) -> bool:
    """A def that only plain `jax.jit` compiles (not nnx.jit, which hands nnx objects through)."""
    if type(unit.node) is not cst.FunctionDef or not unit.is_target:
        return False
    apps = [app for app in unit.applications if app.kind > NONE]
    return bool(apps) and all(app.label == _PLAIN_JIT and not app.spec.unknown for app in apps)


def closed_stream(call: cst.Call, ctx: Any) -> tuple[str, str] | None:
    """`dropout(x)` / `rngs()` / `rngs.dropout()` in a function only plain `jax.jit` compiles, where the name is
    closed over (bound once in an enclosing scope) to a flax.nnx object that draws from an Rngs stream when
    called (`semantics.library.NNX_STREAM_DRAWERS`, given its stream and not made deterministic; or an `nnx.Rngs`): the
    stream is advanced under the trace (flax 0.12.8 raises TraceContextError; earlier flax read the stream once,
    so every call drew the same numbers). (the name, the object's class) or None."""
    func = call.func
    stream = None
    if type(func) is cst.Attribute and type(func.value) is cst.Name:
        stream = func.attr.value  # `rngs.dropout()`: a stream of an Rngs
        func = func.value
    if type(func) is not cst.Name:
        return None
    unit = ctx.unit
    if unit is ctx.index.root or func.value in unit.local_names or not _plain_jit_target(unit):
        return None
    found = _closed_value(ctx.index, unit, func.value)
    if found is None:
        return None
    built, scope = found
    kind = ctx.index.qualname(built.func, scope)
    given = {a.keyword.value: a.value for a in built.args if a.keyword is not None}
    if kind == NNX_RNGS:  # `rngs()` draws from its default stream, `rngs.name()` from the stream it was given
        streams = set(given) | ({"default"} if any(a.keyword is None for a in built.args) else set())
        return (func.value, kind) if stream is None or stream in streams else None
    drawer = NNX_STREAM_DRAWERS.get(kind) if kind is not None and stream is None else None
    if drawer is None:
        return None
    off = given.get(drawer[1])
    if drawer[0] not in given or off is not None and not (type(off) is cst.Name and off.value == "False"):
        return None
    return func.value, kind


def _closed_value(index: Any, unit: Any, name: str) -> tuple[cst.Call, Any] | None:
    """The call a closed-over name is bound to once, in the nearest enclosing scope that binds it, and that
    scope."""
    scope = unit.parent
    while scope is not None and scope is not index.root and name not in scope.local_names:
        scope = scope.parent
    if scope is None:
        scope = index.root
    value = scope.single_assignment(name)
    return (value, scope) if type(value) is cst.Call else None


def captured_update(target: cst.BaseExpression, ctx: Any) -> str | None:
    """`self.count.value += 1` / `model.w[...] = w` (a Variable update, `updated_variable`) of a flax.nnx object
    the traced code captures rather than receives: flax refuses the update from inside the trace
    (TraceContextError: cannot mutate from a different trace level, flax 0.12). The class's name, else None."""
    root = updated_variable(target)
    return captured_object(root, ctx) if root is not None else None


def captured_mutation(call: cst.Call, ctx: Any) -> str | None:
    """`optimizer.update(model, grads)` (a library nnx method that updates Variables, the library table) on a
    captured flax.nnx object (`captured_object`): the class's name, else None."""
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    kind = captured_object(func.value, ctx)
    return kind if kind is not None and func.attr.value in NNX_MUTATING_METHODS.get(kind, ()) else None


def captured_object(node: cst.BaseExpression, ctx: Any) -> str | None:
    """The flax.nnx class of an object that transformed code captures instead of receiving as an argument:
    `self` of a method a transformation runs bound to its instance (`nnx.jit(counter)`, `jax.jit(model.step)`);
    a name bound outside the transformed function to `Cls(...)` (`model = nnx.Linear(...)` at module level);
    `self.optimizer` of an enclosing method's `self`, bound once by the constructor (`objects.held.held_value`)."""
    unit = ctx.unit
    if ctx.kind <= NONE:
        return None
    index = ctx.index
    if type(node) is cst.Name and unit.is_method and type(unit.node) is cst.FunctionDef:
        params = positional_params(unit.node.params)
        if params and params[0].name.value == node.value:
            if not any(app.bound_self and app.kind > NONE for app in unit.applications):
                return None
            class_node = unit.class_node
            if class_node is None or index.classes.get(class_node.name.value) is not class_node:
                return None
            return nnx_class(index, class_node.name, index.root)
    root = node.value if type(node) is cst.Attribute else node
    if type(root) is not cst.Name:
        return None
    binder = _captured_binder(root.value, unit)
    if binder is None:
        return None
    if type(node) is cst.Attribute:
        held = held_value(index, node, unit)
        value, scope = held if held is not None else (None, binder)
    else:
        value, scope = module_instance(index, root, binder), binder
    if type(value) is not cst.Call:
        return None
    return nnx_class(index, value.func, scope)


def _captured_binder(name: str, unit: Any) -> Any:
    """The scope binding `name` read in `unit`, when a transformation applies between them (the name is
    captured by traced code, not passed in); None otherwise."""
    crossed = False
    scope = unit
    while scope is not None:
        if name in scope.local_names or scope.parent is None:
            return scope if crossed else None
        crossed = crossed or (scope.is_target and scope.kind > NONE)
        scope = scope.parent
    return None


def mutating_call(call: cst.Call, ctx: Any) -> cst.Name | None:
    """`optimizer.update(model, grads)` (a library nnx method that updates Variables) or `model.step(x)` (a
    method of the module's own nnx class that assigns to `self.<v>.value` / `self.<v>[...]`): the receiver's
    name when it is a `dropped_object`; None otherwise."""
    func = call.func
    if type(func) is not cst.Attribute or type(func.value) is not cst.Name:
        return None
    receiver, method = func.value, func.attr.value
    kind = dropped_object(receiver, ctx)
    if kind is None:
        return None
    if method in NNX_MUTATING_METHODS.get(kind, ()):
        return receiver
    if "." in kind:
        return None  # a library class's other methods: not known to update anything
    return receiver if any(_updates_self(u.node) for u in class_methods(ctx.index, kind, method)) else None


def nnx_class(index: Any, cls: cst.BaseExpression | str, scope: Any) -> str | None:
    """The class's qualified name when it is a flax.nnx class, or the local name of a module class deriving
    from one (through the module's own classes); None otherwise."""
    if isinstance(cls, str):  # the qualified name another module's caller gives it (project mode)
        project = index.project
        known = cls.startswith(NNX_CLASSES) or project is not None and project.classes.get(cls) == NNX
        return cls if known else None
    local = type(cls) is cst.Name and not (scope is not index.root and cls.value in scope.local_names)
    if not local or index.classes.get(cls.value) is None:  # type: ignore[attr-defined]
        qualname = index.qualname(cls, scope)
        if qualname is None:
            return None
        project = index.project  # another project module's nnx class: its kind from that module's summary
        if qualname.startswith(NNX_CLASSES) or project is not None and project.classes.get(qualname) == NNX:
            return qualname
        return None
    assert type(cls) is cst.Name
    for name in [cls.value, *subclass_bases(index, cls.value)]:
        node = index.classes.get(name)
        for base in node.bases if node is not None else ():
            base_name = index.qualname(base.value, index.root)
            if base.keyword is None and base_name is not None and base_name.startswith(NNX_CLASSES):
                return cls.value
    return None


def _returned(function: cst.FunctionDef, name: str) -> bool:
    """Whether a `return`/`yield` of the function hands the object back (`return model`, `nnx.state(model)`,
    `(loss, model)`); `return model.score(x)` reads from it only."""
    for node in own_nodes(function):
        if (type(node) is cst.Return or type(node) is cst.Yield) and node.value is not None:
            nodes = list(walk(node.value))
            read = {id(n.value) for n in nodes if type(n) is cst.Attribute}
            if any(type(n) is cst.Name and n.value == name and id(n) not in read for n in nodes):
                return True
    return False


def _updates_self(method: cst.CSTNode) -> bool:
    """A method assigning to `self.<v>.value` or `self.<v>[...]` (a Variable update)."""
    if type(method) is not cst.FunctionDef:
        return False
    params = positional_params(method.params)
    if not params:
        return False
    self_name = params[0].name.value
    for node in own_nodes(method):
        for target in assigned_targets(node):
            root = updated_variable(target)
            if root is not None and root.value == self_name:
                return True
    return False
