"""What each transformation does to its function's parameters: argnums, static and broadcast arguments."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxlint.analysis import GRAD, STRICT, FlowWalker, ModuleIndex
from jaxlint.analysis.binding.transforms import StaticSpec, static_spec


def units_of(source: str) -> dict[str, tuple[int, set[str]]]:
    """name -> (kind, traced parameters) after the index pass and the flow walk."""
    index = ModuleIndex(cst.parse_module(textwrap.dedent(source)))
    FlowWalker(index, {}, lambda *a: None).run()
    return {u.name: (u.kind, u.traced_params) for u in index.units.values() if u.name != "<lambda>"}


def spec_of(call: str, qualname: str) -> StaticSpec:
    node = cst.parse_expression(call)
    assert isinstance(node, cst.Call)
    return static_spec(list(node.args[1:]), qualname)


@pytest.mark.parametrize(
    "call, qualname, differentiated",
    [
        ("grad(f)", "jax.grad", {0}),
        ("grad(f, argnums=1)", "jax.grad", {1}),
        ("grad(f, argnums=(0, 2))", "jax.grad", {0, 2}),
        ("grad(f, argnums=-1)", "jax.grad", {-1}),
        ("value_and_grad(f, has_aux=True)", "jax.value_and_grad", {0}),
        ("jacfwd(f, argnums=[1])", "jax.jacfwd", {1}),
        ("jacrev(f, 1)", "jax.jacrev", {1}),  # argnums given positionally
        ("hessian(f, argnums=2)", "jax.hessian", {2}),
        ("filter_grad(f)", "equinox.filter_grad", {0}),
        ("filter_grad(f, argnums=1)", "equinox.filter_grad", {0}),  # filter_grad differentiates arg 0
        ("grad(f)", "flax.nnx.grad", {0}),
        ("jit(f)", "jax.jit", None),
        ("vmap(f)", "jax.vmap", None),
        ("jvp(f)", "jax.jvp", None),
    ],
)
def test_differentiated_positions(call: str, qualname: str, differentiated: set[int] | None) -> None:
    spec = spec_of(call, qualname)
    assert spec.differentiated == (None if differentiated is None else frozenset(differentiated))


def test_non_literal_argnums_trusts_nothing() -> None:
    assert spec_of("grad(f, argnums=which)", "jax.grad").unknown


def test_merge_keeps_the_limit_only_between_differentiations() -> None:
    grad0, grad1, jit = (
        StaticSpec(differentiated=frozenset({0})),
        StaticSpec(differentiated=frozenset({1})),
        StaticSpec(),
    )
    assert grad0.merged(grad1).differentiated == {0, 1}
    assert jit.merged(grad0).differentiated is None
    assert grad0.merged(jit).differentiated is None
    assert grad0.everywhere().differentiated is None


def test_grad_alone_traces_only_differentiated_arguments() -> None:
    found = units_of(
        """
        import jax
        import equinox as eqx
        from functools import partial

        def loss(params, index, *, scale=1.0): ...
        def both(w, b, n): ...
        def last(x, y, mode): ...
        def second(a, b): ...
        def eqx_loss(model, x, y): ...
        def nested_value(p, q): ...

        jax.grad(loss)
        jax.value_and_grad(both, argnums=(0, 1))
        jax.jacrev(last, argnums=-2)
        jax.hessian(partial(second, 1.0))
        eqx.filter_grad(eqx_loss)
        jax.grad(jax.grad(nested_value, argnums=1))

        @partial(jax.grad, argnums=1)
        def decorated(x, y, flag): ...
        """
    )
    assert found["loss"] == (GRAD, {"params"})
    assert found["both"] == (GRAD, {"w", "b"})
    assert found["last"] == (GRAD, {"y"})
    assert found["second"] == (GRAD, {"b"})  # argnums count after the partial's bound arguments
    assert found["eqx_loss"] == (GRAD, {"model"})
    assert found["nested_value"] == (GRAD, {"p", "q"})
    assert found["decorated"] == (GRAD, {"y"})


def test_grad_under_jit_traces_every_argument() -> None:
    found = units_of(
        """
        import jax

        def loss(params, batch): ...

        @jax.jit
        def step(params, batch):
            def inner(p, b): ...
            jax.grad(inner)(params, batch)
            return jax.jit(jax.grad(loss))(params, batch)
        """
    )
    assert found["loss"] == (STRICT, {"params", "batch"})
    assert found["inner"] == (STRICT, {"p", "b"})


def test_static_and_broadcast_arguments() -> None:
    found = units_of(
        """
        import jax
        from functools import partial
        from jax.experimental.shard_map import shard_map

        @partial(jax.pmap, static_broadcasted_argnums=(1,), axis_name="d")
        def pm(x, n): ...

        @partial(jax.checkpoint, static_argnums=(1,))
        def ck(x, n): ...

        def rm(x, training): ...
        jax.remat(rm, static_argnums=1)

        def sm(x, y): ...
        shard_map(sm, mesh=None, in_specs=None, out_specs=None)

        def vm(x, table): ...
        jax.vmap(vm, in_axes=(0, None))
        """
    )
    assert found["pm"] == (STRICT, {"x"})
    assert found["ck"] == (STRICT, {"x"})
    assert found["rm"] == (STRICT, {"x"})
    assert found["sm"] == (STRICT, {"x", "y"})
    assert found["vm"] == (STRICT, {"x"})


def test_custom_vjp_nondiff_arguments_take_the_call_sites_values() -> None:
    found = units_of(
        """
        import jax
        from functools import partial

        @partial(jax.custom_vjp, nondiff_argnums=(1,))
        def clip(x, n): ...

        @jax.jit
        def f(x):
            return clip(x, 3)
        """
    )
    assert found["clip"] == (STRICT, {"x"})
