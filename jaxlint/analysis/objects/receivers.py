"""Which class an object that code calls methods on is an instance of.

`model(x)` or `model.m(x)` runs a method of `model`'s class; this module finds that class:
- `model` built right there (`Model(...)(x)`), or a name bound once to `Model(...)` in the function or at
  module level (`module_instance`);
- `model` a parameter annotated with a class (`def step(model: Model, x)`), possibly of a subclass;
- `model` a parameter that every call of its function in this module gives an instance of one class
  (`step(model, x)` with `model = Model(...)`, also through `nnx.jit(step)(model, x)` or `g = jax.jit(step)`),
  or the carry (`init`) or the slice of the stacked `xs` that `lax.scan`, `fori_loop` and `while_loop` hand
  their body: scanning over a stacked equinox Module gives each step a Module of the same class.
Parameters are followed through callers a few levels deep. Callers in other modules are seen only for a
top-level function no call of its own module passes the parameter to: the classes their calls name
(`CallFact.classes`, project mode), when all agree.
"""

from __future__ import annotations

import libcst as cst

from ...syntax import argument
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params
from ..semantics.library import ALL_DATA, CONTROL_FLOW, FIELDS, FUNCTION_LEAF_CLASSES, LAYER_CONTAINERS
from .pytrees import pytree_model

_MAX_DEPTH = 3
# Control flow (library table): qualified name -> (position, keyword) of the body, and for each of the body's
# parameters the (position, keyword) of the call's argument whose class it receives (the carry, or a slice of
# `xs`) ...
_LAX_CARRIES = {
    name: (flow.bodies[-1], flow.parameters)
    for name, flow in CONTROL_FLOW.items()
    if flow.parameters is not None
}
# ... and `lax.cond(pred, true_fun, false_fun, *operands)`: either branch receives the operands, in order.
_LAX_BRANCHES = {
    name: (tuple(position for position, _ in flow.bodies), flow.operands)
    for name, flow in CONTROL_FLOW.items()
    if flow.operands is not None
}
# The last words of their names: a call spelled with one of them may pass a function its arguments.
_LAX_NAMES = frozenset(name.rsplit(".", 1)[1] for name in (*_LAX_CARRIES, *_LAX_BRANCHES))


def module_instance(index: ModuleIndex, receiver: cst.BaseExpression, unit: Unit) -> cst.Call | None:
    """The `Model(...)` call an instance comes from (or `hk.transform(f)`): built right there, or a name bound
    once to it in this function or at module level."""
    if type(receiver) is cst.Name:
        found = unit.single_assignment(receiver.value)
        if found is None and (unit is index.root or receiver.value not in unit.local_names):
            found = index.root.single_assignment(receiver.value)
        receiver = found if found is not None else receiver
    return receiver if type(receiver) is cst.Call else None


# A class named by its qualified name (another module's caller passes an instance of it: project mode), or an
# expression naming it, to resolve in a unit.
ClassRef = cst.BaseExpression | str


def parameter_class(
    index: ModuleIndex, receiver: cst.BaseExpression, unit: Unit, depth: int = 0
) -> tuple[ClassRef, Unit, bool] | None:
    """For a parameter (of `unit` or of a function enclosing it) never rebound: the expression naming its class,
    the unit to resolve that expression in, and whether the object is exactly of that class (built by calling
    it) rather than possibly of a subclass (an annotation). None when unknown, or when callers disagree. A
    top-level function no call of its module passes it to takes the class the calls of other modules name
    (`CallFact.classes`, project mode) when they all name one."""
    if depth > _MAX_DEPTH:
        return None
    found_param = _parameter(index, receiver, unit)
    if found_param is None:
        return None
    owner, param, position = found_param
    name = param.name.value
    if param.annotation is not None:
        annotation = param.annotation.annotation
        if type(annotation) is cst.Name or type(annotation) is cst.Attribute:
            return annotation, owner.parent or index.root, False
        return None
    found: tuple[ClassRef, Unit, bool] | None = None
    key: str | None = None
    arguments = _arguments(index, owner, name, position)
    if not arguments and owner.parent is index.root:
        return _incoming_class(index, owner, name, position)
    for given, caller in arguments:
        this = _class_of(index, given, caller, depth) if given is not None else None
        if this is None:
            return None
        cls = this[0]
        this_key = (
            cls
            if isinstance(cls, str)
            else index.qualname(cls, this[1]) or _local_class_name(index, cls, this[1])
        )
        if this_key is None or (key is not None and this_key != key):
            return None
        found, key = this, this_key
    return found


def _parameter(
    index: ModuleIndex, receiver: cst.BaseExpression, unit: Unit
) -> tuple[Unit, cst.Param, int | None] | None:
    """A parameter never rebound (of `unit` or of a function enclosing it) that `receiver` names: its function,
    the parameter and its position (None: keyword-only). Not `self`, `*args`, `**kwargs`."""
    if type(receiver) is not cst.Name:
        return None
    name = receiver.value
    owner: Unit | None = unit
    while owner is not None and owner is not index.root and name not in owner.local_names:
        owner = owner.parent
    if owner is None or owner is index.root or name in owner.bindings:
        return None
    node = owner.node
    if type(node) is not cst.FunctionDef and type(node) is not cst.Lambda:
        return None
    params = node.params
    positional = positional_params(params)
    param = next((p for p in [*positional, *params.kwonly_params] if p.name.value == name), None)
    if param is None or (owner.is_method and positional and param is positional[0]):
        return None  # `*args`, `**kwargs`; `self` (whose class `objects.instances.method_call` knows)
    return owner, param, positional.index(param) if param in positional else None


# -- objects holding a Python function as a pytree leaf ------------------------------------------------------


def function_leaf(index: ModuleIndex, value: cst.BaseExpression, unit: Unit, depth: int = 0) -> str | None:
    """What makes `value` a pytree holding a Python function as a leaf (not a static field), said for a
    message ("'MLP' keeps a function in its field 'activation'"); None when not known to. `value` is an instance
    built right there or bound once to one (`eqx.nn.MLP(...)`, `Net()` of a class whose fields hold one:
    `objects.pytrees.PytreeClass.function_fields`, `eqx.nn.Sequential([..., eqx.nn.Lambda(f)])`), a tuple, list or
    dict display holding one, or a parameter annotated with such a class or given one by every call of its
    function in this module."""
    if depth > _MAX_DEPTH:
        return None
    kind = type(value)
    if kind is cst.Tuple or kind is cst.List:
        elements = [e.value for e in value.elements if type(e) is not cst.StarredElement]  # type: ignore[attr-defined]
    elif kind is cst.Dict:
        elements = [e.value for e in value.elements if type(e) is cst.DictElement]  # type: ignore[attr-defined]
    else:
        elements = []
    for element in elements:
        found = function_leaf(index, element, unit, depth)
        if found is not None:
            return found
    if elements:
        return None
    built = module_instance(index, value, unit)
    if built is not None:
        return _built_function_leaf(index, built, unit, depth)
    found_param = _parameter(index, value, unit)
    if found_param is None:
        return None
    owner, param, position = found_param
    if param.annotation is not None:
        return _class_function_leaf(index, param.annotation.annotation, owner.parent or index.root)
    given = _arguments(index, owner, param.name.value, position)
    reasons = [function_leaf(index, v, caller, depth + 1) if v is not None else None for v, caller in given]
    return reasons[0] if reasons and all(reasons) else None


def _built_function_leaf(index: ModuleIndex, call: cst.Call, unit: Unit, depth: int) -> str | None:
    container = LAYER_CONTAINERS.get(index.qualname(call.func, unit) or "")
    if container is not None:
        layers = argument(call, *container)
        if layers is None or type(layers.value) not in (cst.List, cst.Tuple):
            return None
        inner = function_leaf(index, layers.value, unit, depth + 1)
        return f"'{_short(call.func)}' holds a layer: {inner}" if inner is not None else None
    return _class_function_leaf(index, call.func, unit)


def _class_function_leaf(index: ModuleIndex, cls: cst.BaseExpression, unit: Unit) -> str | None:
    """For a class expression: a library class holding a function, or a pytree class of this module with a
    field that does."""
    qualname = index.qualname(cls, unit)
    fields = FUNCTION_LEAF_CLASSES.get(qualname or "")
    if fields is not None:
        return f"'{_short(cls)}' keeps a function in its field '{sorted(fields)[0]}'"
    if qualname is not None or type(cls) is not cst.Name:
        return None
    if unit is not index.root and cls.value in unit.local_names:
        return None
    found = pytree_model(index).class_named(cls.value)
    if found is None or found.how not in (FIELDS, ALL_DATA) or not found.function_fields:
        return None
    if index.classes.get(cls.value) is None:
        return None
    field = sorted(found.function_fields)[0]
    return f"'{cls.value}' keeps {found.function_fields[field]} in its field '{field}'"


def _short(node: cst.BaseExpression) -> str:
    return node.attr.value if type(node) is cst.Attribute else node.value if type(node) is cst.Name else "?"


def _incoming_class(
    index: ModuleIndex, owner: Unit, name: str, position: int | None
) -> tuple[ClassRef, Unit, bool] | None:
    """The class every other module's recorded call of `owner` (a top-level function, or a method of a top-level
    class: its positions count after `self`) names for its parameter `name`, else None. A class of this module
    comes by its name (`ProjectIndex.incoming` rewrites it), as the expression naming it."""
    project = index.project
    key = owner.name
    cls = owner.class_node
    if cls is not None:
        if not owner.is_method or index.classes.get(cls.name.value) is not cls:
            return None
        key = f"{cls.name.value}.{owner.name}"
        position = position - 1 if position else None
    facts = project.incoming.get(key, ()) if project is not None else ()
    found: set[str] = set()
    for fact in facts:
        if fact.repeated:
            continue  # a repeated call's fact names no arguments (`CallFact.repeated`)
        given = dict(fact.classes)
        found.add(given.get(name) or (given.get(str(position), "") if position is not None else ""))
    if len(found) != 1 or "" in found:
        return None
    named = found.pop()
    if "." not in named:
        return (cst.Name(named), index.root, True) if index.classes.get(named) is not None else None
    return named, index.root, True


def _class_of(
    index: ModuleIndex, value: cst.BaseExpression, unit: Unit, depth: int
) -> tuple[ClassRef, Unit, bool] | None:
    built = module_instance(index, value, unit)
    if built is not None:
        return built.func, unit, True
    return parameter_class(index, value, unit, depth + 1)


def _local_class_name(index: ModuleIndex, cls: cst.BaseExpression, unit: Unit) -> str | None:
    if type(cls) is cst.Name and not (unit is not index.root and cls.value in unit.local_names):
        return cls.value if index.classes.get(cls.value) is not None else None
    return None


def _arguments(
    index: ModuleIndex, owner: Unit, name: str, position: int | None
) -> list[tuple[cst.BaseExpression | None, Unit]]:
    """What each call of `owner` in this module passes for its parameter `name` (at `position`, None for a
    keyword-only one), with the caller's unit; None for a call that passes it through `*args` or leaves it to
    its default. Memoised on the unit."""
    memo = owner.memo.setdefault("parameter_arguments", {})
    if name in memo:
        return memo[name]
    out: list[tuple[cst.BaseExpression | None, Unit]] = []
    function = owner.name
    for call, caller, order in _sites_naming(index).get(function, ()):
        for given in _passed(index, call, caller, order, owner, function, name, position):
            out.append((given, caller))
    memo[name] = out
    return out


def _sites_naming(index: ModuleIndex) -> dict[str, list[tuple[cst.Call, Unit, int]]]:
    """The module's calls by the function name they may call it through (`f(...)`, `obj.f(...)`,
    `jax.jit(f)(...)`, `g(...)` with `g` bound to a call, `lax.scan(f, ...)`; "<lambda>" for a lambda body):
    one pass over the calls, so that finding a function's callers reads only the calls that name it."""
    table = index.root.memo.get("sites_naming")
    if table is not None:
        return table
    table = {}
    for site in index._sites:
        call, caller, _ = site
        func = call.func
        names: list[str] = []
        if type(func) is cst.Name:
            names.append(func.value)
            if func.value in _transformed_names(index, caller):
                func = (
                    caller.single_assignment(func.value) or index.root.single_assignment(func.value) or func
                )
        elif type(func) is cst.Attribute:
            names.append(func.attr.value)
        if type(func) is cst.Call and func.args and type(func.args[0].value) is cst.Name:
            names.append(func.args[0].value.value)
        if names and names[0] in _LAX_NAMES:
            for arg in call.args:
                if type(arg.value) is cst.Name:
                    names.append(arg.value.value)
                elif type(arg.value) is cst.Lambda:
                    names.append("<lambda>")
        for name in set(names):
            table.setdefault(name, []).append(site)
    index.root.memo["sites_naming"] = table
    return table


def _passed(
    index: ModuleIndex,
    call: cst.Call,
    caller: Unit,
    order: int,
    owner: Unit,
    function: str,
    name: str,
    position: int | None,
) -> list[cst.BaseExpression | None]:
    """What `call` passes `owner` for its parameter: [] when it does not call `owner`, [None] when it may
    but what it passes is not known."""
    func = call.func
    if type(func) is cst.Name and func.value != function and func.value in _transformed_names(index, caller):
        func = caller.single_assignment(func.value) or index.root.single_assignment(func.value) or func
    if type(func) is cst.Call:
        # `jax.jit(f)(model, x)`, `g = nnx.jit(f); g(model, x)`: f receives these arguments.
        target = func.args[0].value if func.args and func.args[0].keyword is None else None
        if (
            type(target) is cst.Name
            and target.value == function
            and index.transform_of(func.func, caller) is not None
            and any(callee is owner for callee, _ in index.resolve_function(target, caller))
        ):
            return [_given(call, position, name, 0)]
        return []
    if type(func) is cst.Name:
        if func.value == function:
            for callee, _ in index.resolve_function(func, caller, order):
                if callee is owner:
                    return [_given(call, position, name, 0)]
            return []
        return _lax_carried(index, call, caller, owner, position) if func.value in _LAX_NAMES else []
    if type(func) is not cst.Attribute:
        return []
    if func.attr.value == function:
        for callee, bound_self in index.resolve_function(func, caller, order):
            if callee is owner:
                return [_given(call, position, name, 1 if bound_self else 0)]
        # `obj.m(...)` on an object not known here may run the method: what it passes is unknown.
        return [None] if owner.is_method else []
    if func.attr.value in _LAX_NAMES:
        return _lax_carried(index, call, caller, owner, position)
    return []


def _transformed_names(index: ModuleIndex, unit: Unit) -> frozenset[str]:
    """Names bound once (in `unit` or at module level) to a call: `g = jax.jit(f)` may be called as `g(...)`."""
    memo = unit.memo.get("bound_calls")
    if memo is None:
        names = set()
        for scope in (unit, index.root):
            for bound, bindings in scope.bindings.items():
                if len(bindings) == 1 and bindings[0].plain and type(bindings[0].value) is cst.Call:
                    names.add(bound)
        memo = unit.memo["bound_calls"] = frozenset(names)
    return memo


def _given(call: cst.Call, position: int | None, name: str, shift: int) -> cst.BaseExpression | None:
    if any(a.star for a in call.args):
        return None
    if position is not None and position < shift:
        return None
    found = argument(call, None if position is None else position - shift, name)
    return found.value if found is not None else None


def _lax_carried(
    index: ModuleIndex, call: cst.Call, caller: Unit, owner: Unit, position: int | None
) -> list[cst.BaseExpression | None]:
    """`lax.scan(owner, init, xs)`: the carry is `init`'s class, a slice of a stacked Module is the Module's."""
    if position is None:
        return []
    qualname = index.qualname(call.func, caller)
    branches = _LAX_BRANCHES.get(qualname or "")
    if branches is not None:
        positions, first = branches
        if any(a.keyword is not None or a.star for a in call.args):
            return [None] if _runs(index, call, caller, owner, positions) else []
        if not _runs(index, call, caller, owner, positions):
            return []
        return [call.args[first + position].value if first + position < len(call.args) else None]
    entry = _LAX_CARRIES.get(qualname or "")
    if entry is None:
        return []
    (body_position, body_keyword), carried = entry
    body = argument(call, body_position, body_keyword)
    if body is None or not any(u is owner for u, _ in index.resolve_function(body.value, caller)):
        return []
    if position >= len(carried) or carried[position][0] < 0:
        return [None]
    found = argument(call, *carried[position])
    return [found.value if found is not None else None]


def _runs(index: ModuleIndex, call: cst.Call, caller: Unit, owner: Unit, positions: tuple[int, ...]) -> bool:
    """Whether one of the call's positional arguments at `positions` names `owner`."""
    return any(
        position < len(call.args)
        and any(u is owner for u, _ in index.resolve_function(call.args[position].value, caller))
        for position in positions
    )


def spread_keys(index: ModuleIndex, spread: cst.BaseExpression, unit: Unit) -> frozenset[str] | None:
    """The keys `**spread` passes: of a dict display, or of a parameter never rebound that every call of its
    function in this module gives a dict display of string keys (`sample(model, {"temperature": t})`); None
    when unknown."""
    if type(spread) is cst.Dict:
        return _display_keys(spread)
    if type(spread) is not cst.Name:
        return None
    name = spread.value
    owner: Unit | None = unit
    while owner is not None and owner is not index.root and name not in owner.local_names:
        owner = owner.parent
    if owner is None or owner is index.root:
        return None
    if name in owner.bindings:
        bound = owner.single_assignment(name)
        return _display_keys(bound) if type(bound) is cst.Dict else None
    node = owner.node
    if type(node) is not cst.FunctionDef and type(node) is not cst.Lambda:
        return None
    positional = positional_params(node.params)
    param = next((p for p in [*positional, *node.params.kwonly_params] if p.name.value == name), None)
    if param is None:
        return None
    arguments = _arguments(index, owner, name, positional.index(param) if param in positional else None)
    keys: set[str] = set()
    for given, caller in arguments:
        if type(given) is cst.Name:
            given = caller.single_assignment(given.value) or index.root.single_assignment(given.value)
        found = _display_keys(given) if type(given) is cst.Dict else None
        if found is None:
            return None
        keys |= found
    return frozenset(keys) if arguments else None


def _display_keys(node: cst.Dict) -> frozenset[str] | None:
    keys = set()
    for element in node.elements:
        if type(element) is not cst.DictElement or type(element.key) is not cst.SimpleString:
            return None
        key = element.key.evaluated_value
        if not isinstance(key, str):
            return None
        keys.add(key)
    return frozenset(keys)


def list_parameter(index: ModuleIndex, unit: Unit, name: str) -> bool:
    """Whether every call of `unit` in this module (at least one) passes its parameter `name` a Python list: a
    list display, or a name bound once (in the caller or at module level) to one. A transformation traces
    such an argument leaf by leaf: the parameter is a list of tracers, not an array."""
    node = unit.node
    if type(node) is not cst.FunctionDef or name in unit.bindings:
        return False
    positional = positional_params(node.params)
    param = next((p for p in [*positional, *node.params.kwonly_params] if p.name.value == name), None)
    if param is None or param.default is not None:
        return False
    arguments = _arguments(index, unit, name, positional.index(param) if param in positional else None)
    for given, caller in arguments:
        if type(given) is cst.Name:
            owner = caller if given.value in caller.local_names else index.root
            given = owner.single_assignment(given.value)
        if type(given) is not cst.List:
            return False
    return bool(arguments)
