"""The kinds of structured values the flow walk produces (`analysis/values/abstract.py`): arrays with dtype kinds, PRNG
keys typed or legacy, dicts and lists with their entries, dropped where something may change them."""

from __future__ import annotations

import textwrap

import libcst as cst

from jaxlint.analysis import FlowWalker, ModuleIndex
from jaxlint.analysis.flow.walk import Frame
from jaxlint.analysis.values.abstract import Value


def probed(source: str) -> dict[str, Value]:
    """Run the flow walk; at each `probe(expr)`, the structured value of `expr` there."""
    index = ModuleIndex(cst.parse_module(textwrap.dedent(source)))
    seen: dict[str, Value] = {}

    def on_call(node: cst.Call, ctx: Frame) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            arg = node.args[0].value
            seen[cst.Module(body=[]).code_for_node(arg)] = ctx.value(arg)

    FlowWalker(index, {"Call": [on_call]}, lambda *a: None).run()
    return seen


def test_arrays_and_keys_with_their_dtype_kinds() -> None:
    seen = probed(
        """
        import jax
        import jax.numpy as jnp
        import numpy as np

        def f(x, seed):
            a = jnp.zeros(3)
            b = jnp.zeros(3, dtype=jnp.int32)
            c = jnp.isnan(x)
            d = np.ones((2, 2), dtype="bool")
            e = np.asarray(a)
            k = jax.random.key(seed)
            legacy = jax.random.PRNGKey(seed)
            sub = jax.random.split(k)
            old = jax.random.fold_in(legacy, 1)
            n = jax.random.normal(k, (3,))
            m = jnp.linspace(0, 1, 5)
            probe(a); probe(b); probe(c); probe(d); probe(e); probe(k); probe(legacy); probe(sub); probe(old)
            probe(n); probe(m)
        """
    )
    kinds = {name: (value.kind, value.dtype) for name, value in seen.items()}
    assert kinds == {
        "a": ("jax_array", "float"),
        "b": ("jax_array", "int"),
        "c": ("jax_array", "bool"),
        "d": ("numpy_array", "bool"),
        "e": ("numpy_array", None),
        "k": ("key", "key"),
        "legacy": ("key", "uint32"),
        "sub": ("key", "key"),
        "old": ("key", "uint32"),
        "n": ("jax_array", "float"),
        "m": ("jax_array", None),  # its dtype depends on the arguments: unknown
    }


def test_entries_kept_until_something_may_change_the_container() -> None:
    seen = probed(
        """
        import jax
        import jax.numpy as jnp

        def helper(d):
            pass

        @jax.jit
        def f(x):
            kept = {"w": jnp.sin(x), "n": 3}
            stored = {"w": jnp.sin(x), "n": 3}
            stored["n"] = 4
            passed = {"w": jnp.sin(x), "n": 3}
            helper(passed)
            aliased = {"w": jnp.sin(x), "n": 3}
            other = aliased
            popped = [jnp.sin(x), 3]
            popped.pop()
            listed = [jnp.sin(x), 3]
            nested = ({"w": x}, 3)
            if x.shape[0] > 2:
                joined = {"w": x, "n": 3}
            else:
                joined = {"w": x, "n": 4}
            probe(kept["n"]); probe(kept["w"]); probe(listed[1]); probe(joined["n"])
            probe(stored["n"]); probe(passed["n"]); probe(aliased["n"]); probe(popped[1]); probe(nested[0]["w"])
        """
    )
    assert seen['kept["n"]'].kind == "int" and seen['kept["n"]'].literal == 3
    assert seen['kept["w"]'].kind == "jax_array" and seen['kept["w"]'].traced
    assert seen["listed[1]"].kind == "int" and seen["listed[1]"].literal == 3
    joined = seen['joined["n"]']  # 3 on one path, 4 on the other: an int, no literal
    assert joined.kind == "int" and joined.literal not in (3, 4)
    for changed in ('stored["n"]', 'passed["n"]', 'aliased["n"]', "popped[1]", 'nested[0]["w"]'):
        assert seen[changed].kind == "unknown" and seen[changed].traced, changed
