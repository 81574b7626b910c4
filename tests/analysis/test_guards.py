"""Path facts from tests on traced values: type guards, `is None`, and closure variables ruled out before a
function is handed to a transformation. Each expectation was checked on jax 0.10."""

from __future__ import annotations

import libcst as cst

from jaxlint.analysis import ARRAY, FlowWalker, ModuleIndex
from jaxlint.analysis.values.closures import closure_none_test
from tests.analysis.test_library import traced_probes


def test_isinstance_of_python_types_never_holds_for_a_tracer() -> None:
    seen = traced_probes(
        """
        import jax
        import jax.numpy as jnp
        import numpy as np

        @jax.jit
        def f(x, n, tree):
            if isinstance(n, (int, float)):
                probe(x)  # not walked: the body never runs under jit
            if not isinstance(n, bool):
                probe(n)
            if isinstance(x, np.ndarray):
                probe(x + 1)  # not walked
            if isinstance(tree, jax.Array):
                probe(tree.at)
            probe(tree.at)
            if tree is None:
                probe(tree)
            else:
                probe(tree[0])
            return x
        """
    )
    assert seen == {"n": True, "tree.at": True, "tree": False, "tree[0]": True}


def test_array_evidence_holds_inside_the_guarded_branch_only() -> None:
    index = ModuleIndex(
        cst.parse_module(
            "import jax\n\n@jax.jit\ndef f(tree):\n    if isinstance(tree, jax.Array):\n        a = tree\n    b = tree\n"
        )
    )
    flags: dict[str, int] = {}

    def on_assign(target, value, statement, ctx) -> None:
        flags[target.value] = ctx.flags(value)

    FlowWalker(index, {"on_assign": [on_assign]}, lambda *a: None).run()
    assert flags["a"] & ARRAY and not flags["b"] & ARRAY


def test_closure_ruled_out_before_the_hand_over() -> None:
    source = """
import jax
from jax import lax

def outer(position, neighbors=None, other=None):
    def branch(x):
        return x

    nbrs = neighbors
    if nbrs is None:
        return branch(position)
    return lax.cond(True, branch, branch, position)
"""
    index = ModuleIndex(cst.parse_module(source))
    unit = next(u for u in index.units.values() if u.name == "branch")
    assert closure_none_test(cst.parse_expression("neighbors is None"), unit) is False
    assert closure_none_test(cst.parse_expression("neighbors is not None"), unit) is True
    assert closure_none_test(cst.parse_expression("not neighbors is None"), unit) is True
    assert closure_none_test(cst.parse_expression("other is None"), unit) is None
