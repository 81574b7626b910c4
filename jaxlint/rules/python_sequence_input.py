"""JAX502 python-sequence-input.

Which `jax.numpy` functions reject Python sequences is a row of the library table measured on real JAX, not
guessed (`analysis/semantics/sequences.py`, its data written by `tools/measure_jnp_sequence_args.py`).
"""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    ARRAY,
    JAX_NUMPY,
    LIST,
    SEQUENCE_NESTED,
    SEQUENCE_REJECTS,
    SEQUENCE_VARIADIC,
    TRACED,
    UNKNOWN,
    RuleContext,
    annotation_name,
    display_name,
    jitted_callable,
    positional_params,
)
from ..syntax import source_of
from .base import Rule
from .common import describe_sequence

# The sequences jnp refuses, as this rule names them (dicts are not sequences).
_AS_PYTHON = {
    "a list": "a Python list",
    "a tuple": "a Python tuple",
    "a set": "a Python set",
    "a set comprehension": "a Python set",
    "a list comprehension": "a list comprehension",
    "a generator expression": "a generator expression",
}


_REJECTS, _NESTED, _VARIADIC = SEQUENCE_REJECTS, SEQUENCE_NESTED, SEQUENCE_VARIADIC  # the library table's


class PythonSequenceInput(Rule):
    code = "JAX502"
    name = "python-sequence-input"
    summary = "A Python list or tuple passed to a `jnp` function that only accepts arrays (`jnp.sum([a, b])`)"
    confirmable = True
    doc = """
## What it does
Flags a list or tuple literal, a list/set comprehension or a generator expression — or a local name bound to a
Python list — passed to a `jax.numpy` function at an argument that rejects Python sequences, such as
`jnp.sum([a, b])`, `jnp.maximum(x, [0, 1])` or `jnp.take(x, [0, 2])`. Also flags nested lists given to the
functions that do take a sequence of arrays (`jnp.concatenate([[0.0], x])`, `jnp.stack([[1, 2], [3, 4]])`).
And a Python `str` passed to a traced (not static) parameter of a same-module `jax.jit` function: a string
literal or f-string, a name bound to one, or any argument to a parameter annotated `str`.

## Why is this bad
Unlike NumPy, most `jax.numpy` functions refuse implicit conversion of Python sequences, because converting
each element to a separate array is slow and hides the cost: the call raises
`TypeError: sum requires ndarray or scalar arguments, got <class 'list'> at position 0`, eagerly and under
`jit` alike. Which functions and arguments reject sequences was measured on JAX itself (see the module's
docstring); `jnp.array`, `jnp.asarray`, `jnp.stack`, `jnp.concatenate` and the other functions that take a
sequence of arrays are fine. `jit` traces arrays and pytrees of them only: a `str` at a traced parameter
raises `TypeError: Error interpreting argument ... as an abstract array` at the call; it has to be declared
static (`static_argnames`).

## Example
```python
total = jnp.sum([loss_a, loss_b])
```

## Use instead
```python
total = jnp.sum(jnp.array([loss_a, loss_b]))  # or: loss_a + loss_b
```

## Fix safety
No automatic fix.

## References
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#non-array-inputs-numpy-vs-jax
"""

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualname(node.func)
        if name is None or not name.startswith(JAX_NUMPY):
            if node.args:
                self._jitted_strings(node, ctx)
            return
        rejects, nested = _REJECTS.get(name), _NESTED.get(name)
        variadic = name in _VARIADIC
        if rejects is None and nested is None and not variadic:
            return
        position = 0
        for arg in node.args:
            if arg.star:
                if arg.keyword is None and arg.star == "*":
                    return  # positions after `*args` are unknown
                continue
            if arg.keyword is None:
                slot, param = position, None
                position += 1
            else:
                slot, param = None, arg.keyword.value
            if variadic and arg.keyword is None or _matches(rejects, slot, param):
                what = self._sequence(arg.value, ctx)
                if what is not None:
                    label = f"'{param}'" if param else f"at position {slot}"
                    ctx.report(
                        self,
                        arg.value,
                        f"{what} passed to {display_name(name)} ({label}): jax.numpy does not convert Python sequences "
                        f"here and raises TypeError; wrap it in jnp.array(...) or jnp.stack(...)",
                    )
            elif _matches(nested, slot, param):
                inner = self._nested(arg.value)
                if inner is not None:
                    ctx.report(
                        self,
                        inner,
                        f"nested Python sequence `{source_of(inner)}` inside the sequence passed to {display_name(name)}: "
                        "each element must be an array or a scalar, a list raises TypeError; use jnp.array(...)",
                    )

    def _jitted_strings(self, node: cst.Call, ctx: RuleContext) -> None:
        """A `str` at a traced parameter of a `jax.jit` function: jit takes arrays and pytrees of them only, so
        the call raises TypeError. The argument is a `str` when its value says so, or when it is unknown and the
        parameter is annotated `str`."""
        jitted = jitted_callable(node.func, ctx)
        if jitted is None:
            return
        params = {p.name.value: p for p in [*positional_params(jitted.params), *jitted.params.kwonly_params]}
        for arg, param_name, static in jitted.arguments(node):
            param = params.get(param_name)
            if static or param is None:
                continue  # a position past the named parameters may be static through `*args`: unknown
            value = ctx.value(arg.value)
            text = value.kind == "str" or isinstance(arg.value, (cst.FormattedString, cst.ConcatenatedString))
            if text or value.kind == UNKNOWN and not value.flags and annotation_name(param) == "str":
                ctx.report(
                    self,
                    arg.value,
                    f"a Python str `{source_of(arg.value)}` passed to traced parameter '{param_name}' of jitted "
                    f"'{jitted.label}': jit traces only arrays (and pytrees of them) and raises TypeError; "
                    f"make it static (static_argnames=('{param_name}',)) or pass an array",
                )

    def _sequence(self, value: cst.BaseExpression, ctx: RuleContext) -> str | None:
        what = _AS_PYTHON.get(describe_sequence(value) or "")
        if what is not None:
            return what
        if isinstance(value, cst.Name) and ctx.flags(value) & (LIST | ARRAY | TRACED) == LIST:
            return f"Python list '{value.value}'"
        return None

    @staticmethod
    def _nested(value: cst.BaseExpression) -> cst.BaseExpression | None:
        if isinstance(value, (cst.List, cst.Tuple)):
            for element in value.elements:
                if isinstance(element, cst.StarredElement):
                    return None
                if isinstance(element.value, (cst.List, cst.Tuple, cst.ListComp)):
                    return element.value
        return None


def _matches(slots: dict[int, str | None] | None, position: int | None, keyword: str | None) -> bool:
    if not slots:
        return False
    if position is not None:
        return position in slots
    return keyword is not None and keyword in slots.values()
