"""JAX405 jit-method-self."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    DATACLASS,
    LINEN,
    PYTREE_METHODS,
    SETUP_METHODS,
    TRANSFORMATIONS,
    TYPING_PLAIN_BASES,
    RuleContext,
    Unit,
    array_leaf_arguments,
    built_class,
    changes_what_is_read,
    compiling_transform,
    decorator_transforms,
    function_leaf,
    jitted_callable,
    linen_possible,
    local_method_units,
    module_class_kind,
    module_instance,
    parameter_class,
    positional_params,
    self_writes,
    static_spec,
    unhashable_class,
)
from ..syntax import assigned_targets, bound_names, dotted_name, source_of, walk
from .base import Rule

# Compiling transformations that trace every argument, `self` included (the filtering ones keep a Module's
# non-array leaves static).
_TRACING_SELF = frozenset(n for n, t in TRANSFORMATIONS.items() if t.compiling and not t.filtering)
# Bases that add nothing to hashing or pytree registration.


class JitMethodSelf(Rule):
    code = "JAX405"
    name = "jit-method-self"
    summary = (
        "`@jax.jit` on a method that traces `self` (or a flax.linen Module passed as a traced jit argument), "
        "or marks `self` static while its state changes"
    )
    confirmable = True
    doc = """
## What it does
Flags `@jax.jit` (or `@jax.pmap`) directly on a method or classmethod:
- when `self`/`cls` is traced (not in `static_argnums`) and the class is a plain Python class — not a pytree
  (`equinox.Module`, `flax.struct.dataclass`/`PyTreeNode`, `NamedTuple`, classes registered with
  `jax.tree_util.register_pytree_node_class`/`register_dataclass`/`register_pytree_node`, `chex.dataclass`,
  or any class with a base or decorator from another library, which may be one);
- when `self` is static (`static_argnums=0`) but the class is unhashable (a plain `@dataclass`, or `__eq__`
  without `__hash__`), or hashes by identity while the method reads an attribute that another method
  reassigns or changes in place (`self.table[i] = v`). Setting an attribute of a held object
  (`self.actor.state = s`) counts only for a method that reads that attribute, uses the object whole, or reads
  a method or property of its class (when this module defines it) that reads it. A private helper that only
  the jitted method calls, there before the attribute is read (`self._init_network(rng)` first thing in a
  jitted `train`), writes it in the method's own trace: that counts as no change.

- when a flax.linen Module instance (`model = MLP(...)`, of a class of this module or, in project mode, of
  another) is passed to a jitted function of this module at a position that is not static:
  `jax.jit(train_step)(model, params, x)`, or `step(model, ...)` of an `@jax.jit` `step`, also through a
  parameter of the calling function that every caller gives such an instance;
- `fast = jax.jit(obj.m)` (or `obj.m = jax.jit(obj.m)`) of an instance of a module class, called, then an
  attribute `m` reads changed (`obj.attr = v`, or a method of the class reassigning `self.attr`), then called
  again: the bound `self` is a constant of the trace, so the second call still uses the old value;
- when a pytree holding a Python function as a leaf (an `eqx.nn.MLP`'s activation, a pool's operation,
  `eqx.nn.Sequential([..., eqx.nn.Lambda(f)])`, a Module of this module with such a field or a `Callable`
  field given a function, not marked static) is given where a plain transformation reads every leaf as an
  array: a traced argument of `jax.jit`/`pmap`/`checkpoint`, a differentiated one of `jax.grad`/
  `value_and_grad`, a mapped one of `jax.vmap` (the outermost transformation of the callable decides), or
  the carry of `lax.scan`/`fori_loop`/`while_loop`. equinox's `filter_*` keep such leaves static.

## Why is this bad
`jax.jit` treats every argument as an array unless told otherwise. `self` is an instance of a class JAX does
not know, so the first call raises `TypeError: Error interpreting argument to <function ...> as an abstract
array. The problematic value is of type <class '...'>` (for a classmethod, of type `<class 'type'>`).
Marking `self` static makes JAX hash it into the cache key: an unhashable class raises
`ValueError: Non-hashable static arguments are not supported`, and a class hashed by identity keeps hitting
the same cache entry after its attributes change, so the compiled code silently uses the old values
(verified: after `self.w = 5.0`, the method still computes with `2.0`). A flax.linen Module is a dataclass
that flax does not register as a pytree, so passing one as a traced argument raises the same `TypeError`
(verified on flax 0.12.8); as a static argument it is fine (linen Modules hash by their fields), as is
closing over it and passing only its `params`. An equinox Module is a pytree, but a function among its leaves
is no JAX type either: `jax.jit`, `jax.grad` and a `lax.scan` carry raise `TypeError` on it (verified on
equinox 0.13.8, jax 0.10.2), where `eqx.filter_jit`/`eqx.filter_grad` keep it static.

## Example
```python
class Scaler:
    def __init__(self, w):
        self.w = w

    @jax.jit
    def apply(self, x):
        return x * self.w
```

## Use instead
```python
class Scaler:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return _scale(x, self.w)


@jax.jit
def _scale(x, w):
    return x * w
```
or make the class a pytree (`jax.tree_util.register_dataclass`, `equinox.Module`), or, for an immutable
class with value-based `__hash__`/`__eq__`, use `@partial(jax.jit, static_argnums=0)`.

## Fix safety
No automatic fix.

## References
- https://docs.jax.dev/en/latest/faq.html#how-to-use-jit-with-methods
- https://docs.jax.dev/en/latest/pytrees.html#custom-pytrees-and-initialization
"""

    def __init__(self) -> None:
        self._registered: set[str] | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx: RuleContext) -> None:
        if not node.decorators:
            return
        unit = ctx.index.units.get(id(node))
        if unit is None or unit.class_node is None:
            return
        if any(_decorator_name(d) == "staticmethod" for d in node.decorators):
            return
        order = [_decorator_name(d) for d in node.decorators]
        for name, keywords, decorator in decorator_transforms(node, unit, ctx.index):
            if name not in _TRACING_SELF or compiling_transform(decorator.decorator, ctx) is None:
                continue
            position = next(i for i, d in enumerate(node.decorators) if d is decorator)
            if "classmethod" in order[position:]:
                return  # jit applied to a classmethod object fails at class creation, not this rule's case
            is_classmethod = "classmethod" in order[:position]
            self._check(node, unit, name, keywords, decorator, is_classmethod, ctx)
            return

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        """A flax.linen Module instance passed to a jitted function at a traced (non-static) position; a
        jitted bound method whose instance changes afterwards; a pytree holding a function where a plain
        transformation reads its leaves as arrays."""
        if not node.args:
            return
        self._bound_method(node, ctx)
        self._function_leaves(node, ctx)
        if linen_possible(ctx.index):
            self._linen_argument(node, ctx)

    def _function_leaves(self, node: cst.Call, ctx: RuleContext) -> None:
        """A pytree holding a Python function as a leaf (an equinox MLP's activation) given where a plain
        transformation (jax.jit, grad, vmap) or a lax loop's carry reads every leaf as an array."""
        found = array_leaf_arguments(node, ctx)
        if found is None:
            return
        label, arguments = found
        for arg, param in arguments:
            what = function_leaf(ctx.index, arg.value, ctx.unit)
            if what is None:
                continue
            given = f"argument {param}" if param.isdigit() else f"'{param}'"
            ctx.report(
                self,
                arg.value,
                f"'{source_of(arg.value, 30)}' given to {given} of {label} holds a Python function as a pytree "
                f"leaf ({what}); {label} reads every leaf as an array, so the call raises TypeError (not a valid "
                "JAX type); use the filtered transformation (eqx.filter_jit, eqx.filter_grad), mark the "
                "field static, or split the arrays out (eqx.partition) and pass only those",
            )
            return

    def _linen_argument(self, node: cst.Call, ctx: RuleContext) -> None:
        """A flax.linen Module instance passed to a jitted function at a traced (non-static) position."""
        jitted = jitted_callable(node.func, ctx)
        if jitted is None:
            return
        for arg, param, static in jitted.arguments(node):
            if static:
                continue
            cls = _linen_class(arg.value, ctx)
            if cls is None:
                continue
            what = source_of(cls, 30)
            ctx.report(
                self,
                arg.value,
                f"flax.linen Module '{what}' passed to traced argument '{param}' of jitted '{jitted.label}': a "
                "linen Module is not a pytree, so the call raises TypeError (not a valid JAX type); mark "
                f"'{param}' static (static_argnums/static_argnames) or close over the Module and pass its params",
            )

    def _bound_method(self, node: cst.Call, ctx: RuleContext) -> None:
        """`fast = jax.jit(obj.m)` with `obj` built from a class of the module, then `obj.attr = v` (or a
        method call that reassigns `self.attr`) later in the same code, where `m` reads `self.attr`: the
        bound `self` is a constant of the trace, so the jitted function keeps the old value."""
        target = node.args[0].value
        if (
            type(target) is not cst.Attribute
            or type(target.value) is not cst.Name
            or node.args[0].keyword is not None
            or compiling_transform(node.func, ctx) is None
        ):
            return
        index, unit = ctx.index, ctx.unit
        cls = built_class(index, target.value, unit)
        methods = local_method_units(index, cls, target.attr.value, exact=True) if cls is not None else []
        if len(methods) != 1 or not methods[0].is_method or type(methods[0].node) is not cst.FunctionDef:
            return
        params = positional_params(methods[0].node.params)
        if not params:
            return
        read = _self_reads(methods[0].node.body, params[0].name.value)
        # jit traces at the first call: the state is baked in only when a call comes before the change, and
        # it shows only when another call comes after it.
        bound = _bound_to(unit, node)
        if bound is None or cls is None or not read:
            return
        later = _later_statements(unit, node)
        first = next((at for at, s in enumerate(later) if _calls(s, bound)), None)
        if first is None:
            return
        rest = later[first + 1 :]
        changed = None
        for at, statement in enumerate(rest):
            changed = _changed_after([statement], target.value.value, read, index, cls)
            if changed is not None:
                if not any(_calls(s, bound) for s in rest[at + 1 :]):
                    changed = None
                break
        if changed is None:
            return
        attribute, where = changed
        obj = target.value.value
        ctx.report(
            self,
            node,
            f"jitted bound method '{source_of(target)}' bakes in '{obj}.{attribute}' as a constant of its trace "
            f"('self' is bound, not an argument), and {where} changes it later: the jitted function keeps "
            f"using the old value; pass '{attribute}' as an argument, or make the class a pytree and jit a "
            "function of it",
        )

    def _check(
        self, node, unit: Unit, name: str, keywords, decorator, is_classmethod: bool, ctx: RuleContext
    ) -> None:
        spec = static_spec(keywords, name)
        params = positional_params(node.params)
        if spec.unknown or not params:
            return
        first = params[0].name.value
        count = len(params)
        static_self = any((i + count if i < 0 else i) == 0 for i in spec.argnums) or first in spec.argnames
        cls = unit.class_node
        assert cls is not None  # visit_FunctionDef checks only methods
        where = decorator.decorator
        if not static_self:
            # A class object is never a valid JAX type; an instance is one only if its class is a pytree.
            if not is_classmethod and not self._plain_class(cls, ctx, set()):
                return
            if is_classmethod:
                advice = f"mark '{first}' static (static_argnums=0) or jit a function of the arrays it needs"
                what = "the class object"
            else:
                advice = (
                    f"jit a function of the arrays it needs, register '{cls.name.value}' as a pytree, "
                    f"or mark '{first}' static for an immutable hashable class"
                )
                what = f"a '{cls.name.value}' instance, not a pytree"
            ctx.report(
                self,
                where,
                f"@{name} on method '{node.name.value}' traces '{first}' ({what}): the first call raises "
                f"TypeError (not a valid JAX type); {advice}",
            )
            return
        if is_classmethod:
            return  # a class object is hashable and its attributes rarely change
        why = unhashable_class(cls, ctx.index)
        if why is not None:
            ctx.report(
                self,
                where,
                f"'{first}' is static in @{name} method '{node.name.value}', but '{cls.name.value}' is {why}: "
                "its instances are unhashable, so every call raises ValueError (Non-hashable static arguments)",
            )
            return
        if not self._hashes_by_identity(cls, ctx, set()):
            return
        stale = self._stale_attribute(node, first, cls, ctx)
        if stale is not None:
            attribute, mutator = stale
            ctx.report(
                self,
                where,
                f"'{first}' is static in @{name} method '{node.name.value}', so the compiled code is cached per "
                f"instance and bakes in '{first}.{attribute}', which '{mutator}' reassigns: later calls silently "
                f"use the old value; pass '{attribute}' as an argument instead",
            )

    # -- classes ---------------------------------------------------------------------------------------

    def _plain_class(self, cls: cst.ClassDef, ctx: RuleContext, seen: set[str]) -> bool:
        """A class JAX cannot treat as a pytree: plain bases, no decorator but `@dataclass`, not registered."""
        name = cls.name.value
        if name in seen:
            return False
        seen.add(name)
        if cls.keywords or name in self._registrations(ctx):
            return False
        for decorator in cls.decorators:
            expr = decorator.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            if ctx.index.qualname(target) != DATACLASS:
                return False
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in PYTREE_METHODS:
                return False
        for base in cls.bases:
            if not self._plain_base(base.value, ctx, seen):
                return False
        return True

    def _plain_base(self, base: cst.BaseExpression, ctx: RuleContext, seen: set[str]) -> bool:
        if isinstance(base, cst.Subscript):
            base = base.value
        qualname = ctx.index.qualname(base)
        if qualname in TYPING_PLAIN_BASES:
            return True
        if isinstance(base, cst.Name) and qualname is None:
            parent = ctx.index.classes.get(base.value)
            return parent is not None and self._plain_class(parent, ctx, seen)
        return False

    def _hashes_by_identity(self, cls: cst.ClassDef, ctx: RuleContext, seen: set[str]) -> bool:
        """No `__hash__`/`__eq__` anywhere in the same-module class hierarchy, and no decorator."""
        name = cls.name.value
        if name in seen or cls.decorators or cls.keywords:
            return False
        seen.add(name)
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in ("__hash__", "__eq__"):
                return False
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        names = {n for t in small.targets for n in bound_names(t.target)}
                        if names & {"__hash__", "__eq__"}:
                            return False
        for base in cls.bases:
            value = base.value.value if isinstance(base.value, cst.Subscript) else base.value
            qualname = ctx.index.qualname(value)
            if qualname in TYPING_PLAIN_BASES:
                continue
            parent = (
                ctx.index.classes.get(value.value)
                if isinstance(value, cst.Name) and qualname is None
                else None
            )
            if parent is None or not self._hashes_by_identity(parent, ctx, seen):
                return False
        return True

    def _registrations(self, ctx: RuleContext) -> set[str]:
        """Names passed to any call whose name mentions `register` (pytree registrations of all libraries)."""
        if self._registered is None:
            found: set[str] = set()
            for node in walk(ctx.index.module):
                if isinstance(node, cst.Call):
                    func = node.func
                    label = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
                    if isinstance(label, str) and "register" in label.lower():
                        found.update(a.value.value for a in node.args if isinstance(a.value, cst.Name))
            self._registered = found
        return self._registered

    @staticmethod
    def _stale_attribute(
        method: cst.FunctionDef, self_name: str, cls: cst.ClassDef, ctx: RuleContext
    ) -> tuple[str, str] | None:
        """An attribute of `self` the method reads and another (non-setup) method reassigns or changes in place."""
        read = _self_reads(method.body, self_name)
        if not read:
            return None
        setup = _setup_only(cls)
        own = _own_helpers(cls, method)
        for statement in cls.body.body:
            if not isinstance(statement, cst.FunctionDef) or statement is method:
                continue
            if statement.name.value in setup:
                continue
            params = positional_params(statement.params)
            if not params:
                continue
            # Sorted: a set's order changes with hash randomisation, and the message must not.
            writer = params[0].name.value
            for attribute in sorted(self_writes(statement.body, writer)):
                if statement.name.value in own and _written_first(
                    method.body, self_name, statement, attribute
                ):
                    continue  # the method's own trace writes it before reading it: what it reads is never old
                if attribute in read and changes_what_is_read(
                    statement.body,
                    writer,
                    method.body,
                    self_name,
                    attribute,
                    _held_class(cls, attribute, ctx),
                ):
                    return attribute, statement.name.value
        return None


def _held_class(cls: cst.ClassDef, attribute: str, ctx: RuleContext) -> cst.ClassDef | None:
    """The module's class whose instance `__init__` stores as `self.<attribute> = Name(...)`."""
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
            for node in walk(statement.body):
                if (
                    isinstance(node, cst.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0].target, cst.Attribute)
                    and node.targets[0].target.attr.value == attribute
                    and isinstance(node.value, cst.Call)
                    and isinstance(node.value.func, cst.Name)
                ):
                    return ctx.index.classes.get(node.value.func.value)
    return None


def _linen_class(value: cst.BaseExpression, ctx: RuleContext) -> cst.BaseExpression | None:
    """The flax.linen Module class `value` is an instance of: built by `Model(...)` here or bound once to it,
    or a parameter that every caller gives such an instance (`receivers.parameter_class`)."""
    index, unit = ctx.index, ctx.unit
    built = module_instance(index, value, unit)
    if built is not None:
        cls, scope = built.func, unit
    else:
        found = parameter_class(index, value, unit)
        if found is None or isinstance(found[0], str):
            return None
        cls, scope = found[0], found[1]
    return cls if module_class_kind(index, cls, scope) == LINEN else None


def _bound_to(unit: Unit, node: cst.CSTNode) -> str | None:
    """The dotted name (`fast`, `obj.m`) that a statement of `unit`'s body binds to `node` (`fast = node`)."""
    code = unit.node
    body = code.body if type(code) is cst.Module else getattr(getattr(code, "body", None), "body", ())
    for statement in body:
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assign and small.value is node and len(small.targets) == 1:
                    return dotted_name(small.targets[0].target)
    return None


def _calls(statement: cst.CSTNode, name: str) -> bool:
    """Whether the statement calls `name(...)`."""
    return any(type(n) is cst.Call and dotted_name(n.func) == name for n in walk(statement))


def _later_statements(unit: Unit, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements after the one of `unit`'s body (top level of its block) that holds `node`."""
    code = unit.node
    body = code.body if type(code) is cst.Module else getattr(getattr(code, "body", None), "body", ())
    for at, statement in enumerate(body):
        if any(n is node for n in walk(statement)):
            return list(body[at + 1 :])
    return []


def _changed_after(
    statements: list[cst.CSTNode], obj: str, read: set[str], index, cls: str
) -> tuple[str, str] | None:
    """(attribute, what changes it) for the first of `read` that `obj.attr = v` / `obj.attr += v` or a call
    `obj.m(...)` of a method of `cls` reassigning `self.attr` changes in `statements`."""
    for statement in statements:
        for node in walk(statement):
            for target in assigned_targets(node):
                if (
                    type(target) is cst.Attribute
                    and type(target.value) is cst.Name
                    and target.value.value == obj
                    and target.attr.value in read
                ):
                    return target.attr.value, f"'{obj}.{target.attr.value} = ...'"
            func = node.func if type(node) is cst.Call else None
            if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == obj:
                for method in local_method_units(index, cls, func.attr.value, exact=True):
                    code = method.node
                    if type(code) is not cst.FunctionDef or method.name in SETUP_METHODS:
                        continue
                    params = positional_params(code.params)
                    if not params:
                        continue
                    written = sorted(self_writes(code.body, params[0].name.value) & read)
                    if written:
                        return written[0], f"'{obj}.{func.attr.value}(...)'"
    return None


def _setup_only(cls: cst.ClassDef) -> set[str]:
    """Setup methods, plus private helpers the class uses only from them (`self._precompute()` in `__init__`):
    what those assign is set once per instance, so a jitted method cannot see it change."""
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    setup = {name for name in methods if name in SETUP_METHODS}
    users: dict[str, set[str]] = {}  # private method -> methods that mention `self.<it>`
    for name, method in methods.items():
        for attribute in _self_reads(method.body, "self") | _self_calls(method.body):
            if attribute.startswith("_") and attribute in methods and attribute != name:
                users.setdefault(attribute, set()).add(name)
    changed = True
    while changed:
        changed = False
        for name, by in users.items():
            if name not in setup and by <= setup:
                setup.add(name)
                changed = True
    return setup


def _own_helpers(cls: cst.ClassDef, method: cst.FunctionDef) -> set[str]:
    """Private methods only `method` mentions (`self._init_q_network(rng)` in a jitted `train`): they run in
    its trace, so what they assign is written there, each time it is traced."""
    users: dict[str, set[str]] = {}
    methods = {s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef):
            for name in _self_reads(statement.body, "self") | _self_calls(statement.body):
                if name.startswith("_") and name in methods and name != statement.name.value:
                    users.setdefault(name, set()).add(statement.name.value)
    return {name for name, by in users.items() if by == {method.name.value}}


def _written_first(body: cst.CSTNode, self_name: str, helper: cst.FunctionDef, attribute: str) -> bool:
    """Whether `self.<helper>(...)` is called in `body` before `self.<attribute>` is first read there."""
    for node in walk(body):  # (source order)
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == self_name
        ):
            if node.attr.value == helper.name.value:
                return True
            if node.attr.value == attribute:
                return False
    return False


def _self_calls(body: cst.CSTNode) -> set[str]:
    """Names of `self.m(...)` calls in a body."""
    return {
        node.func.attr.value
        for node in walk(body)
        if isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == "self"
    }


def _decorator_name(decorator: cst.Decorator) -> str | None:
    expr = decorator.decorator
    return expr.value if isinstance(expr, cst.Name) else None


def _self_reads(body: cst.CSTNode, self_name: str) -> set[str]:
    """`self.x` read in a body, called too (`self.fn(x)`: a function stored on the instance is read when
    called; a method of the class is never reassigned, so it never counts as stale)."""
    return {
        node.attr.value
        for node in walk(body)
        if isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == self_name
    }
