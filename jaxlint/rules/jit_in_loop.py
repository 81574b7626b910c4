"""JAX401 jit-in-loop, and the structural helpers the JAX40x rules share.

Shared helpers (imported by unhashable_static_arg, unblocked_timing, python_batch_loop and jit_method_self):
- `loops_at(cache, unit, node)`: the loops (For, While, comprehensions) of `unit` whose repeated part holds `node`;
  `loop_targets(loop)`: the names a loop rebinds each iteration;
- `bindings(unit)` / `single_assignment(unit, name)`: what `unit`'s own statements bind, cached per unit;
- `compiling_transform(func, ctx)`: whether an expression is `jax.jit`/`pmap`/`filter_jit`/`nnx.jit`
  (possibly through `partial` or a module alias), with its keywords;
- `decorator_transforms(def, unit, index)`: the transformations among a def's decorators;
- `jitted_callable(func, ctx, cache)`: the same-module function, static spec and call offset behind a callable
  known to be jitted (decorated def, `f = jax.jit(g, ...)`, `jax.jit(g, ...)` itself, a jitted method);
- `in_test_code(unit)`: test functions and methods of test classes.
"""

from __future__ import annotations

import dataclasses
import weakref

import libcst as cst

from ..analysis import NONE
from ..analysis.index import Unit
from ..analysis.names import dotted_name
from ..analysis.transforms import Application, StaticSpec, positional_params, static_spec
from ..syntax import children, source_of, walk
from .base import Rule

# Transformations that compile, and so cache by function identity.
COMPILING = frozenset({"jax.jit", "jax.pmap", "equinox.filter_jit", "equinox.filter_pmap", "flax.nnx.jit"})
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_CACHING_DECORATORS = frozenset({"functools.lru_cache", "functools.cache", "functools.cached_property"})

# -- loops -------------------------------------------------------------------------------------------------


def _unit_body(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.FunctionDef):
        return [node.body]
    if isinstance(node, cst.Lambda):
        return [node.body]
    return list(children(node))


def loop_map(unit_node: cst.CSTNode) -> dict[int, tuple[cst.CSTNode, ...]]:
    """id(node) -> the loops of this function (not of nested ones) that run `node` repeatedly, outermost first."""
    out: dict[int, tuple[cst.CSTNode, ...]] = {}
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(n, ()) for n in _unit_body(unit_node)]
    while stack:
        node, loops = stack.pop()
        if loops:
            out[id(node)] = loops
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            # Decorators and defaults run where the function is defined; the body runs when it is called.
            if isinstance(node, cst.FunctionDef):
                stack.extend((d, loops) for d in node.decorators)
            params = node.params
            for p in [*params.posonly_params, *params.params, *params.kwonly_params]:
                if p.default is not None:
                    stack.append((p.default, loops))
            continue
        if isinstance(node, cst.For):
            inner = (*loops, node)
            stack.append((node.iter, loops))
            stack.extend([(node.target, inner), (node.body, inner)])
            if node.orelse is not None:
                stack.append((node.orelse, loops))
            continue
        if isinstance(node, cst.While):
            inner = (*loops, node)
            stack.extend([(node.test, inner), (node.body, inner)])
            if node.orelse is not None:
                stack.append((node.orelse, loops))
            continue
        if isinstance(node, _COMPREHENSIONS):
            inner = (*loops, node)
            if isinstance(node, cst.DictComp):
                stack.extend([(node.key, inner), (node.value, inner)])
            else:
                stack.append((node.elt, inner))
            for_in: cst.CompFor | None = node.for_in
            first = True
            while for_in is not None:
                stack.append((for_in.iter, loops if first else inner))
                stack.append((for_in.target, inner))
                stack.extend((cond.test, inner) for cond in for_in.ifs)
                first = False
                for_in = for_in.inner_for_in
            continue
        stack.extend((child, loops) for child in children(node))
    return out


def loops_at(cache: dict, unit: Unit, node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """The loops of `unit` that run `node` repeatedly (cached per unit in `cache`)."""
    found = cache.get(id(unit.node))
    if found is None:
        found = cache[id(unit.node)] = loop_map(unit.node)
    return found.get(id(node), ())


def loop_targets(loop: cst.CSTNode) -> set[str]:
    """Names a loop binds on each iteration."""
    from ..analysis.index import bound_names

    if isinstance(loop, cst.For):
        return set(bound_names(loop.target))
    if isinstance(loop, _COMPREHENSIONS):
        names: set[str] = set()
        for_in = loop.for_in
        while for_in is not None:
            names.update(bound_names(for_in.target))
            for_in = for_in.inner_for_in
        return names
    return set()


# -- scopes ------------------------------------------------------------------------------------------------


_TEST_CODE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def in_test_code(unit: Unit) -> bool:
    """A test function or a method of a test class: code that runs once, where per-call rebuilding is intended."""
    found = _TEST_CODE.get(unit)
    if found is None:
        found = _TEST_CODE[unit] = _in_test_code(unit)
    return found


def _in_test_code(unit: Unit | None) -> bool:
    while unit is not None:
        name = unit.name
        if name.startswith("test") or name.startswith("_test"):
            return True
        if unit.class_node is not None:
            cls = unit.class_node.name.value
            if cls.startswith("Test") or cls.endswith(("Test", "Tests", "TestCase")):
                return True
        unit = unit.parent
    return False


def is_cached(unit: Unit, ctx) -> bool:
    node = unit.node
    if not isinstance(node, cst.FunctionDef):
        return False
    for decorator in node.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        if ctx.index.qualname(expr, unit.parent) in _CACHING_DECORATORS:
            return True
    return False


# -- transformations ---------------------------------------------------------------------------------------


def compiling_transform(func: cst.BaseExpression, ctx) -> tuple[str, list[cst.Arg]] | None:
    """`jax.jit` and the other compiling transformations, bare, through `partial` or a module alias.

    User wrappers named in the configuration are left out: they may cache their results themselves.
    """
    found = ctx.index.transform_of(func, ctx.unit)
    if found is None or found[0] not in COMPILING:
        return None
    jit_decorators = ctx.index.jit_decorators
    if jit_decorators and dotted_name(func) in jit_decorators and ctx.qualname(func) not in COMPILING:
        return None
    return found


def decorator_transforms(
    node: cst.FunctionDef, unit: Unit, index
) -> list[tuple[str, list[cst.Arg], cst.Decorator]]:
    """The transformations among a def's decorators, outermost first."""
    scope = unit.parent or index.root
    found = []
    for decorator in node.decorators:
        transform = index.transform_of(decorator.decorator, scope)
        if transform is not None:
            found.append((transform[0], transform[1], decorator))
    return found


@dataclasses.dataclass(frozen=True)
class Jitted:
    """A callable known to be jitted, and how call arguments map to its function's parameters."""

    unit: Unit
    spec: StaticSpec
    offset: int  # call position i is parameter i + offset of the def
    label: str  # for messages: the name called

    def static_parameters(self) -> tuple[set[int], set[str]]:
        """(parameter indices, parameter names) that are static, following JAX's inference rules."""
        params = positional_params(self.unit.node.params)  # type: ignore[attr-defined]
        names = [p.name.value for p in params]
        count = len(names) - self.offset
        indices = {self.offset + (i + count if i < 0 else i) for i in self.spec.argnums}
        indices = {i for i in indices if 0 <= i < len(names)}
        static_names = set(self.spec.argnames)
        if self.spec.argnums and not self.spec.argnames:
            static_names |= {names[i] for i in indices}
        elif self.spec.argnames and not self.spec.argnums:
            indices |= {i for i, n in enumerate(names) if n in static_names}
        return indices, static_names


def _from_application(target: Unit, app: Application, label: str, call_offset: int) -> Jitted | None:
    if not isinstance(target.node, cst.FunctionDef) or app.spec.unknown:
        return None
    offset = app.bound_positional + (1 if target.is_method and app.bound_self else 0)
    return Jitted(target, app.spec, offset + call_offset, label)


def jitted_callable(func: cst.BaseExpression, ctx, cache: dict) -> Jitted | None:
    """The jitted same-module function that calling `func` runs, or None when unknown or not jitted."""
    index = ctx.index
    if isinstance(func, cst.Call):  # `jax.jit(f, static_argnums=1)(...)`
        transform = compiling_transform(func.func, ctx)
        if (
            transform is None
            or transform[0] != "jax.jit"
            or not func.args
            or func.args[0].keyword is not None
        ):
            return None
        found = index.applications(func, ctx.unit)
        return (
            _from_application(*found[0], dotted_name(func.args[0].value) or "<function>", 0)
            if found
            else None
        )
    if isinstance(func, cst.Name):
        bound = _jit_binding(func.value, ctx, cache)
        if bound is not None:
            return bound
    for target, bound_self in index.resolve_function(func, ctx.unit):
        if not isinstance(target.node, cst.FunctionDef):
            continue
        chain = decorator_transforms(target.node, target, index)
        if len(chain) != 1 or chain[0][0] != "jax.jit" or len(target.node.decorators) != 1:
            return None  # other decorators may change the signature that static_argnums counts in
        spec = static_spec(chain[0][1], "jax.jit")
        if spec.unknown:
            return None
        offset = 1 if target.is_method and bound_self else 0
        return Jitted(target, spec, offset, target.name)
    return None


def _jit_binding(name: str, ctx, cache: dict) -> Jitted | None:
    """`name = jax.jit(f, ...)` in this function, or at module level when the name is global here."""
    unit_node = ctx.unit.node
    if isinstance(unit_node, (cst.FunctionDef, cst.Lambda)) and name in _parameter_names(unit_node):
        return None  # a parameter rebound to `jax.jit(...)` would have two bindings anyway
    units = [ctx.unit] if ctx.unit is not ctx.index.root and name in ctx.unit.local_names else []
    if not units and ctx.is_module_global(name):
        units = [ctx.index.root]
    for unit in units:
        key = ("bindings", id(unit.node))
        table = cache.get(key)
        if table is None:
            table = cache[key] = _jit_bindings(unit, ctx)
        if name in table:
            return table[name]
    return None


def _parameter_names(node: cst.FunctionDef | cst.Lambda) -> set[str]:
    params = node.params
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    names.update(p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param))
    return names


def _jit_bindings(unit: Unit, ctx) -> dict[str, Jitted | None]:
    """Names bound exactly once in `unit`'s own statements, by `name = jax.jit(...)` (None: other or many)."""
    index = ctx.index
    table: dict[str, Jitted | None] = {}
    for name, values in bindings(unit).items():
        value = values[0] if len(values) == 1 else None
        jitted = None
        if isinstance(value, cst.Call) and value.args and value.args[0].keyword is None:
            transform = index.transform_of(value.func, unit)
            if transform is not None and transform[0] == "jax.jit":
                found = index.applications(value, unit)
                if len(found) == 1:
                    jitted = _from_application(*found[0], name, 0)
                    if jitted is not None:
                        jitted = dataclasses.replace(jitted, label=name)
        table[name] = jitted
    return table


_BINDINGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def bindings(unit: Unit) -> dict[str, list[cst.BaseExpression | None]]:
    """Every name bound by `unit`'s own statements, with the values assigned (None for bindings that are not
    a plain `name = value`: loop targets, augmented assignments, unpacking, imports, defs, classes)."""
    found = _BINDINGS.get(unit)
    if found is not None:
        return found
    from ..analysis.index import bound_names

    table: dict[str, list[cst.BaseExpression | None]] = {}
    stack = list(_unit_body(unit.node))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            table.setdefault(node.name.value, []).append(None)
            continue
        if isinstance(node, cst.BaseExpression):
            continue
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and len(node.targets) == 1:
                    table.setdefault(target.target.value, []).append(node.value)
                else:
                    for name in bound_names(target.target):
                        table.setdefault(name, []).append(None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)):
            for name in bound_names(node.target):
                table.setdefault(name, []).append(None)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            for name in bound_names(node.asname.name):
                table.setdefault(name, []).append(None)
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                local = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                table.setdefault(local, []).append(None)
        stack.extend(children(node))
    _BINDINGS[unit] = table
    return table


# -- the rule ----------------------------------------------------------------------------------------------


class JitInLoop(Rule):
    code = "JAX401"
    name = "jit-in-loop"
    summary = "A jitted function built anew inside a loop or on every call (lambda, partial, inner def), so it retraces"
    severity = "warning"
    confirmable = True  # `jaxlint --verify --run` counts the recompiles
    doc = """
## What it does
Flags `jax.jit` (and `pmap`, `equinox.filter_jit`, `nnx.jit`) applied to a function object that is created
anew each time: a `lambda`, a `functools.partial(...)`, the result of another transformation
(`jax.jit(jax.grad(f))`), a function defined inside the loop or the function, or a bound method
(`self.step`). It flags the transformation when it is built inside a loop, and, inside a function, when the
jitted function is only used once per call: called on the spot (`jax.jit(lambda x: ...)(x)`), or bound to a
local name or defined with `@jax.jit` and only called outside loops.

## Why is this bad
`jax.jit` caches compiled code by the identity of the function it wraps. A new lambda, partial, closure or
bound method is a new key, so every iteration (or every call of the enclosing function) traces and compiles
again — typically milliseconds to seconds each time, turning a fast step into a compile loop. Not flagged:
`jax.jit(module_level_function)` in a loop (the same function object, so the cache hits and it compiles once),
transformations built once at module or class level or in `__init__` and stored, a jitted function built in
a function and then called in a loop there, and factories that return the jitted function. Test functions,
code that is itself traced (a `jit` inside `jit` is inlined) and `functools.cache`-d builders are skipped.

## Example
```python
for batch in batches:
    loss = jax.jit(lambda p: loss_fn(p, batch))(params)
```

## Use instead
```python
loss_jit = jax.jit(loss_fn)
for batch in batches:
    loss = loss_jit(params, batch)
```
Pass values that change as arguments; mark the few that must be Python constants with `static_argnums`.

## Fix safety
No automatic fix: hoisting the transformation changes which values are closed over.

## References
- https://docs.jax.dev/en/latest/jit-compilation.html#caching
- https://docs.jax.dev/en/latest/faq.html#jit-changes-the-behavior-of-my-function
"""

    def __init__(self, settings: object | None = None) -> None:
        super().__init__(settings)
        self._loops: dict = {}
        self._constants: dict[int, set[str]] = {}

    # -- what is created anew, and what it depends on -----------------------------------------------------

    def _fresh(self, fn: cst.BaseExpression, ctx) -> tuple | None:
        """(description, defining node, enclosing locals it depends on) when `fn` makes a new function object."""
        index = ctx.index
        if isinstance(fn, cst.Lambda):
            return "a lambda", None, self._deps(fn, ctx), fn
        if isinstance(fn, cst.Call):
            callee = ctx.qualname(fn.func)
            positional = [a for a in fn.args if a.keyword is None]
            if callee == "functools.partial" and positional and not positional[0].star:
                deps = self._function_deps(positional[0].value, ctx)
                if deps is None:
                    return None
                for arg in fn.args[1:]:
                    value = arg.value
                    if isinstance(value, cst.Lambda) or (
                        isinstance(value, cst.Name) and index.resolve_function(value, ctx.unit)
                    ):
                        inner = self._function_deps(value, ctx)
                        deps |= {value.value} if isinstance(value, cst.Name) else set()
                        deps |= inner or set()
                return "a functools.partial object", None, deps, fn
            transform = index.transform_of(fn.func, ctx.unit)
            if transform is not None and positional and not positional[0].star:
                deps = self._function_deps(positional[0].value, ctx)
                if deps is None:
                    return None
                return f"the result of {transform[0]}(...)", None, deps, fn
            return None
        if isinstance(fn, cst.Name):
            if ctx.unit is index.root:
                return None
            targets = index.resolve_function(fn, ctx.unit)
            if len(targets) == 1 and targets[0][0].parent is ctx.unit:
                node = targets[0][0].node
                return f"the inner function '{fn.value}'", node, self._deps(node, ctx), fn
            return None
        if (
            isinstance(fn, cst.Attribute)
            and isinstance(fn.value, cst.Name)
            and fn.value.value in ("self", "cls")
        ):
            targets = index.resolve_function(fn, ctx.unit)
            if targets and all(t.is_method for t, _ in targets) and not _is_static(targets[0][0]):
                return f"the bound method '{source_of(fn)}'", None, {fn.value.value}
        return None

    def _function_deps(self, fn: cst.BaseExpression, ctx) -> set[str] | None:
        """Enclosing locals a function expression depends on; None when it is not understood."""
        if isinstance(fn, cst.Lambda):
            return self._deps(fn, ctx)
        if isinstance(fn, cst.Call):
            fresh = self._fresh(fn, ctx)
            return None if fresh is None else fresh[2]
        if isinstance(fn, cst.Name):
            if ctx.unit is not ctx.index.root and fn.value in ctx.unit.local_names:
                targets = ctx.index.resolve_function(fn, ctx.unit)
                if len(targets) == 1 and targets[0][0].parent is ctx.unit:
                    return {fn.value} | self._deps(targets[0][0].node, ctx)
                return {fn.value}
            return set()
        if isinstance(fn, cst.Attribute):
            head = fn
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name):
                if ctx.unit is not ctx.index.root and head.value in ctx.unit.local_names:
                    return {head.value}
                return set()
        return None

    def _deps(self, function: cst.CSTNode, ctx, extra: frozenset[str] = frozenset()) -> set[str]:
        """Names of the enclosing function's locals (and `extra` names) that a lambda or inner def refers to."""
        own = ctx.index.units.get(id(function))
        own_names = own.local_names if own is not None else set()
        enclosing = ctx.unit.local_names | extra
        found: set[str] = set()
        stack: list[cst.CSTNode] = [function.body]  # type: ignore[attr-defined]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                stack.append(node.value)
                continue
            if isinstance(node, cst.Name) and node.value in enclosing and node.value not in own_names:
                found.add(node.value)
            stack.extend(children(node))
        return found

    def _called(self, fn: cst.CSTNode, ctx, extra: frozenset[str] = frozenset()) -> set[str]:
        """Enclosing locals that a function expression calls (or is): the parts that decide *which* code runs."""
        enclosing = ctx.unit.local_names | extra
        if isinstance(fn, (cst.Name, cst.Attribute)):
            head = _head(fn)
            if head is None or head not in enclosing:
                return set()
            if isinstance(fn, cst.Name):
                targets = ctx.index.resolve_function(fn, ctx.unit)
                if len(targets) == 1 and targets[0][0].parent is ctx.unit:
                    return self._called(targets[0][0].node, ctx, extra)
            return {head}
        if isinstance(fn, cst.Call):
            positional = [a.value for a in fn.args if a.keyword is None and not a.star]
            callee = ctx.qualname(fn.func)
            if positional and (callee == "functools.partial" or ctx.index.transform_of(fn.func, ctx.unit)):
                return self._called(positional[0], ctx, extra)
            return set()
        if isinstance(fn, (cst.Lambda, cst.FunctionDef)):
            own = ctx.index.units.get(id(fn))
            own_names = own.local_names if own is not None else set()
            found: set[str] = set()
            for node in walk(fn.body):
                if isinstance(node, cst.Call):
                    head = _head(node.func)
                    if head is not None and head in enclosing and head not in own_names:
                        found.add(head)
            return found
        return set()

    def _constant_locals(self, unit: Unit) -> set[str]:
        """Locals only ever bound to literals (`axis_name = "x"`): closing over them is closing over a constant."""
        found = self._constants.get(id(unit.node))
        if found is not None:
            return found
        constant: dict[str, bool] = {}
        stack = list(_unit_body(unit.node))
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                continue
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        name = target.target.value
                        constant[name] = constant.get(name, True) and _is_literal(node.value)
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
                from ..analysis.index import bound_names

                for name in bound_names(node.target):
                    constant[name] = False
            stack.extend(children(node))
        found = self._constants[id(unit.node)] = {n for n, c in constant.items() if c}
        return found

    # -- judgments ---------------------------------------------------------------------------------------

    def _rebuilt_per_iteration(self, node: cst.CSTNode, fresh, ctx) -> bool:
        """Built inside a loop, and hoisting it out would compile once instead of once per iteration."""
        loops = loops_at(self._loops, ctx.unit, node)
        if not loops:
            return False
        fn_expr = fresh[3] if len(fresh) > 3 else None
        _, defining, deps = fresh[:3]
        # Comprehension variables are not locals of the function, but they vary like loop targets.
        extra = frozenset(
            n for loop in loops if isinstance(loop, _COMPREHENSIONS) for n in loop_targets(loop)
        )
        if extra and isinstance(fn_expr, (cst.Lambda, cst.FunctionDef)):
            deps = self._deps(fn_expr, ctx, extra)
        called = self._called(fn_expr, ctx, extra) if fn_expr is not None else set()
        if defining is not None:
            defined_in = set(map(id, loops_at(self._loops, ctx.unit, defining)))
            if not defined_in & set(map(id, loops)):
                return False  # the same inner function every iteration: the cache hits
        for loop in loops:
            if called & _varying(loop):
                # `for fn in fns: jax.jit(partial(fn, ...))`: a different function every iteration, so each one
                # needs its own compile anyway.
                return False
            if deps & _varying(loop) and _config_sweep(loop, ctx):
                # `for num_blocks in (4, 8, 16): @jax.jit def kernel(...)`: each configuration needs its own
                # compile anyway.
                return False
        return True

    def _hoistable(self, fresh, ctx) -> bool:
        """Built per call of the enclosing function without depending on its state, so it could be built once."""
        deps = fresh[2] - {"self", "cls"} - self._constant_locals(ctx.unit)
        return not deps

    def _skip(self, ctx) -> bool:
        return ctx.kind != NONE or in_test_code(ctx.unit)

    def _per_call_scope(self, ctx) -> bool:
        unit = ctx.unit
        return unit is not ctx.index.root and unit.name != "main" and not is_cached(unit, ctx)

    def _transform_site(self, call: cst.Call, ctx):
        """(transformation name, fresh description) for `jax.jit(fn, ...)` applied to a fresh function."""
        transform = compiling_transform(call.func, ctx)
        if transform is None or not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        if any(a.keyword is not None and a.keyword.value == "inline" for a in [*call.args, *transform[1]]):
            return None  # `jax.jit(f, inline=True)` is meant to be inlined into an enclosing trace
        fresh = self._fresh(call.args[0].value, ctx)
        return None if fresh is None else (transform[0], fresh)

    # -- hooks -------------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if (not node.args and not isinstance(node.func, cst.Call)) or self._skip(ctx):
            return
        site = self._transform_site(node, ctx)
        if site is not None and self._rebuilt_per_iteration(node, site[1], ctx):
            ctx.report(
                self,
                node,
                f"{_short(site[0])} of {site[1][0]} built inside a loop: a new function object every "
                "iteration, so JAX retraces and recompiles each time; build it once before the loop and pass "
                "what changes as arguments",
            )
            return
        inner = node.func
        if not isinstance(inner, cst.Call) or not self._per_call_scope(ctx):
            return
        site = self._transform_site(inner, ctx)
        if site is None or loops_at(self._loops, ctx.unit, inner) or not self._hoistable(site[1], ctx):
            return
        ctx.report(
            self,
            inner,
            f"{_short(site[0])} of {site[1][0]} is built and called at once inside '{ctx.unit.name}': every "
            f"call of '{ctx.unit.name}' retraces and recompiles it; jit the function once, outside",
        )

    def on_assign(self, target, value, statement, ctx) -> None:
        if value is None or not isinstance(target, cst.Name) or not isinstance(value, cst.Call):
            return
        if self._skip(ctx) or not self._per_call_scope(ctx):
            return
        site = self._transform_site(value, ctx)
        if site is None or loops_at(self._loops, ctx.unit, value) or not self._hoistable(site[1], ctx):
            return
        if _used_once_per_call(ctx.unit, target.value, {id(target)}, self._loops):
            ctx.report(
                self,
                value,
                f"{_short(site[0])} of {site[1][0]} is rebuilt on every call of '{ctx.unit.name}' and "
                f"'{target.value}' is only called outside loops there: each call retraces and recompiles; "
                "jit the function once, outside",
            )

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        if ctx.unit.node is node or not node.decorators or self._skip(ctx):
            return
        unit = ctx.index.units.get(id(node))
        if unit is None:
            return
        for name, keywords, decorator in decorator_transforms(node, unit, ctx.index):
            if name not in COMPILING:
                continue
            if compiling_transform(decorator.decorator, ctx) is None:
                return
            if any(a.keyword is not None and a.keyword.value == "inline" for a in keywords):
                return
            where = decorator.decorator
            fresh = (f"'{node.name.value}'", node, self._deps(node, ctx), node)
            if loops_at(self._loops, ctx.unit, node):
                if self._rebuilt_per_iteration(node, fresh, ctx):
                    ctx.report(
                        self,
                        where,
                        f"@{_short(name)} on '{node.name.value}' defined inside a loop: a new function every "
                        "iteration, so JAX retraces and recompiles each time; define it once before the loop",
                    )
            elif (
                self._per_call_scope(ctx)
                and self._hoistable(fresh, ctx)
                and _used_once_per_call(ctx.unit, node.name.value, {id(node.name)}, self._loops)
            ):
                ctx.report(
                    self,
                    where,
                    f"@{_short(name)} on inner function '{node.name.value}' of '{ctx.unit.name}', which is only "
                    f"called outside loops there: every call of '{ctx.unit.name}' retraces and recompiles it; "
                    "define it at module level",
                )
            return


def _is_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return _is_literal(node.expression)
    if isinstance(node, cst.Tuple):
        return all(_is_literal(e.value) for e in node.elements)
    return False


def _varying(loop: cst.CSTNode) -> set[str]:
    """Names that take a new value on each iteration: the loop's targets and what its body assigns."""
    from ..analysis.index import bound_names

    names = loop_targets(loop)
    if isinstance(loop, (cst.For, cst.While)):
        stack: list[cst.CSTNode] = [loop.body]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                names.add(node.name.value)
                continue
            if isinstance(node, cst.Lambda):
                continue
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    names.update(bound_names(target.target))
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
                names.update(bound_names(node.target))
            stack.extend(children(node))
    return names


_SWEEP_CALLS = frozenset(
    "builtins." + n for n in ("range", "enumerate", "zip", "reversed", "sorted", "list", "tuple")
) | frozenset("itertools." + n for n in ("product", "permutations", "combinations", "chain"))


def _config_sweep(loop: cst.CSTNode, ctx) -> bool:
    """A loop over literal configurations (`for n in (4, 8)`, `itertools.product(...)`, `range(...)`)."""
    if isinstance(loop, cst.For):
        iterable = loop.iter
    elif isinstance(loop, _COMPREHENSIONS):
        iterable = loop.for_in.iter
    else:
        return False
    return _sweep(iterable, ctx, 0)


def _sweep(node: cst.BaseExpression, ctx, depth: int) -> bool:
    if depth > 3:
        return False
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return True
    if isinstance(node, cst.Call):
        name = ctx.qualname(node.func)
        if name == "builtins.range":
            return True
        return name in _SWEEP_CALLS and all(
            _sweep(a.value, ctx, depth + 1) for a in node.args if a.keyword is None
        )
    if isinstance(node, cst.Name):
        value = single_assignment(ctx.unit, node.value)
        return value is not None and _sweep(value, ctx, depth + 1)
    return False


def single_assignment(unit: Unit, name: str) -> cst.BaseExpression | None:
    """The value of the only binding of `name` in `unit`'s own statements, when it is a plain `name = value`."""
    values = bindings(unit).get(name, [])
    return values[0] if len(values) == 1 else None


def _is_static(unit: Unit) -> bool:
    node = unit.node
    return isinstance(node, cst.FunctionDef) and any(
        isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod",) for d in node.decorators
    )


def _short(name: str) -> str:
    return {"equinox.filter_jit": "eqx.filter_jit", "equinox.filter_pmap": "eqx.filter_pmap"}.get(name, name)


def _used_once_per_call(unit: Unit, name: str, definitions: set[int], loop_cache: dict) -> bool:
    """Every use of local `name` in `unit` is a direct call outside any loop (and there is at least one)."""
    calls = 0
    called: set[int] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(n, False) for n in _unit_body(unit.node)]
    while stack:
        node, nested = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not unit.node:
            if isinstance(node, cst.FunctionDef) and id(node.name) in definitions:
                stack.extend((d, nested) for d in node.decorators)
                stack.append((node.body, True))
                continue
            stack.extend((child, True) for child in children(node))
            continue
        if isinstance(node, cst.Call):
            called.add(id(node.func))
        if isinstance(node, cst.Name) and node.value == name and id(node) not in definitions:
            if nested or id(node) not in called or loops_at(loop_cache, unit, node):
                return False
            calls += 1
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            if any(n.name.value == name for n in node.names):
                return False
        stack.extend((child, nested) for child in children(node))
    return calls > 0


def _head(node: cst.BaseExpression) -> str | None:
    """`a` for `a`, `a.b.c`; None for anything else."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None
