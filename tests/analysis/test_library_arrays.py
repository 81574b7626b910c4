"""The library table's array rows (analysis/semantics/arrays.py), run on real JAX and NumPy on CPU with x64 off
(the default): each FLOAT_RESULTS function gives a float array when no dtype is given, at the `dtype` position
the table names; each RESULT_DTYPES function gives the dtype kind it names; and the rows the value model reads
(a tracer's array attributes, the static questions, the types a tracer is or is not an instance of)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from jaxlint.analysis.semantics.library import (
    ARRAY_ATTRIBUTES,
    ARRAY_FUNCTIONS,
    ARRAY_METHODS,
    ARRAY_TYPES,
    ARRAYS_CHECKED,
    BOOL_FUNCTIONS,
    COMPUTING,
    CONCRETE_JAX_PREFIXES,
    CONCRETE_METHODS,
    CONDITION_SIZED,
    CONVERSIONS,
    DTYPE_CONSTRUCTORS,
    DTYPE_KEYWORDS,
    DTYPE_POSITIONS,
    DTYPE_REQUESTING,
    DTYPE_WORDS,
    FLOAT_GRIDS,
    FLOAT_RESULTS,
    LIST_RESULTS,
    NOT_TRACER_TYPES,
    NUMPY_JNP_NAMESAKES,
    NUMPY_SHAPE_ONLY,
    ONE_ARGUMENT_ARRAY,
    ONE_ARGUMENT_VALUE_SIZED,
    RESULT_DTYPES,
    RETURNED_ARRAY_NAMESPACES,
    STACKERS,
    STATIC_INT_METHODS,
    STATIC_INTS,
    STATIC_QUERIES,
    TUPLE_RESULTS,
    VALUE_SIZED,
    WIDE_CONSTRUCTORS,
    WIDE_DTYPES,
    WIDE_STRINGS,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

from tests.analysis.test_library_semantics import is_tracer, resolve  # noqa: E402

_KINDS = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}


def _kind(array) -> str:
    return _KINDS[np.dtype(array.dtype).kind]


def _call(name: str):
    function = resolve(name)
    if name.startswith("jax.random."):
        key = jax.random.key(0)
        if name.endswith("randint"):
            return function(key, (3,), 0, 5)
        if name.endswith("bernoulli"):
            return function(key, 0.5, (3,))
        if name.endswith("truncated_normal"):
            return function(key, -1.0, 1.0, (3,))
        if name.endswith("key_data"):
            return function(key)
        return function(key, (3,))
    return function(3)


def test_checked_on_the_running_jax() -> None:
    assert ARRAYS_CHECKED.startswith(f"jax {jax.__version__}")


@pytest.mark.parametrize("name", sorted(FLOAT_RESULTS))
def test_float_result_without_a_dtype(name: str) -> None:
    assert not jax.config.jax_enable_x64
    assert _kind(_call(name)) == "float", name
    parameters = list(inspect.signature(resolve(name)).parameters)
    assert parameters[FLOAT_RESULTS[name]] == "dtype", f"{name}: dtype is not at {FLOAT_RESULTS[name]}"


@pytest.mark.parametrize("name", sorted(RESULT_DTYPES))
def test_result_dtype_kind(name: str) -> None:
    assert _kind(_call(name)) == RESULT_DTYPES[name], name


@pytest.mark.parametrize("name", sorted(VALUE_SIZED | ONE_ARGUMENT_VALUE_SIZED | CONDITION_SIZED))
def test_value_sized_output_needs_size_under_jit(name: str) -> None:
    """Under jit, on a traced argument (a traced condition for CONDITION_SIZED): ConcretizationTypeError
    (TracerBoolConversionError, one of its kind, for a condition) without `size=`; with it, it runs."""
    function = resolve(name)
    x = jnp.array([0.0, 1.0, 2.0, 0.0])
    call = (lambda v, **k: function(v > 0, v, **k)) if name in CONDITION_SIZED else function
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda v: call(v))(x)
    jax.jit(lambda v: call(v, size=4))(x)


def _wide(requested: Any) -> Any:
    """`jnp.zeros(2, dtype=requested)` with x64 off: JAX warns and truncates."""
    with pytest.warns(UserWarning):
        return jnp.zeros(2, dtype=requested)


@pytest.mark.parametrize("name", sorted(WIDE_DTYPES))
def test_wide_dtype_is_truncated_without_x64(name: str) -> None:
    narrow = {"float64": jnp.float32, "complex128": jnp.complex64}[WIDE_DTYPES[name]]
    assert np.dtype(resolve(name)) == np.dtype(WIDE_DTYPES[name]), f"{name} is {WIDE_DTYPES[name]}"
    assert _wide(resolve(name)).dtype == narrow
    if name in WIDE_CONSTRUCTORS:
        assert resolve(name)(1.5).dtype == narrow  # `jnp.float64(1.5)` builds a (truncated) array


@pytest.mark.parametrize("text", sorted(WIDE_STRINGS))
def test_wide_dtype_string(text: str) -> None:
    assert np.dtype(text) == np.dtype(WIDE_STRINGS[text])
    assert _wide(text).dtype == {"float64": jnp.float32, "complex128": jnp.complex64}[WIDE_STRINGS[text]]


@pytest.mark.parametrize("name", sorted(DTYPE_POSITIONS))
def test_dtype_position(name: str) -> None:
    parameters = list(inspect.signature(resolve(name)).parameters)
    assert parameters[DTYPE_POSITIONS[name]] in DTYPE_KEYWORDS, f"{name}: {parameters}"


def test_dtype_constructors_give_the_dtype_of_their_argument() -> None:
    for name in DTYPE_CONSTRUCTORS:
        assert resolve(name)(np.float64) == np.dtype("float64")


# A function of each namespace taking `dtype=`: asked for float64 it gives float32 (with a warning).
_REQUESTERS = {
    "jax.numpy.": lambda d: jnp.ones(2, dtype=d),
    "jax.random.": lambda d: jax.random.normal(jax.random.key(0), (2,), dtype=d),
    "jax.lax.": lambda d: jax.lax.full((2,), 1.0, dtype=d),
    "jax.nn.": lambda d: jax.nn.one_hot(jnp.array([0, 1]), 2, dtype=d),
    "jax.scipy.": lambda d: jax.scipy.special.logsumexp(jnp.ones(2)).astype(d),
}


@pytest.mark.parametrize("namespace", DTYPE_REQUESTING)
def test_requesting_namespace_truncates(namespace: str) -> None:
    with pytest.warns(UserWarning):
        assert _REQUESTERS[namespace](jnp.float64).dtype == jnp.float32


# Concrete arguments for each STATIC_INTS function (the traced value replaces one slot).
_STATIC_CALLS: dict[str, tuple] = {
    "jax.numpy.full": ((2,), 1.0),
    "jax.numpy.eye": (2, 2),
    "jax.numpy.arange": (0, 4, 1),
    "jax.numpy.reshape": (jnp.ones(4), (2, 2)),
    "jax.numpy.broadcast_to": (jnp.ones(2), (2, 2)),
    "jax.numpy.tile": (jnp.ones(2), 2),
    "jax.numpy.repeat": (jnp.ones(2), 2),
    "jax.numpy.split": (jnp.ones(4), 2),
    "jax.numpy.array_split": (jnp.ones(4), 2),
    "jax.nn.one_hot": (jnp.array([0, 1]), 2),
    "jax.lax.top_k": (jnp.ones(4), 2),
    "jax.lax.integer_pow": (jnp.ones(2), 2),
    "jax.lax.dynamic_slice": (jnp.ones(4), (0,), (2,)),
    "jax.lax.dynamic_slice_in_dim": (jnp.ones(4), 0, 2),
    **{f"jax.numpy.{n}": (0.0, 1.0, 3) for n in ("linspace", "logspace", "geomspace")},
    **{f"jax.ops.segment_{n}": (jnp.ones(3), jnp.array([0, 0, 1]), 2) for n in ("sum", "prod", "max", "min")},
}
_ERRORS = {
    "TypeError": TypeError,
    "ConcretizationTypeError": jax.errors.ConcretizationTypeError,
    "TracerBoolConversionError": jax.errors.TracerBoolConversionError,
    "TracerIntegerConversionError": jax.errors.TracerIntegerConversionError,
}


@pytest.mark.parametrize(
    ("name", "position"), sorted((n, p) for n, (_, slots, _) in STATIC_INTS.items() for p, _ in slots)
)
def test_static_int_parameter_raises_when_traced(name: str, position: int) -> None:
    error, slots, unless = STATIC_INTS[name]
    function = resolve(name)
    args = list(_STATIC_CALLS.get(name, (2,)))
    keywords = {keyword for p, keyword in slots if p == position}
    assert keywords & set(inspect.signature(function).parameters), f"{name}: no parameter {keywords}"
    concrete = args[position] if position < len(args) else 2
    args += [2] * (position + 1 - len(args))
    function(*args)  # runs with the slot concrete

    def traced(v):
        return function(*args[:position], v, *args[position + 1 :])

    with pytest.raises(_ERRORS[error]):
        jax.jit(traced)(jnp.asarray(concrete))
    if unless is not None:  # the keyword that makes the call fine under jit
        jax.jit(lambda v: function(*args[:position], v, *args[position + 1 :], **{unless: 4}))(
            jnp.asarray(concrete)
        )


@pytest.mark.parametrize("method", sorted(STATIC_INT_METHODS))
def test_static_int_method_raises_when_traced(method: str) -> None:
    error, unless = STATIC_INT_METHODS[method]
    x, count = jnp.ones(4), {"reshape": 4, "repeat": 2}[method]
    with pytest.raises(_ERRORS[error]):
        jax.jit(lambda n: getattr(x, method)(n))(jnp.asarray(count))
    if unless is not None:
        jax.jit(lambda n: getattr(x, method)(n, **{unless: 8}))(jnp.asarray(count))


@pytest.mark.parametrize("name", sorted(NUMPY_SHAPE_ONLY))
def test_numpy_shape_only_function_accepts_a_tracer(name: str) -> None:
    function = resolve(name)

    def run(v):
        if name in ("numpy.promote_types", "numpy.can_cast", "numpy.issubdtype"):
            function(v, np.float32)  # the tracer itself, where a dtype goes
        elif name == "numpy.broadcast_shapes":
            function(v.shape, (1, 4))
        elif name == "numpy.iinfo":
            function(v.astype(jnp.int32))
        else:
            function(v)
        return v

    jax.jit(run)(jnp.ones(4))


_ROWS = [jnp.arange(3.0), jnp.arange(3.0) + 1]


@pytest.mark.parametrize("name", sorted(FLOAT_GRIDS))
def test_float_grid_gives_a_new_float_on_every_step(name: str) -> None:
    """Iterated, each element is a float of its own value: as a static argument each compiles anew."""
    grid = list(resolve(name)(1.0, 2.0, 5))
    assert all(np.issubdtype(np.asarray(x).dtype, np.floating) for x in grid)
    assert len({float(x) for x in grid}) == 5
    traces: list[float] = []

    def scaled(x, factor):
        traces.append(factor)
        return x * factor

    jitted = jax.jit(scaled, static_argnums=1)
    for factor in grid:
        jitted(jnp.ones(2), float(factor))
    assert len(traces) == 5, f"{name}: {len(traces)} compilations for 5 steps"


@pytest.mark.parametrize("name", sorted(STACKERS))
def test_stacker_makes_one_array_of_the_rows(name: str) -> None:
    stacked = resolve(name)(_ROWS)
    assert isinstance(stacked, jax.Array) and stacked.shape == (2, 3) and (stacked[1] == _ROWS[1]).all()


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversion_gives_the_same_values(name: str) -> None:
    x = np.arange(4.0)
    converted = resolve(name)(x)
    assert isinstance(converted, jax.Array) and (np.asarray(converted) == x).all()


@pytest.mark.parametrize("name", sorted(LIST_RESULTS))
def test_list_result_is_a_sequence_of_arrays(name: str) -> None:
    function, x = resolve(name), jnp.ones(2) if name.endswith("meshgrid") else jnp.ones((2, 2, 2))
    result = (
        function(x, 2)
        if name.rsplit(".", 1)[1] in ("split", "array_split", "hsplit", "vsplit", "dsplit")
        else function(x, x)
    )
    assert isinstance(result, (list, tuple)) and all(isinstance(r, jax.Array) for r in result), (
        f"{name}: {type(result)}"
    )


# The arguments each tuple-giving function is called with (a vector `v`, a square matrix `m`).
_TUPLE_CALLS = {
    "unravel_index": lambda f, v, m: f(3, (2, 3)),
    "tril_indices": lambda f, v, m: f(3),
    "triu_indices": lambda f, v, m: f(3),
    "diag_indices": lambda f, v, m: f(3),
    "ix_": lambda f, v, m: f(v, v),
    "divmod": lambda f, v, m: f(v, 2.0),
    "histogram2d": lambda f, v, m: f(v, v),
    "linalg.lstsq": lambda f, v, m: f(m, v[:3]),
}


@pytest.mark.parametrize("name", sorted(TUPLE_RESULTS))
def test_tuple_result_is_a_tuple_of_arrays(name: str) -> None:
    function, v, m = resolve(name), jnp.arange(1.0, 7.0), jnp.eye(3) + 1.0
    short = name.removeprefix("jax.numpy.")
    result = (
        _TUPLE_CALLS[short](function, v, m)
        if short in _TUPLE_CALLS
        else function(m if "linalg" in short else v)
    )
    assert isinstance(result, tuple) and all(isinstance(r, jax.Array) for r in result), (
        f"{name}: {type(result)}"
    )


@pytest.mark.parametrize("name", sorted(ONE_ARGUMENT_ARRAY))
def test_one_argument_array_is_an_array_given_one(name: str) -> None:
    function = resolve(name)
    assert isinstance(function(jnp.ones(2)), jax.Array)
    assert isinstance(function(jnp.ones(2), jnp.ones(2)), list)


def _namesake_arguments(name: str, count: int) -> list[Any]:
    """Arguments both namesakes take, positive (log, arccosh), of one shape (concatenate, dot, matmul)."""
    if name.endswith(("concatenate", "stack", "vstack", "hstack")):
        rows = [np.array([[1.5, 2.0], [3.0, 4.5]]), np.array([[2.0, 1.25], [1.5, 3.0]])]
        return [rows, 0][:count]
    if name.endswith("round"):
        return [np.array([1.2345, 2.5]), 2]
    if name.endswith("einsum"):
        return ["ij,jk->ik", np.array([[1.5, 2.0], [3.0, 4.5]]), np.array([[2.0, 1.25], [1.5, 3.0]])]
    return [np.array([[0.5, 2.0], [3.0, 4.5]]), np.array([[2.0, 1.25], [1.5, 3.0]])][:count]


@pytest.mark.parametrize("name", sorted(NUMPY_JNP_NAMESAKES))
def test_numpy_namesake_in_jnp_gives_the_same_values(name: str) -> None:
    count = NUMPY_JNP_NAMESAKES[name]
    arguments = _namesake_arguments(name, 2 if count is None else count)
    expected = resolve(name)(*arguments)
    got = resolve("jax." + name)(*arguments)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)


# -- What the value model reads (values.py): tracers and static questions --------------------------------------


@pytest.mark.parametrize("attribute", sorted(ARRAY_ATTRIBUTES))
def test_array_attribute_of_a_tracer_is_traced(attribute: str) -> None:
    seen: list[bool] = []

    def run(x):
        got = getattr(x, attribute)
        seen.append(is_tracer(got[0].set(1.0) if attribute == "at" else got))
        return x

    jax.jit(run)(jnp.ones((2, 2)))
    assert seen == [True]


@pytest.mark.parametrize("method", sorted(CONCRETE_METHODS))
def test_concrete_method_is_an_array_method(method: str) -> None:
    """Each is a method of jax.Array; those a tracer runs give no tracer (the rest raise: JAX102's business)."""
    assert callable(getattr(jnp.ones(2), method)), method
    seen: list[bool] = []

    def run(x):
        try:
            seen.append(is_tracer(getattr(x, method)()))
        except (jax.errors.ConcretizationTypeError, AttributeError, TypeError, ValueError):
            pass  # a conversion of the tracer, or a method only a concrete array has
        return x

    jax.jit(run)(jnp.ones(()))
    assert True not in seen


# A call of each static question with a traced `x` (`k`: a traced PRNG key).
_QUERIES = {
    "promote_types": lambda f, x, k: f(x.dtype, jnp.int32),
    "dtype": lambda f, x, k: f(x.dtype),
    "issubdtype": lambda f, x, k: f(x.dtype, jnp.floating),
    "isdtype": lambda f, x, k: f(x.dtype, "real floating"),
    "can_cast": lambda f, x, k: f(x.dtype, jnp.float32),
    "finfo": lambda f, x, k: f(x.dtype),
    "iinfo": lambda f, x, k: f(jnp.int32),
    "broadcast_shapes": lambda f, x, k: f(x.shape, (1, 2)),
    "key_impl": lambda f, x, k: f(k),
}


@pytest.mark.parametrize("name", sorted(STATIC_QUERIES))
def test_static_query_gives_no_tracer_under_jit(name: str) -> None:
    function, seen = resolve(name), []

    def run(x, k):
        seen.append(is_tracer(_QUERIES.get(name.rsplit(".", 1)[1], lambda f, x, k: f(x))(function, x, k)))
        return x

    jax.jit(run)(jnp.ones(2), jax.random.key(0))
    assert seen == [False], name


# A function under each prefix, with the call that gives no tracer under jit.
_PREFIXED = {
    "jax.tree.structure": lambda x: jax.tree.structure({"a": x}),
    "jax.tree_util.tree_structure": lambda x: jax.tree_util.tree_structure({"a": x}),
    "jax.dtypes.": lambda x: jax.dtypes.canonicalize_dtype(x.dtype),
    "jax.device": lambda x: jax.device_count(),
}


@pytest.mark.parametrize("prefix", CONCRETE_JAX_PREFIXES)
def test_concrete_prefix_gives_no_tracer_under_jit(prefix: str) -> None:
    seen: list[bool] = []
    jax.jit(lambda x: seen.append(is_tracer(_PREFIXED[prefix](x))) or x)(jnp.ones(2))
    assert seen == [False], prefix


_BINARY_MASKS = (
    "isclose isin logical_and logical_or logical_xor greater greater_equal less less_equal equal not_equal"
)


@pytest.mark.parametrize("name", sorted(BOOL_FUNCTIONS))
def test_bool_function_gives_a_bool_array(name: str) -> None:
    function, x = resolve(name), jnp.array([1.0, jnp.nan, 0.0])
    binary = name.startswith("jax.lax.") or name.rsplit(".", 1)[1] in _BINARY_MASKS.split()
    assert (function(x, x) if binary else function(x)).dtype == jnp.bool_, name


@pytest.mark.parametrize("name", sorted(ARRAY_FUNCTIONS))
def test_array_function_gives_an_array_of_its_argument(name: str) -> None:
    seen: list[bool] = []
    result = resolve(name)(jnp.arange(3.0))
    assert isinstance(result, jax.Array) and (np.asarray(result) == [0.0, 1.0, 2.0]).all()
    jax.jit(lambda x: seen.append(is_tracer(resolve(name)(x))) or x)(jnp.ones(2))
    assert seen == [True], name


@pytest.mark.parametrize("namespace", RETURNED_ARRAY_NAMESPACES)
def test_returned_array_namespace_function_gives_one_array(namespace: str) -> None:
    """A function of each namespace (one that no other row excludes) gives one JAX array."""
    function = {
        "jax.numpy.": lambda: jnp.sin(jnp.ones(2)),
        "jax.nn.": lambda: jax.nn.relu(jnp.ones(2)),
        "jax.random.": lambda: jax.random.normal(jax.random.key(0), (2,)),
        "jax.scipy.special.": lambda: jax.scipy.special.erf(jnp.ones(2)),
    }[namespace]
    assert isinstance(function(), jax.Array)
    assert isinstance(resolve(namespace.rstrip(".")), type(jax))  # the namespace is a module


_TRANSFORMS = {
    "jit": lambda f: jax.jit(f)(jnp.ones(2)),
    "vmap": lambda f: jax.vmap(f)(jnp.ones(2)),
    "grad": lambda f: jax.grad(lambda x: (f(x), x.sum())[1])(jnp.ones(2)),
}


@pytest.mark.parametrize("transform", sorted(_TRANSFORMS))
@pytest.mark.parametrize("name", sorted(NOT_TRACER_TYPES | ARRAY_TYPES))
def test_tracer_instance_of_array_types_only(name: str, transform: str) -> None:
    """A tracer is an instance of each ARRAY_TYPES type and of no NOT_TRACER_TYPES type."""
    seen: list[bool] = []
    _TRANSFORMS[transform](lambda x: seen.append(isinstance(x, resolve(name))) or x)
    assert seen == [name in ARRAY_TYPES], f"{name} under {transform}"


@pytest.mark.parametrize(("word", "kind"), DTYPE_WORDS)
def test_dtype_word_names_its_kind(word: str, kind: str) -> None:
    """Every jnp dtype whose name starts with the word (and no earlier word) has the kind."""
    names = []
    for name in dir(jnp):
        try:
            dtype = np.dtype(getattr(jnp, name))
        except (TypeError, ValueError):
            continue  # not a dtype (a function, a module)
        if name.startswith(word) and dtype.kind in _KINDS:  # `float0`, the tangent of ints, is no array dtype
            names.append((name, dtype))
    names = [(n, d) for n, d in names if next(k for w, k in DTYPE_WORDS if n.startswith(w)) == kind]
    assert names, word
    for name, dtype in names:
        assert _KINDS[dtype.kind] == kind, name


# Arguments of the array methods that need one.
_METHOD_ARGUMENTS = {"astype": (jnp.int32,), "reshape": (-1,), "clip": (0.0, 1.0), "dot": (jnp.ones(2),)}


@pytest.mark.parametrize("method", sorted(ARRAY_METHODS))
def test_array_method_gives_an_array(method: str) -> None:
    x = jnp.arange(4.0).reshape(2, 2)
    assert isinstance(getattr(x, method)(*_METHOD_ARGUMENTS.get(method, ())), jax.Array), method


# A call under each prefix that computes.
_COMPUTES = {
    "jax.numpy.": lambda: jnp.sin(jnp.ones(2)),
    "jax.random.": lambda: jax.random.normal(jax.random.key(0), (2,)),
    "jax.lax.": lambda: jax.lax.add(1.0, 2.0),
    "jax.nn.": lambda: jax.nn.relu(jnp.ones(2)),
    "jax.scipy.": lambda: jax.scipy.special.erf(jnp.ones(2)),
    "jax.device_put": lambda: jax.device_put(np.ones(2)),
}


@pytest.mark.parametrize("prefix", COMPUTING)
def test_computing_call_gives_a_jax_array(prefix: str) -> None:
    assert isinstance(_COMPUTES[prefix](), jax.Array)
    assert any(q.startswith(prefix) for q in STATIC_QUERIES) or prefix not in ("jax.numpy.", "jax.lax.")


@pytest.mark.parametrize("name", sorted(STATIC_QUERIES))
def test_static_query_computes_no_jax_array(name: str) -> None:
    """Called eagerly (at a module's top level) a static question gives no JAX array: it runs no JAX code."""
    x = jnp.ones(2)
    result = _QUERIES.get(name.rsplit(".", 1)[1], lambda f, x, k: f(x))(resolve(name), x, jax.random.key(0))
    assert not isinstance(result, jax.Array), name
