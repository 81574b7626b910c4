"""JAX105 leaked-tracer."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    ARRAY,
    GRAD,
    HOLDS_TRACED,
    TRACED,
    RuleContext,
    StorageResolver,
    captured_mutation,
    captured_update,
    container_storage,
    element_flags,
    haiku_state_in_trace,
    outer_object_container,
    storage_of,
)
from ..syntax import source_of
from .base import Rule
from .common import culprit

# Methods that store their arguments in a list/dict/set (trusted only on a receiver known to be one:
# `replay_buffer.insert(state, x)` and optax's `opt.update(...)` are functional APIs, not stores).
STORING_METHODS = frozenset(
    {"append", "extend", "insert", "appendleft", "extendleft", "add", "update", "setdefault"}
)


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
list/dict/set: `opt.update(...)` is optax's API, not a store). Also containers reached through an outer
object, when the code shows both: `logger.values.append(y)` with a module-level `logger = Logger()` whose class
binds `self.values = []`, `STATE["hist"].append(y)` with `STATE = {"hist": []}`, and `setattr(obj, "name", y)`.
Helpers called from traced code with traced arguments count as traced code. A method a transformation runs
bound to its instance (`sim.step = jax.jit(sim.step)`) stores tracers when it stores what it computes from the
JAX arrays its constructor put on `self`. A flax.nnx object that traced code captures instead of receiving
(`nnx.jit(counter)`, `jax.jit(model.step)`, a module-level model or the constructor's `self.optimizer` closed
over) refuses a Variable update or `Optimizer.update` inside the trace (TraceContextError). Haiku's implicit
state too: inside `hk.transform`, a function that a raw JAX transformation or lax control flow stages out
(`jax.lax.scan(step, ...)`, `jax.jit`, `lax.cond`, `odeint`) calling a haiku module that creates parameters,
`hk.get_parameter`, `hk.get_state`/`set_state` or `hk.next_rng_key()` stores tracers in the transformation's
frame (haiku's own `hk.scan`, `hk.cond`, ... thread it; a module called once before the loop has its
parameters already; an eager `jax.vmap` or `jax.grad` makes no tracer of them).

Not flagged: locals and containers created inside the traced function; an enclosing function's variables
when the writer is a plain helper defined and called inside the same traced function (one trace); pytree
classes (`register_pytree_node_class`, `flax.struct.dataclass`, `equinox.Module`) and `flax.nnx` modules,
whose attribute updates the transformation handles; `x.value = ...` state variables; constructors; in a
function only an eager `jax.vmap`/`eqx.filter_vmap` maps (called outside jit), values not computed from its
mapped arguments (`self._rng, key = jax.random.split(self._rng)`): vmap stages nothing out, so they are
concrete arrays.

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

    def __init__(self) -> None:
        self.resolver = StorageResolver()

    def on_assign(self, target: cst.BaseExpression, value, statement: cst.CSTNode, ctx: RuleContext) -> None:
        if ctx.kind < GRAD:
            return
        captured = captured_update(target, ctx)
        if captured is not None:
            ctx.report(
                self,
                target,
                f"Variable update '{source_of(target, 40)}' inside {ctx.context} of a '{captured}' flax.nnx "
                "object it captures (not passed in): flax refuses it inside the trace "
                "(TraceContextError: cannot mutate from a different trace level); pass the object as an "
                "argument of an nnx.jit function",
            )
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
        where = storage_of(target, ctx, self.resolver)
        if where is None and isinstance(target, cst.Subscript):
            where = outer_object_container(target.value, ctx, self.resolver)
        if where is None:
            return
        shown = value if value is not None and ctx.flags(value) & (TRACED | HOLDS_TRACED) else target
        self._report(target, shown, where, ctx)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.kind < GRAD:
            return
        haiku = haiku_state_in_trace(node, ctx)
        if haiku is not None:
            text, stores, context = haiku
            ctx.report(
                self,
                node,
                f"'{text}' {stores} in the frame of the Haiku transformation from inside {context}: what it "
                "stores there is a tracer of this trace (UnexpectedTracerError once used; an rng key drawn so "
                "is the same in every iteration); use haiku's own hk.scan, hk.cond, hk.fori_loop, hk.jit, "
                "hk.remat, or create them outside and pass them in",
            )
            return
        if isinstance(node.func, cst.Name):
            self._setattr(node, ctx)
            return
        if not isinstance(node.func, cst.Attribute):
            return
        method = node.func.attr.value
        receiver = node.func.value
        captured = captured_mutation(node, ctx)
        if captured is not None:
            ctx.report(
                self,
                node,
                f"'{source_of(node.func, 40)}(...)' updates the Variables of a '{captured}' flax.nnx object that "
                f"{ctx.context} captures (not passed in): flax refuses it inside the trace (TraceContextError: "
                "cannot mutate from a different trace level); pass the objects as arguments of an nnx.jit "
                "function",
            )
            return
        if method not in STORING_METHODS:
            return
        stored = next((a.value for a in node.args if ctx.flags(a.value) & (TRACED | HOLDS_TRACED)), None)
        if stored is None or ctx.flags(receiver) & (ARRAY | TRACED):
            return
        where = container_storage(receiver, ctx, self.resolver) or outer_object_container(
            receiver, ctx, self.resolver
        )
        if where is None:
            return
        self._report(node, stored, where, ctx)

    def _setattr(self, node: cst.Call, ctx: RuleContext) -> None:
        """`setattr(obj, "name", y)`: the store `obj.name = y`."""
        args = node.args
        if len(args) != 3 or any(a.keyword is not None or a.star for a in args):
            return
        obj, name, value = (a.value for a in args)
        if not isinstance(obj, cst.Name) or not isinstance(name, cst.SimpleString):
            return
        attr = name.evaluated_value
        if (
            not isinstance(attr, str)
            or not attr.isidentifier()
            or ctx.qualname(node.func) != "builtins.setattr"
        ):
            return
        if not ctx.flags(value) & (TRACED | HOLDS_TRACED):
            return
        where = storage_of(cst.Attribute(value=obj, attr=cst.Name(attr)), ctx, self.resolver)
        if where is not None:
            self._report(node, value, where, ctx)

    def _report(self, node: cst.CSTNode, shown: cst.BaseExpression, where: str, ctx: RuleContext) -> None:
        ctx.report(
            self,
            node,
            f"Traced value {culprit(shown, ctx)} is stored in {where} inside {ctx.context}: the tracer outlives "
            "the trace and using it later raises UnexpectedTracerError; return the value instead",
        )
