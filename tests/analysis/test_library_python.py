"""The library table's Python rows (analysis/semantics/python.py), run on real JAX under jit: what a builtin or a
str/dict method gives when its argument is a tracer."""

from __future__ import annotations

import builtins

import pytest

from jaxlint.analysis.semantics.library import (
    ACCUMULATING_METHODS,
    ARITHMETIC_BUILTINS,
    CACHING_DECORATORS,
    COMPARING_BUILTINS,
    CONCRETE_BUILTINS,
    CONCRETIZING_BUILTINS,
    CONTEXT_MANAGERS,
    CONVERTING_BUILTINS,
    HARMLESS_BUILTINS,
    PARTIAL,
    PROPERTIES,
    PYTHON_CHECKED,
    PYTHON_ONLY_METHODS,
    STR_BUILTINS,
    STR_CONVERSIONS,
    UNHASHABLE_BUILTINS,
    WRAPS,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from tests.analysis.test_library_host import _unready  # noqa: E402
from tests.analysis.test_library_semantics import is_tracer, resolve  # noqa: E402


def test_checked_on_the_running_versions() -> None:
    assert PYTHON_CHECKED.startswith(f"jax {jax.__version__}")


@pytest.mark.parametrize("method", sorted(PYTHON_ONLY_METHODS))
def test_python_only_method_is_not_an_array_method(method: str) -> None:
    """No method of a JAX array nor an attribute of a tracer (a concrete array's `format` is a property, a
    `Format`: no method)."""
    assert not callable(getattr(jnp.ones(2), method, None)), method
    seen: list[bool] = []
    jax.jit(lambda x: seen.append(hasattr(x, method)) or x)(jnp.ones(2))
    assert seen == [False], method
    assert hasattr(str, method) or hasattr(dict, method), method


# Arguments for the builtins that take more than the value (`x` is the traced value).
_CALLS = {
    "isinstance": lambda f, x: f(x, int),
    "issubclass": lambda f, x: f(type(x), int),
    "hasattr": lambda f, x: f(x, "shape"),
    "getattr": lambda f, x: f(x, "shape"),
    "super": lambda f, x: f(type(x), x),
    "object": lambda f, x: f(),
    "range": lambda f, x: f(x),
    "pow": lambda f, x: f(x, 2),
    "divmod": lambda f, x: f(x, 2),
    "max": lambda f, x: f(x[0], 1.0),
    "min": lambda f, x: f(x[0], 1.0),
    "zip": lambda f, x: f(x, x),
}
# Errors a builtin raises when it must turn a tracer into a Python value (`bool` of a vector: ValueError).
_CONVERTING = (jax.errors.ConcretizationTypeError, TypeError, ValueError)


def _under_jit(name: str) -> list[object]:
    """What `name` gives on a traced vector (or the error it raises), under jit."""
    function, seen = getattr(builtins, name.removeprefix("builtins.")), []

    def run(x):
        try:
            seen.append(_CALLS.get(name.removeprefix("builtins."), lambda f, x: f(x))(function, x))
        except _CONVERTING as error:
            seen.append(error)
        return x

    jax.jit(run)(jnp.ones(3))
    return seen


@pytest.mark.parametrize("name", sorted(CONCRETE_BUILTINS))
def test_concrete_builtin_gives_no_tracer(name: str) -> None:
    """Given a tracer, each gives a Python value or raises; `next` and `getattr` give what they are handed: the
    value model reads an iterator's next item and an attribute fetched by name as Python data (not changed
    here: a miss, never a false finding)."""
    (result,) = _under_jit(name)
    if name in ("builtins.next", "builtins.getattr"):
        return
    assert not is_tracer(result), name


@pytest.mark.parametrize("name", sorted(ARITHMETIC_BUILTINS))
def test_arithmetic_builtin_computes_on_a_tracer(name: str) -> None:
    """Each gives a tracer (or a tuple of them) on a tracer; `max` and `min` compare it and raise."""
    (result,) = _under_jit(name)
    if name in ("builtins.max", "builtins.min"):
        assert isinstance(result, jax.errors.TracerBoolConversionError), name
        return
    results = result if isinstance(result, tuple) else (result,)
    assert all(is_tracer(r) for r in results), name


_WITH_ARRAY = {"range": lambda f, x: f(3), "zip": lambda f, x: f(x, x)}


@pytest.mark.parametrize("name", sorted(HARMLESS_BUILTINS | CONCRETIZING_BUILTINS))
def test_builtin_waits_for_a_jax_result_only_when_concretizing(name: str) -> None:
    """The value handed over (a scalar to the conversions) is computed once a concretizing builtin returns,
    and still running once a harmless one does."""
    result = _unready()
    given = result[0, 0] if name in CONCRETIZING_BUILTINS - {"builtins.print"} else result
    assert not given.is_ready()
    function = getattr(builtins, name.removeprefix("builtins."))
    _WITH_ARRAY.get(name.removeprefix("builtins."), lambda f, x: f(x))(function, given)
    assert given.is_ready() == (name in CONCRETIZING_BUILTINS), name


@pytest.mark.parametrize("method", sorted(ACCUMULATING_METHODS))
def test_accumulating_list_method_keeps_the_result_unwaited(method: str) -> None:
    result, kept = _unready(), []
    getattr(kept, method)([result] if method == "extend" else result)
    assert kept == [result] and not result.is_ready()


@pytest.mark.parametrize("name", sorted(CONTEXT_MANAGERS))
def test_context_manager_runs_the_code_around_its_yield(name: str) -> None:
    ran: list[str] = []

    @resolve(name)
    def timer():
        ran.append("enter")
        yield
        ran.append("exit")

    with timer():
        ran.append("body")
    assert ran == ["enter", "body", "exit"]


def test_partial_calls_the_function_with_the_bound_arguments_first() -> None:
    assert resolve(PARTIAL)(lambda a, b, c=0: (a, b, c), 1, c=3)(2) == (1, 2, 3)


@pytest.mark.parametrize("name", sorted(WRAPS))
def test_wraps_makes_a_wrapper_that_names_the_function(name: str) -> None:
    def step(x):
        """Doc."""
        return x

    def decorate(f):
        @resolve(name)(f)
        def wrapper(*args):
            return f(*args)

        return wrapper

    wrapped = decorate(step)
    assert wrapped.__name__ == "step" and wrapped.__wrapped__ is step and wrapped(2) == 2


@pytest.mark.parametrize("name", sorted(CACHING_DECORATORS))
def test_caching_decorator_runs_the_body_once(name: str) -> None:
    runs: list[int] = []
    decorator = resolve(name)
    if name.endswith("lru_cache"):
        decorator = decorator(maxsize=None)

    class Holder:
        @decorator
        def value(self):
            runs.append(1)
            return 1

    holder = Holder()
    read = (lambda: holder.value) if name.endswith("cached_property") else (lambda: holder.value())
    assert (read(), read()) == (1, 1) and runs == [1], name


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_property_runs_the_method_on_attribute_access(name: str) -> None:
    class Holder:
        @resolve(name)
        def depth(self):
            return 3

    assert Holder().depth == 3


class _Shown:
    """A value whose `format` is its `str` (as a JAX array's and a tracer's are)."""

    def __str__(self) -> str:
        return "str"

    def __repr__(self) -> str:
        return "repr\u00e9"


@pytest.mark.parametrize("name", sorted(STR_BUILTINS))
def test_str_builtin_makes_the_string_its_conversion_does(name: str) -> None:
    shown = _Shown()
    made = getattr(builtins, name.removeprefix("builtins."))(shown)
    assert isinstance(made, str)
    if name in STR_CONVERSIONS:
        assert made == {None: f"{shown}", "r": f"{shown!r}", "a": f"{shown!a}"}[STR_CONVERSIONS[name]], name


@pytest.mark.parametrize("name", sorted(UNHASHABLE_BUILTINS))
def test_unhashable_builtin_makes_unhashable_instances(name: str) -> None:
    with pytest.raises(TypeError):
        hash(getattr(builtins, name.removeprefix("builtins."))())


_RAISES = {
    "ConcretizationTypeError": jax.errors.ConcretizationTypeError,
    "TracerIntegerConversionError": jax.errors.TracerIntegerConversionError,
}


@pytest.mark.parametrize("name", sorted(CONVERTING_BUILTINS))
def test_converting_builtin_raises_the_error_named(name: str) -> None:
    """On a tracer under jit it raises the error named; under grad alone only where the row says."""
    what, error, _, under_grad = CONVERTING_BUILTINS[name]
    function = resolve(name)
    assert what == name.rsplit(".", 1)[1] + "()" or what == name.removeprefix("builtins.") + "()"
    integer = error == "TracerIntegerConversionError" or name.endswith("int")
    x = jnp.asarray(2) if integer else jnp.asarray(2.0)
    with pytest.raises(_RAISES[error]):
        jax.jit(function)(x)
    # under grad alone: a float (an int-typed row: the value made an int32, the only way one is traced there)
    run = jax.grad(lambda v: (function(v.astype(jnp.int32) if integer and what != "int()" else v), v)[1])
    if under_grad:
        with pytest.raises(_RAISES[error]):
            run(2.0)
    else:
        run(2.0)


def _jnp(advice: str) -> object:
    return resolve("jax.numpy." + advice.removeprefix("use jnp."))


@pytest.mark.parametrize("name", sorted(COMPARING_BUILTINS))
def test_comparing_builtin_has_the_jnp_function_named(name: str) -> None:
    """On a tracer it raises TracerBoolConversionError; the jnp functions named compute what it computes on
    concrete values (several arguments, one iterable)."""
    several, one = COMPARING_BUILTINS[name]
    function = getattr(builtins, name.removeprefix("builtins."))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda v: function([v[0], v[1]]))(jnp.array([1.0, 2.0]))
    values = [3.0, 1.0, 2.0]
    assert (jnp.asarray(_jnp(one)(jnp.array(values))) == jnp.asarray(function(values))).all(), name
    if several is not None:
        assert float(_jnp(several)(3.0, 1.0)) == function(3.0, 1.0), name
