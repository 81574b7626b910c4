"""The library-semantics table and what the value model makes of it (facts checked on JAX 0.10.2)."""

from __future__ import annotations

import textwrap

import libcst as cst

from jaxlint.analysis import HOST, TRACED, FlowWalker, ModuleIndex
from jaxlint.analysis.binding.transforms import HOST_CALLBACKS as TRANSFORM_HOST_CALLBACKS
from jaxlint.analysis.flow.walk import Frame
from jaxlint.analysis.semantics.library import (
    CALL_RESULTS,
    CONCRETE,
    HOST_CALLBACKS,
    PYTHON_IF_OPERAND_IS,
    TRACED_RESULT,
)


def traced_probes(source: str) -> dict[str, bool]:
    """Run the flow walk; at each `probe(expr)`, whether `expr` is traced there."""
    index = ModuleIndex(cst.parse_module(textwrap.dedent(source)))
    seen: dict[str, bool] = {}

    def on_call(node: cst.Call, ctx: Frame) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            arg = node.args[0].value
            seen[cst.Module(body=[]).code_for_node(arg)] = bool(ctx.flags(arg) & TRACED)

    FlowWalker(index, {"Call": [on_call]}, lambda *a: None).run()
    return seen


def test_table_entries() -> None:
    assert CALL_RESULTS["jax.lax.psum"] == PYTHON_IF_OPERAND_IS
    assert CALL_RESULTS["jax.lax.pmean"] == PYTHON_IF_OPERAND_IS
    assert CALL_RESULTS["jax.lax.axis_size"] == CONCRETE
    assert CALL_RESULTS["jax.lax.axis_index"] == TRACED_RESULT
    # pmax/pmin of a Python scalar are tracers under pmap: they must not be claimed concrete.
    assert "jax.lax.pmax" not in CALL_RESULTS and "jax.lax.pmin" not in CALL_RESULTS
    assert TRANSFORM_HOST_CALLBACKS is HOST_CALLBACKS


def test_collectives_on_python_values_are_python_values() -> None:
    seen = traced_probes(
        """
        import jax
        from jax import lax
        import jax.numpy as jnp

        def body(x, k):
            n = lax.psum(1, "batch")
            probe(n)
            probe(n > 1)
            probe(lax.psum(x=2.0, axis_name="batch"))
            probe(lax.pmean(1, "batch"))
            probe(jax.lax.axis_size("batch"))
            probe(lax.psum(x, "batch"))
            probe(lax.psum(jnp.float32(1), "batch"))
            probe(lax.psum((x, 1), "batch"))
            probe(lax.pmax(1, "batch"))
            probe(lax.axis_index("batch"))
            probe(x / n)

        jax.jit(jax.vmap(body, axis_name="batch", in_axes=(0, None)))  # staged: see the eager test below
        """
    )
    assert seen == {
        "n": False,
        "n > 1": False,
        'lax.psum(x=2.0, axis_name="batch")': False,
        'lax.pmean(1, "batch")': False,
        'jax.lax.axis_size("batch")': False,
        'lax.psum(x, "batch")': True,
        'lax.psum(jnp.float32(1), "batch")': True,
        'lax.psum((x, 1), "batch")': True,
        'lax.pmax(1, "batch")': True,
        'lax.axis_index("batch")': True,
        "x / n": True,
    }


def test_axis_index_is_traced_even_in_a_helper() -> None:
    seen = traced_probes(
        """
        from jax import lax

        def shard_offset():
            probe(lax.axis_index("i"))
        """
    )
    assert seen == {'lax.axis_index("i")': True}


def test_host_callbacks_run_on_the_host() -> None:
    index = ModuleIndex(
        cst.parse_module(
            textwrap.dedent(
                """
                import jax
                from functools import partial

                def show(x): ...
                def tagged(tag, x): ...

                @jax.jit
                def f(x):
                    jax.debug.callback(show, x)
                    jax.debug.callback(partial(tagged, "t"), x)
                    return jax.pure_callback(show, x, x)
                """
            )
        )
    )
    kinds = {u.name: u.kind for u in index.units.values()}
    assert kinds["show"] == HOST and kinds["tagged"] == HOST


def test_membership_in_a_pytree_is_a_python_bool() -> None:
    seen = traced_probes(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(params, x, names, table, y: jax.Array):
            probe("w" in params)
            probe("w" not in params)
            probe(x in params)
            probe(1 in x)
            probe(1 in y)
            probe("a" in names)
            probe(1 in jnp.arange(3))
            probe(params["w"] in table)
            probe(y in (0, 10))
            probe(y in [0, 10])
        """
    )
    assert seen == {
        '"w" in params': False,
        '"w" not in params': False,
        "x in params": False,
        "1 in x": False,  # `x` may be a dict: silent
        "1 in y": True,  # an array's __contains__ converts a traced comparison to bool
        '"a" in names': False,
        "1 in jnp.arange(3)": True,
        'params["w"] in table': False,
        "y in (0, 10)": True,  # compared item by item: `y == 0` is converted to bool
        "y in [0, 10]": True,
    }
