"""The analysis model on its own: names, transform scopes, static vs traced parameters, traced values."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxlint.analysis import GRAD, HOST, NONE, STRICT, TRACED, FlowWalker, ModuleIndex
from jaxlint.analysis.flow.walk import Frame


def index_of(source: str, jit_decorators: frozenset[str] = frozenset()) -> ModuleIndex:
    return ModuleIndex(cst.parse_module(textwrap.dedent(source)), jit_decorators)


def unit_named(index: ModuleIndex, qualname: str):
    for unit in index.units.values():
        if unit.qualname == qualname:
            return unit
    raise AssertionError(f"no unit {qualname}: {[u.qualname for u in index.units.values()]}")


# -- names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "imports, expression, expected",
    [
        ("import jax.numpy as jnp", "jnp.zeros", "jax.numpy.zeros"),
        ("from jax import numpy as jnp", "jnp.zeros", "jax.numpy.zeros"),
        ("from jax import jit", "jit", "jax.jit"),
        ("import jax as j", "j.jit", "jax.jit"),
        ("from jax import random as jr", "jr.split", "jax.random.split"),
        ("import jax.random as jrandom", "jrandom.normal", "jax.random.normal"),
        ("import jax", "jax.numpy.sum", "jax.numpy.sum"),
        ("import jax.numpy", "jax.numpy.sum", "jax.numpy.sum"),
        ("from jax.experimental.pjit import pjit", "pjit", "jax.jit"),
        ("import jax\njit = jax.jit", "jit", "jax.jit"),
        ("", "print", "builtins.print"),
        ("def print(*a): pass", "print", None),
        ("import numpy as np", "np.asarray", "numpy.asarray"),
        ("", "undefined_name.attr", None),
    ],
)
def test_qualified_names(imports: str, expression: str, expected: str | None) -> None:
    index = index_of(imports + "\n")
    if imports.startswith("def print"):
        index.imports.rebound.add("print")
    assert index.imports.qualname(cst.parse_expression(expression)) == expected


# -- transform scopes and static parameters -----------------------------------------------------------


def test_decorators_and_partial() -> None:
    index = index_of(
        """
        import functools
        from functools import partial
        import jax
        my_jit = partial(jax.jit, static_argnames=("mode",))

        @jax.jit
        def a(x, y): ...

        @partial(jax.jit, static_argnums=(1,))
        def b(x, n): ...

        @functools.partial(jax.jit, static_argnums=-1)
        def c(x, n): ...

        @partial(jax.jit, static_argnums=0, static_argnames="k")
        def d(n, x, k): ...

        @my_jit
        def e(x, mode): ...

        @jax.jit(static_argnames="n")
        def f(x, n): ...

        @jax.grad
        def g(x): ...

        def plain(x): ...
        """
    )
    expect = {
        "a": (STRICT, {"x", "y"}),
        "b": (STRICT, {"x"}),
        "c": (STRICT, {"x"}),
        "d": (STRICT, {"x"}),
        "e": (STRICT, {"x"}),
        "f": (STRICT, {"x"}),
        "g": (GRAD, {"x"}),
        "plain": (NONE, set()),
    }
    for name, (kind, traced) in expect.items():
        unit = unit_named(index, name)
        assert (unit.kind, unit.traced_params) == (kind, traced), name


def test_call_sites_partial_and_nesting() -> None:
    index = index_of(
        """
        import jax
        from functools import partial
        from jax import lax

        def f(x, n): ...
        def g(x, y): ...
        def h(a, b, c): ...
        def loss(p, batch): ...
        def body(i, carry): ...
        def host(v): ...

        f_fast = jax.jit(f, static_argnums=1)
        g_fast = jax.jit(partial(g, 3.0))
        h_fast = jax.vmap(h, in_axes=(0, None, 0))
        step = jax.jit(jax.grad(loss))

        def run(x):
            jax.debug.callback(host, x)
            return lax.fori_loop(0, 3, body, x)
        """
    )
    assert unit_named(index, "f").traced_params == {"x"}
    assert unit_named(index, "g").traced_params == {"y"}
    assert unit_named(index, "h").traced_params == {"a", "c"}
    assert unit_named(index, "loss").kind == STRICT
    assert unit_named(index, "body").kind == STRICT
    assert unit_named(index, "body").traced_params == {"i", "carry"}
    assert unit_named(index, "host").kind == HOST


def test_methods_and_bound_self() -> None:
    index = index_of(
        """
        import jax
        from functools import partial

        class Model:
            def __init__(self):
                self.fast = jax.jit(self.step, static_argnums=0)

            def step(self, n, x): ...

            @partial(jax.jit, static_argnums=0)
            def call(self, x): ...
        """
    )
    assert unit_named(index, "Model.step").traced_params == {"x"}
    assert unit_named(index, "Model.call").traced_params == {"x"}


def test_defaults_and_annotations() -> None:
    index = index_of(
        """
        import jax
        from jax import Array

        @jax.jit
        def f(x, training=False, name: str = "a", *, scale: Array = None): ...
        """
    )
    assert unit_named(index, "f").traced_params == {"x", "scale"}


def test_unknown_static_spec_trusts_nothing() -> None:
    index = index_of(
        """
        import jax
        STATIC = (1,)
        def f(x, n): ...
        f_fast = jax.jit(f, static_argnums=STATIC)
        """
    )
    assert unit_named(index, "f").traced_params == set()


def test_config_jit_decorators() -> None:
    index = index_of(
        """
        from mylib import smart_jit
        @smart_jit
        def f(x): ...
        """,
        jit_decorators=frozenset({"mylib.smart_jit"}),
    )
    assert unit_named(index, "f").kind == STRICT


# -- traced values --------------------------------------------------------------------------------


def traced_names(source: str) -> dict[str, bool]:
    """Run the flow walk and record, at each `probe(name)` call, whether `name` is traced there."""
    index = index_of(source)
    seen: dict[str, bool] = {}

    def on_call(node: cst.Call, ctx: Frame) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            arg = node.args[0].value
            key = cst.Module(body=[]).code_for_node(arg)
            seen[key] = bool(ctx.flags(arg) & TRACED)

    FlowWalker(index, {"Call": [on_call]}, lambda *a: None).run()
    return seen


def test_traced_value_inference() -> None:
    seen = traced_names(
        """
        import jax
        import jax.numpy as jnp
        import numpy as np
        from functools import partial

        @partial(jax.jit, static_argnums=(1,))
        def f(x, n):
            probe(x)
            probe(n)
            probe(x.shape)
            probe(x.shape[0])
            probe(len(x))
            probe(x is None)
            probe(isinstance(x, int))
            probe(x + 1)
            probe(x[0])
            probe(jnp.ones(3))
            probe(np.ones(3))
            probe(n * 2)
            probe(x.sum())
            probe(jnp.shape(x))
            a, b = x.shape
            probe(a)
            rows = [r for r in x]
            probe(rows[0])
            for i in range(n):
                probe(i)
            for j, row in enumerate(x):
                probe(j)
                probe(row)
            y = 1.0
            y = y + x
            probe(y)
        """
    )
    assert seen == {
        "x": True,
        "n": False,
        "x.shape": False,
        "x.shape[0]": False,
        "len(x)": False,
        "x is None": False,
        "isinstance(x, int)": False,
        "x + 1": True,
        "x[0]": True,
        "jnp.ones(3)": True,
        "np.ones(3)": False,
        "n * 2": False,
        "x.sum()": True,
        "jnp.shape(x)": False,
        "a": False,
        "rows[0]": True,
        "i": False,
        "j": False,
        "row": True,
        "y": True,
    }


def test_flow_sensitivity_and_branches() -> None:
    seen = traced_names(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(x, flag=False):
            n = 3
            probe(n)
            if flag:
                n = jnp.sum(x)
            probe(n + 0)
            m = jnp.sum(x)
            m = 2
            probe(m)
        """
    )
    assert seen == {"n": False, "n + 0": True, "m": False}


def test_eager_jnp_is_not_traced() -> None:
    seen = traced_names(
        """
        import jax.numpy as jnp
        def f(x):
            y = jnp.sum(x)
            probe(y)
        """
    )
    assert seen == {"y": False}


def test_helpers_called_with_traced_arguments_become_traced() -> None:
    source = """
        import jax

        def helper(a, b):
            probe(a)
            probe(b)

        @jax.jit
        def f(x):
            helper(x, 2)
    """
    assert traced_names(source) == {"a": True, "b": False}
    index = index_of(source)
    FlowWalker(index, {}, lambda *a: None).run()
    helper = unit_named(index, "helper")
    assert helper.kind == STRICT and "called from jax.jit-compiled 'f'" in helper.context
