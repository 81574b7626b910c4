"""Each claim of the library table (analysis/library.py), run on the installed library with real JAX on CPU:
the callable an API traces receives tracers (or, for numpyro models, concrete arguments and traced sample
sites); an argument it consumes as a key draws the same numbers when given twice. Entries marked documented
are skipped with that reason unless their library is installed."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pytest

from jaxlint.analysis.library import (
    APIS,
    APPLY_FN_FACTORIES,
    CALL_RESULTS,
    COPYING_INPLACE_METHODS,
    DOCUMENTED,
    DTYPE_METHODS,
    INT_CONVERSIONS,
    INT_FILLS,
    KEY_DICT_KEYWORDS,
    KEY_METHODS,
    MISSING_INPLACE_METHODS,
    NARROW_INT_DTYPES,
    OBSERVED_KEYWORD,
    PARAMS_CONCRETE,
    TRACED_RESULT,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def is_tracer(value: object) -> bool:
    return isinstance(value, jax.core.Tracer)


def resolve(qualname: str) -> Callable:
    """The object a qualified name names: the longest importable module, then attributes."""
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr)
        return found
    raise ImportError(qualname)


def check_optax_schedule(name: str) -> None:
    pytest.importorskip("optax")
    seen: list[bool] = []

    def schedule(step):
        seen.append(is_tracer(step))
        return 1e-3

    tx = resolve(name)(schedule)
    params = {"w": jnp.ones(3)}
    state = tx.init(params)
    jax.jit(tx.update)(params, state, params)
    assert seen and all(seen), f"{name}: the schedule did not get a tracer under a jitted update"


def check_numpyro_inference(name: str) -> None:
    numpyro = pytest.importorskip("numpyro")
    dist = pytest.importorskip("numpyro.distributions")
    optax = pytest.importorskip("optax")
    seen: dict[str, bool] = {}

    def model(x, flag):
        seen["argument"] = is_tracer(x) or is_tracer(flag)
        z = numpyro.sample("z", dist.Normal(0.0, 1.0))
        loc = numpyro.param("loc", 0.0)
        det = numpyro.deterministic("d", z * 2)
        seen["sample"], seen["param"], seen["deterministic"] = is_tracer(z), is_tracer(loc), is_tracer(det)
        observed = numpyro.sample("o", dist.Normal(z + loc, 1.0), obs=x)
        seen["observed"] = is_tracer(observed)

    key, data = jax.random.key(0), jnp.ones(3)
    cls = resolve(name)
    if name.endswith("Predictive"):
        cls(model, num_samples=3)(key, data, True)
    elif name.endswith("SVI"):
        from numpyro.infer import Trace_ELBO
        from numpyro.infer.autoguide import AutoNormal

        cls(model, AutoNormal(model), optax.adam(1e-3), Trace_ELBO()).run(
            key, 2, data, True, progress_bar=False
        )
    else:
        from numpyro.infer import MCMC

        MCMC(cls(model), num_warmup=2, num_samples=2, progress_bar=False).run(key, data, True)
    assert APIS[name].params == PARAMS_CONCRETE and not seen["argument"], "model arguments stay concrete"
    assert seen["sample"], "a sample site is a tracer"
    assert not seen["observed"], "an observed site returns its concrete obs"
    if name.endswith("SVI"):  # `param` sites are parameters only under SVI (MCMC has none to optimise)
        assert seen["param"]


def check_traced_objective(name: str) -> None:
    seen: list[bool] = []

    def fun(x):
        seen.append(is_tracer(x))
        return jnp.sum(x**2)

    resolve(name)(fun, jnp.ones(2), method="BFGS")
    assert seen and all(seen)


def check_handlers_seed(name: str) -> None:
    numpyro = pytest.importorskip("numpyro")
    dist = pytest.importorskip("numpyro.distributions")

    def draw():
        return numpyro.sample("a", dist.Normal(0.0, 1.0))

    key = jax.random.key(1)
    assert APIS[name].keys == ((1, "rng_seed"),)
    seeded = resolve(name)
    assert seeded(draw, key)() == seeded(draw, key)(), "one key, one draw: the key is consumed"
    assert seeded(draw, key)() != seeded(draw, jax.random.key(2))()


def check_flax_lifted(name: str) -> None:
    """The lifted transformation traces `__call__`'s arguments; the options count as the entry says."""
    nn = pytest.importorskip("flax.linen")
    api = APIS[name]
    seen: dict[str, tuple[bool, bool]] = {}

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, flag):
            seen["call"] = (is_tracer(x), is_tracer(flag))
            return nn.Dense(2)(x), x

    x, flag = jnp.ones((3, 2)), 1.0
    if name.endswith(".scan"):
        lifted = resolve(name)(Block, variable_broadcast="params", split_rngs={"params": False})
        lifted().init(jax.random.key(0), x, x)
        assert seen["call"] == (True, True), "carry and scanned input are tracers"
        return
    if name.endswith(".vmap"):
        kwargs = {"variable_axes": {"params": 0}, "split_rngs": {"params": True}}
        resolve(name)(Block, in_axes=(0, 0), **kwargs)().init(jax.random.key(0), x, jnp.ones(3))
        assert seen["call"] == (True, True)
        resolve(name)(Block, in_axes=(0, None), **kwargs)().init(jax.random.key(0), x, flag)
        assert seen["call"] == (True, False), "in_axes=None (counted after the Module): the value as given"
        return
    resolve(name)(Block)().init(jax.random.key(0), x, flag)
    assert seen["call"] == (True, True)
    if api.options == "jax.jit":
        assert api.self_counted
        resolve(name)(Block, static_argnums=2)().init(jax.random.key(0), x, flag)
        assert seen["call"] == (True, False), "static_argnums=2 counts the Module as argument 0"


CHECKS: dict[str, Callable[[str], None]] = {
    "flax.linen.": check_flax_lifted,
    "optax.": check_optax_schedule,
    "numpyro.infer.": check_numpyro_inference,
    "jax.scipy.optimize.": check_traced_objective,
    "numpyro.handlers.seed": check_handlers_seed,
}


@pytest.mark.parametrize("name", sorted(APIS))
def test_api_entry(name: str) -> None:
    api = APIS[name]
    if api.checked == DOCUMENTED:
        pytest.skip(f"{name}: {DOCUMENTED} (library not installed here)")
    check = next((c for prefix, c in CHECKS.items() if name.startswith(prefix)), None)
    assert check is not None, f"{name} states a version it was checked on, but no check runs it"
    check(name)


def test_sample_sites_are_traced_results() -> None:
    # run by check_numpyro_inference; here: the table says what that check asserts
    for name in ("numpyro.sample", "numpyro.param", "numpyro.deterministic"):
        assert CALL_RESULTS[name] == TRACED_RESULT
    assert OBSERVED_KEYWORD == {"numpyro.sample": "obs"}


def test_distribution_sample_consumes_its_key() -> None:
    dist = pytest.importorskip("numpyro.distributions")
    position, keyword = KEY_METHODS["numpyro.distributions."]["sample"]
    key = jax.random.key(3)
    normal = dist.Normal(0.0, 1.0)
    by_position = normal.sample(*([key] if position == 0 else []))
    by_keyword = normal.sample(**{keyword: key})
    assert by_position == by_keyword == normal.sample(key), "one key, one draw"
    assert normal.sample(jax.random.key(4)) != by_position


def test_flax_apply_rngs_consumes_its_key() -> None:
    nn = pytest.importorskip("flax.linen")
    assert KEY_DICT_KEYWORDS["apply"] == "rngs"

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dropout(0.5, deterministic=False)(x)

    net, x = Net(), jnp.ones(64)
    variables = net.init(jax.random.key(0), x)
    key = jax.random.key(5)
    first = net.apply(variables, x, rngs={"dropout": key})
    assert (first == net.apply(variables, x, rngs={"dropout": key})).all(), "one key, one dropout mask"
    assert not (first == net.apply(variables, x, rngs={"dropout": jax.random.key(6)})).all()


def test_jit_of_module_apply_counts_the_variables_first() -> None:
    """`jax.jit(model.apply)`: argument 0 is the variables, argument i the method's parameter i (counting self);
    the flag is traced unless static (what instances.jitted_apply assumes)."""
    nn = pytest.importorskip("flax.linen")

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            if train:
                x = x * 2
            return nn.Dense(2)(x)

    net, x = Net(), jnp.ones(3)
    variables = net.init(jax.random.key(0), x, False)
    jax.jit(net.apply, static_argnums=2)(variables, x, True)
    jax.jit(net.apply, static_argnames=("train",))(variables, x, train=True)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(net.apply)(variables, x, True)


def test_train_state_apply_fn_is_the_module_apply() -> None:
    pytest.importorskip("flax.linen")
    optax = pytest.importorskip("optax")
    factory, (keyword, field) = next(iter(APPLY_FN_FACTORIES.items()))
    import flax.linen as nn

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x, deterministic):
            if not deterministic:
                x = x * 2
            return x

    net = Net()
    state = resolve(factory)(**{keyword: net.apply}, params={}, tx=optax.adam(1e-3))
    assert getattr(state, field) == net.apply
    step = jax.jit(lambda state, x, flag: getattr(state, field)({"params": state.params}, x, flag))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        step(state, jnp.ones(2), False)


def test_jit_of_haiku_apply_counts_params_and_rng_first() -> None:
    hk = pytest.importorskip("haiku")

    def gated(x, is_training):
        if is_training:
            return x
        return hk.Linear(2)(x)

    net = hk.transform(gated)
    x = jnp.ones(3)
    params = net.init(jax.random.key(0), x, False)
    jax.jit(net.apply, static_argnums=3)(params, None, x, True)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(net.apply)(params, None, x, True)


def test_vmap_in_axes_none_gives_every_element_the_same_key() -> None:
    draws = jax.vmap(lambda k, x: x + jax.random.normal(k), in_axes=(None, 0))(
        jax.random.key(7), jnp.zeros(4)
    )
    assert (draws == draws[0]).all()


def test_fold_in_equals_split_index() -> None:
    """What JAX301's split-and-fold finding rests on: fold_in(k, i) is split(k)[i] on the default keys."""
    key = jax.random.key(11)
    data = jax.random.key_data
    for i in range(2):
        assert (data(jax.random.fold_in(key, i)) == data(jax.random.split(key)[i])).all()


# Arguments NumPy's in-place methods take, for calling them.
_INPLACE_ARGS = {
    "fill": (0.0,),
    "resize": ((4,),),
    "put": ([0], [1.0]),
    "itemset": (0, 1.0),
    "partition": (1,),
}


@pytest.mark.parametrize("method", sorted(MISSING_INPLACE_METHODS))
def test_jax_arrays_lack_numpy_inplace_methods(method: str) -> None:
    """JAX103: NumPy has the method, a JAX array and a tracer under jit raise AttributeError."""
    np = pytest.importorskip("numpy")
    args = _INPLACE_ARGS[method]
    if hasattr(np.ndarray, method):  # `itemset` left NumPy 2
        getattr(np.array([3.0, 1.0, 2.0]), method)(*args)
    with pytest.raises(AttributeError):
        getattr(jnp.array([3.0, 1.0, 2.0]), method)(*args)
    with pytest.raises(AttributeError):
        jax.jit(lambda x: getattr(x, method)(*args))(jnp.array([3.0, 1.0, 2.0]))


@pytest.mark.parametrize("method", sorted(COPYING_INPLACE_METHODS))
def test_copying_methods_leave_the_array_unchanged(method: str) -> None:
    """JAX106: NumPy's method changes the array and returns None; JAX's returns a new array, eagerly and under
    jit, and the array keeps its values."""
    np = pytest.importorskip("numpy")
    host = np.array([3.0, 1.0, 2.0])
    assert getattr(host, method)() is None and host.tolist() == [1.0, 2.0, 3.0]
    x = jnp.array([3.0, 1.0, 2.0])
    assert getattr(x, method)().tolist() == [1.0, 2.0, 3.0] and x.tolist() == [3.0, 1.0, 2.0]

    def discard(v):
        getattr(v, method)()
        return v

    assert jax.jit(discard)(x).tolist() == [3.0, 1.0, 2.0]


@pytest.mark.parametrize("method", sorted(DTYPE_METHODS))
def test_dtype_methods_truncate_float64_without_x64(method: str) -> None:
    """JAX501: the method honours `dtype=` like its jnp function, so float64 becomes float32 with x64 off."""
    if jax.config.jax_enable_x64:
        pytest.skip("x64 is enabled in this process")
    x = jnp.ones(3)
    call = getattr(x, method)
    with pytest.warns(UserWarning):
        out = call(jnp.float64) if method == "astype" else call(dtype=jnp.float64)
    assert out.dtype == jnp.float32


def _x64_off() -> None:
    if jax.config.jax_enable_x64:
        pytest.skip("x64 is enabled in this process")


@pytest.mark.parametrize("name", sorted(INT_CONVERSIONS))
def test_int_conversions_raise_outside_int32(name: str) -> None:
    """JAX503: a Python int outside int32 raises OverflowError, eagerly and under jit; the int32 bounds pass."""
    _x64_off()
    convert = resolve(name)
    assert int(convert(2**31 - 1)) == 2**31 - 1 and int(convert(-(2**31))) == -(2**31)
    for value in (2**31, -(2**31) - 1, 2**40):
        with pytest.raises(OverflowError):
            convert(value)
        with pytest.raises(OverflowError):
            jax.jit(lambda value=value: convert(value))()


@pytest.mark.parametrize("name", sorted(INT_FILLS))
def test_int_fills_wrap_around(name: str) -> None:
    """JAX503: a fill value outside int32 is weakly typed and wraps around silently (2**40 becomes 0)."""
    _x64_off()
    fill = resolve(name)
    position = INT_FILLS[name]
    args = [(3,)] * position + [2**40 + 5]
    assert fill(*args).tolist() == [5, 5, 5]
    assert jax.jit(lambda: fill(*args))().tolist() == [5, 5, 5]


@pytest.mark.parametrize("dtype", sorted(NARROW_INT_DTYPES))
def test_narrow_int_arrays_reject_ints_outside_int32(dtype: str) -> None:
    """JAX503: an array of a narrow int dtype combined with a Python int outside int32 raises OverflowError."""
    _x64_off()
    np = pytest.importorskip("numpy")
    dtype_object = resolve(dtype) if "." in dtype else np.dtype(dtype)
    array = jnp.ones(3, dtype=dtype_object)
    for value in (2**31, -(2**31) - 1):
        with pytest.raises(OverflowError):
            array + value
        with pytest.raises(OverflowError):
            jax.jit(lambda a, value=value: a * value)(array)


def test_int32_arithmetic_wraps_around() -> None:
    """JAX503: int arrays from int literals are int32 and their arithmetic wraps around."""
    _x64_off()
    assert jnp.arange(100).dtype == jnp.int32 and jnp.array([1, 2]).dtype == jnp.int32
    assert int((jnp.arange(100) ** 10)[-1]) == (99**10 + 2**31) % 2**32 - 2**31
    assert (
        int(jax.jit(lambda: jnp.arange(100) * 100_000_000)()[-1]) == (9_900_000_000 + 2**31) % 2**32 - 2**31
    )
