"""Where a store lands, and whether it outlives the trace that makes the stored value.

`storage_of(target, ctx, resolver)` answers for an assignment target (a name declared `global`/`nonlocal` or
bound in an enclosing scope, an attribute of `self` or of an outer object, an item of an outer container);
`container_storage` for a receiver of `.append(...)`-style calls. JAX105 (tracer leaks) and JAX202 (side
effects) phrase their messages from the answers.
"""

from __future__ import annotations

import libcst as cst

from ...syntax import root_name, source_of, walk
from ..binding.index import Unit
from ..binding.transforms import positional_params
from ..context import RuleContext
from ..kinds import NONE, TRACED
from ..semantics.library import CONSTRUCTORS, PYTREE_CLASS_PREFIXES, PYTREE_DECORATORS

_CONTAINER_CALLS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter"})


class StorageResolver:
    """Where names and attributes stored to live; one per file (it caches per class and per binding)."""

    def __init__(self) -> None:
        self._containers: dict[tuple[int, str], bool] = {}
        self._class_containers: dict[int, frozenset[str]] = {}

    def outer_storage(self, name: str, ctx: RuleContext) -> str | None:
        """Where `name` lives, when that outlives the current trace: "global", "enclosing" or None.

        A name of an enclosing function outlives the trace when that function is not traced, or when a
        transformation applies between it and here (a `lax.scan` body writing its tracers into the jitted
        function around it); a helper defined and called inside the same traced function shares its trace.
        """
        found = self.locate(name, ctx)
        return None if found is None else found[0]

    def locate(self, name: str, ctx: RuleContext) -> tuple[str, Unit] | None:
        """(`outer_storage` answer, the unit that binds the name) or None."""
        if ctx.own_names is not None:
            return None  # a class body or comprehension: names bound here live here
        unit = ctx.unit
        root = ctx.index.root
        if unit is root:
            return None
        if name in unit.declared_globals:
            return "global", root
        if name in unit.local_names and name not in unit.declared_nonlocals:
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

    @staticmethod
    def bound_to_container(name: str, owner: Unit) -> bool:
        """Whether `owner`'s own body binds `name` to a list/dict/set display or constructor."""
        return any(
            binding.value is not None and _is_container(binding.value)
            for binding in owner.bindings.get(name, ())
            if type(binding.node) in (cst.Assign, cst.AnnAssign)
        )


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


def _frame_kind(ctx: RuleContext, unit: Unit) -> int:
    frame = ctx.parent
    while frame is not None:
        if frame.unit is unit and frame.own_names is None:
            return frame.kind
        frame = frame.parent
    return unit.kind


def method_of_self(name: str, ctx: RuleContext) -> Unit | None:
    """The method unit whose instance `name` refers to (its first parameter, maybe through closures), or None."""
    unit: Unit | None = ctx.unit
    while unit is not None and isinstance(unit.node, (cst.FunctionDef, cst.Lambda)):
        if unit.is_method:
            params = positional_params(unit.node.params)
            return unit if params and params[0].name.value == name else None
        if name in unit.local_names:
            return None
        unit = unit.parent
    return None


def instance_outlives_trace(method: Unit, ctx: RuleContext) -> bool:
    """Whether attributes stored on the method's instance outlive the trace: not in a constructor, and not on a
    pytree (rebuilt from leaves inside a transformation) or flax.nnx object (whose mutation it tracks)."""
    if method.name in CONSTRUCTORS:
        return False
    class_node = method.class_node
    assert class_node is not None  # a method
    for decorator in class_node.decorators:
        target = (
            decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        )
        if ctx.qualname(target) in PYTREE_DECORATORS:
            return False
    for base in class_node.bases:
        name = ctx.qualname(base.value) or ""
        if name.startswith(PYTREE_CLASS_PREFIXES):
            return False
    return True


def storage_of(
    target: cst.BaseExpression, ctx: RuleContext, resolver: StorageResolver, *, items: bool = True
) -> str | None:
    """Describe where an assignment to `target` stores its value, when that outlives the trace.

    `items=False` leaves out item stores (`outer[k] = v`) and says only which attribute an attribute store
    writes, not whether it is a global's or an enclosing scope's.
    """
    if isinstance(target, cst.Name):
        where = resolver.outer_storage(target.value, ctx)
        if where is None:
            return None
        return f"{'global' if where == 'global' else 'enclosing-scope variable'} '{target.value}'"
    if isinstance(target, cst.Subscript):
        return container_storage(target.value, ctx, resolver) if items else None
    if not isinstance(target, cst.Attribute) or target.attr.value == "value":
        return None  # `x.value = ...`: a flax.nnx / haiku-style state variable, updated on purpose
    root = root_name(target)
    if root is None or ctx.flags(root) & TRACED:
        return None
    text = source_of(target, 30)
    method = method_of_self(root.value, ctx)
    if method is not None:
        return f"'{text}'" if instance_outlives_trace(method, ctx) else None
    where = resolver.outer_storage(root.value, ctx)
    if where is None:
        return None
    if not items:
        return f"'{text}'"
    return f"'{text}' ({'a global' if where == 'global' else 'from an enclosing scope'})"


def container_storage(
    receiver: cst.BaseExpression, ctx: RuleContext, resolver: StorageResolver
) -> str | None:
    """Describe a list/dict/set that outlives the trace, written through `receiver[k] = ...` or a method.

    Only a receiver known to be a container counts: a plain outer name bound to `[]`, `{}`, `set()`, … or a
    `self.attr` the class binds to one. Anything else may be a mutable Ref (Pallas, `jax.new_ref`) or an
    object with a functional `insert`/`update` API.
    """
    if isinstance(receiver, cst.Name):
        if method_of_self(receiver.value, ctx) is not None:
            return None
        found = resolver.locate(receiver.value, ctx)
        if found is None or not resolver.bound_to_container(receiver.value, found[1]):
            return None
        return f"{'global' if found[0] == 'global' else 'enclosing-scope'} container '{receiver.value}'"
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name):
        method = method_of_self(receiver.value.value, ctx)
        if method is None or ctx.flags(receiver.value) & TRACED or not instance_outlives_trace(method, ctx):
            return None
        assert method.class_node is not None  # a method
        if receiver.attr.value not in resolver.class_containers(method.class_node):
            return None
        return f"'{source_of(receiver, 30)}'"
    return None
