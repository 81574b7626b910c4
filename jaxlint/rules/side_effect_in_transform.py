"""JAX202 side-effect-in-transform."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    ENVIRON,
    FILE_OPENERS,
    HOLDS_TRACED,
    HOST_EFFECTS,
    INPUT,
    LOGS,
    NUMPY_RANDOM,
    NUMPY_RANDOM_CONSTRUCTORS,
    OS_WRITES,
    PATH_CHANGES,
    PATH_CLASSES,
    PATH_WRITES,
    SAVES,
    SHELL,
    STDLIB_RANDOM,
    STRICT,
    TIME_READS,
    TRACED,
    WRITES,
    RuleContext,
    StorageResolver,
    Unit,
    call_effect,
    display_name,
    dropped_object,
    lost_argument_store,
    mutating_call,
    outer_iterator,
    stale_closure_reads,
    storage_of,
    updated_variable,
)
from ..syntax import dotted_name, source_of, walk
from .base import Rule
from .common import culprit, per_run, shows_tracer


def _write_mode(node: cst.Call) -> bool:
    """Whether an `open(...)` call opens for writing (a literal mode with w, a, x or +)."""
    mode = None
    positional = [a for a in node.args if a.keyword is None]
    if len(positional) >= 2:
        mode = positional[1].value
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "mode":
            mode = arg.value
    if not isinstance(mode, cst.SimpleString) or not isinstance(mode.evaluated_value, str):
        return False
    return any(c in mode.evaluated_value for c in "wax+")


class SideEffectInTransform(Rule):
    code = "JAX202"
    name = "side-effect-in-transform"
    confirmable = True  # --verify: runs on the first (tracing) call, not on a cached second one
    summary = "Python side effect (I/O, logging, progress bars, time, random, iterators, outer state) inside a transformation"
    doc = """
## What it does
Flags Python side effects inside `jax.jit`, `vmap`, `pmap`, `checkpoint` and `lax` bodies (and helpers they
call with traced arguments):
- file and OS writes: `open(..., "w")`, `os.remove`/`rename`/`makedirs`/`system`/…, `os.environ` changes,
  `shutil`, `subprocess`, `np.save`, `pickle.dump`, `json.dump`, `Path.write_text`/`write_bytes` and
  `pathlib.Path(...).mkdir()`/`unlink()`/…;
- clocks: `time.time()`, `perf_counter()`, `sleep()`, `datetime.now()`, …; `input()`;
- global random state: stdlib `random.*` and `np.random.*` (not `np.random.default_rng` & co., which only
  build generators);
- `logging`/`absl.logging` calls that log a traced value, and the same through a logger
  (`logger = logging.getLogger(...)`, here or in an enclosing scope) or a summary writer's `add_scalar` & co.;
- `tqdm` progress bars: `for i in tqdm(range(n))` (or `trange`) in traced code, and `bar.update()`/
  `set_postfix()`/`set_description()` of a bar made with `tqdm(...)`: the bar moves while JAX traces;
- `next(it)` where `it` is a Python iterator bound outside the traced function (an `iter(...)`, `map`, `zip`,
  `itertools` result, a generator or a generator expression): it is advanced once, while tracing, and every
  step of a `lax.scan`/`fori_loop` body (or every call of a jitted step) sees that one item;
- updates of state that outlives the trace: `counter += 1` on a `global`/`nonlocal`, `self.calls += 1`,
  `self.t = self.t + self.dt` (in a method run bound to its instance too: `jax.jit(Chopper(1.0).step)`,
  `jax.vmap(obj)` runs `obj.__call__`);
- a variable of the enclosing scope (or module) that a compiled function reads, when that scope rebinds it
  between two calls of the compiled function (`g = jax.jit(f); g(x); a = 20.0; g(x)`, or a loop calling
  `g` that rebinds it on every iteration): the later calls silently use the value `f` was traced with;
- an item store into a parameter of a transformed function (`pair[0] = ...`) whose caller reads the list or
  dict it passed after the call: the transformation rebuilds its arguments, so the caller's object is unchanged;
- Variable updates of a flax.nnx object that a plain `jax.jit` function receives as an argument
  (`model.count.value += 1`, `model.w[...] = w`, `optimizer.update(model, grads)`, a method of the model's
  class that updates `self.<v>.value`): jax.jit traces a copy of the object, and the update is dropped when
  the call returns. Not flagged under `nnx.jit`, or when the function returns the object (or its
  `nnx.state`).

What a library call does on the host (logs, draws a progress bar, makes a logger or a bar) is read from the
library table (`jaxlint/analysis/semantics/library.py`), each entry run on the version it names.

Not flagged: anything outside transformations, under `jax.grad` alone (it runs the Python function on every
call), inside `jax.debug.callback`/`io_callback`/`pure_callback` targets, under `jax.eval_shape` or
`jax.make_jaxpr` (tracing only), logging of static values and `warnings.warn` (deliberate trace-time
messages), reading files and the environment (a trace-time constant, often on purpose), appending to an
outer list or setting one of its items (a common way to record traces; an augmented update of an item,
`STATS["calls"] += 1`, is flagged like `global n; n += 1`), and updates that store a traced value (JAX105 reports those);
`next()` on an iterator made inside the traced function, or on anything the code does not show to be a
Python iterator (a parameter, `hk.PRNGSequence`, an object of unknown type); a logger or bar imported from
another module (what it holds is not known there).

## Why is this bad
Python runs only while JAX traces the function. Under `jit` that is once per compilation: the compiled
function replays the recorded array operations and none of the Python. The side effect happens once, not on
every call (or every `lax.scan` iteration); clock readings and random numbers are taken once and baked into
the compiled code as constants, so every call returns the same "random" value or time.

## Example
```python
@jax.jit
def noisy(x):
    return x + np.random.normal(size=x.shape)
```

## Use instead
```python
@jax.jit
def noisy(x, key):
    return x + jax.random.normal(key, x.shape)
```
For I/O and logging at run time use `jax.debug.print`, `jax.debug.callback` or `jax.experimental.io_callback`;
time jitted calls from outside (after `.block_until_ready()`); return updated state instead of mutating it.

## Fix safety
No automatic fix: what the side effect should become depends on the intent.

## References
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions
- https://docs.jax.dev/en/latest/external-callbacks.html
- https://docs.jax.dev/en/latest/random-numbers.html
"""

    def __init__(self) -> None:
        self.resolver = StorageResolver()
        self._lost_stores: set[int] = set()

    @staticmethod
    def _active(ctx: RuleContext) -> bool:
        return ctx.kind == STRICT and "eval_shape" not in ctx.context and "make_jaxpr" not in ctx.context

    def on_unit(self, unit: Unit, ctx: RuleContext) -> None:
        if not self._active(ctx) or unit.parent is None:
            return
        for node, compiled in stale_closure_reads(unit, ctx.index):
            ctx.report(
                self,
                node,
                f"'{node.value}' is read by {ctx.context} from the scope around it, which rebinds it between "
                f"two calls of '{compiled}': the compiled function keeps the value it was traced with (the "
                "second call silently uses the old one); pass it as an argument",
            )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if not self._active(ctx):
            return
        name = ctx.qualname(node.func)
        message = self._call_message(node, name, ctx)
        if message is not None:
            ctx.report(self, node, message)
            return
        receiver = mutating_call(node, ctx)
        if receiver is not None:
            ctx.report(self, node, _dropped_update(f"'{source_of(node.func, 40)}(...)'", receiver, ctx))

    def _call_message(self, node: cst.Call, name: str | None, ctx: RuleContext) -> str | None:
        where = f"inside {ctx.context}"
        once = f"runs once while JAX traces the function, not on every {per_run(ctx)}"
        io_advice = "move it out of the transformation or use jax.debug.callback / io_callback"
        if name is not None:
            short = display_name(name)
            if name in FILE_OPENERS:
                if _write_mode(node):
                    return f"File write open(...) {where} {once}; {io_advice}"
                return None
            if name in OS_WRITES or name in SHELL or name in SAVES:
                return f"{short}() {where} {once}; {io_advice}"
            if name in TIME_READS:
                return (
                    f"{short}() {where} is read once at trace time and baked into the compiled code as a constant; "
                    "time the jitted call from outside, after .block_until_ready()"
                )
            if name == INPUT:
                return f"input() {where} asks once at trace time and the answer is baked in as a constant; {io_advice}"
            if name in STDLIB_RANDOM or (
                name.startswith(NUMPY_RANDOM)
                and name[len(NUMPY_RANDOM) :].split(".")[0] not in NUMPY_RANDOM_CONSTRUCTORS
            ):
                return (
                    f"{'np.' if name.startswith('numpy.') else ''}{short}() {where} draws from global random state "
                    f"once at trace time: the result is baked in as a constant and repeats on every {per_run(ctx)}; "
                    "use jax.random with a key"
                )
            if name == "builtins.next" and node.args and node.args[0].keyword is None:
                return self._next_message(node, ctx)
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in PATH_WRITES or (method in PATH_CHANGES and self._is_path(func.value, ctx)):
                return f"Path.{method}() {where} {once}; {io_advice}"
        effect = call_effect(node, ctx)
        if effect is None:
            return None
        kind, what = effect
        if kind == LOGS or kind == WRITES:
            return self._log_message(node, what, kind, ctx)
        return (
            f"{what}() {where} {HOST_EFFECTS[kind]} while JAX traces the function, not on every {per_run(ctx)}; "
            "report progress outside the transformation (or from jax.debug.callback)"
        )

    def _next_message(self, node: cst.Call, ctx: RuleContext) -> str | None:
        iterator = node.args[0].value
        how = outer_iterator(iterator, ctx, self.resolver)
        if how is None:
            return None
        return (
            f"next({source_of(iterator)}) inside {ctx.context} advances the Python iterator ({how}) once, while "
            f"JAX traces the function: every {per_run(ctx)} sees that same item, baked in as a constant; pass the "
            "data in as an argument (or as the scanned xs)"
        )

    @staticmethod
    def _log_message(node: cst.Call, what: str, kind: str, ctx: RuleContext) -> str | None:
        for arg in node.args:
            shown = shows_tracer(arg.value, ctx)
            if shown is None:
                continue
            if kind == WRITES:  # every writer in the table raises on a tracer, so it never writes at all
                return (
                    f"{what}() of traced value {culprit(shown, ctx)} inside {ctx.context} is handed a tracer, not "
                    "the value: the writer fails on it while JAX traces (and on a value made static it would "
                    f"write once, not on every {per_run(ctx)}); record it from jax.debug.callback"
                )
            gets = (
                "shows a tracer instead of the value" if kind == LOGS else "is handed a tracer, not the value"
            )
            return (
                f"{what}() of traced value {culprit(shown, ctx)} inside {ctx.context} {HOST_EFFECTS[kind]} once "
                f"while JAX traces the function, not on every {per_run(ctx)}, and {gets}; "
                "use jax.debug.print or jax.debug.callback"
            )
        return None

    @staticmethod
    def _is_path(node: cst.BaseExpression, ctx: RuleContext) -> bool:
        """`pathlib.Path(...)`, maybe joined with `/`."""
        while isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            node = node.left
        return isinstance(node, cst.Call) and ctx.qualname(node.func) in PATH_CLASSES

    def on_assign(self, target: cst.BaseExpression, value, statement: cst.CSTNode, ctx: RuleContext) -> None:
        if not self._active(ctx):
            return
        lost = lost_argument_store(target, ctx.unit, ctx.index)
        if lost is not None and id(statement) not in self._lost_stores:  # `p[0], p[1] = ...`: once
            self._lost_stores.add(id(statement))
            ctx.report(
                self,
                target,
                f"'{source_of(target, 40)}' stores into the copy of '{lost}' that {ctx.context} receives (the "
                f"transformation rebuilds its arguments), so the caller's '{lost}' read after the call is "
                "unchanged; return the new values instead",
            )
            return
        if lost is not None or value is None:
            return
        if isinstance(target, cst.Subscript) and ctx.qualname(target.value) == ENVIRON:
            ctx.report(
                self,
                target,
                f"os.environ[...] = ... inside {ctx.context} runs once while JAX traces the function, not on every "
                f"{per_run(ctx)}; set it before calling the transformed function",
            )
            return
        root = updated_variable(target)
        if root is not None and dropped_object(root, ctx) is not None:
            ctx.report(self, target, _dropped_update(f"'{source_of(target, 40)}'", root, ctx))
            return
        if isinstance(statement, cst.AugAssign):
            stored = ctx.flags(target) | ctx.flags(value)
        elif isinstance(statement, cst.Assign) and _mentions(value, target):
            stored = ctx.flags(value)  # `g = g + 1` on a global, `self.t = self.t + dt` on the instance
        else:
            return
        if stored & (TRACED | HOLDS_TRACED):
            return  # a traced value stored outside: JAX105
        what = self._outer_state(target, ctx, counted=isinstance(statement, cst.AugAssign))
        if what is None:
            return
        ctx.report(
            self,
            target,
            f"Update of {what} inside {ctx.context} runs once while JAX traces the function, not on every "
            f"{per_run(ctx)}; return the new value from the function instead",
        )

    def _outer_state(self, target: cst.BaseExpression, ctx: RuleContext, counted: bool = False) -> str | None:
        # An item store (`outer[k] = v`) is left alone, but an augmented one (`STATS["calls"] += 1`, `u[0] += 1`)
        # counts: like `global n; n += 1`, it runs once per trace, not per call or iteration.
        return storage_of(target, ctx, self.resolver, items=counted and isinstance(target, cst.Subscript))


def _dropped_update(what: str, receiver: cst.Name, ctx: RuleContext) -> str:
    return (
        f"Update {what} of the flax.nnx object '{receiver.value}' inside {ctx.context}: jax.jit traces a copy of "
        f"'{receiver.value}', so the update is dropped when the call returns and the object passed in keeps its "
        f"old values; compile with nnx.jit, or return '{receiver.value}' (or its nnx.state) from the function"
    )


def _mentions(node: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """Whether `node` reads the name or attribute (`self.t`) that `target` stores: an update of it."""
    if isinstance(target, cst.Name):
        return any(isinstance(n, cst.Name) and n.value == target.value for n in walk(node))
    stored = dotted_name(target) if isinstance(target, cst.Attribute) else None
    return stored is not None and any(
        isinstance(n, cst.Attribute) and dotted_name(n) == stored for n in walk(node)
    )
