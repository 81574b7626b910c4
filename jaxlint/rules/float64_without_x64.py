"""JAX501 float64-without-x64."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    ARRAY,
    COMPUTING,
    CONCRETE_JAX_FUNCTIONS,
    DTYPE_CONSTRUCTORS,
    DTYPE_KEYWORDS,
    DTYPE_METHODS,
    DTYPE_POSITIONS,
    DTYPE_REQUESTING,
    TRACED,
    WIDE_CONSTRUCTORS,
    WIDE_DTYPES,
    WIDE_STRINGS,
    RuleContext,
    display_name,
    enables_x64,
    is_program,
)
from ..syntax import children, source_of, walk
from .base import Rule

# The library table's 64-bit dtypes, the dtype parameters of array builders, the namespaces that honour a dtype.
_WIDE_DTYPES, _WIDE_STRINGS, _WIDE_CONSTRUCTORS = WIDE_DTYPES, WIDE_STRINGS, WIDE_CONSTRUCTORS
_DTYPE_POSITION, _DTYPE_KEYWORDS = DTYPE_POSITIONS, DTYPE_KEYWORDS
_DTYPE_CONSTRUCTORS, _REQUESTING = DTYPE_CONSTRUCTORS, DTYPE_REQUESTING


class Float64WithoutX64(Rule):
    code = "JAX501"
    name = "float64-without-x64"
    summary = "`float64`/`complex128` requested from JAX in a module that never enables x64: silently 32-bit"
    severity = "warning"
    doc = """
## What it does
Flags requests for 64-bit floating-point arrays from JAX — `jnp.float64(x)`, `dtype=jnp.float64`,
`dtype=np.float64`, `dtype="float64"`, `dtype=np.dtype("float64")` (and `complex128`) passed to `jnp`,
`jax.random` or `lax` functions, `x.astype(jnp.float64)` or `x.sum(dtype=jnp.float64)` (`prod`, `mean`,
`cumsum`, `cumprod`, `std`, `var`) on a JAX array — in a module that never mentions enabling 64-bit mode
(`jax.config.update("jax_enable_x64", True)`, `jax.experimental.enable_x64()`, `jax.enable_x64`, or setting
`JAX_ENABLE_X64` in `os.environ`; any name, keyword or string with `enable_x64` or `x64_enabled` in it
counts, so code that already chooses a dtype by checking the flag is left alone). NumPy arrays built with
`float64`/`complex128` asked for by name (`np.ones(3, dtype=np.float64)`, `.astype("float64")`, a loop over
dtypes) and given to such a function with no `dtype` are flagged too: JAX converts them to 32 bits. NumPy's
default float64 (`np.ones(3)`, `np.linspace(...)`) is not asked for and is not flagged. An `__init__.py` of a
package enclosing the module that mentions it counts too: importing the module runs it first. So does a project
module the module imports at its top level (directly, or through other project modules and their packages'
`__init__.py`) whose top-level statements enable it, outside a `def`, a `class` and an `if __name__` block.

Only **programs** are checked: where x64 is off, the module itself is where it should have been turned on.
A module is a program when it has an `if __name__ == "__main__":` block that is not just a test runner
(`absltest.main()`, `unittest.main()`, `pytest.main()`), or when its top-level statements (outside functions
and classes) compute with JAX — call a `jnp`, `jax.random`, `lax`, `jax.nn`, `jax.scipy` function or
`jax.device_put` — or call `print`, `app.run` or a function of the module (`main()`): scripts; and every
notebook.
Everything else is **library code** (and test modules, whose x64 setting comes from the test runner's
configuration: `JAX_ENABLE_X64`, `--jax_enable_x64`, a conftest): there, enabling x64 is the application's
choice, taken once at start-up for the whole program, and a library asking for `float64` gets it exactly
when the application wants double precision. Users reading library code (jax-md's force fields ask for
`float64` everywhere and document that x64 must be enabled) judged those findings unhelpful.

## Why is this bad
JAX defaults to 32-bit types. With `jax_enable_x64` off, a requested `float64` is silently truncated to
`float32` (JAX emits a `UserWarning` attributed to its own source, not to your line), so computations that
need double precision quietly lose it. NumPy arrays (`np.zeros(..., dtype=np.float64)`) are unaffected until
they reach JAX. `dtype=float` is not flagged either: JAX documents it as "the default float type".

## Example
```python
import jax.numpy as jnp

cov = jnp.zeros((3, 3), dtype=jnp.float64)  # actually float32
```

## Use instead
```python
import jax

jax.config.update("jax_enable_x64", True)  # at program start, before creating arrays
cov = jnp.zeros((3, 3), dtype=jnp.float64)
```
or keep `float32` and say so.

## Fix safety
No automatic fix: enabling x64 changes every default dtype in the program.

## References
- https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#double-64bit-precision
- https://docs.jax.dev/en/latest/default_dtypes.html
"""

    def __init__(self) -> None:
        self._x64: bool | None = None
        self._program: bool | None = None
        self._guarded: set[int] | None = None

    def _mentions_x64(self, ctx: RuleContext) -> bool:
        if self._x64 is None:
            self._x64 = enables_x64(ctx)
        return self._x64

    def _silent(self, node: cst.CSTNode, ctx: RuleContext) -> bool:
        """x64 is enabled in the module, the module is library code (x64 is the application's choice), or
        the request sits in a branch that only runs on 64-bit input."""
        if self._mentions_x64(ctx):
            return True
        if self._program is None:
            self._program = is_program(ctx.index.module, ctx)
        if not self._program:
            return True
        if self._guarded is None:
            self._guarded = _guarded_nodes(ctx.index.module, lambda e: self._width(e, ctx) is not None)
        return id(node) in self._guarded

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualname(node.func)
        if name in _WIDE_CONSTRUCTORS:
            if not self._silent(node, ctx):
                self._report(node, _WIDE_CONSTRUCTORS[name], f"{display_name(name)}(...)", ctx)
            return
        dtype = None
        if name is not None and name.startswith(_REQUESTING):
            dtype = _dtype_argument(node, _DTYPE_POSITION.get(name))
        elif name is None and type(node.func) is cst.Attribute and node.func.attr.value in DTYPE_METHODS:
            method = node.func.attr.value
            if ctx.flags(node.func.value) & (ARRAY | TRACED):  # `x.astype(...)`, `x.sum(dtype=...)`
                dtype = _dtype_argument(node, 0 if method == "astype" else None)
        if dtype is None:
            if name is not None and name.startswith(COMPUTING) and name not in CONCRETE_JAX_FUNCTIONS:
                self._wide_data(node, name, ctx)
            return
        width = self._width(dtype, ctx)
        if width is not None and not self._silent(node, ctx):
            where = display_name(name) if name is not None else f".{node.func.attr.value}"  # type: ignore[attr-defined]
            self._report(dtype, width, f"{where}(..., dtype={source_of(dtype)})", ctx)

    def _wide_data(self, node: cst.Call, name: str, ctx: RuleContext) -> None:
        """`jnp.where(c, xs, ys)` of NumPy arrays built with a 64-bit dtype asked for by name
        (`analysis/values/wide_dtypes.py`): JAX converts them to 32 bits. NumPy's default float64 is not asked for."""
        for arg in node.args:
            if arg.star or (arg.keyword is not None and arg.keyword.value in _DTYPE_KEYWORDS):
                continue
            held = ctx.value(arg.value)
            if held.kind == "numpy_array" and held.dtype in ("float64", "complex128"):
                if not self._silent(node, ctx):
                    narrow = "float32" if held.dtype == "float64" else "complex64"
                    ctx.report(
                        self,
                        arg.value,
                        f"{display_name(name)}(...) is given '{source_of(arg.value)}', a {held.dtype} NumPy array, but "
                        f"this module never enables x64: JAX silently converts it to {narrow}; call "
                        f'jax.config.update("jax_enable_x64", True) at startup, or build it as {narrow}',
                    )
                return

    def _width(self, dtype: cst.BaseExpression, ctx: RuleContext) -> str | None:
        if (
            type(dtype) is cst.Call
            and ctx.qualname(dtype.func) in _DTYPE_CONSTRUCTORS
            and len(dtype.args) == 1
        ):
            return self._width(dtype.args[0].value, ctx)  # `np.dtype("float64")`
        if type(dtype) is cst.SimpleString:
            value = dtype.evaluated_value
            return _WIDE_STRINGS.get(value) if isinstance(value, str) else None
        name = ctx.qualname(dtype)
        return _WIDE_DTYPES.get(name) if name is not None else None

    def _report(self, node: cst.CSTNode, width: str, what: str, ctx: RuleContext) -> None:
        narrow = "float32" if width == "float64" else "complex64"
        ctx.report(
            self,
            node,
            f"{what} requests {width}, but this module never enables x64: JAX silently makes it {narrow}; "
            f'call jax.config.update("jax_enable_x64", True) at startup, or ask for {narrow}',
        )


def _dtype_argument(call: cst.Call, position: int | None) -> cst.BaseExpression | None:
    positional = []
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value in _DTYPE_KEYWORDS:
                return arg.value
        elif arg.star:
            return None
        else:
            positional.append(arg.value)
    if position is not None and position < len(positional):
        return positional[position]
    return None


def _guarded_nodes(module: cst.Module, is_wide) -> set[int]:
    """Nodes in the body of an `if` whose test names a 64-bit dtype (`if x.dtype == np.float64:`): code that
    only runs when 64-bit values already exist, i.e. when x64 is on."""
    guarded: set[int] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
    while stack:
        node, inside = stack.pop()
        if inside:
            guarded.add(id(node))
        if type(node) is cst.If or type(node) is cst.IfExp:
            test_is_wide = any(is_wide(n) for n in walk(node.test) if isinstance(n, cst.BaseExpression))
            stack.append((node.test, inside))
            stack.append((node.body, inside or test_is_wide))
            if node.orelse is not None:
                stack.append((node.orelse, inside))
            continue
        stack.extend((child, inside) for child in children(node))
    return guarded
