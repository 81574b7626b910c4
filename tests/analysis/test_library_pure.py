"""The library table's calls and methods that change no object they are given (analysis/semantics/pure.py), run
on the versions it names: each method, called on the receiver it is written for, leaves that receiver as it
was; functions of each pure prefix leave their arguments as they were; the impure calls change them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jaxlint.analysis.semantics.library import (
    FIRST_ORDER_PREFIXES,
    HIGHER_ORDER_ARRAY_FUNCTIONS,
    IMPURE_CALLS,
    PURE_CHECKED,
    PURE_METHODS,
    PURE_PREFIXES,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")
optax = pytest.importorskip("optax")
pytest.importorskip("chex")
train_state = pytest.importorskip("flax.training.train_state")

from tests.analysis.test_library_semantics import resolve  # noqa: E402


def _state() -> Any:
    return train_state.TrainState.create(
        apply_fn=lambda p, x: x, params={"w": jnp.ones(2)}, tx=optax.sgd(0.1)
    )


# The receiver each method is written for, and the arguments it is called with.
_ARRAY = (
    "reshape astype sum mean max min std var squeeze transpose ravel flatten swapaxes take dot argmax argmin "
)
_ARRAY += "cumsum prod any all clip round conj block_until_ready copy"
_ARGS: dict[str, tuple] = {
    "reshape": (4,),
    "astype": (jnp.int32,),
    "swapaxes": (0, 1),
    "take": (jnp.array([0]),),
    "dot": (jnp.ones((2, 2)),),
    "clip": (0.0, 1.0),
}
_RECEIVERS: dict[str, tuple[Any, tuple]] = {
    **{m: (lambda: jnp.ones((2, 2)), _ARGS.get(m, ())) for m in _ARRAY.split()},
    **{m: (lambda: jnp.ones((2, 2)).at[0], (1.0,)) for m in "set add multiply divide power".split()},
    **{m: (lambda: {"a": 1}, ("a",) if m == "get" else ()) for m in "get items keys values".split()},
    **{
        m: (lambda: "a{}b", ("x",) if m in ("format", "join", "startswith", "endswith") else ())
        for m in "format join startswith endswith lower upper strip".split()
    },
    "apply_gradients": (_state, ()),
    "replace": (_state, ()),
    "tree_flatten": (lambda: _Pair(jnp.ones(2), 3), ()),
}
_PROPERTIES = frozenset({"real", "imag"})  # a JAX array's properties (`x.real`): reading them leaves x


@jax.tree_util.register_pytree_node_class
class _Pair:
    """The `tree_flatten` of jax's pytree-class protocol (no library class in the dev extras has its own): JAX
    calls it on every flatten, and it returns (children, aux data)."""

    def __init__(self, w: Any, n: int) -> None:
        self.w, self.n = w, n

    def tree_flatten(self) -> tuple[tuple[Any], int]:
        return (self.w,), self.n

    @classmethod
    def tree_unflatten(cls, n: int, children: tuple[Any]) -> _Pair:
        return cls(children[0], n)


def _same(a: Any, b: Any) -> bool:
    leaves_a, tree_a = jax.tree.flatten(a)
    leaves_b, tree_b = jax.tree.flatten(b)
    return tree_a == tree_b and all(
        np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(leaves_a, leaves_b, strict=True)
    )


def test_checked_on_the_running_versions() -> None:
    assert f"jax {jax.__version__}" in PURE_CHECKED and f"optax {optax.__version__}" in PURE_CHECKED


@pytest.mark.parametrize("method", sorted(PURE_METHODS))
def test_method_leaves_its_receiver(method: str) -> None:
    if method in _PROPERTIES:
        x = jnp.ones(2) + 1j
        before = jnp.array(x)
        getattr(x, method)
        assert np.array_equal(x, before)
        return
    assert method in _RECEIVERS, f"{method}: no receiver it is written for"
    make, args = _RECEIVERS[method]
    receiver = make()
    if method == "apply_gradients":
        args = ()
        kwargs = {"grads": {"w": jnp.ones(2)}}
    else:
        kwargs = {}
    before = receiver if isinstance(receiver, str) else copy.deepcopy(receiver)
    if method in ("set", "add", "multiply", "divide", "power"):
        base = receiver.array  # the `.at[i]` update's array
        before = jnp.array(base)
        getattr(receiver, method)(*args)
        assert np.array_equal(base, before)
        return
    getattr(receiver, method)(*args, **kwargs)
    assert _same(receiver, before) if not isinstance(receiver, str) else receiver == before


# A function of each prefix, called on a list and a dict it could change: they stay as they were.
_SAMPLES = {
    "jax.": ("jax.numpy.asarray", "jax.tree.leaves", "jax.random.split"),
    "numpy.": ("numpy.sum", "numpy.sort", "numpy.concatenate"),
    "math.": ("math.fsum", "math.prod"),
    "builtins.": ("builtins.sorted", "builtins.len", "builtins.list", "builtins.sum"),
    "functools.": ("functools.reduce",),
    "operator.": ("operator.add", "operator.getitem"),
    "typing.": ("typing.cast",),
    "optax.": ("optax.global_norm", "optax.tree_utils.tree_l2_norm"),
    "chex.": ("chex.assert_tree_all_finite",),
}


def _run(name: str, value: list) -> None:
    function = resolve(name)
    if name == "jax.random.split":
        function(jax.random.key(0))
    elif name in ("functools.reduce",):
        function(lambda a, b: a + b, value)
    elif name in ("numpy.concatenate",):
        function([np.asarray(value), np.asarray(value)])
    elif name in ("operator.add",):
        function(value, value)
    elif name in ("operator.getitem",):
        function(value, 0)
    elif name in ("typing.cast",):
        function(list, value)
    elif name.startswith(("optax.", "chex.")):
        function({"w": jnp.asarray(value)})
    else:
        function(value)


@pytest.mark.parametrize("prefix", PURE_PREFIXES)
def test_prefix_functions_leave_their_arguments(prefix: str) -> None:
    assert _SAMPLES.get(prefix), f"{prefix}: no function of it is run"
    for name in _SAMPLES[prefix]:
        value = [3.0, 1.0, 2.0]
        _run(name, value)
        assert value == [3.0, 1.0, 2.0], f"{name} changed its argument"


@pytest.mark.parametrize("name", sorted(IMPURE_CALLS))
def test_impure_calls_change_what_they_are_given(name: str) -> None:
    class Holder:
        key = 1

    holder = Holder()
    if not name.startswith("builtins."):  # numpy's and operator's: their first argument, an array or a list
        target: Any = (
            np.arange(4.0) if name.startswith("numpy.") and "shuffle" not in name else [1.0, 2.0, 3.0, 4.0]
        )
        before = copy.deepcopy(target)
        function = resolve(name)
        if name.startswith("operator.i"):
            function(target, [5.0] if name != "operator.imul" else 2)
        elif name in ("operator.setitem", "numpy.put"):
            function(target, 0, 9.0)
        elif name == "operator.delitem":
            function(target, 0)
        elif name in ("numpy.place", "numpy.putmask"):
            function(target, target > 1, 9.0)
        elif name == "numpy.put_along_axis":
            function(target, np.array([0]), 9.0, axis=0)
        elif name == "numpy.copyto":
            function(target, 9.0)
        elif name == "numpy.fill_diagonal":
            target = before = np.zeros((2, 2))
            before = before.copy()
            function(target, 9.0)
        else:  # numpy.random.shuffle: a shuffle may leave the order; one of 20 does not
            np.random.seed(0)
            target = list(range(20))
            before = list(target)
            function(target)
        assert not np.array_equal(np.asarray(target), np.asarray(before)), f"{name} left its argument"
        return
    if name == "builtins.setattr":
        resolve(name)(holder, "key", 2)
    elif name == "builtins.delattr":
        holder.key = 2
        resolve(name)(holder, "key")
    else:
        resolve(name)(
            "holder.__setattr__('key', 2)" if name.endswith("eval") else "holder.key = 2", {"holder": holder}
        )
    assert holder.key != (2 if name == "builtins.delattr" else 1)


_FUNCTION_PARAMETERS = {"f", "fun", "func", "function", "funclist", "pyfunc", "callback"}


@pytest.mark.parametrize("prefix", FIRST_ORDER_PREFIXES)
def test_first_order_namespaces_take_a_function_only_where_listed(prefix):
    """The key model passes over calls under FIRST_ORDER_PREFIXES without looking for a callee: every function
    of the installed namespace that takes a function (by its parameters' names) is in HIGHER_ORDER_ARRAY_FUNCTIONS,
    and every listed name exists in some namespace."""
    import importlib
    import inspect

    module = importlib.import_module(prefix.rstrip("."))
    taking = set()
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or not callable(value):
            continue
        try:
            parameters = inspect.signature(value).parameters
        except (TypeError, ValueError):
            continue
        if _FUNCTION_PARAMETERS & set(parameters) and name != "gradient":  # gradient's `f` is an array
            taking.add(name)
    assert taking <= HIGHER_ORDER_ARRAY_FUNCTIONS, (PURE_CHECKED, taking - HIGHER_ORDER_ARRAY_FUNCTIONS)
    if prefix == "numpy.":
        assert HIGHER_ORDER_ARRAY_FUNCTIONS <= {n for n in dir(module)} | {"apply_along_axis"}
