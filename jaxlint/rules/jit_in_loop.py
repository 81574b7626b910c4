"""JAX401 jit-in-loop: a jitted function built anew in a loop or on every call, so every use compiles again."""

from __future__ import annotations

import dataclasses

import libcst as cst

from ..analysis import (
    CACHING_DECORATORS,
    COMPILING,
    CONSTRUCTORS,
    CONTROL_FLOW,
    NONE,
    PARTIAL,
    TRANSFORMATIONS,
    RuleContext,
    Unit,
    built_class,
    called_locals,
    called_outside_loops_only,
    compiling_transform,
    config_sweep,
    decorator_transforms,
    display_name,
    eager_loop,
    free_locals,
    incoming_loop,
    local_method_units,
    loop_targets,
    looped_call,
    plain_class,
    pytree_model,
    rebuilt_for_filtered_call,
    sets_instance_attribute,
    surely_eager,
)
from ..syntax import (
    COMPREHENSIONS,
    argument,
    attribute_root,
    dotted_name,
    is_constant,
    own_nodes,
    source_of,
    walk,
)
from .base import Rule


@dataclasses.dataclass(frozen=True)
class Fresh:
    """A function object created anew each time the code runs, and what decides whether that matters."""

    description: str  # "a lambda", "the inner function 'f'", for messages
    defining: cst.CSTNode | None  # the def that creates it, when it is a named inner function
    deps: frozenset[str]  # enclosing locals it depends on
    expression: cst.CSTNode | None = None  # the function expression itself (lambda, partial(...), def)


# -- scopes ------------------------------------------------------------------------------------------------


# The methods of a jitted function that trace (and lower) it for given arguments, ahead of time; the same on
# `jax.jit`, `eqx.filter_jit` and `nnx.jit` results.
_AHEAD_OF_TIME = frozenset({"lower", "trace"})


def in_test_code(unit: Unit) -> bool:
    """A test function or a method of a test class: code that runs once, where per-call rebuilding is intended."""
    found = unit.memo.get("in_test_code")
    if found is None:
        found = unit.memo["in_test_code"] = _in_test_code(unit)
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


def is_cached(unit: Unit, ctx: RuleContext) -> bool:
    node = unit.node
    if type(node) is not cst.FunctionDef:
        return False
    for decorator in node.decorators:
        expr = decorator.decorator
        if type(expr) is cst.Call:
            expr = expr.func
        if ctx.index.qualname(expr, unit.parent) in CACHING_DECORATORS:
            return True
    return False


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
(`self.step`, or `obj.step` of an object built from a plain class of the module) under `jax.jit` (`jax.pmap` and equinox's `filter_jit`/`filter_pmap` compare a bound method by
equality, so `eqx.filter_jit(self.step)` made per call compiles once). It flags the transformation when it is built inside a loop, and, inside a function, when the
jitted function is only used once per call: called on the spot (`jax.jit(lambda x: ...)(x)`), or bound to a
local name or defined with `@jax.jit` and only called outside loops (or handed to a transformation whose result
is called there, `jax.grad(loss)(w)`), or called in a loop there while a loop of the module calls the function
(`sample = jax.jit(self._sample)` in `run()`, `for d in datasets: sampler.run(d)`: each `run` compiles again;
constructors are exempt). A function closing over a setting of its function (a `str`, `int` or
`bool` parameter, `method="linear"`) counts as one that could be built once, with the setting static.
`jax.jit(obj.m)` written again after the same one in straight-line code is flagged too: two jitted functions,
two compiles. A function called on the spot that closes
over the enclosing function's locals is flagged when a loop of the module runs that function, directly or
through other calls (a helper, a method, `partial`, a lookup in a dict or list, a function passed as an argument).
`jax.jit(fn)` stored in `__init__` in a field of an `equinox.Module` is flagged when a loop of the module builds
instances anew and gives them to an `eqx.filter_jit` function: filter_jit keeps the wrapper static and compares
it by equality, and each instance's new wrapper equals only itself, so each instance compiles again.
`lax.scan`/`fori_loop`/`while_loop`/`cond`/`switch` called outside jit on a function made anew (an inner def, a
lambda, a `partial`, a bound method) are flagged inside a loop that makes the function, and in a function that
a loop runs (of the module, or of another module in project mode), where that loop surely runs eagerly (a
script's or notebook's top-level code, `main`, a function the top-level code calls): called eagerly they
compile what they trace, cached by their functions' identity. Likewise a jitted inner def closing over the
function's locals and called once per call (`@jax.jit def loop_fn(): ...` in `fori_collect`), in a function
such a loop runs.

## Why is this bad
`jax.jit` caches compiled code by the identity of the function it wraps. A new lambda, partial, closure or
bound method is a new key, so every iteration (or every call of the enclosing function) traces and compiles
again — typically milliseconds to seconds each time, turning a fast step into a compile loop. Not flagged:
`jax.jit(module_level_function)` in a loop (the same function object, so the cache hits and it compiles once),
transformations built once at module or class level or in `__init__` and stored, a jitted function built in
a function and then called in a loop there, factories that return the jitted function, and a function built per
iteration from what the loop changes and compiled ahead of time there (`jax.jit(f).lower(x).compile()`: one
executable per variant, on purpose). Test functions,
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

    def __init__(self) -> None:
        self._constants: dict[int, set[str]] = {}
        # ids of transformation calls compiled ahead of time where they are built: `jax.jit(f).lower(x)`,
        # `.trace(x)` (a call is visited before the calls inside it)
        self._ahead_of_time: set[int] = set()

    # -- what is created anew, and what it depends on -----------------------------------------------------

    def _fresh(self, fn: cst.BaseExpression, ctx: RuleContext, outer: str | None = None) -> Fresh | None:
        """What `fn` is, when evaluating it makes a new function object that the compiling transformation
        `outer` (None: any) takes for a new function."""
        index = ctx.index
        wrapper = TRANSFORMATIONS.get(outer) if outer is not None else None
        equal = wrapper is not None and wrapper.equal_bound_methods
        if type(fn) is cst.Lambda:
            return Fresh("a lambda", None, free_locals(fn, ctx), fn)
        if type(fn) is cst.Call:
            callee = ctx.qualname(fn.func)
            positional = [a for a in fn.args if a.keyword is None]
            if callee == PARTIAL and positional and not positional[0].star:
                deps = self._function_deps(positional[0].value, ctx)
                if deps is None:
                    return None
                for arg in fn.args[1:]:
                    value = arg.value
                    if type(value) is cst.Lambda or (
                        type(value) is cst.Name and index.resolve_function(value, ctx.unit)
                    ):
                        inner = self._function_deps(value, ctx)
                        deps |= {value.value} if type(value) is cst.Name else set()
                        deps |= inner or set()
                return Fresh("a functools.partial object", None, frozenset(deps), fn)
            transform = index.transform_of(fn.func, ctx.unit)
            if transform is not None and positional and not positional[0].star:
                made = TRANSFORMATIONS.get(transform[0])
                if (
                    equal
                    and wrapper is not None
                    and wrapper.filtering
                    and made is not None
                    and made.equal_results
                ):
                    if self._bound_method(positional[0].value, ctx):
                        return None  # `eqx.filter_jit(eqx.filter_vmap(self.m))`: equal to the last one
                deps = self._function_deps(positional[0].value, ctx)
                if deps is None:
                    return None
                return Fresh(f"the result of {transform[0]}(...)", None, frozenset(deps), fn)
            return None
        if type(fn) is cst.Name:
            if ctx.unit is index.root:
                return None
            targets = index.resolve_function(fn, ctx.unit)
            if len(targets) == 1 and targets[0][0].parent is ctx.unit:
                node = targets[0][0].node
                return Fresh(f"the inner function '{fn.value}'", node, free_locals(node, ctx), fn)
            return None
        if self._bound_method(fn, ctx) and not equal:
            # (`eqx.filter_jit(self.m)` compares the new bound method with the last by equality: one compile)
            assert type(fn) is cst.Attribute and type(fn.value) is cst.Name
            # The receiver is the expression too: `for obj in objs: jax.jit(obj.m)` jits a new method anyway.
            expression = fn if fn.value.value not in ("self", "cls") else None
            return Fresh(f"the bound method '{source_of(fn)}'", None, frozenset({fn.value.value}), expression)
        return None

    def _bound_method(self, fn: cst.BaseExpression, ctx: RuleContext) -> bool:
        """`self.m`, `cls.m`: a method of this class, bound anew on each evaluation; or `obj.m` with `obj` built
        by calling a plain class of the module (`obj = Sampler()`), whose methods are plain functions."""
        if type(fn) is not cst.Attribute or type(fn.value) is not cst.Name:
            return False
        if fn.value.value in ("self", "cls"):
            targets = [t for t, _ in ctx.index.resolve_function(fn, ctx.unit)]
        else:
            cls = built_class(ctx.index, fn.value, ctx.unit)
            if cls is None or not plain_class(ctx.index, cls):
                return False
            if sets_instance_attribute(ctx.index, cls, fn.attr.value) or _attribute_assigned(fn, ctx):
                return False  # `self.apply = jax.jit(self.apply)`: the same jitted function every time
            targets = local_method_units(ctx.index, cls, fn.attr.value, exact=True)
        return bool(targets) and all(t.is_method for t in targets) and not any(_is_static(t) for t in targets)

    def _function_deps(self, fn: cst.BaseExpression, ctx: RuleContext) -> set[str] | None:
        """Enclosing locals a function expression depends on; None when it is not understood."""
        if type(fn) is cst.Lambda:
            return set(free_locals(fn, ctx))
        if type(fn) is cst.Call:
            fresh = self._fresh(fn, ctx)
            return None if fresh is None else set(fresh.deps)
        if type(fn) is cst.Name:
            if ctx.unit is not ctx.index.root and fn.value in ctx.unit.local_names:
                targets = ctx.index.resolve_function(fn, ctx.unit)
                if len(targets) == 1 and targets[0][0].parent is ctx.unit:
                    return {fn.value} | free_locals(targets[0][0].node, ctx)
                return {fn.value}
            return set()
        if type(fn) is cst.Attribute:
            head = attribute_root(fn)
            if head is not None:
                if ctx.unit is not ctx.index.root and head in ctx.unit.local_names:
                    return {head}
                return set()
        return None

    def _constant_locals(self, unit: Unit) -> set[str]:
        """Locals only ever bound to literals (`axis_name = "x"`): closing over them is closing over a constant."""
        found = self._constants.get(id(unit.node))
        if found is not None:
            return found
        constant: dict[str, bool] = {}
        for name, bindings in unit.bindings.items():
            for binding in bindings:
                kind = type(binding.node)
                if kind is cst.Assign:
                    if binding.value is None:
                        continue  # an unpacking target: not a plain name binding
                    literal = is_constant(binding.value)
                elif kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr):
                    literal = False
                else:
                    continue
                constant[name] = constant.get(name, True) and literal
        found = self._constants[id(unit.node)] = {n for n, c in constant.items() if c}
        return found

    # -- judgments ---------------------------------------------------------------------------------------

    def _rebuilt_per_iteration(self, node: cst.CSTNode, fresh: Fresh, ctx: RuleContext) -> bool:
        """Built inside a loop, and hoisting it out would compile once instead of once per iteration."""
        loops = ctx.unit.loops_of(node)
        if not loops:
            return False
        fn_expr, defining, deps = fresh.expression, fresh.defining, fresh.deps
        # Comprehension variables are not locals of the function, but they vary like loop targets.
        extra = frozenset(n for loop in loops if isinstance(loop, COMPREHENSIONS) for n in loop_targets(loop))
        if extra and (type(fn_expr) is cst.Lambda or type(fn_expr) is cst.FunctionDef):
            deps = free_locals(fn_expr, ctx, extra)
        called = called_locals(fn_expr, ctx, extra) if fn_expr is not None else set()
        if defining is not None:
            defined_in = set(map(id, ctx.unit.loops_of(defining)))
            if not defined_in & set(map(id, loops)):
                return False  # the same inner function every iteration: the cache hits
        for loop in loops:
            if called & ctx.unit.varying(loop):
                # `for fn in fns: jax.jit(partial(fn, ...))`: a different function every iteration, so each one
                # needs its own compile anyway.
                return False
            if deps & ctx.unit.varying(loop) and id(node) in self._ahead_of_time:
                # `compiled[name] = jax.jit(step_for_name).lower(x).compile()`: one executable per iteration's
                # function, compiled on purpose (jinns' per-parameter solvers).
                return False
            if deps & ctx.unit.varying(loop) and config_sweep(loop, ctx):
                # `for num_blocks in (4, 8, 16): @jax.jit def kernel(...)`: each configuration needs its own
                # compile anyway.
                return False
        return True

    def _hoistable(self, fresh: Fresh, ctx: RuleContext) -> bool:
        """Built per call of the enclosing function without depending on its state, or only on its settings
        (see `_settings`), so it could be built once."""
        deps = fresh.deps - {"self", "cls"} - self._constant_locals(ctx.unit) - _settings(ctx.unit)
        return not deps

    def _advice(self, fresh: Fresh, ctx: RuleContext, fix: str) -> str:
        settings = sorted(fresh.deps & _settings(ctx.unit))
        if not settings:
            return fix
        names = ", ".join(f"'{n}'" for n in settings)
        return f"{fix}, with {names} as a static argument (static_argnames) instead of closed over"

    def _calling_wrapper(self, ctx: RuleContext):
        """`w` of `w(f)(...)` makes a function that calls `f` there and then: a transformation
        (`eqx.filter_value_and_grad(loss)(model, x)`), or `functools.partial`."""
        return lambda w: ctx.index.transform_of(w, ctx.unit) is not None or ctx.qualname(w) == PARTIAL

    def _built_again(self, call: cst.Call, fresh: Fresh, ctx: RuleContext) -> bool:
        """`jax.jit(obj.m)` written the same way in an earlier simple statement of the same block (outside
        loops): both run, each with its own cache."""
        if type(fresh.expression) is not cst.Attribute or ctx.unit.loops_of(call):  # only `obj.m` has one
            return False
        blocks = [ctx.unit.node, *(n for n in own_nodes(ctx.unit.node) if type(n) is cst.IndentedBlock)]
        for block in blocks:
            body = block.body if type(block) is cst.IndentedBlock or type(block) is cst.Module else ()
            for at, statement in enumerate(body):
                if type(statement) is cst.SimpleStatementLine and any(n is call for n in walk(statement)):
                    return any(
                        type(earlier) is cst.SimpleStatementLine
                        and any(type(n) is cst.Call and n.deep_equals(call) for n in walk(earlier))
                        for earlier in body[:at]
                    )
        return False

    def _skip(self, ctx: RuleContext) -> bool:
        return ctx.kind != NONE or in_test_code(ctx.unit)

    def _per_call_scope(self, ctx: RuleContext) -> bool:
        unit = ctx.unit
        return unit is not ctx.index.root and unit.name != "main" and not is_cached(unit, ctx)

    def _transform_site(self, call: cst.Call, ctx: RuleContext) -> tuple[str, Fresh] | None:
        """(transformation name, fresh description) for `jax.jit(fn, ...)` applied to a fresh function."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        transform = compiling_transform(call.func, ctx)
        if transform is None:
            return None
        if any(a.keyword is not None and a.keyword.value == "inline" for a in [*call.args, *transform[1]]):
            return None  # `jax.jit(f, inline=True)` is meant to be inlined into an enclosing trace
        fresh = self._fresh(call.args[0].value, ctx, transform[0])
        return None if fresh is None else (transform[0], fresh)

    # -- hooks -------------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in _AHEAD_OF_TIME and type(func.value) is cst.Call:
            self._ahead_of_time.add(id(func.value))
        if (not node.args and type(node.func) is not cst.Call) or self._skip(ctx):
            return
        if ctx.unit.class_node is not None and ctx.unit.name.endswith("__init__"):
            if self._stored_in_pytree(node, ctx):
                return
        flow = CONTROL_FLOW.get(ctx.qualname(func) or "")
        if flow is not None and flow.compiles:
            self._eager_control_flow(node, flow.bodies, flow.label.replace(" body", ""), ctx)
            return
        site = self._transform_site(node, ctx)
        if site is not None and self._rebuilt_per_iteration(node, site[1], ctx):
            ctx.report(
                self,
                node,
                f"{display_name(site[0])} of {site[1].description} built inside a loop: a new function object every "
                "iteration, so JAX retraces and recompiles each time; build it once before the loop and pass "
                "what changes as arguments",
            )
            return
        if site is not None and self._built_again(node, site[1], ctx):
            ctx.report(
                self,
                node,
                f"{display_name(site[0])} of {site[1].description} built again: the bound method is a new object, so "
                "this jitted function does not share the compiled code of the one built above and traces and "
                "compiles again; build it once and reuse it",
            )
            return
        inner = node.func
        if type(inner) is not cst.Call or not self._per_call_scope(ctx):
            return
        site = self._transform_site(inner, ctx)
        if site is None or ctx.unit.loops_of(inner):
            return
        if self._hoistable(site[1], ctx):
            ctx.report(
                self,
                inner,
                f"{display_name(site[0])} of {site[1].description} is built and called at once inside '{ctx.unit.name}': "
                f"every call of '{ctx.unit.name}' retraces and recompiles it; "
                + self._advice(site[1], ctx, "jit the function once, outside"),
            )
            return
        looped = looped_call(ctx.index, ctx.unit)
        if looped is not None and not _sweeps_configurations(*looped, ctx):
            ctx.report(
                self,
                inner,
                f"{display_name(site[0])} of {site[1].description} is built and called at once inside '{ctx.unit.name}', "
                f"which runs on every iteration of a loop (`{source_of(looped[0].func)}(...)` in "
                f"'{looped[1].name}'): each iteration retraces and recompiles it; jit the function once, outside, "
                "and pass what it closes over as arguments",
            )

    def _eager_control_flow(
        self, call: cst.Call, bodies: tuple[tuple[int, str], ...], label: str, ctx: RuleContext
    ) -> None:
        """`lax.scan(body, ...)` called outside jit with `body` made anew (an inner def, a lambda): lax compiles
        what it traces, cached by the functions' identity, so a new function compiles again. Flagged in a loop
        that makes the function each iteration, or in a function that a loop runs (the module's own loop, or
        another module's: `incoming_loop`), where that loop surely runs eagerly (`surely_eager`)."""
        for position, keyword in bodies:
            given = argument(call, position, keyword)
            if given is None or given.star:
                continue
            value = given.value
            functions = [e.value for e in value.elements] if type(value) in (cst.List, cst.Tuple) else [value]  # type: ignore[attr-defined]
            for function in functions:
                fresh = self._fresh(function, ctx)
                if fresh is not None and self._eager_flow_report(call, fresh, label, ctx):
                    return

    def _eager_flow_report(self, call: cst.Call, fresh: Fresh, label: str, ctx: RuleContext) -> bool:
        why = f"called outside jit, {label} compiles its functions, cached by their identity"
        if ctx.unit.loops_of(call):
            if not surely_eager(ctx.index, ctx.unit) or not self._rebuilt_per_iteration(call, fresh, ctx):
                return False
            ctx.report(
                self,
                call,
                f"{label} of {fresh.description} made inside a loop: {why}, so every iteration compiles again; "
                "define the function once before the loop and pass what changes in the carry or as operands",
            )
            return True
        if not self._per_call_scope(ctx) or ctx.unit.name in CONSTRUCTORS or ctx.unit.kind != NONE:
            return False  # (a function also run under a trace: the loop may reach it through a jitted call)
        looped = eager_loop(ctx.index, ctx.unit)
        if looped is not None:
            if fresh.deps & _settings(ctx.unit) and _sweeps_configurations(*looped, ctx):
                return False  # each setting it closes over needs its own compile anyway
            where: str | None = f"`{source_of(looped[0].func)}(...)` in '{looped[1].name}'"
        else:
            where = incoming_loop(ctx.index, ctx.unit)
        if where is None:
            return False
        ctx.report(
            self,
            call,
            f"{label} of {fresh.description} made on every call of '{ctx.unit.name}', which runs on every "
            f"iteration of a loop ({where}): {why}, so each iteration compiles again; define the function once "
            f"(at module level, passing what it closes over in the carry or as operands) or jit '{ctx.unit.name}'",
        )
        return True

    def _stored_in_pytree(self, node: cst.Call, ctx: RuleContext) -> bool:
        """`self.forward = jax.jit(fn)` in `__init__` of a pytree class (an eqx.Module) whose instances a loop
        builds anew and gives to an `eqx.filter_jit` function: the jit wrapper is a leaf that function keeps
        static and compares by equality, and each instance's new wrapper equals only itself."""
        cls = ctx.unit.class_node
        transform = compiling_transform(node.func, ctx) if node.args else None
        if cls is None or transform is None or node.args[0].keyword is not None:
            return False
        pytree = pytree_model(ctx.index).by_node.get(id(cls))
        if pytree is None or not pytree.data | pytree.static:
            return False
        params = ctx.unit.node.params.params  # type: ignore[attr-defined]
        owner = params[0].name.value if params else None
        stored = any(
            type(n) is cst.Assign
            and n.value is node
            and any(
                type(t.target) is cst.Attribute
                and type(t.target.value) is cst.Name
                and t.target.value.value == owner
                and t.target.attr.value in pytree.data | pytree.static
                for t in n.targets
            )
            for n in own_nodes(ctx.unit.node)
        )
        built = rebuilt_for_filtered_call(ctx.index, cls.name.value) if stored else None
        if built is None:
            return False
        ctx.report(
            self,
            node,
            f"{display_name(transform[0])}(...) stored in a field of '{cls.name.value}', which is built anew in a loop "
            f"(line {ctx.index.line_of(built)}) and given to an eqx.filter_jit function: each instance holds a new "
            "jit wrapper, a static leaf equal only to itself, so the filter_jit function recompiles for every "
            "instance; store the plain function (the outer filter_jit compiles it anyway)",
        )
        return True

    def on_assign(self, target, value, statement, ctx: RuleContext) -> None:
        if value is None or type(target) is not cst.Name or type(value) is not cst.Call:
            return
        if self._skip(ctx) or not self._per_call_scope(ctx):
            return
        site = self._transform_site(value, ctx)
        if site is None or ctx.unit.loops_of(value) or not self._hoistable(site[1], ctx):
            return
        if called_outside_loops_only(ctx.unit, target.value, {id(target)}, self._calling_wrapper(ctx)):
            ctx.report(
                self,
                value,
                f"{display_name(site[0])} of {site[1].description} is rebuilt on every call of '{ctx.unit.name}' and "
                f"'{target.value}' is only called outside loops there: each call retraces and recompiles; "
                + self._advice(site[1], ctx, "jit the function once, outside"),
            )
            return
        # Called in a loop here, the compile is amortized over that loop, but not when a loop of the module
        # calls this function: each of its iterations builds a new function object and compiles again.
        # A constructor run in a loop builds a new object each time: its jitted function is per object.
        looped = looped_call(ctx.index, ctx.unit) if ctx.unit.name not in CONSTRUCTORS else None
        # (A loop handing this function new settings it closes over needs a compile per setting anyway.)
        sweeps = (
            looped is not None
            and bool(site[1].deps & _settings(ctx.unit))
            and _sweeps_configurations(*looped, ctx)
        )
        if looped is not None and not sweeps:
            ctx.report(
                self,
                value,
                f"{display_name(site[0])} of {site[1].description} is rebuilt on every call of '{ctx.unit.name}', which "
                f"runs on every iteration of a loop (`{source_of(looped[0].func)}(...)` in '{looped[1].name}'): "
                "each iteration retraces and recompiles it; "
                + self._advice(site[1], ctx, "jit it once (in __init__ or at module level)")
                + " and pass what changes as arguments",
            )

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx: RuleContext) -> None:
        if not node.decorators or self._skip(ctx):
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
            fresh = Fresh(f"'{node.name.value}'", node, free_locals(node, ctx), node)
            if ctx.unit.loops_of(node):
                if self._rebuilt_per_iteration(node, fresh, ctx):
                    ctx.report(
                        self,
                        where,
                        f"@{display_name(name)} on '{node.name.value}' defined inside a loop: a new function every "
                        "iteration, so JAX retraces and recompiles each time; define it once before the loop",
                    )
            elif (
                self._per_call_scope(ctx)
                and self._hoistable(fresh, ctx)
                and called_outside_loops_only(
                    ctx.unit, node.name.value, {id(node.name)}, self._calling_wrapper(ctx)
                )
            ):
                ctx.report(
                    self,
                    where,
                    f"@{display_name(name)} on inner function '{node.name.value}' of '{ctx.unit.name}', which is only "
                    f"called outside loops there: every call of '{ctx.unit.name}' retraces and recompiles it; "
                    + self._advice(fresh, ctx, "define it at module level"),
                )
            elif self._per_call_scope(ctx) and called_outside_loops_only(
                ctx.unit, node.name.value, {id(node.name)}, self._calling_wrapper(ctx)
            ):
                self._inner_in_loop(node, where, name, ctx)
            return

    def _inner_in_loop(
        self, node: cst.FunctionDef, where: cst.BaseExpression, name: str, ctx: RuleContext
    ) -> None:
        """`@jax.jit def loop_fn()` closing over the enclosing function's locals, made and called once per call
        of a function that a loop surely run eagerly calls, here or in another module: a compile per iteration."""
        if ctx.unit.name in CONSTRUCTORS or ctx.unit.kind != NONE:
            return
        looped = eager_loop(ctx.index, ctx.unit)
        if looped is not None:
            if free_locals(node, ctx) & _settings(ctx.unit) and _sweeps_configurations(*looped, ctx):
                return  # each setting it closes over needs its own compile anyway
            loop = f"`{source_of(looped[0].func)}(...)` in '{looped[1].name}'"
        else:
            found = incoming_loop(ctx.index, ctx.unit)
            if found is None:
                return
            loop = found
        ctx.report(
            self,
            where,
            f"@{display_name(name)} on inner function '{node.name.value}' of '{ctx.unit.name}', which runs on every "
            f"iteration of a loop ({loop}): each iteration defines, traces and compiles it again; jit a "
            "module-level function once and pass what it closes over as arguments (static_argnames for settings)",
        )


def _attribute_assigned(fn: cst.Attribute, ctx: RuleContext) -> bool:
    """`obj.m = ...` in this function or at module level: `obj.m` may hold what was assigned."""
    path = dotted_name(fn)
    for unit in {id(ctx.unit): ctx.unit, id(ctx.index.root): ctx.index.root}.values():
        for node in own_nodes(unit.node):
            if type(node) is cst.Assign and any(dotted_name(t.target) == path for t in node.targets):
                return True
            if (type(node) is cst.AugAssign or type(node) is cst.AnnAssign) and dotted_name(
                node.target
            ) == path:
                return True
    return False


# A parameter annotated with one of these, or with a default of one of their literals, is a setting.
_SETTING_TYPES = frozenset({"str", "int", "bool"})


def _settings(unit: Unit) -> set[str]:
    """The parameters of a def that are settings: a `str`, `int` or `bool` by annotation or by literal default
    (`method="linear"`), never rebound. A jitted function closing over one compiles once per call, where the
    same function at module level, with the setting as a static argument, compiles once per value."""
    found = unit.memo.get("jax401_settings")
    if found is None:
        found = unit.memo["jax401_settings"] = set()
        node = unit.node
        if type(node) is cst.FunctionDef:
            assigned = unit.assigned_names()
            params = node.params
            for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
                annotation = param.annotation.annotation if param.annotation is not None else None
                default = param.default
                typed = type(annotation) is cst.Name and annotation.value in _SETTING_TYPES
                literal = (
                    type(default) is cst.SimpleString
                    or type(default) is cst.Integer
                    or (type(default) is cst.Name and default.value in ("True", "False"))
                )
                if (typed or literal) and param.name.value not in assigned:
                    found.add(param.name.value)
    return found


def _sweeps_configurations(call: cst.Call, caller: Unit, ctx: RuleContext) -> bool:
    """`for n in (4, 8, 16): run(x, n)`: the loop hands the function a new configuration each iteration, which
    may need its own compile anyway (as `config_sweep` says of a jit built in the loop itself)."""
    loops = caller.loops_of(call)
    if not loops:
        return False
    varying = set().union(*(caller.varying(loop) for loop in loops))
    if not any(type(n) is cst.Name and n.value in varying for a in call.args for n in walk(a.value)):
        return False
    for loop in loops:
        iterable = (
            loop.iter if type(loop) is cst.For else getattr(getattr(loop, "for_in", None), "iter", None)
        )
        if type(iterable) in (cst.Tuple, cst.List, cst.Set):
            return True
        if type(iterable) is cst.Call and ctx.index.qualname(iterable.func, caller) == "builtins.range":
            return True
    return False


def _is_static(unit: Unit) -> bool:
    node = unit.node
    return type(node) is cst.FunctionDef and any(
        type(d.decorator) is cst.Name and d.decorator.value in ("staticmethod",) for d in node.decorators
    )
