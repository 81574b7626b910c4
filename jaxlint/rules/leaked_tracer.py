"""JAX105 leaked-tracer."""

from __future__ import annotations

import libcst as cst

from ..analysis import ARRAY, GRAD, HOLDS_TRACED, NONE, TRACED
from ..analysis.transforms import positional_params
from ..analysis.values import element_flags
from ..syntax import children, source_of, walk
from .base import Rule
from .traced_control_flow import culprit

# Methods that store their arguments in a list/dict/set (trusted only on a receiver known to be one:
# `replay_buffer.insert(state, x)` and optax's `opt.update(...)` are functional APIs, not stores).
STORING_METHODS = frozenset(
    {"append", "extend", "insert", "appendleft", "extendleft", "add", "update", "setdefault"}
)
_CONTAINER_CALLS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter"})
# Methods that build the object: an object built inside the trace does not outlive it.
_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__", "setup", "__setstate__"})
# Classes whose instances are pytrees (rebuilt from leaves inside a transformation) or whose state
# mutation a transformation tracks itself (flax.nnx): assigning to their attributes is not a leak.
_PYTREE_DECORATORS = frozenset(
    {
        "jax.tree_util.register_pytree_node_class",
        "jax.tree_util.register_dataclass",
        "flax.struct.dataclass",
        "chex.dataclass",
    }
)
_PYTREE_BASES = ("equinox.Module", "flax.struct.PyTreeNode", "flax.nnx.", "flax.experimental.nnx.")


def root_name(node: cst.BaseExpression) -> cst.Name | None:
    """`a` for `a`, `a.b.c`, `a[k].b`; None when the chain starts elsewhere (a call, a literal)."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node if isinstance(node, cst.Name) else None


class Declarations:
    """`global` and `nonlocal` names of each function body (nested functions excluded), computed once."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        self._containers: dict[tuple[int, str], bool] = {}
        self._class_containers: dict[int, frozenset[str]] = {}

    def of(self, unit) -> tuple[frozenset[str], frozenset[str]]:
        found = self._cache.get(id(unit))
        if found is None:
            globals_: set[str] = set()
            nonlocals: set[str] = set()
            stack = list(children(unit.node))
            while stack:
                node = stack.pop()
                if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    continue
                if isinstance(node, cst.Global):
                    globals_.update(n.name.value for n in node.names)
                elif isinstance(node, cst.Nonlocal):
                    nonlocals.update(n.name.value for n in node.names)
                stack.extend(children(node))
            found = (frozenset(globals_), frozenset(nonlocals))
            self._cache[id(unit)] = found
        return found

    def outer_storage(self, name: str, ctx) -> str | None:
        """Where `name` lives, when that outlives the current trace: "global", "enclosing" or None.

        A name of an enclosing function outlives the trace when that function is not traced, or when a
        transformation applies between it and here (a `lax.scan` body writing its tracers into the jitted
        function around it); a helper defined and called inside the same traced function shares its trace.
        """
        found = self.locate(name, ctx)
        return None if found is None else found[0]

    def locate(self, name: str, ctx):
        """(`outer_storage` answer, the unit that binds the name) or None."""
        if ctx.own_names is not None:
            return None  # a class body or comprehension: names bound here live here
        unit = ctx.unit
        root = ctx.index.root
        if unit is root:
            return None
        globals_, nonlocals = self.of(unit)
        if name in globals_:
            return "global", root
        if name in unit.local_names and name not in nonlocals:
            return None
        crossed = unit.is_target and unit.kind > NONE
        scope = unit.parent
        while scope is not None:
            if scope is root:
                if ctx.qualname(cst.Name(name)) is not None:
                    return None  # an import or a builtin
                return "global", root
            if name in scope.local_names:
                owner_kind = _frame_kind(ctx, scope)
                return ("enclosing", scope) if crossed or owner_kind == NONE else None
            crossed = crossed or (scope.is_target and scope.kind > NONE)
            scope = scope.parent
        return None

    def class_containers(self, class_node: cst.ClassDef) -> frozenset[str]:
        """Attributes that the class's methods bind to a container (`self.history = []`)."""
        found = self._class_containers.get(id(class_node))
        if found is None:
            names = set()
            for node in walk(class_node):
                if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
                    targets = (
                        [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                    )
                    for target in targets:
                        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
                            if _is_container(node.value):
                                names.add(target.attr.value)
            found = frozenset(names)
            self._class_containers[id(class_node)] = found
        return found

    def bound_to_container(self, name: str, owner) -> bool:
        """Whether `owner`'s own body binds `name` to a list/dict/set display or constructor."""
        key = (id(owner), name)
        found = self._containers.get(key)
        if found is None:
            found = False
            stack = list(children(owner.node))
            while stack and not found:
                node = stack.pop()
                if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    continue
                if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
                    targets = (
                        [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                    )
                    if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                        found = _is_container(node.value)
                stack.extend(children(node))
            self._containers[key] = found
        return found


def _is_container(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True
    if isinstance(value, cst.Call):
        func = value.func
        name = (
            func.attr.value
            if isinstance(func, cst.Attribute)
            else func.value
            if isinstance(func, cst.Name)
            else ""
        )
        return name in _CONTAINER_CALLS
    return False


def _frame_kind(ctx, unit) -> int:
    frame = ctx.parent
    while frame is not None:
        if frame.unit is unit and frame.own_names is None:
            return frame.kind
        frame = frame.parent
    return unit.kind


def method_of_self(name: str, ctx):
    """The method unit whose instance `name` refers to (its first parameter, maybe through closures), or None."""
    unit = ctx.unit
    while unit is not None and isinstance(unit.node, (cst.FunctionDef, cst.Lambda)):
        if unit.is_method:
            params = positional_params(unit.node.params)
            return unit if params and params[0].name.value == name else None
        if name in unit.local_names:
            return None
        unit = unit.parent
    return None


def instance_outlives_trace(method, ctx) -> bool:
    """Whether attributes stored on the method's instance outlive the trace (see _PYTREE_*, _CONSTRUCTORS)."""
    if method.name in _CONSTRUCTORS:
        return False
    class_node = method.class_node
    for decorator in class_node.decorators:
        target = (
            decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        )
        if ctx.qualname(target) in _PYTREE_DECORATORS:
            return False
    for base in class_node.bases:
        name = ctx.qualname(base.value) or ""
        if name.startswith(_PYTREE_BASES):
            return False
    return True


def storage_of(target: cst.BaseExpression, ctx, declarations: Declarations) -> str | None:
    """Describe where an assignment to `target` stores its value, when that outlives the trace."""
    if isinstance(target, cst.Name):
        where = declarations.outer_storage(target.value, ctx)
        if where is None:
            return None
        return f"{'global' if where == 'global' else 'enclosing-scope variable'} '{target.value}'"
    if isinstance(target, cst.Subscript):
        return container_storage(target.value, ctx, declarations)
    if not isinstance(target, cst.Attribute) or target.attr.value == "value":
        return None  # `x.value = ...`: a flax.nnx / haiku-style state variable, updated on purpose
    root = root_name(target)
    if root is None or ctx.flags(root) & TRACED:
        return None
    text = source_of(target, 30)
    method = method_of_self(root.value, ctx)
    if method is not None:
        return f"'{text}'" if instance_outlives_trace(method, ctx) else None
    where = declarations.outer_storage(root.value, ctx)
    if where is None:
        return None
    return f"'{text}' ({'a global' if where == 'global' else 'from an enclosing scope'})"


def container_storage(receiver: cst.BaseExpression, ctx, declarations: Declarations) -> str | None:
    """Describe a list/dict/set that outlives the trace, written through `receiver[k] = ...` or a method.

    Only a receiver known to be a container counts: a plain outer name bound to `[]`, `{}`, `set()`, … or a
    `self.attr` the class binds to one. Anything else may be a mutable Ref (Pallas, `jax.new_ref`) or an
    object with a functional `insert`/`update` API.
    """
    if isinstance(receiver, cst.Name):
        if method_of_self(receiver.value, ctx) is not None:
            return None
        found = declarations.locate(receiver.value, ctx)
        if found is None or not declarations.bound_to_container(receiver.value, found[1]):
            return None
        return f"{'global' if found[0] == 'global' else 'enclosing-scope'} container '{receiver.value}'"
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name):
        method = method_of_self(receiver.value.value, ctx)
        if method is None or ctx.flags(receiver.value) & TRACED or not instance_outlives_trace(method, ctx):
            return None
        if receiver.attr.value not in declarations.class_containers(method.class_node):
            return None
        return f"'{source_of(receiver, 30)}'"
    return None


class LeakedTracer(Rule):
    code = "JAX105"
    name = "leaked-tracer"
    summary = (
        "A traced value stored where it outlives the trace (global, nonlocal, `self.attr`, outer container)"
    )
    confirmable = True
    doc = """
## What it does
Flags a traced value stored, inside a transformation (`jit`, `vmap`, `pmap`, `grad`, `checkpoint`, `lax`
bodies), somewhere that outlives the trace: a `global` or `nonlocal` variable, an attribute or item of `self`,
an attribute or item of a module-level or enclosing-scope object, or an outer list/dict/set through `append`,
`extend`, `insert` or `outer[k] = y` (and `add`, `update`, `setdefault` when the outer name is bound to a
list/dict/set: `opt.update(...)` is optax's API, not a store).

Not flagged: locals and containers created inside the traced function; an enclosing function's variables
when the writer is a plain helper defined and called inside the same traced function (one trace); pytree
classes (`register_pytree_node_class`, `flax.struct.dataclass`, `equinox.Module`) and `flax.nnx` modules,
whose attribute updates the transformation handles; `x.value = ...` state variables; constructors.

## Why is this bad
A tracer is only meaningful during the trace that made it. Stored outside, it survives the function's
return; the next use (an arithmetic op, printing its value, passing it to another jitted function) raises
`UnexpectedTracerError`, or silently carries a stale abstract value. `jax.checking_leaks()` reports it.

## Example
```python
history = []

@jax.jit
def step(x):
    y = x * 2
    history.append(y)
    return y
```

## Use instead
```python
@jax.jit
def step(x):
    y = x * 2
    return y, y          # return what you want to keep

y, kept = step(x)
history.append(kept)
```
Use the `aux` output of `jax.value_and_grad(..., has_aux=True)` or the carry of `lax.scan` to get values out.

## Fix safety
No automatic fix: the value has to be returned through the function's outputs.

## References
- https://docs.jax.dev/en/latest/errors.html#jax.errors.UnexpectedTracerError
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions
"""

    def __init__(self, settings: object | None = None) -> None:
        super().__init__(settings)
        self.declarations = Declarations()

    def on_assign(self, target: cst.BaseExpression, value, statement: cst.CSTNode, ctx) -> None:
        if ctx.kind < GRAD:
            return
        if value is None:
            source = getattr(statement, "value", None)
            flags = element_flags(ctx.flags(source)) if source is not None else 0
        elif isinstance(statement, cst.AugAssign):
            flags = ctx.flags(target) | ctx.flags(value)
            flags |= ARRAY if flags & TRACED else 0
        else:
            flags = ctx.flags(value)
        if not flags & (TRACED | HOLDS_TRACED):
            return
        if isinstance(target, cst.Subscript) and ctx.flags(target.value) & (ARRAY | TRACED):
            return  # item assignment on an array: JAX103
        where = storage_of(target, ctx, self.declarations)
        if where is None:
            return
        shown = value if value is not None and ctx.flags(value) & (TRACED | HOLDS_TRACED) else target
        self._report(target, shown, where, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.kind < GRAD or not isinstance(node.func, cst.Attribute):
            return
        method = node.func.attr.value
        receiver = node.func.value
        if method not in STORING_METHODS:
            return
        stored = next((a.value for a in node.args if ctx.flags(a.value) & (TRACED | HOLDS_TRACED)), None)
        if stored is None or ctx.flags(receiver) & (ARRAY | TRACED):
            return
        where = container_storage(receiver, ctx, self.declarations)
        if where is None:
            return
        self._report(node, stored, where, ctx)

    def _report(self, node: cst.CSTNode, shown: cst.BaseExpression, where: str, ctx) -> None:
        ctx.report(
            self,
            node,
            f"Traced value {culprit(shown, ctx)} is stored in {where} inside {ctx.context}: the tracer outlives "
            "the trace and using it later raises UnexpectedTracerError; return the value instead",
        )
