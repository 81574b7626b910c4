"""JAX103 inplace-array-update."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..analysis import (
    ARRAY,
    ARRAY_NAMESPACES,
    HOLDS_TRACED,
    LIST,
    MISSING_INPLACE_METHODS,
    STRICT,
    TRACED,
    NameUsage,
    RuleContext,
    positional_params,
    shows_project_instance,
)
from ..fix import SAFE, UNSAFE, replace
from ..syntax import source_of
from .base import Rule

_AUGMENTED = {
    cst.AddAssign: "add",
    cst.SubtractAssign: "subtract",
    cst.MultiplyAssign: "multiply",
    cst.DivideAssign: "divide",
    cst.PowerAssign: "power",
}  # `.at[]` has no floor_divide, mod, matmul or bitwise methods: those get `.set(x[i] op v)` advice, no fix


class InplaceArrayUpdate(Rule):
    code = "JAX103"
    name = "inplace-array-update"
    summary = "In-place update (`x[i] = v`, `x[i] += v`, `del x[i]`, `x.fill(v)`) on a JAX array"
    confirmable = True
    fix_safety = "safe"  # unsafe for attributes, items and globals: see the doc
    doc = """
## What it does
Flags item assignment, augmented item assignment and item deletion on a JAX array: a traced value inside a
transformation, or an array made by `jnp`/`lax`/`jax.random` anywhere, jitted or not. A parameter of a
same-module helper counts as an array when a call the analysis has already walked passes it a JAX array
(`update(x * 2, i, v)`, `bump(jnp.zeros(3))`) and the helper never rebinds it; so does the result of a
jitted function or of a helper whose every return is such an array (`y = predict(x); y[y > 0] = 0`), and an
entry of a dict or list display that holds one (`cfg = {"w": jnp.sin(x)}; cfg["w"][0] = v`) where the function
never changes, passes on or aliases the container. A traced value indexed as only an array can be
(`x[:, -1] = 0.0`, `x[..., 0] = v`: several indices, one a slice or `...`, which a list or tuple rejects) is
one, in the jitted function or a helper it calls. In traced
code an item assignment at a traced index on a pytree (a traced parameter, a list or dict) is flagged whatever
the container is (`memory[slot] = v`): a JAX array is immutable, a list takes no tracer as an index and a
dict none as a key, so each raises `TypeError`; no fix is offered there.

## Why is this bad
JAX arrays are immutable. `x[i] = v` raises `TypeError: JAX arrays are immutable and do not support in-place
item assignment`, eagerly and under `jit` alike; NumPy's in-place methods raise `AttributeError` (verified on
jax 0.10.2, for arrays and tracers). NumPy arrays, lists and dicts (including pytrees of
tracers) are not flagged, nor a method of a value the code shows to be an instance of a project class
(`assert isinstance(grads, Params)` before `grads.partition(mask)`, or `if isinstance(...)` around it): a JAX
array is never one, so the method is the class's own.

## Example
```python
x = jnp.zeros(3)
x[0] = 1.0
```

## Use instead
```python
x = jnp.zeros(3)
x = x.at[0].set(1.0)      # x[i] += v  ->  x = x.at[i].add(v)
```

## Fix safety
`x[i] = v` becomes `x = x.at[i].set(v)`; `+=`, `-=`, `*=`, `/=` and `**=` become `.add`, `.subtract`,
`.multiply`, `.divide` and `.power` (`.at[]` has no other in-place operators, so `//=`, `%=`, `@=` and the
bitwise ones get no fix). The fix is **safe** when `x` is a plain name local to the function (or a module-level
name at module level): the statement raised `TypeError` before and now does what it meant. It is **unsafe**
when `x` is an attribute or item (`self.x[i] = v` rebinds `self.x`, which other references to the old array do
not see), a name declared `global`/`nonlocal`, or a name in a class body. There is no fix when `x` is a name
the function only reads from an enclosing scope (assigning it would make it local), for `del x[i]`, for
chained (`x[i] = y = v`) and unpacking assignments, or when `x` is a part of a tuple or of a record instance
(`pair[0][i] = v`, `params.w[i] = v` of a NamedTuple, flax.struct or equinox instance built in the function):
those cannot be assigned either, so the message says to build a new holder. For a helper's parameter known to be an array only from its
callers, the fix is **unsafe**: a caller that relied on the update sees none unless the helper returns the
array and the caller uses what it returns. Note that `.at[i].add(v)` adds once per occurrence of a
repeated index, where NumPy's buffered `x[i] += v` adds once.

## References
- https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#in-place-updates
"""

    def __init__(self) -> None:
        # (id of a same-module function's unit, parameter name) that some call passes a JAX array
        self._array_args: set[tuple[int, str]] = set()
        # id of a unit's node -> how its body uses names; a rule lives for one module, so its nodes outlive this
        self._usage: dict[int, NameUsage] = {}

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if type(node.func) is cst.Attribute and node.func.attr.value in MISSING_INPLACE_METHODS:
            self._inplace_method(node, node.func, ctx)
            return
        if not node.args or type(node.func) is not cst.Name or node.func.value not in ctx.index.def_names():
            return  # only a def of the module can receive the array (a lambda's parameters are not read)
        for callee, _ in ctx.index.resolve_function(node.func, ctx.unit):
            if type(callee.node) is not cst.FunctionDef:
                continue
            params = positional_params(callee.params)
            names = {p.name.value for p in [*params, *callee.params.kwonly_params]}
            for i, arg in enumerate(node.args):
                if arg.star:
                    break
                name = (
                    arg.keyword.value
                    if arg.keyword is not None
                    else (params[i].name.value if i < len(params) else None)
                )
                if name in names and ctx.flags(arg.value) & ARRAY:
                    self._array_args.add((id(callee), name))

    def _inplace_method(self, call: cst.Call, func: cst.Attribute, ctx: RuleContext) -> None:
        """`x.fill(0)`, `x.resize(n)`, `x.put(i, v)`, `x.itemset(i, v)`, `x.partition(k)` on a JAX array."""
        if not self._array_value(func.value, ctx):
            return
        if type(func.value) is cst.Name and shows_project_instance(
            ctx.index, ctx.unit, func.value.value, call
        ):
            return  # `assert isinstance(grads, Params)`: the class's own method, not NumPy's
        name = source_of(func.value, 20)
        method = func.attr.value
        where = f" inside {ctx.context}" if ctx.context else ""
        ctx.report(
            self,
            call,
            f"'{name}.{method}(...)' on JAX array '{name}'{where}: JAX arrays have no in-place methods "
            f"(AttributeError); use {name} = {_INPLACE_ADVICE[method].format(name=name)}",
        )

    def _array_value(self, base: cst.BaseExpression, ctx: RuleContext) -> bool:
        """A JAX array: flagged as one, or a traced parameter this function uses only as an array."""
        flags = ctx.flags(base)
        if flags & ARRAY:
            return True
        if type(base) is cst.Name and base.value not in ctx.unit.assigned_names():
            if (id(ctx.unit), base.value) in self._array_args:
                return True  # a parameter that a call passes a JAX array
        if flags & TRACED and type(base) is cst.Name:
            usage = self._usage.get(id(ctx.unit.node))
            if usage is None:
                usage = self._usage[id(ctx.unit.node)] = NameUsage(ctx.unit.node)
            return usage.is_array(base.value)
        return False

    def _is_array(self, target: cst.Subscript, ctx: RuleContext) -> bool:
        if any(
            type(e.slice) is cst.Index
            and (type(e.slice.value) is cst.SimpleString or type(e.slice.value) is cst.ConcatenatedString)
            for e in target.slice
        ):
            return False  # `d["key"] = v`: a dict
        flags = ctx.flags(target.value)
        base = target.value
        if type(base) is cst.Name:
            if not flags & (TRACED | ARRAY) and (id(ctx.unit), base.value) not in self._array_args:
                return False  # neither an array nor an array argument, whatever the uses below say
            usage = self._usage.get(id(ctx.unit.node))
            if usage is None:
                usage = self._usage[id(ctx.unit.node)] = NameUsage(ctx.unit.node)
            if base.value in usage.containers:
                return False
            if (id(ctx.unit), base.value) in self._array_args and base.value not in ctx.unit.assigned_names():
                return True  # a parameter that a call passes a JAX array, never rebound here
            if flags & TRACED and not flags & ARRAY:
                # A traced parameter: an array only if used as one, or indexed as only an array is.
                return _array_only_index(target) or usage.is_array(base.value)
        return bool(flags & ARRAY)

    def _traced_index(self, target: cst.Subscript, ctx: RuleContext) -> str | None:
        """`memory[slot] = v` in traced code with `slot` traced, on a pytree (a traced parameter, a container
        of tracers, a list or dict literal): it fails whatever the container is (a JAX array is immutable, a
        list or tuple takes no tracer as an index, a dict none as a key), so no evidence of an array is needed.
        The traced index's text, else None."""
        base = target.value
        if ctx.kind < STRICT or type(base) is not cst.Name:
            return None
        index = next(
            (
                e.slice.value
                for e in target.slice
                if type(e.slice) is cst.Index and _surely_traced(e.slice.value, ctx)
            ),
            None,
        )
        if index is None:
            return None
        bound = ctx.unit.single_assignment(base.value)
        literal = type(bound) in (cst.List, cst.Dict, cst.Tuple, cst.ListComp, cst.DictComp)
        if not literal and not ctx.flags(base) & (TRACED | HOLDS_TRACED | LIST):
            return None
        return source_of(index, 20)

    def on_assign(self, target: cst.BaseExpression, value, statement: cst.CSTNode, ctx: RuleContext) -> None:
        if type(target) is not cst.Subscript:
            return
        if not self._is_array(target, ctx):
            index = self._traced_index(target, ctx)
            if index is not None:
                name = source_of(target.value, 20)
                ctx.report(
                    self,
                    target,
                    f"Item assignment to '{name}' at traced index '{index}' inside {ctx.context}: fails for any "
                    f"container (a JAX array is immutable, a list or dict takes no tracer as an index: "
                    f"TypeError); use a JAX array and {name} = {name}.at[{index}].set(...)",
                )
            return
        name = source_of(target.value, 20)
        index = source_of(target.slice[0].slice, 20) if len(target.slice) == 1 else "..."
        if type(statement) is cst.AugAssign and type(statement.operator) in _AUGMENTED:
            method = _AUGMENTED[type(statement.operator)]
            advice = f"use {name} = {name}.at[{index}].{method}(...)"
        elif type(statement) is cst.AugAssign:
            op = statement.operator.__class__.__name__
            symbol = _OPERATOR_SYMBOLS.get(op, "op")
            advice = f"use {name} = {name}.at[{index}].set({name}[{index}] {symbol} ...)"
        else:
            advice = f"use {name} = {name}.at[{index}].set(...)"
        fix = self._fix(target, statement, ctx)
        if _held_immutably(target.value, ctx):
            # `pair[0][i] = v`, `params.w[i] = v`: the tuple or record cannot take the new array either
            advice = f"use {name}.at[{index}] and build a new {source_of(target.value.value, 20)}"  # type: ignore[attr-defined]
            fix = None
        where = f" inside {ctx.context}" if ctx.context else ""
        ctx.report(
            self,
            target,
            f"In-place update of JAX array '{name}'{where}: JAX arrays are immutable (TypeError); {advice}",
            fix=fix,
        )

    def _fix(self, target: cst.Subscript, statement: cst.CSTNode, ctx: RuleContext):
        """`x[i] = v` -> `x = x.at[i].set(v)`; `x[i] += v` -> `x = x.at[i].add(v)`."""
        method: str | None
        if type(statement) is cst.Assign:
            if len(statement.targets) != 1 or statement.targets[0].target is not target:
                return None
            method, value = "set", statement.value
            before, after = (
                statement.targets[0].whitespace_before_equal,
                statement.targets[0].whitespace_after_equal,
            )
        elif type(statement) is cst.AugAssign and statement.target is target:
            method, value = _AUGMENTED.get(type(statement.operator)), statement.value
            if method is None:
                return None
            operator: Any = statement.operator  # every concrete augmented operator has both fields
            before, after = operator.whitespace_before, operator.whitespace_after
        else:
            return None
        base = target.value
        safety = _fix_safety(base, ctx)
        if safety == SAFE and type(base) is cst.Name and (id(ctx.unit), base.value) in self._array_args:
            safety = UNSAFE  # the caller's array is not the rebound parameter: a caller relying on the update sees none
        if safety is None or (type(value) is cst.Yield or type(value) is cst.Await) and not value.lpar:
            return None
        assert (
            type(base) is cst.Name or type(base) is cst.Attribute or type(base) is cst.Subscript
        )  # what _fix_safety accepts
        if type(value) is cst.Tuple and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        at = cst.Subscript(
            value=cst.Attribute(value=base, attr=cst.Name("at")),
            slice=target.slice,
            lbracket=target.lbracket,
            rbracket=target.rbracket,
        )
        call = cst.Call(func=cst.Attribute(value=at, attr=cst.Name(method)), args=[cst.Arg(value=value)])
        new = cst.Assign(
            targets=[
                cst.AssignTarget(target=base, whitespace_before_equal=before, whitespace_after_equal=after)
            ],
            value=call,
            semicolon=statement.semicolon,
        )
        return replace(statement, new, safety)

    def on_delete(self, target: cst.BaseExpression, statement: cst.CSTNode, ctx: RuleContext) -> None:
        if type(target) is cst.Subscript and self._is_array(target, ctx):
            name = source_of(target.value, 20)
            ctx.report(
                self,
                target,
                f"Deleting items of JAX array '{name}': JAX arrays are immutable (TypeError); use jnp.delete",
            )


# What each NumPy in-place method is as a functional JAX update.
_INPLACE_ADVICE = {
    "fill": "jnp.full_like({name}, value)",
    "resize": "jnp.resize({name}, shape)",
    "put": "jnp.put({name}, indices, values, inplace=False)",
    "itemset": "{name}.at[index].set(value)",
    "partition": "jnp.partition({name}, kth)",
}

_OPERATOR_SYMBOLS = {
    "FloorDivideAssign": "//",
    "ModuloAssign": "%",
    "MatrixMultiplyAssign": "@",
    "BitAndAssign": "&",
    "BitOrAssign": "|",
    "BitXorAssign": "^",
    "LeftShiftAssign": "<<",
    "RightShiftAssign": ">>",
}


def _held_immutably(base: cst.BaseExpression, ctx: RuleContext) -> bool:
    """`pair[0]` of a tuple, `params.w` of a record instance (`analysis/objects/records.py`): a part of a value whose
    parts cannot be assigned."""
    if type(base) is not cst.Attribute and type(base) is not cst.Subscript:
        return False
    return ctx.value(base.value).kind in ("tuple", "instance")


def _fix_safety(base: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """SAFE for a plain local name, UNSAFE for attributes, items and globals, None when no fix is right."""
    if type(base) is cst.Name:
        if ctx.own_names is not None:
            return UNSAFE  # a class body: rebinding makes a class attribute
        if ctx.unit is ctx.index.root:
            return SAFE
        if base.value in ctx.declared_global:
            return UNSAFE
        return SAFE if base.value in ctx.unit.local_names else None
    root = base
    while type(root) is cst.Attribute or type(root) is cst.Subscript:
        root = root.value
    return UNSAFE if type(root) is cst.Name else None


def _array_only_index(target: cst.Subscript) -> bool:
    """`x[:, -1]`, `x[..., 0]`: several indices, one a slice or `...`: a list or tuple rejects it (TypeError)
    and no pytree container takes it, so the target is an array."""
    if len(target.slice) < 2:
        return False
    return any(
        type(e.slice) is cst.Slice or (type(e.slice) is cst.Index and type(e.slice.value) is cst.Ellipsis)
        for e in target.slice
    )


def _surely_traced(index: cst.BaseExpression, ctx: RuleContext) -> bool:
    """An index that is surely a tracer, not merely a value the model cannot tell from one (what a method of a
    traced object returns may be any Python value): a parameter that a transformation traces (or that callers
    pass arrays) and the function never rebinds, or the result of a `jnp`/`lax`/`jax.random` call (directly,
    or through a name bound once)."""
    if not ctx.traced(index):
        return False
    unit = ctx.unit
    if type(index) is cst.Name:
        if index.value in unit.traced_params and index.value not in unit.assigned_names():
            # A transformation traces it, or a caller passes it an array; a helper's parameter that callers
            # pass only something the model cannot tell from a tracer is not sure.
            return unit.is_target or index.value in unit.array_params
        if unit is ctx.index.root or index.value not in unit.local_names:
            return False
        bound = unit.single_assignment(index.value)
        if bound is None:
            return False
        index = bound
    if type(index) is not cst.Call:
        return False
    name = ctx.qualname(index.func)
    return name is not None and name.startswith(ARRAY_NAMESPACES)
