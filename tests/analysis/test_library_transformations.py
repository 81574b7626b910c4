"""Each entry of the library table's transformations and control flow (analysis/semantics/transformations.py),
run on real JAX (and equinox, flax.nnx) on CPU: which of the function's arguments are tracers, whether its body
is staged out, which options it takes where, what it caches, what it calls the function with; for control flow,
where its functions and its carry are given and that the functions run traced; what tree maps and transparent
decorators call their function with."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from jaxlint.analysis.kinds import GRAD, STRICT
from jaxlint.analysis.semantics.library import (
    ARGNUMS,
    ARRAY_ANNOTATIONS,
    BRANCHES,
    CONTROL_FLOW,
    CUSTOM_DERIVATIVES,
    CUSTOM_RULE_METHODS,
    DISPATCHING,
    IN_AXES,
    JIT,
    LOOP,
    STATIC_ANNOTATIONS,
    STATIC_ARGNAMES,
    STATIC_ARGNUMS,
    STATIC_KEYWORDS,
    TRANSFORMATIONS,
    TRANSPARENT_DECORATORS,
    TREE_MAPS,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from tests.analysis.test_library_semantics import is_tracer, resolve  # noqa: E402

_MAPPED = (
    "jax.vmap",
    "equinox.filter_vmap",
    "flax.nnx.vmap",
    "jax.pmap",
    "equinox.filter_pmap",
    "flax.nnx.pmap",
)
# Called with the function and its inputs at once (jvp, vjp, linearize, eval_shape).
_AT_ONCE = tuple(sorted(n for n, t in TRANSFORMATIONS.items() if t.runs_at_once))


def _library(name: str) -> None:
    pytest.importorskip({"equinox": "equinox", "flax": "flax.nnx"}.get(name.split(".")[0], "jax"))


def _rows() -> int:
    """The leading axis of a mapped argument: pmap needs one row per device."""
    return jax.local_device_count()


def _call(name: str, f: Callable, x: Any, y: Any, **options: Any) -> Callable[[], Any]:
    """A thunk that runs `f(x, y)` under the transformation `name` (for the mapped ones, `x` and `y` get a
    leading axis and `f` one row of each), with `options` given to the transformation."""
    transform = resolve(name)
    if name in _AT_ONCE:
        if name == "jax.jvp":
            return lambda: transform(f, (x, y), (x, y))
        return lambda: transform(f, x, y)
    if name == "jax.shard_map":
        import numpy as np
        from jax.sharding import Mesh
        from jax.sharding import PartitionSpec as P

        mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
        wrapped = transform(f, mesh=mesh, in_specs=(P(), P()), out_specs=P())
        return lambda: wrapped(x, y)
    if name == "flax.nnx.scan":
        nnx = resolve("flax.nnx")
        scanned = transform(lambda c, u, v: (c, f(u, v)), in_axes=(nnx.Carry, 0, 0), **options)
        return lambda: scanned(0.0, jnp.stack([x] * _rows()), jnp.stack([y] * _rows()))
    wrapped = transform(f, **options)
    if name in _MAPPED:
        stack = lambda v: jnp.stack([v] * _rows()) if isinstance(v, jax.Array) else v  # noqa: E731
        return lambda: wrapped(stack(x), stack(y))
    return lambda: wrapped(x, y)


def _probe() -> tuple[Callable, list[tuple[bool, bool, bool]]]:
    """A function recording, per call, whether its two arguments and a constant made inside are tracers."""
    seen: list[tuple[bool, bool, bool]] = []

    def f(x, y):
        seen.append((is_tracer(x), is_tracer(y), is_tracer(jnp.zeros(1))))
        return jnp.sum(x * y)

    return f, seen


@pytest.mark.parametrize("name", sorted(TRANSFORMATIONS))
def test_transformation_traces_as_the_table_says(name: str) -> None:
    """STRICT: every array argument is a tracer, and a constant made inside is one exactly when the body is
    staged out (`eager`: not when called eagerly). GRAD: the body is not staged out; the differentiated
    argument (0 by default, `argnums=` where the entry reads it) is the only tracer, or every primal is."""
    _library(name)
    t = TRANSFORMATIONS[name]
    assert t.checked and t.label and t.kind in (STRICT, GRAD)
    f, seen = _probe()
    x, y = jnp.ones(3), jnp.full(3, 2.0)
    _call(name, f, x, y)()
    assert seen, f"{name}: the function never ran"
    traced_x, traced_y, staged = seen[0]
    if t.kind == STRICT:
        assert traced_x and traced_y, f"{name}: an array argument is not a tracer"
        assert staged != t.eager, f"{name}: a constant inside is a tracer exactly when the body is staged"
        return
    assert traced_x and not staged, f"{name}: differentiation traces its argument and stages nothing"
    assert traced_y == (t.differentiates is None), f"{name}: argument 1 is traced only when every primal is"
    if t.argnums:
        seen.clear()
        _call(name, f, x, y, argnums=1)()
        assert seen[0][:2] == (False, True), f"{name}: argnums=1 differentiates argument 1 only"
    elif t.differentiates is not None:
        with pytest.raises(ValueError):  # the first argument, always (equinox refuses `argnums`)
            _call(name, f, x, y, argnums=1)()


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.filtering))
def test_filtering_transformation_keeps_plain_values_static(name: str) -> None:
    """equinox's filter_*: a Python bool argument stays a Python bool. flax.nnx.jit: a Module's plain attribute
    stays static, but a Python scalar argument is traced (the limit the entry's comment states)."""
    _library(name)
    seen: dict[str, bool] = {}
    if name == "flax.nnx.jit":
        nnx = resolve("flax.nnx")

        class Model(nnx.Module):
            def __init__(self) -> None:
                self.w = nnx.Param(jnp.ones(3))
                self.flag = True

        def f(model, x, flag):
            seen.update(attribute=is_tracer(model.flag) or type(model.flag) is not bool, flag=is_tracer(flag))
            return x * model.w

        nnx.jit(f)(Model(), jnp.ones(3), True)
        assert not seen["attribute"] and seen["flag"]
        return

    def g(x, flag):
        seen.update(flag=type(flag) is not bool, x=is_tracer(x))
        return x

    x = jnp.ones(3)
    resolve(name)(g)(jnp.stack([x] * _rows()) if name in _MAPPED else x, True)
    assert seen["x"] and not seen["flag"], f"{name}: a Python bool argument was traced"


_OPTIONS = (IN_AXES, ARGNUMS, STATIC_ARGNAMES, *STATIC_ARGNUMS)


@pytest.mark.parametrize("name", sorted(TRANSFORMATIONS))
def test_positional_options_are_where_the_table_says(name: str) -> None:
    """An option the table reads (static_argnums, in_axes, argnums, ...) is given positionally, right after the
    function, exactly where `positional_options` says; elsewhere it is keyword-only or absent."""
    _library(name)
    t = TRANSFORMATIONS[name]
    parameters = list(inspect.signature(resolve(name)).parameters.values())[1:]
    positional = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    read = [p for p in positional if p in _OPTIONS]
    assert read == list(t.positional_options), f"{name}: options after the function: {positional}"
    assert positional[: len(read)] == read, f"{name}: a positional option is not right after the function"


@pytest.mark.parametrize("name", _AT_ONCE)
def test_transformation_run_at_once_takes_its_inputs_after_the_function(name: str) -> None:
    """`jvp(f, primals, tangents)`, `vjp(f, *primals)`, `eval_shape(f, *args)`: what follows the function
    positionally is what it runs on (so a helper's parameter there is data, not an option), and it has run by
    the time the call returns."""
    parameters = list(inspect.signature(resolve(name)).parameters.values())[1:]
    positional = [p for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert positional and not any(p.name in _OPTIONS for p in positional), f"{name}: {positional}"
    f, seen = _probe()
    _call(name, f, jnp.ones(3), jnp.full(3, 2.0))()
    assert len(seen) == 1, f"{name}: the function did not run once, at the call"


def test_positional_options_do_what_their_keywords_do() -> None:
    """`vmap(f, (0, None))` leaves argument 1 unmapped (concrete under an eager vmap); `grad(f, 1)`
    differentiates argument 1 only; `make_jaxpr(f, 1)` keeps argument 1 the Python value it is."""
    f, seen = _probe()
    jax.vmap(f, (0, None))(jnp.ones((2, 3)), jnp.ones(3))
    assert seen[-1][:2] == (True, False)
    jax.grad(f, 1)(jnp.ones(3), jnp.ones(3))
    assert seen[-1][:2] == (False, True)
    jax.make_jaxpr(f, 1)(jnp.ones(3), 2.0)
    assert seen[-1][:2] == (True, False)


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.compiling))
def test_compiling_transformation_traces_once_per_function(name: str) -> None:
    """A compiling transformation caches by the function: calling the wrapped function again with like
    arguments traces nothing new."""
    _library(name)
    f, seen = _probe()
    run = _call(name, f, jnp.ones(3), jnp.ones(3))
    run()
    first = len(seen)
    run()
    run()
    assert first and len(seen) == first, f"{name}: traced {len(seen)} times for three calls"


class _Holder:
    """An object whose method records each trace."""

    def __init__(self) -> None:
        self.traces = 0

    def m(self, x, y):
        self.traces += 1
        return jnp.sum(x * y)


def _per_call_traces(name: str, wrap: Callable[[Callable], Callable] = lambda m: m) -> int:
    """How many of four later calls trace again when `name` is applied to a bound method made anew per call
    (`T(wrap(holder.m))(x, y)`, as inside a method `T(self.m)(x, y)`)."""
    holder = _Holder()

    def run() -> None:
        _call(name, wrap(holder.m), jnp.ones(3), jnp.ones(3))()

    run()
    before = holder.traces
    for _ in range(4):
        run()
    return holder.traces - before


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.compiling))
def test_bound_method_made_per_call_retraces_unless_compared_by_equality(name: str) -> None:
    """`T(self.m)(x)` built on every call: jax.jit keys its cache on the new method object and traces every
    call; jax.pmap and equinox's filter_jit/filter_pmap compare it by equality (two bound methods of one object
    are equal) and trace once. flax.nnx.jit retraces (and refuses an nnx.Module's bound method outright)."""
    _library(name)
    expected = 0 if TRANSFORMATIONS[name].equal_bound_methods else 4
    assert _per_call_traces(name) == expected


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.equal_results))
def test_equal_results_wrap_a_bound_method_into_an_equal_function(name: str) -> None:
    """`filter_jit(T(self.m))(x)` built on every call traces once: T's result, made from an equal bound method,
    is equal to the last one. jax.vmap's is a new closure every time: it traces every call."""
    _library(name)
    assert _per_call_traces("equinox.filter_jit", lambda m: resolve(name)(m)) == 0
    assert _per_call_traces("equinox.filter_jit", lambda m: resolve("jax.vmap")(m)) == 4


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.needs_mapped_leaf))
def test_a_map_refuses_a_call_with_nothing_to_map(name: str) -> None:
    """`in_axes=(None, 0)` with None in the mapped position: nothing to map, a ValueError (so an argument mapped
    alone is never None); with `axis_size` jax.vmap takes it."""
    _library(name)
    f = lambda a, b: a if b is None else a + b  # noqa: E731
    with pytest.raises(ValueError):
        resolve(name)(f, in_axes=(None, 0))(jnp.ones(1), None)
    if name == "jax.vmap":
        assert resolve(name)(f, in_axes=(None, 0), axis_size=2)(jnp.ones(1), None).shape == (2, 1)


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.calls_through))
def test_wrapper_calls_its_function_with_its_arguments(name: str) -> None:
    """`T(f)(key)` runs `f(key)`: the same numbers as drawing from the key directly (row by row, mapped)."""
    _library(name)
    draw = lambda key: jax.random.normal(key, (2,))  # noqa: E731
    if TRANSFORMATIONS[name].differentiates is not None:
        # The differentiated function runs once with the arguments given: the derivative of
        # sum(x**2 * n) / 2 at x = 1 shows the draw n (grad, jacfwd, jacrev; value_and_grad's second; hessian's
        # diagonal).
        key, x = jax.random.key(0), jnp.ones(2)
        got = resolve(name)(lambda x, key: 0.5 * jnp.sum(x**2 * draw(key)))(x, key)
        got = got[1] if isinstance(got, tuple) else got
        got = jnp.diag(got) if got.ndim == 2 else got
        assert (got == draw(key)).all()
        return
    if name in _MAPPED:
        keys = jax.random.split(jax.random.key(0), _rows())
        got = resolve(name)(draw)(keys)
        want = jnp.stack([draw(k) for k in keys])
    else:
        key = jax.random.key(0)
        got, want = resolve(name)(draw)(key), draw(key)
    assert (got == want).all()


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.python_result))
def test_python_result_is_no_tracer(name: str) -> None:
    """Called on tracers (inside jit), the transformation gives Python objects built while tracing: a
    ClosedJaxpr whose equations' params are plain values (make_jaxpr), ShapeDtypeStructs (eval_shape)."""
    _library(name)
    seen: list[Any] = []

    def scanned(x, y):
        return jax.lax.scan(lambda c, v: (c + v, c * v), 0.0, x * y)

    @jax.jit
    def outer(x, y):
        seen.append(_call(name, scanned, x, y)())
        return x

    outer(jnp.ones(3), jnp.ones(3))
    leaves = jax.tree_util.tree_leaves(seen[0])
    assert leaves and not any(is_tracer(leaf) for leaf in leaves)
    if name == "jax.make_jaxpr":
        params = [v for eqn in seen[0].jaxpr.eqns for v in eqn.params.values()]
        assert seen[0].jaxpr.eqns[-1].params["num_consts"] == 0
        assert params and not any(is_tracer(v) for v in params)
    else:
        assert all(type(leaf).__name__ == "ShapeDtypeStruct" for leaf in leaves)


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.per_element))
def test_mapped_function_shares_a_closed_over_key(name: str) -> None:
    """Every element of a map draws the same numbers from a key its function closes over."""
    _library(name)
    key = jax.random.key(0)
    rows = resolve(name)(lambda x: jax.random.normal(key, (2,)) + 0 * x)(jnp.zeros((3, 1)))
    assert (rows == rows[0]).all()


def _body_parameters(flow_name: str, positions: tuple[tuple[int, str], ...]) -> None:
    params = list(inspect.signature(resolve(flow_name)).parameters)
    for position, keyword in positions:
        assert params[position] == keyword, f"{flow_name}: argument {position} is {params[position]}"


@pytest.mark.parametrize("name", sorted(CONTROL_FLOW))
def test_control_flow_traces_its_functions(name: str) -> None:
    """The functions are at the positions and keywords the entry gives, each runs with every parameter a
    tracer; a loop's carry (`init`) reaches the body as parameter `carry_param` (lax.scan's body returns
    (carry, output)); branches get the operands."""
    _library(name)
    flow = CONTROL_FLOW[name]
    assert flow.checked and flow.label
    _body_parameters(name, flow.bodies + ((flow.init,) if flow.init else ()))
    call = resolve(name)
    carry = jnp.ones((3, 5))  # a shape no other parameter has
    short = name.rsplit(".", 1)[1]
    seen: list[tuple[tuple[bool, ...], tuple[tuple[int, ...], ...]]] = []

    def body(*args):
        seen.append((tuple(is_tracer(a) for a in args), tuple(jnp.shape(a) for a in args)))
        if name == "jax.lax.scan":
            return args[0], args[0]
        if name.endswith("while_loop") and len(seen) % 2 == 1:  # the condition is called first
            return jnp.sum(args[0]) < 0
        return args[1] if short == "fori_loop" else args[0]

    if short == "scan":
        call(body, carry, jnp.zeros((2, 1)))
    elif short == "fori_loop":
        call(0, 2, body, carry)
    elif short == "while_loop":
        call(body, body, carry)
    elif short == "cond":
        call(True, body, body, carry)
    elif short == "switch":
        call(1, [body, body], carry)
    elif short == "map":
        call(body, jnp.stack([carry, carry]))
    else:  # associative_scan: called eagerly it runs `fn` on concrete slices; under a trace, on tracers
        jax.jit(lambda c: call(lambda u, v: body(u, v) + v, c))(carry)
    assert seen, f"{name}: no function ran"
    assert all(all(traced) for traced, _ in seen), f"{name}: a parameter of its function was not a tracer"
    if flow.keys == LOOP and flow.init is not None:
        assert flow.carry_param is not None
        assert all(shapes[flow.carry_param] == (3, 5) for _, shapes in seen), f"{name}: {seen}"
    elif flow.keys == LOOP:  # no carry: each element of xs
        assert flow.carry_param is None and all(shapes == ((3, 5),) for _, shapes in seen)
    elif flow.keys == BRANCHES:
        assert all(shapes == ((3, 5),) for _, shapes in seen), f"{name}: a branch did not get the operand"


@pytest.mark.parametrize("name", sorted(CONTROL_FLOW))
def test_control_flow_called_eagerly_traces_unless_eager(name: str) -> None:
    """Called outside any jit, with Python bounds, a Python bool predicate and a Python int index: an `eager`
    entry runs its functions on concrete arrays (lax.associative_scan); every other one still traces them."""
    _library(name)
    call, short = resolve(name), name.rsplit(".", 1)[1]
    seen: list[bool] = []

    def body(*args):
        seen.extend(is_tracer(a) for a in args)
        if short == "scan":
            return args[0], args[1]
        if short == "while_loop" and len(seen) == 1:
            return jnp.sum(args[0]) < 0
        return args[1] if short == "fori_loop" else args[0]

    x = jnp.arange(4.0)
    if short == "scan":
        call(body, 0.0, x)
    elif short == "fori_loop":
        call(0, 2, body, x)
    elif short == "while_loop":
        call(body, body, x)
    elif short == "cond":
        call(True, body, body, x)
    elif short == "switch":
        call(1, [body, body], x)
    elif short in ("map", "associative_scan"):
        call(body, x)
    assert seen, f"{name}: no function ran"
    if CONTROL_FLOW[name].eager:
        assert not any(seen), f"{name}: called eagerly, its function saw a tracer"
    else:
        assert all(seen), f"{name}: called eagerly, its function saw a concrete value"


@pytest.mark.parametrize("name", sorted(CONTROL_FLOW))
def test_control_flow_called_eagerly_compiles_per_function(name: str) -> None:
    """Called outside any jit, a `compiles` entry compiles what it traces, keyed on its functions' identity:
    functions made anew for each call compile every call, the same functions once (counted by the backend's
    compile events). The others compile nothing (associative_scan runs eagerly) or as much for the same
    functions (lax.map and flax.nnx's wrap the functions anew on every call): hoisting the function saves
    nothing there."""
    _library(name)
    from jax._src import monitoring

    call, short = resolve(name), name.rsplit(".", 1)[1]
    compiles: list[str] = []
    monitoring.register_event_duration_secs_listener(
        lambda event, _d, **_kw: compiles.append(event) if "backend_compile" in event else None
    )
    x = jnp.arange(4.0)

    def run(step, pair, index_step) -> None:  # the functions each entry takes, of one body `c -> c + 1`
        if short == "scan":
            call(pair, 0.0, x)
        elif short == "fori_loop":
            call(0, 2, index_step, x)
        elif short == "while_loop":
            call(_below, step, x)
        elif short == "cond":
            call(True, step, step, x)
        elif short == "switch":
            call(1, [step, step], x)
        elif short == "associative_scan":
            call(index_step, x)  # (a binary function, as fori_loop's body)
        else:
            call(step, x)

    def fresh() -> None:
        run(lambda c: c + 1, lambda c, v: (c + v, c), lambda i, c: c + 1)

    def same() -> None:
        run(_step, _pair, _index_step)

    fresh(), same()  # whatever the arrays need compiled
    compiles.clear()
    for _ in range(3):
        fresh()
    made = len(compiles)
    compiles.clear()
    for _ in range(3):
        same()
    if CONTROL_FLOW[name].compiles:
        assert made >= 3 and not compiles, (
            f"{name}: {made} compiles for new functions, {len(compiles)} for one"
        )
    else:  # it compiles nothing, or as much for the same functions (lax.map wraps its function anew)
        assert made <= len(compiles), f"{name}: {made} compiles for new functions, {len(compiles)} for one"


def _step(c):
    return c + 1


def _pair(c, v):
    return c + v, c


def _index_step(i, c):
    return c + 1


def _below(c):
    return jnp.sum(c) < 20


@pytest.mark.parametrize("name", sorted(TREE_MAPS))
def test_tree_map_calls_its_function_once_per_leaf(name: str) -> None:
    """The function runs once per leaf, the leaf at the position the table gives (a key path before it)."""
    seen: list[tuple[Any, ...]] = []
    tree = {"a": jnp.ones(2), "b": (jnp.zeros(3), jnp.full(4, 2.0))}
    resolve(name)(lambda *args: seen.append(args) or args[TREE_MAPS[name]], tree)
    assert sorted(args[TREE_MAPS[name]].shape for args in seen) == [(2,), (3,), (4,)]


@pytest.mark.parametrize("name", sorted(TRANSPARENT_DECORATORS))
def test_transparent_decorator_calls_its_function_with_its_arguments(name: str) -> None:
    """The decorated function, called with a key, runs the function on that key: the same numbers."""
    draw = lambda key: jax.random.normal(key, (2,))  # noqa: E731
    decorated = resolve(name)(draw)
    if name == "jax.custom_jvp":
        decorated.defjvp(lambda primals, tangents: (draw(*primals), jnp.zeros(2)))
    elif name == "jax.custom_vjp":
        decorated.defvjp(lambda key: (draw(key), None), lambda _, g: (None,))
    key = jax.random.key(0)
    assert (decorated(key) == draw(key)).all()


def test_array_annotations_name_array_types() -> None:
    """Each ARRAY_ANNOTATIONS name is an array type of jax, numpy or jaxtyping (equinox's dependency)."""
    import numpy as np

    homes = [jax, jax.typing, np]
    jaxtyping = pytest.importorskip("jaxtyping")
    homes.append(jaxtyping)
    assert all(any(hasattr(home, name) for home in homes) for name in ARRAY_ANNOTATIONS)


@pytest.mark.parametrize("annotation", sorted(STATIC_ANNOTATIONS))
def test_static_annotations_are_never_tracers(annotation: str) -> None:
    """A parameter of a STATIC_ANNOTATIONS type is never itself a tracer under jit: a container stays one (its
    array leaves traced), a string, a function or a class cannot be an argument at all."""
    import collections.abc

    value: Any = {
        "str": "mode",
        "Callable": jnp.sin,
        "type": float,
        "Module": None,
        "Sequence": (jnp.ones(2),),
        "Mapping": {"w": jnp.ones(2)},
        "dict": {"w": jnp.ones(2)},
        "list": [jnp.ones(2)],
    }[annotation]
    if annotation == "Module":
        nn = pytest.importorskip("flax.linen")
        value = nn.Dense(2)
    seen: list[Any] = []
    step = jax.jit(lambda v: seen.append(v))
    if isinstance(value, (collections.abc.Sequence, collections.abc.Mapping)) and not isinstance(value, str):
        step(value)
        assert not is_tracer(seen[0]) and type(seen[0]) is type(value)
    else:
        with pytest.raises(TypeError):
            step(value)


@pytest.mark.parametrize("name", sorted(n for n in CONTROL_FLOW if n.startswith("jax.")))
def test_iterating_control_flow_runs_its_function_per_iteration(name: str) -> None:
    """Under jit, an `iterates` entry runs its function more than once per call at run time (once per
    iteration: a debug callback in it fires each time); cond and switch run theirs once."""
    call, short = resolve(name), name.rsplit(".", 1)[1]
    fired: list[int] = []

    def tick(*args):
        jax.debug.callback(lambda: fired.append(1))
        if short == "scan":
            return args[0], args[1]
        if short == "fori_loop":
            return args[1] + 1
        return args[0] + (args[1] if short == "associative_scan" else 1)

    def run(x):
        if short == "scan":
            return call(tick, 0.0, x)
        if short == "fori_loop":
            return call(0, 3, tick, x)
        if short == "while_loop":
            return call(lambda c: jnp.sum(c) < 30, tick, x)
        if short == "cond":
            return call(True, tick, tick, x)
        if short == "switch":
            return call(1, [tick, tick], x)
        return call(tick, x)  # map, associative_scan

    jax.block_until_ready(jax.jit(run)(jnp.arange(4.0)))
    jax.effects_barrier()
    if CONTROL_FLOW[name].iterates:
        assert len(fired) > 1, f"{name}: its function ran {len(fired)} times for a 4-element loop"
    else:
        assert len(fired) == 1, f"{name}: its function ran {len(fired)} times, not once"


@pytest.mark.parametrize("name", sorted(CUSTOM_DERIVATIVES))
def test_custom_derivative_functions_are_traced_again_from_staged_code(name: str) -> None:
    """Called from jitted code with a static Python int, a custom-derivative function and its rule see a
    tracer for every argument outside `nondiff_argnums` (the jvp rule: tuples of them); eagerly the values."""
    decorator = resolve(name)
    vjp = CUSTOM_RULE_METHODS["defvjp"] if name.endswith("vjp") else CUSTOM_RULE_METHODS["defjvp"]
    seen: dict[str, list[bool]] = {}

    def make(nondiff: tuple[int, ...]):
        @functools.partial(decorator, **{CUSTOM_DERIVATIVES[name]: nondiff})
        def f(z, n):
            seen.setdefault("primal", []).append(isinstance(n, jax.core.Tracer))
            return z * n

        if name.endswith("vjp"):

            def fwd(z, n):
                seen.setdefault("rule", []).append(isinstance(n, jax.core.Tracer))
                return f(z, n), None

            def bwd(*args):
                return (args[-1],) if nondiff else (args[-1], None)

            f.defvjp(fwd, bwd)
        else:

            def jvp(*args):
                primals, tangents = args[-2:]
                n = args[0] if nondiff else primals[1]  # the nondiff arguments come first
                seen.setdefault("rule", []).append(isinstance(n, jax.core.Tracer))
                return f(primals[0], n), tangents[0]

            f.defjvp(jvp)
        return f

    assert vjp is True if name.endswith("vjp") else vjp is False  # fwd takes the primal's arguments
    f = make(())
    jax.grad(jax.jit(f, static_argnums=1))(3.0, 2)
    assert seen["primal"][0] and seen["rule"] == [True], seen
    seen.clear()
    f(3.0, 2)
    assert seen == {"primal": [False]}, "eagerly: the value given"
    seen.clear()
    jax.grad(jax.jit(make((1,)), static_argnums=1))(3.0, 2)
    assert not any(seen["primal"]) and not any(seen.get("rule", [])), "nondiff: the value given"


class _Carry:
    """A registered pytree class: the control flow hands its instances to the body rebuilt, as this class."""

    def __init__(self, value):
        self.value = value


class _Slices(_Carry):
    pass


for _cls in (_Carry, _Slices):
    jax.tree_util.register_pytree_node(
        _cls, lambda c: ((c.value,), None), lambda aux, children, cls=_cls: cls(*children)
    )


@pytest.mark.parametrize("name", sorted(n for n, flow in CONTROL_FLOW.items() if flow.parameters is not None))
def test_loop_body_parameters_receive_the_arguments_the_table_names(name: str) -> None:
    """Each parameter of the body (the last function of `bodies`) is an instance of the class of the call's
    argument the row names (the carry; xs' slices); -1: none of the call's arguments (the loop index)."""
    _library(name)
    flow = CONTROL_FLOW[name]
    assert flow.parameters is not None
    _body_parameters(name, tuple(p for p in flow.parameters if p[0] >= 0) + flow.bodies[-1:])
    if flow.init is not None:
        assert flow.carry_param is not None and flow.parameters[flow.carry_param] == flow.init
    given = {"init": _Carry(jnp.zeros(())), "init_val": _Carry(jnp.zeros(())), "xs": _Slices(jnp.arange(3.0))}
    seen: list[tuple[type, ...]] = []
    short = name.rsplit(".", 1)[1]

    def body(*args):
        seen.append(tuple(type(a) for a in args))
        if short == "scan":
            return args[0], args[1].value
        return type(args[-1])(args[-1].value + 1)

    call = resolve(name)
    if short == "scan":
        call(body, given["init"], given["xs"])
    elif short == "fori_loop":
        call(0, 2, body, given["init_val"])
    else:  # while_loop: one iteration
        call(lambda c: c.value < 1, body, given["init_val"])
    assert seen
    for classes in seen:
        assert len(classes) == len(flow.parameters), f"{name}: {classes}"
        for got, (position, keyword) in zip(classes, flow.parameters, strict=True):
            assert (got is type(given[keyword])) if position >= 0 else got is not _Carry, f"{name}: {classes}"


@pytest.mark.parametrize("name", sorted(n for n, flow in CONTROL_FLOW.items() if flow.operands is not None))
def test_branches_receive_the_operands_in_order(name: str) -> None:
    _library(name)
    flow = CONTROL_FLOW[name]
    seen: list[tuple[type, ...]] = []

    def branch(*args):
        seen.append(tuple(type(a) for a in args))
        return args[0].value

    arguments: list[Any] = [True] + [branch] * len(flow.bodies)
    assert len(arguments) == flow.operands
    resolve(name)(*arguments, _Carry(jnp.zeros(())), _Slices(jnp.zeros(())))
    assert seen and all(classes == (_Carry, _Slices) for classes in seen), f"{name}: {seen}"


@pytest.mark.parametrize("keyword", sorted(STATIC_KEYWORDS))
def test_static_keyword_is_a_parameter_of_a_compiling_transformation(keyword: str) -> None:
    assert (
        keyword in inspect.signature(jax.jit).parameters or keyword in inspect.signature(jax.pmap).parameters
    )
    assert keyword in STATIC_ARGNUMS or keyword == STATIC_ARGNAMES


def test_jit_is_the_plain_compiling_transformation() -> None:
    assert resolve(JIT) is jax.jit and TRANSFORMATIONS[JIT].compiling and not TRANSFORMATIONS[JIT].filtering


def _slow(x):
    return jax.lax.fori_loop(0, 25, lambda i, m: jnp.tanh(m @ m), x)


@pytest.mark.parametrize("name", sorted(DISPATCHING))
def test_dispatching_transformation_returns_before_its_work_is_done(name: str) -> None:
    """A compiling transformation whose call (compiled already) returns an array not yet computed."""
    _library(name)
    assert TRANSFORMATIONS[name].compiling
    wrapped = resolve(name)(_slow)
    x = jnp.eye(600)[None] * 0.5 if "pmap" in name else jnp.eye(600) * 0.5
    jax.block_until_ready(wrapped(x))  # compiled
    result = wrapped(x)
    ready = result.is_ready()
    jax.block_until_ready(result)
    assert not ready, f"{name}: its call waited for the result"


def test_equinox_filter_jit_waits_for_its_result() -> None:
    """equinox's filter_jit (0.13.8) returns once the result is computed (it blocks on a marker to raise its
    runtime errors): not a dispatching transformation, so timing it needs no block_until_ready."""
    _library("equinox.filter_jit")
    wrapped = resolve("equinox.filter_jit")(_slow)
    x = jnp.eye(600) * 0.5
    jax.block_until_ready(wrapped(x))
    assert wrapped(x).is_ready() and "equinox.filter_jit" not in DISPATCHING
