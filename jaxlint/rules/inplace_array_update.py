"""JAX103 inplace-array-update."""

from __future__ import annotations

import libcst as cst

from ..analysis import ARRAY, TRACED
from .base import Rule, source_of

# Methods that only containers have: a name used with them is a dict or list, not an array.
_CONTAINER_METHODS = frozenset({"append", "extend", "items", "keys", "values", "get", "update", "setdefault", "pop", "insert"})
_AUGMENTED = {
    cst.AddAssign: "add",
    cst.SubtractAssign: "subtract",
    cst.MultiplyAssign: "multiply",
    cst.DivideAssign: "divide",
    cst.PowerAssign: "power",
    cst.FloorDivideAssign: "floor_divide",
}


class InplaceArrayUpdate(Rule):
    code = "JAX103"
    name = "inplace-array-update"
    summary = "In-place item assignment (`x[i] = v`, `x[i] += v`, `del x[i]`) on a JAX array"
    confirmable = True
    doc = """
## What it does
Flags item assignment, augmented item assignment and item deletion on a JAX array: a traced value inside a
transformation, or an array made by `jnp`/`lax`/`jax.random` anywhere, jitted or not.

## Why is this bad
JAX arrays are immutable. `x[i] = v` raises `TypeError: JAX arrays are immutable and do not support in-place
item assignment`, eagerly and under `jit` alike. NumPy arrays, lists and dicts (including pytrees of
tracers) are not flagged.

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
No automatic fix yet.

## References
- https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#in-place-updates
"""

    def __init__(self, settings: object | None = None) -> None:
        super().__init__(settings)
        self._containers: dict[int, set[str]] = {}

    def _is_array(self, target: cst.Subscript, ctx) -> bool:
        if any(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.ConcatenatedString))
            for e in target.slice
        ):
            return False  # `d["key"] = v`: a dict
        flags = ctx.flags(target.value)
        if not flags & (ARRAY | TRACED):
            return False
        base = target.value
        return not (isinstance(base, cst.Name) and base.value in self._container_names(ctx))

    def _container_names(self, ctx) -> set[str]:
        """Names the function uses as dicts or lists (`d["k"]`, `xs.append(...)`)."""
        unit = ctx.unit
        found = self._containers.get(id(unit))
        if found is None:
            from ..analysis.walk import walk

            found = set()
            for node in walk(unit.node):
                if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
                    if node.attr.value in _CONTAINER_METHODS:
                        found.add(node.value.value)
                elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
                    if any(
                        isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString)
                        for e in node.slice
                    ):
                        found.add(node.value.value)
            self._containers[id(unit)] = found
        return found

    def on_assign(self, target: cst.BaseExpression, value, statement: cst.CSTNode, ctx) -> None:
        if not isinstance(target, cst.Subscript) or not self._is_array(target, ctx):
            return
        name = source_of(target.value, 20)
        index = source_of(target.slice[0].slice, 20) if len(target.slice) == 1 else "..."
        if isinstance(statement, cst.AugAssign) and type(statement.operator) in _AUGMENTED:
            method = _AUGMENTED[type(statement.operator)]
            advice = f"use {name} = {name}.at[{index}].{method}(...)"
        else:
            advice = f"use {name} = {name}.at[{index}].set(...)"
        where = f" inside {ctx.context}" if ctx.context else ""
        ctx.report(
            self,
            target,
            f"In-place update of JAX array '{name}'{where}: JAX arrays are immutable (TypeError); {advice}",
        )

    def on_delete(self, target: cst.BaseExpression, statement: cst.CSTNode, ctx) -> None:
        if isinstance(target, cst.Subscript) and self._is_array(target, ctx):
            name = source_of(target.value, 20)
            ctx.report(
                self,
                target,
                f"Deleting items of JAX array '{name}': JAX arrays are immutable (TypeError); use jnp.delete",
            )
