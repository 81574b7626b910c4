"""JAX403 unblocked-timing."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..analysis import (
    CLOCK_MODULES,
    CLOCKS,
    TIMEIT_RUNS,
    DispatchJudge,
    RuleContext,
    Unit,
    magic_for,
    timer_manager,
)
from ..fix import SAFE, replace
from ..syntax import bound_names, children, source_of
from .base import Rule
from .edits import reference_to

_TIMING_MAGICS = frozenset({"timeit", "time"})


class UnblockedTiming(Rule):
    code = "JAX403"
    name = "unblocked-timing"
    fix_safety = SAFE
    summary = "Timing JAX work (`time.*`, a timer, `timeit`, `%timeit`) without waiting for it: measures dispatch only"
    severity = "warning"
    doc = """
## What it does
Flags timings of JAX work that never wait for the result: two clock reads (`time.time()`,
`time.perf_counter()`, `time.monotonic()`, `timeit.default_timer()`, `datetime.now()`, …) around statements that call JAX — a
jitted or transformed function of the module (or, when a project is linted, a jitted function another of its
modules defines; an attribute the constructor binds to one, `self._f = jax.jit(f)`), a `jnp`/`lax`/`jax.random` operation, or a function that only dispatches such work and
returns (reached through any call: a helper, a method, `partial`, a lookup, a function passed as an argument, a
lambda, a nested def, another project module's function) — with nothing in
between that blocks; `timeit.timeit(lambda: f(x))`/`timeit.repeat`/`timeit.Timer` of such a call; a timer context manager of the
module (or, when a project is linted, such a timer of another of its modules) around such statements (`with timer("fwd"): y = f(x)`, where `timer` is a `@contextmanager` that reads
a clock before and after its `yield`, or a class whose `__enter__` and `__exit__` each read one, and that does
not wait for JAX work itself); and in notebooks, `%timeit f(x)`, `%time y = f(x)` and `%%timeit`/`%%time`
cells that do the same.

Only regions made of JAX calls, arithmetic, `range`/`len`/`enumerate`/`zip`, list `.append` and `for` loops are
judged: anything else in the timed region (a `print`, a conversion such as `float()`/`np.asarray`/`.item()`,
`.block_until_ready()`, `jax.block_until_ready`, an unknown function that might do one of these, an `if`)
may wait for the result, so the timing is left alone.

## Why is this bad
JAX dispatches work asynchronously: a jitted call returns as soon as the computation is queued, before it has
run. The clock then measures Python dispatch (microseconds), not the computation — benchmarks look orders of
magnitude too fast, and comparisons between implementations are meaningless.

## Example
```python
start = time.perf_counter()
out = train_step(params, batch)
elapsed = time.perf_counter() - start
```

## Use instead
```python
start = time.perf_counter()
out = jax.block_until_ready(train_step(params, batch))
elapsed = time.perf_counter() - start
```
and `%timeit train_step(params, batch).block_until_ready()` in notebooks. Time a warmed-up function, so that
compilation is not measured either.

## Fix safety
In notebooks, a line magic that times one call (`%timeit f(x)`, `%timeit y = f(x)`) offers to wait for its
result: `%timeit jax.block_until_ready(f(x))`, through the module's own `import jax`. It is safe: the call
and its result are unchanged, and `jax.block_until_ready` waits on every array of whatever pytree the call
returns (where `.block_until_ready()` needs a single array). `jaxlint server` offers it as a quick fix in
the cell; `--fix` does not rewrite notebooks (the replacement is in `fix` of `--format json`). Timers in
`.py` files have no automatic fix.

## References
- https://docs.jax.dev/en/latest/async_dispatch.html
- https://docs.jax.dev/en/latest/faq.html#benchmarking-jax-code
"""

    # -- .py timers: every statement list of every function (and of the module) ---------------------------

    def __init__(self) -> None:
        self._clocks = False  # whether the module imports anything from `time`, `timeit` or `datetime`
        self._timers = False  # whether it imports another project module's timer

    def on_module(self, module: cst.Module, ctx: RuleContext) -> None:
        self._clocks = any(q.split(".")[0] in CLOCK_MODULES for q in ctx.index.imports.names.values())
        project = ctx.index.project  # or a timer of another project module (project mode)
        self._timers = project is not None and any(e.timer for e in project.exports.values())
        if ctx.index.magics:
            self._magics(module, ctx)

    def on_unit(self, unit: Unit, ctx: RuleContext) -> None:
        if (self._clocks or self._timers) and not isinstance(unit.node, cst.Lambda):
            self._unit(unit, ctx)

    def _unit(self, unit: Unit, ctx: RuleContext) -> None:
        body = unit.node.body if isinstance(unit.node, cst.FunctionDef) else unit.node
        for statements in _blocks(body):
            self._block(statements, ctx)

    def _block(self, statements: list[cst.CSTNode], ctx: RuleContext) -> None:
        for i, statement in enumerate(statements):
            if isinstance(statement, cst.With):
                self._with(statement, ctx)
            timer = _start_timer(statement, ctx)
            if timer is None:
                continue
            end = None
            for j in range(i + 1, len(statements)):
                clock = _clock_call(statements[j], ctx)
                if clock is not None:
                    end = (j, clock)
                    break
                if timer in _assigned_names(statements[j]):
                    break
            if end is None:
                continue
            j, clock = end
            judge = _judge(ctx)
            if all(judge.statement(s) for s in statements[i + 1 : j]) and judge.jax_calls:
                first = judge.jax_calls[0]
                ctx.report(
                    self,
                    clock,
                    f"{source_of(clock.func)}() measures dispatch, not work: `{source_of(first)}` runs "
                    "asynchronously and nothing since the clock started waits for it; wrap the result in "
                    "jax.block_until_ready(...) before reading the clock",
                )

    def _with(self, statement: cst.With, ctx: RuleContext) -> None:
        """`with timer("fwd"): y = f(x)`: a timer context manager of this module around dispatch only."""
        if len(statement.items) != 1 or statement.asynchronous is not None:
            return
        item = statement.items[0].item
        timer = timer_manager(item, ctx.index, ctx.unit)
        if timer is None or not isinstance(statement.body, cst.IndentedBlock):
            return
        judge = _judge(ctx)
        if all(judge.statement(s) for s in statement.body.body) and judge.jax_calls:
            ctx.report(
                self,
                item,
                f"`{source_of(item)}` ({timer}) measures dispatch, not work: `{source_of(judge.jax_calls[0])}` "
                "runs asynchronously and nothing in the block waits for it; wrap the result in "
                "jax.block_until_ready(...) inside the block",
            )

    # -- timeit ------------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if not self._clocks:
            return
        name = ctx.qualname(node.func)
        if name not in TIMEIT_RUNS:
            return
        stmt = None
        for i, arg in enumerate(node.args):
            if (arg.keyword is None and i == 0) or (arg.keyword is not None and arg.keyword.value == "stmt"):
                stmt = arg.value
        if not isinstance(stmt, cst.Lambda):
            return
        judge = _judge(ctx)
        if judge.expression(stmt.body) and judge.jax_calls:
            ctx.report(
                self,
                stmt,
                f"{name}() of `{source_of(stmt.body)}` measures dispatch, not work: JAX runs it asynchronously "
                "and the lambda returns before it finishes; time `lambda: jax.block_until_ready(...)` instead",
            )

    # -- notebook magics ----------------------------------------------------------------------------------

    def _magics(self, module: cst.Module, ctx: RuleContext) -> None:

        groups: dict[int, tuple[Any, list[cst.CSTNode]]] = {}  # Any: notebook.Magic
        for statement in module.body:
            magic = magic_for(ctx.index, statement)
            if magic is None or magic.name not in _TIMING_MAGICS:
                continue
            groups.setdefault(id(magic), (magic, []))[1].append(statement)
        for magic, statements in groups.values():
            judge = _judge(ctx)
            if all(judge.statement(s) for s in statements) and judge.jax_calls:
                first = judge.jax_calls[0]
                prefix = "%%" if magic.kind == "cell" else "%"
                ctx.report(
                    self,
                    first,
                    f"{prefix}{magic.name} of `{source_of(first)}` measures dispatch, not work: JAX runs it "
                    "asynchronously and nothing in the timed code waits for it; append .block_until_ready() "
                    "or wrap it in jax.block_until_ready(...)",
                    fix=_wait_for(magic, statements, first, ctx),
                )


def _wait_for(magic: Any, statements: list[cst.CSTNode], call: cst.Call, ctx: RuleContext) -> object:
    """`%timeit f(x)` -> `%timeit jax.block_until_ready(f(x))` when the line magic times that one call (its
    statement's value); None otherwise (`%timeit f(x) + g(x)`, a `%%timeit` cell, no `import jax`)."""
    if magic.kind != "line" or len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return None
    # The magic's line is linted as `0;  <code>` (the `0` keeps the columns): its own statements are the rest.
    timed = [
        s for s in statements[0].body if not (isinstance(s, cst.Expr) and isinstance(s.value, cst.Integer))
    ]
    if len(timed) != 1 or not isinstance(timed[0], (cst.Expr, cst.Assign)) or timed[0].value is not call:
        return None
    wait = reference_to("jax.block_until_ready", ctx)
    if wait is None:
        return None
    return replace(call, cst.Call(func=wait, args=[cst.Arg(call)]), SAFE)


# -- the timed region -----------------------------------------------------------------------------------------


def _judge(ctx: RuleContext) -> DispatchJudge:
    """A judge of the rule's own unit's code (`analysis.summaries.dispatch`: what only dispatches JAX work)."""
    return DispatchJudge(ctx.index, ctx.unit, ctx.qualname, ctx.is_module_global)


def _blocks(body: cst.CSTNode) -> list[list[cst.CSTNode]]:
    """Every statement list in a body, nested ones included (not those of nested functions or classes)."""
    found: list[list[cst.CSTNode]] = []
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            found.append(list(node.body))
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not body:
            continue
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseExpression)):
            continue
        stack.extend(children(node))
    return found


def _start_timer(statement: cst.CSTNode, ctx: RuleContext) -> str | None:
    """`t0 = time.perf_counter()` alone on its line: the name that holds the start."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    target = small.targets[0].target
    value = small.value
    if isinstance(target, cst.Name) and isinstance(value, cst.Call) and ctx.qualname(value.func) in CLOCKS:
        return target.value
    return None


def _clock_call(statement: cst.CSTNode, ctx: RuleContext) -> cst.Call | None:
    """The first clock read in a statement (not in nested functions)."""
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Call) and ctx.qualname(node.func) in CLOCKS:
            return node
        stack.extend(reversed(list(children(node))))
    return None


def _assigned_names(statement: cst.CSTNode) -> set[str]:
    """Names a statement rebinds by assignment, nested functions included (a rebound start time)."""
    names: set[str] = set()
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assign):
            for target in node.targets:
                names.update(bound_names(target.target))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            names.update(bound_names(node.target))
        stack.extend(children(node))
    return names
