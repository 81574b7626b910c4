"""Each claim of the library table (analysis/semantics/library.py), run on the installed library with real JAX on CPU
(its transformations and control flow: test_library_transformations.py): the callable an API traces receives
tracers (or, for numpyro models, concrete arguments and traced sample sites); an argument it consumes as a key
draws the same numbers when given twice. Entries marked documented
are skipped with that reason unless their library is installed."""

from __future__ import annotations

import importlib
import inspect
import io
import logging
import sys
import types
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from jaxlint.analysis.semantics.library import (
    APIS,
    APPLY_FN_FACTORIES,
    CALL_RESULTS,
    CONCRETE,
    COPYING_INPLACE_METHODS,
    DOCUMENTED,
    DTYPE_METHODS,
    HAIKU_APPLY_KEYWORDS,
    HAIKU_APPLY_LEADING,
    HAIKU_NO_RNG,
    HOST_OBJECTS,
    INT_BOUNDS,
    INT_CONSTANTS,
    INT_CONVERSIONS,
    INT_FILLS,
    INT_OPERANDS,
    KEY_DICT_KEYWORDS,
    KEY_METHODS,
    KEY_METHODS_CHECKED,
    LIBRARY_ONE_ARRAY,
    LINEN_APPLY_KEYWORDS,
    LINEN_CONCRETE_VARIABLES,
    LINEN_INIT_METHODS,
    LINEN_LAYERS_PREFIX,
    LINEN_PARAM_METHODS,
    LOGS,
    MISSING_INPLACE_METHODS,
    NARROW_INT_DTYPES,
    NNX_RNGS,
    NNX_STREAM_DRAWERS,
    OBSERVED_KEYWORD,
    PARAMS_CONCRETE,
    PARAMS_TRACED,
    PROGRESS,
    TRACED_FROM_ARGUMENTS,
    TRACED_RESULT,
    WRITES,
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


def check_odeint_dynamics(name: str) -> None:
    """Called eagerly, odeint runs its dynamics with the state, the time and the extra arguments all tracers."""
    seen: list[tuple[bool, ...]] = []

    def dynamics(y, t, scale):
        seen.append((is_tracer(y), is_tracer(t), is_tracer(scale)))
        return -y * scale

    resolve(name)(dynamics, jnp.ones(2), jnp.array([0.0, 1.0]), 2.0)
    assert APIS[name].traces == ((0, "func"),) and APIS[name].params == PARAMS_TRACED
    assert seen and all(all(call) for call in seen), seen


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


class Records(logging.Handler):
    """The records a logger handles while attached (`with Records("absl") as seen:`)."""

    def __init__(self, logger: str | None) -> None:
        super().__init__(logging.DEBUG)
        self.logger = logging.getLogger(logger)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> list[logging.LogRecord]:
        self.saved_level = self.logger.level
        self.logger.setLevel(logging.DEBUG)  # (setLevel, not the attribute: it clears the logger's cache)
        self.logger.addHandler(self)
        return self.records

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self)
        self.logger.setLevel(self.saved_level)


def _log_arguments(short: str, x: object) -> tuple:
    """Arguments that log `x` at warning level for each logging function's signature."""
    level = logging.WARNING
    return {
        "log": (level, "x %s", x),
        "vlog": (-1, "x %s", x),  # absl: negative verbosity levels are absl's WARNING and up
        "log_every_n": (-1, "x %s", 1, x),
        "log_first_n": (-1, "x %s", 1000, x),  # counted per call site, which every check shares
        "log_every_n_seconds": (-1, "x %s", 0, x),
        "log_if": (-1, "x %s", True, x),
    }.get(short, ("x %s", x))


def _logged_once_with_a_tracer(
    log: Callable, short: str, logger: str | None, absl_levels: bool = False
) -> None:
    """Called twice, the jitted function logs once (at trace time), and what it logs is a tracer."""
    if short == "log" and absl_levels:
        short = "vlog"  # absl.logging.log takes absl levels (-1: warning), as vlog does
    with Records(logger) as seen:
        step = jax.jit(lambda x: log(*_log_arguments(short, x)) or x + 1)
        step(jnp.ones(2))
        step(jnp.ones(2))
    ours = [r for r in seen if r.msg == "x %s"]  # (at DEBUG the root logger also gets JAX's own records)
    assert len(ours) == 1, f"{short}: {len(ours)} records for two calls"
    assert any(is_tracer(a) for a in ours[0].args), f"{short}: logged {ours[0].args}, not a tracer"


def check_logs(name: str) -> None:
    """A logging function of the table (`host=LOGS`): logs once per trace, showing the tracer."""
    assert APIS[name].host == LOGS
    pytest.importorskip(name.rpartition(".")[0])
    logger = "absl" if name.startswith("absl.") else None
    _logged_once_with_a_tracer(resolve(name), name.rsplit(".", 1)[1], logger, absl_levels=logger == "absl")


def check_logger_maker(name: str) -> None:
    """`logging.getLogger(...)` makes a "logger": each of its HOST_OBJECTS methods logs once per trace."""
    assert APIS[name].makes == "logger"
    pytest.importorskip(name.rpartition(".")[0])
    made = resolve(name)("semantics") if name.startswith("logging.") else resolve(name)()
    for method in HOST_OBJECTS["logger"]:
        if hasattr(made, method) and method not in ("fatal", "critical"):  # absl's abort the process
            _logged_once_with_a_tracer(getattr(made, method), method, made.name)


def check_progress(name: str) -> None:
    """tqdm/trange inside jit makes and advances its bar while tracing only: three calls make one bar, advanced
    once through its range; a bar made outside and updated inside advances once for two calls (HOST_OBJECTS'
    methods). tqdm.notebook's widget bar (it needs ipywidgets) does the same outside a notebook."""
    assert APIS[name].host == PROGRESS and APIS[name].makes == "progress bar"
    pytest.importorskip(name.rpartition(".")[0])
    notebook = name.startswith("tqdm.notebook.")
    if notebook:
        pytest.importorskip("ipywidgets")  # without it tqdm.notebook cannot build its bar
    made = resolve(name)
    out = io.StringIO()
    bars: list[Any] = []

    def loop(x):
        bar = made(3, file=out) if name.endswith("trange") else made(range(3), file=out)
        bars.append(bar)
        for i in bar:
            x = x + i
        return x

    step = jax.jit(loop)
    for _ in range(3):
        assert (step(jnp.ones(2)) == jnp.ones(2) + 3).all()
    assert len(bars) == 1 and bars[0].n == 3, "one bar, made and run through while tracing"
    if not notebook:  # the terminal bar is drawn once, complete
        assert out.getvalue().count("3/3") == 1, "the jitted calls themselves draw nothing"
    bar = made(total=10, file=io.StringIO()) if not name.endswith("trange") else made(10, file=io.StringIO())
    methods = HOST_OBJECTS["progress bar"]
    advance = jax.jit(lambda x: [bar.update(1), bar.set_postfix(x=x), bar.set_description(f"{x}")] and x + 1)
    advance(jnp.ones(2))
    advance(jnp.ones(2))
    assert bar.n == 1, f"{bar.n}: updated once for two calls"
    assert all(hasattr(bar, m) for m in methods)
    bar.close()


def _write_arguments(method: str, x: Any) -> tuple:
    """Arguments that hand each summary-writer method a value computed from the tracer `x` (shape (2,))."""
    value = {
        "add_scalars": {"a": jnp.sum(x)},
        "add_image": jnp.ones((3, 4, 4)) * x[0],  # CHW
        "image": jnp.ones((4, 4, 3)) * x[0],  # HWC
        "add_images": jnp.ones((1, 3, 4, 4)) * x[0],
        "audio": jnp.ones((1, 100, 1)) * x[0] * 0.1,
    }.get(method, jnp.sum(x) if method in ("add_scalar", "scalar") else x)
    return ("tag", value, 0)


# Each summary writer's scalar method, given a tracer under jit: what it raises (checked on the versions in
# library.py). Every other method of its HOST_OBJECTS kind raises too (text ones a ValueError/AttributeError).
_WRITER_ERRORS: dict[str, tuple[str, type[Exception]]] = {
    "tensorboardX.SummaryWriter": ("add_scalar", jax.errors.TracerArrayConversionError),
    "torch.utils.tensorboard.SummaryWriter": ("add_scalar", NotImplementedError),  # it takes no JAX array
    "flax.metrics.tensorboard.SummaryWriter": ("scalar", jax.errors.TracerArrayConversionError),
}


def check_summary_writer(name: str) -> None:
    """A summary writer has its HOST_OBJECTS methods, each of which cannot record a tracer: given one under jit
    it raises while JAX traces (the scalar method: the class `_WRITER_ERRORS` names)."""
    pytest.importorskip(name.rpartition(".")[0])  # flax.metrics.tensorboard imports tensorflow
    kind = APIS[name].makes
    methods = HOST_OBJECTS[kind]
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        writer = resolve(name)(folder)
        assert all(hasattr(writer, method) for method in methods), [
            m for m in methods if not hasattr(writer, m)
        ]
        scalar, error = _WRITER_ERRORS[name]
        assert methods[scalar] == WRITES
        with pytest.raises(error):
            jax.jit(lambda x: getattr(writer, scalar)(*_write_arguments(scalar, x)) or x)(jnp.ones(2))
        for method in methods:
            if method == "add_figure":
                continue  # takes a matplotlib figure, never an array
            with pytest.raises(
                (jax.errors.TracerArrayConversionError, NotImplementedError, ValueError, AttributeError)
            ):
                jax.jit(lambda x, m=method: getattr(writer, m)(*_write_arguments(m, x)) or x)(jnp.ones(2))
        writer.close()


def check_wandb_log(name: str) -> None:
    """`wandb.log` of a tracer under jit raises TypeError while JAX traces (a tracer is no JSON value), in a
    run that logs (mode "offline", no login); a concrete value logs. (In mode "disabled" `log` is a no-op.)"""
    wandb = pytest.importorskip("wandb")
    assert APIS[name].host == WRITES
    import os
    import tempfile

    os.environ.setdefault("WANDB_SILENT", "true")
    with tempfile.TemporaryDirectory() as folder:
        run = wandb.init(mode="offline", dir=folder, project="jaxlint-semantics")
        try:
            with pytest.raises(TypeError):
                jax.jit(lambda x: resolve(name)({"loss": jnp.sum(x)}) or x)(jnp.ones(2))
            resolve(name)({"loss": jnp.sum(jnp.ones(2))})
            assert run.summary["loss"] == 2
        finally:
            run.finish()
            wandb.teardown()  # its service process ends with the test


def check_solver(name: str) -> None:
    """The solver calls the function with tracers in the leading parameters (all of them where the entry says
    so); an extra argument given as a Python float stays one where only the leading parameters are traced."""
    api = APIS[name]
    seen: list[tuple[bool, ...]] = []
    extra = 2.0

    def record(*params):
        seen.append(tuple(is_tracer(p) for p in params))

    y0 = jnp.ones(2)
    if name.startswith("diffrax."):
        diffrax = pytest.importorskip("diffrax")

        def field(t, y, args):
            record(t, y, args)
            return -y

        term = resolve(name)(field)
        diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, 1.0, 0.1, y0, args=extra)
    elif name.startswith("optimistix."):
        optx = pytest.importorskip("optimistix")
        kind = name.rsplit(".", 1)[1]

        def fn(y, args):
            record(y, args)
            if kind == "minimise":
                return jnp.sum((y - 1.0) ** 2)
            return (y + 1.0) / 2.0 if kind == "fixed_point" else y - 1.0

        solver = {
            "minimise": optx.BFGS(rtol=1e-5, atol=1e-5),
            "root_find": optx.Newton(rtol=1e-5, atol=1e-5),
            "least_squares": optx.LevenbergMarquardt(rtol=1e-5, atol=1e-5),
            "fixed_point": optx.FixedPointIteration(rtol=1e-5, atol=1e-5),
        }[kind]
        resolve(name)(fn, solver, y0, args=extra)
    else:
        pytest.importorskip("jaxopt")
        keyword = api.traces[0][1]

        def fun(p, scale):
            record(p, scale)
            if keyword == "residual_fun":
                return (p - 1.0) * scale
            if keyword == "fixed_point_fun":
                return (p + 1.0) / (2.0 * scale)
            return jnp.sum((p - 1.0) ** 2) * scale

        resolve(name)(**{keyword: fun}, maxiter=3).run(y0, extra)
    assert seen
    leading = api.traced_leading
    if leading is None:
        assert any(all(call) for call in seen), f"{name}: no call had every parameter traced"
    else:
        assert all(all(call[:leading]) for call in seen), f"{name}: a leading parameter was not traced"
        assert not any(any(call[leading:]) for call in seen), f"{name}: a Python extra argument was traced"


def check_key_consumer(name: str) -> None:
    """One key given twice builds equal objects (the same weights, the same keys drawn); another key does not."""
    data = jax.random.key_data
    if name == "flax.nnx.Rngs":
        nnx = pytest.importorskip("flax.nnx")
        key = jax.random.key(0)
        assert APIS[name].keys[0] == (0, "default")
        first, second = nnx.Rngs(key), nnx.Rngs(key)
        assert (data(first()) == data(second())).all(), "two Rngs from one key draw the same keys"
        rngs = nnx.Rngs(key)
        draw = rngs()
        assert not (data(draw) == data(rngs())).all(), "one Rngs draws a fresh key per call"
        assert (data(draw) == data(jax.random.split(key)[0])).all(), "its first draw is split(key)[0]"
        streams = nnx.Rngs(params=key, dropout=key)
        assert (data(streams.params()) == data(streams.dropout())).all(), "two streams of one key are equal"
        return
    pytest.importorskip("equinox")
    assert APIS[name].keys == ((None, "key"),)
    layer = resolve(name)
    args = {
        "MLP": (3, 3, 4, 2),
        "Conv": (1, 2, 2, 3),
        "ConvTranspose": (1, 2, 2, 3),
        "Embedding": (5, 3),
        "MultiheadAttention": (2, 4),
    }.get(name.rsplit(".", 1)[1], (2, 2, 3) if "Conv" in name else (3, 3))
    leaves = lambda module: [x for x in jax.tree.leaves(module) if isinstance(x, jax.Array)]  # noqa: E731
    built = leaves(layer(*args, key=jax.random.key(0)))
    assert all(
        (a == b).all() for a, b in zip(built, leaves(layer(*args, key=jax.random.key(0))), strict=True)
    )
    other = leaves(layer(*args, key=jax.random.key(1)))
    assert not all((a == b).all() for a, b in zip(built, other, strict=True))


def check_brownian_key(name: str) -> None:
    """A Brownian motion is drawn from its key: one key gives the same path (also under vmap, where a closed-over
    key gives every element the same path: `Api.noise`), another key another path."""
    diffrax = pytest.importorskip("diffrax")
    api = APIS[name]
    assert api.noise
    position, keyword = api.keys[0]
    leading = (0.0, 1.0, 1e-3, (2,)) if name.endswith("VirtualBrownianTree") else ((2,),)
    assert len(leading) == position

    def path(key: jax.Array) -> jax.Array:
        return resolve(name)(*leading, **{keyword: key}).evaluate(0.0, 0.5)

    key = jax.random.key(0)
    assert (path(key) == path(key)).all()
    assert not (path(key) == path(jax.random.key(1))).all()
    same = jax.vmap(lambda _: path(key))(jnp.arange(3))
    assert (same == same[0]).all(), "a closed-over key: every element draws the same path"
    del diffrax


CHECKS: dict[str, Callable[[str], None]] = {
    "tensorboardX.SummaryWriter": check_summary_writer,
    "torch.utils.tensorboard.SummaryWriter": check_summary_writer,
    "flax.metrics.tensorboard.SummaryWriter": check_summary_writer,
    "wandb.log": check_wandb_log,
    "logging.getLogger": check_logger_maker,
    "absl.logging.get_absl_logger": check_logger_maker,
    "logging.": check_logs,
    "absl.logging.": check_logs,
    "tqdm.": check_progress,
    "diffrax.VirtualBrownianTree": check_brownian_key,
    "diffrax.UnsafeBrownianPath": check_brownian_key,
    "diffrax.": check_solver,
    "optimistix.": check_solver,
    "jaxopt.": check_solver,
    "flax.nnx.Rngs": check_key_consumer,
    "equinox.nn.": check_key_consumer,
    "flax.linen.": check_flax_lifted,
    "optax.": check_optax_schedule,
    "numpyro.infer.": check_numpyro_inference,
    "jax.scipy.optimize.": check_traced_objective,
    "jax.experimental.ode.": check_odeint_dynamics,
    "numpyro.handlers.seed": check_handlers_seed,
}


@pytest.mark.parametrize("name", sorted(n for n, api in APIS.items() if api.eager_keyword))
def test_eager_keyword_runs_the_callable_on_every_iteration(name: str) -> None:
    """Given `<eager_keyword>=False` (jaxopt's `jit=False`) the solver calls the objective on every iteration:
    more iterations, more calls; given nothing, it traces it a fixed number of times whatever the iterations."""
    pytest.importorskip("jaxopt")
    api = APIS[name]
    keyword = api.traces[0][1]

    def calls(maxiter: int, **options: bool) -> int:
        count = [0]

        def fun(p):
            count[0] += 1
            if keyword == "residual_fun":
                return jnp.sin(p) * jnp.arange(1.0, 3.0) + p**3 - 5.0
            if keyword == "fixed_point_fun":
                return 0.9 * p + 0.01
            return jnp.sum((p - 1.0) ** 4)

        resolve(name)(**{keyword: fun}, maxiter=maxiter, tol=1e-30, **options).run(jnp.zeros(2))
        return count[0]

    assert calls(3) == calls(6), f"{name}: traced once per run"
    assert calls(3, **{api.eager_keyword: False}) < calls(6, **{api.eager_keyword: False}), name


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


def key_method_draw(factory: str, method: str, position: int | None, keyword: str) -> Callable:
    """A function of a key that calls `method` of an object `factory` makes, the key where the table says."""
    if factory.startswith("haiku."):
        hk = pytest.importorskip("haiku")
        stateful = factory.endswith("_with_state")

        def forward(x):
            return hk.dropout(hk.next_rng_key(), 0.5, x)

        net, x = resolve(factory)(forward), jnp.ones(64)
        initial = net.init(jax.random.key(0), x)
        leading = list(initial) if stateful else [initial]  # params (and state) before the rng
        assert position == len(leading), f"{factory}.{method}: the rng is argument {len(leading)}"

        def draw(rng):
            out = getattr(net, method)(*leading, rng, x)
            return out[0] if stateful else out

        return draw
    pytest.importorskip(factory.split(".")[0])
    if not factory.endswith("."):  # a layer called with the key: `dropout(x, key=k)`
        layer, x = resolve(factory)(0.5), jnp.ones(64)
        assert position is None, f"{factory}.{method}: the key is keyword-only"
        return lambda rng: getattr(layer, method)(x, **{keyword: rng})
    normal = resolve(factory + "Normal")(0.0, 1.0)

    def sample(rng):
        if position is None:
            out = getattr(normal, method)(**{keyword: rng})
        else:
            out = getattr(normal, method)(*[(3,)] * position, rng)  # any sample shape before the key
        return out[0] if isinstance(out, tuple) else out

    return sample


@pytest.mark.parametrize("factory", sorted(KEY_METHODS))
def test_key_method_consumes_its_key(factory: str) -> None:
    """Each KEY_METHODS entry: the method given one key twice draws the same values, another key others."""
    assert factory in KEY_METHODS_CHECKED, f"{factory}: no version stated"
    key, other = jax.random.key(3), jax.random.key(4)
    for method, (position, keyword) in KEY_METHODS[factory].items():
        draw = key_method_draw(factory, method, position, keyword)
        first = draw(key)
        assert (first == draw(key)).all(), f"{factory}.{method}: one key, one draw"
        assert not (first == draw(other)).all(), f"{factory}.{method}: another key, another draw"


@pytest.mark.parametrize("method", sorted(LINEN_INIT_METHODS))
def test_linen_init_draws_the_parameters_from_its_key(method: str) -> None:
    """`model.init(key, x)` (and `init_with_output`): one key, the same parameters; another key, others; the
    key given as `rngs=` too."""
    nn = pytest.importorskip("flax.linen")
    net, x = nn.Dense(3), jnp.ones((1, 2))
    init = getattr(net, method)
    leaves = lambda out: jax.tree.leaves(out)  # noqa: E731
    first = leaves(init(jax.random.key(0), x))
    assert all((a == b).all() for a, b in zip(first, leaves(init(jax.random.key(0), x)), strict=True))
    assert all(
        (a == b).all() for a, b in zip(first, leaves(init(rngs=jax.random.key(0), inputs=x)), strict=True)
    )
    assert not all((a == b).all() for a, b in zip(first, leaves(init(jax.random.key(1), x)), strict=True))


def test_linen_apply_and_haiku_apply_take_what_the_table_says() -> None:
    """LINEN_APPLY_KEYWORDS are `Module.apply`'s own keywords (flax 0.12.8); a haiku transformation's `apply`
    takes HAIKU_APPLY_LEADING arguments (params, [state,] rng) before the function's own, and one fewer (no rng)
    under `without_apply_rng` (dm-haiku 0.0.17); HAIKU_APPLY_KEYWORDS are their names."""
    import inspect

    nn = pytest.importorskip("flax.linen")
    assert LINEN_APPLY_KEYWORDS <= set(inspect.signature(nn.Module.apply).parameters)
    hk = pytest.importorskip("haiku")

    def f(x):
        return x

    names: set[str] = set()
    for factory, leading in HAIKU_APPLY_LEADING.items():
        transformed = resolve(factory)(f)
        parameters = list(inspect.signature(transformed.apply).parameters)
        assert parameters[leading:] == ["x"] and parameters[leading - 1] == "rng"
        names |= set(parameters[:leading])
        plain = list(inspect.signature(resolve(HAIKU_NO_RNG)(transformed).apply).parameters)
        assert plain == [p for p in parameters if p != "rng"]
    assert names == HAIKU_APPLY_KEYWORDS
    assert hk.transform(f).apply({}, None, 2) == 2


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


@pytest.mark.parametrize("name", sorted(NNX_STREAM_DRAWERS))
def test_nnx_stream_drawer_advances_its_stream_when_called(name: str) -> None:
    """Called eagerly it draws a new mask each time (its stream advances); closed over by a plain jax.jit
    function it raises TraceContextError (flax 0.12.8), unless made deterministic; `nnx.Rngs` the same."""
    errors = pytest.importorskip("flax.errors")
    nnx = pytest.importorskip("flax.nnx")
    stream, off = NNX_STREAM_DRAWERS[name]
    x = jnp.ones(64)
    layer = resolve(name)(0.5, **{stream: nnx.Rngs(0)})
    assert not (layer(x) == layer(x)).all(), "each eager call draws anew"
    with pytest.raises(errors.TraceContextError):
        jax.jit(lambda v: layer(v))(x)
    quiet = resolve(name)(0.5, **{off: True, stream: nnx.Rngs(0)})
    assert (jax.jit(lambda v: quiet(v))(x) == x).all()
    rngs = resolve(NNX_RNGS)(0, dropout=1)
    for draw in (lambda: rngs(), lambda: rngs.dropout()):
        with pytest.raises(errors.TraceContextError):
            jax.jit(lambda v, draw=draw: v + jax.random.normal(draw()))(x)


def test_make_rng_draws_a_fresh_key_per_call() -> None:
    """What keeps `self.make_rng("dropout")` twice out of JAX301: each call draws a fresh key (flax 0.12.8),
    while the same `rngs=` key given to `apply` twice replays them (the loop case JAX301 flags)."""
    nn = pytest.importorskip("flax.linen")
    data = jax.random.key_data

    class Draws(nn.Module):
        @nn.compact
        def __call__(self):
            return self.make_rng("dropout"), self.make_rng("dropout")

    key = jax.random.key(8)
    first, second = Draws().apply({}, rngs={"dropout": key})
    assert not (data(first) == data(second)).all()
    again, _ = Draws().apply({}, rngs={"dropout": key})
    assert (data(first) == data(again)).all()


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


def test_linen_params_and_layer_outputs_are_tracers_under_a_jitted_apply() -> None:
    """What linen_values.py assumes: in `__call__` run by jax.jit(model.apply), `self.param(...)` and a
    flax.linen layer's output on tracers are tracers; under an eager apply both are concrete arrays."""
    nn = pytest.importorskip("flax.linen")
    seen: dict[str, bool] = {}

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            (method,) = LINEN_PARAM_METHODS
            w = getattr(self, method)("w", nn.initializers.ones, (3,))
            h = nn.Dense(3)(x)
            seen["param"], seen["layer"] = is_tracer(w), is_tracer(h)
            return h * w

    assert LINEN_LAYERS_PREFIX == nn.Dense.__module__.split(".")[0] + ".linen."
    net, x = Net(), jnp.ones(3)
    variables = net.init(jax.random.key(0), x)
    assert seen == {"param": False, "layer": False}
    jax.jit(net.apply)(variables, x)
    assert seen == {"param": True, "layer": True}


def test_linen_lifted_scan_and_vmap_may_hand_in_concrete_params() -> None:
    """LINEN_CONCRETE_VARIABLES: nn.scan with broadcast params and nn.vmap with unmapped params run `__call__`
    with `self.param(...)` a concrete array (an eager init and apply); nn.jit and nn.remat with a tracer."""
    nn = pytest.importorskip("flax.linen")
    seen: list[bool] = []

    class Body(nn.Module):
        @nn.compact
        def __call__(self, c, x):
            seen.append(is_tracer(self.param("w", nn.initializers.ones, (3,))))
            return c, x

    assert {APIS[n].label for n in ("flax.linen.scan", "flax.linen.vmap")} == set(LINEN_CONCRETE_VARIABLES)
    scanned = nn.scan(Body, variable_broadcast="params", split_rngs={"params": False}, length=2)
    scanned().init(jax.random.key(0), jnp.ones(3), None)
    mapped = nn.vmap(Body, variable_axes={"params": None}, split_rngs={"params": False}, in_axes=(None, 0))
    mapped().init(jax.random.key(0), jnp.ones(3), jnp.ones((2, 3)))
    assert seen and not any(seen)
    for lifted in (nn.jit, nn.remat):
        seen.clear()
        lifted(Body)().init(jax.random.key(0), jnp.ones(3), None)
        assert seen and all(seen)


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


def test_split_items_are_distinct_and_prefix_stable() -> None:
    """What JAX301's split items rest on: `split(k)[0]` and `split(k)[1]` are different keys (one split written
    twice, taking each item once, draws nothing twice), and `split(k, n)[i]` is `split(k)[i]` (an item taken
    after the whole split repeats one of its keys)."""
    key = jax.random.key(5)
    data = jax.random.key_data
    assert not (data(jax.random.split(key)[0]) == data(jax.random.split(key)[1])).all()
    for n in (2, 3, 5):
        for i in range(2):
            assert (data(jax.random.split(key, n)[i]) == data(jax.random.split(key)[i])).all()


def test_equinox_module_fields_are_traced_unless_static() -> None:
    """What `values.traced_self_field` reads: a Module's non-static fields (a `bool` one too) are tracers under
    jax.jit and in a lax.scan carry; filter_jit keeps non-array leaves static; `eqx.field(static=True)` is
    static everywhere; scanning over stacked Modules hands the body one Module of the class per step."""
    eqx = pytest.importorskip("equinox")
    from jaxlint.analysis.semantics.library import (
        FIELD_FUNCTIONS,
        FIELDS,
        PYTREE_BASES,
        SCALAR_FIELD_TYPES,
        TRANSFORMATIONS,
    )

    assert PYTREE_BASES["equinox.Module"] == FIELDS and FIELD_FUNCTIONS["equinox.field"] == ("static", True)
    assert "bool" in SCALAR_FIELD_TYPES and TRANSFORMATIONS["equinox.filter_jit"].filtering
    seen: dict[str, bool] = {}

    class Block(eqx.Module):
        weight: jax.Array
        flag: bool
        fixed: bool = eqx.field(static=True, default=True)

        def __call__(self, x):
            seen.update(weight=is_tracer(self.weight), flag=is_tracer(self.flag), fixed=is_tracer(self.fixed))
            return x * self.weight

    block, x = Block(jnp.ones(3), True), jnp.ones(3)
    jax.jit(lambda b, v: b(v))(block, x)
    assert seen == {"weight": True, "flag": True, "fixed": False}
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda b: jnp.ones(1) if b.flag else jnp.zeros(1))(block)
    eqx.filter_jit(lambda b, v: b(v))(block, x)
    assert seen == {"weight": True, "flag": False, "fixed": False}, "filter_jit: non-array leaves static"
    jax.lax.scan(lambda b, _: (b, b(x)), block, None, length=2)
    assert seen == {"weight": True, "flag": True, "fixed": False}, "a scan carry: every leaf traced"

    class Layer(eqx.Module):
        weight: jax.Array

    def one(h, layer):
        seen.update(layer=type(layer) is Layer, layer_weight=is_tracer(layer.weight))
        return h * layer.weight, None

    jax.lax.scan(one, x, Layer(jnp.ones((2, 3))))
    assert seen["layer"] and seen["layer_weight"], "each step gets a Layer whose fields are tracers"


# The transformations and control flow of the table (jax, equinox's filter_*, flax.nnx): run per entry by
# tests/analysis/test_library_transformations.py.


def test_nnx_updates_under_plain_jit_are_dropped() -> None:
    """library.NNX_CLASSES / NNX_MUTATING_METHODS (JAX202): under `jax.jit` a Variable update of an nnx object
    argument, directly or through `Optimizer.update`, is dropped; `nnx.jit` keeps it; a returned object is the
    updated copy."""
    nnx = pytest.importorskip("flax.nnx")
    optax = pytest.importorskip("optax")
    from jaxlint.analysis.semantics.library import NNX_CLASSES, NNX_MUTATING_METHODS

    class Counter(nnx.Module):
        def __init__(self):
            self.count = nnx.Variable(jnp.array(0))
            self.w = nnx.Param(jnp.ones(3))

    def tick(model):
        model.count.value += 1
        model.w[...] = model.w[...] * 2

    model = Counter()
    assert nnx.Module.__module__.startswith(NNX_CLASSES), "nnx classes live under flax.nnx."
    jax.jit(tick)(model)
    assert int(model.count.value) == 0 and float(model.w.value[0]) == 1.0, "dropped under jax.jit"
    nnx.jit(tick)(model)
    assert int(model.count.value) == 1 and float(model.w.value[0]) == 2.0, "kept under nnx.jit"
    returned = jax.jit(lambda m: (tick(m), m)[1])(model)
    assert int(returned.count.value) == 2 and int(model.count.value) == 1, "the returned copy has the update"

    ((optimizer_name, methods),) = NNX_MUTATING_METHODS.items()
    assert optimizer_name.startswith(NNX_CLASSES) and methods == {"update"}
    optimizer = resolve(optimizer_name)(model, optax.sgd(0.1), wrt=nnx.Param)

    def step(model, optimizer):
        grads = nnx.grad(lambda m: (m.w[...] ** 2).sum())(model)
        optimizer.update(model, grads)

    jax.jit(step)(model, optimizer)
    assert float(model.w.value[0]) == 2.0 and int(optimizer.step.value) == 0, "dropped under jax.jit"
    nnx.jit(step)(model, optimizer)
    assert float(model.w.value[0]) != 2.0 and int(optimizer.step.value) == 1, "kept under nnx.jit"


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


@pytest.mark.parametrize("name", sorted(INT_CONSTANTS))
def test_int_constants_have_their_value_and_overflow_int32(name: str) -> None:
    """JAX503 reads `sys.maxsize` as its value: outside int32, so `jnp.asarray` of it raises OverflowError."""
    _x64_off()
    value = resolve(name)
    assert value == INT_CONSTANTS[name]
    with pytest.raises(OverflowError):
        jnp.asarray(value)


@pytest.mark.parametrize("name", sorted(INT_FILLS))
def test_int_fills_wrap_around(name: str) -> None:
    """JAX503: a fill value outside int32 is weakly typed and wraps around silently (2**40 becomes 0)."""
    _x64_off()
    fill = resolve(name)
    position = INT_FILLS[name]
    args = [(3,)] * position + [2**40 + 5]
    assert fill(*args).tolist() == [5, 5, 5]
    assert jax.jit(lambda: fill(*args))().tolist() == [5, 5, 5]


@pytest.mark.parametrize("name", sorted(INT_OPERANDS))
def test_int_operands_raise_outside_int32(name: str) -> None:
    """JAX503: an elementwise operation given a Python int outside int32 as any operand raises OverflowError,
    eagerly and under jit; int32 operands pass."""
    _x64_off()
    function = resolve(name)
    arity = getattr(function, "nin", None) or len(  # a jnp ufunc says how many operands it takes
        [p for p in inspect.signature(function).parameters.values() if p.default is p.empty]
    )
    assert arity in (1, 2), name
    function(*[2] * arity)
    for position in range(arity):
        args = [2] * arity
        args[position] = 1 << 32
        with pytest.raises(OverflowError):
            function(*args)
        with pytest.raises(OverflowError):
            jax.jit(lambda args=args: function(*args))()


@pytest.mark.parametrize("name", sorted(INT_BOUNDS))
def test_int_bounds_raise_outside_int32(name: str) -> None:
    """JAX503: a bound outside int32, by position or keyword, raises OverflowError, eagerly and under jit; the
    int32 bounds pass."""
    _x64_off()
    function = resolve(name)
    key = jax.random.key(0)
    for position, keyword in INT_BOUNDS[name]:
        inside = [0, 2**31 - 1] if keyword == "maxval" else [-(2**31), 0]
        assert function(key, (2,), *inside).shape == (2,)
        outside = 2**31 if keyword == "maxval" else -(2**31) - 1
        by_position = [*inside]
        by_position[position - 2] = outside
        with pytest.raises(OverflowError):
            function(key, (2,), *by_position)
        by_keyword = {"minval": inside[0], "maxval": inside[1], keyword: outside}
        with pytest.raises(OverflowError):
            jax.jit(lambda by_keyword=by_keyword: function(key, (2,), **by_keyword))()


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


def test_scalar_tracing_transformations_trace_a_python_bool() -> None:
    """library.SCALAR_TRACING: `jax.jit(f)(x, True)` and `nnx.jit(f)(model, x, True)` give `f` a traced bool,
    `static_argnames` keeps it a Python bool; equinox's filter_jit (not in the table) keeps it static."""
    nnx = pytest.importorskip("flax.nnx")
    eqx = pytest.importorskip("equinox")
    from jaxlint.analysis.semantics.library import SCALAR_TRACING

    seen: dict[str, bool] = {}

    def f(model, x, flag):
        seen["flag"] = is_tracer(flag)
        return x

    model, x = nnx.Linear(3, 3, rngs=nnx.Rngs(0)), jnp.ones(3)
    for name in sorted(SCALAR_TRACING):
        transform = resolve(name)
        transform(f)(model if name.startswith("flax.") else None, x, True)
        assert seen.pop("flag"), f"{name}: a Python bool argument is a tracer"
        transform(f, static_argnames="flag")(model if name.startswith("flax.") else None, x, True)
        assert not seen.pop("flag"), f"{name}: a static one stays a Python bool"
    eqx.filter_jit(f)(None, x, True)
    assert not seen.pop("flag"), "equinox.filter_jit keeps a Python bool static"


def test_jax_dataclasses_static_fields_and_class_variables_are_no_leaves() -> None:
    """What the pytree table says of jax_dataclasses (`PYTREES_CHECKED`): `pytree_dataclass` makes a pytree whose
    `Static[T]` and `static_field()` fields are aux data; a `ClassVar` is no field of it (nor of an equinox
    Module), so none of them is a tracer under jit, while a plain field is."""
    jdc = pytest.importorskip("jax_dataclasses")
    eqx = pytest.importorskip("equinox")
    from jaxlint.analysis.semantics.library import (
        FIELD_FUNCTIONS,
        FIELDS,
        PYTREE_DECORATORS,
        PYTREES_CHECKED,
        STATIC_FIELD_ANNOTATIONS,
        STATIC_METADATA,
    )

    assert PYTREE_DECORATORS["jax_dataclasses.pytree_dataclass"] == FIELDS
    assert "jax_dataclasses.Static" in STATIC_FIELD_ANNOTATIONS
    assert FIELD_FUNCTIONS["jax_dataclasses.static_field"] == ("", True)
    assert "jax_dataclasses" in PYTREES_CHECKED and "equinox" in PYTREES_CHECKED
    seen: dict[str, bool] = {}

    # jax_dataclasses resolves the annotations from the class's module (a class local to a test cannot be read).
    module = types.ModuleType("jaxlint_jdc_probe")
    sys.modules[module.__name__] = module
    try:
        exec(
            "from typing import ClassVar\nimport jax\nimport jax_dataclasses as jdc\n\n"
            "@jdc.pytree_dataclass\nclass Grid:\n    dim: ClassVar[int] = 2\n    n: jdc.Static[int]\n"
            "    width: int = jdc.static_field()\n    size: int = 0\n    values: jax.Array = None\n",
            module.__dict__,
        )
        grid = module.Grid(3, 4, 5, jnp.ones(3))
        jax.tree_util.tree_structure(grid)  # reads the annotations while the module is importable
    finally:
        del sys.modules[module.__name__]
    marker = next(k for k in STATIC_METADATA if k.startswith("__jax_dataclasses"))
    assert jdc.static_field().metadata == {marker: True}

    def probe(g: Any) -> jax.Array:
        seen.update({name: is_tracer(getattr(g, name)) for name in ("dim", "n", "width", "size", "values")})
        return g.values

    jax.jit(probe)(grid)
    assert seen == {"dim": False, "n": False, "width": False, "size": True, "values": True}

    class Block(eqx.Module):
        taps: ClassVar[int] = 3
        weight: jax.Array

    assert len(jax.tree_util.tree_leaves(Block(jnp.ones(2)))) == 1
    jax.jit(lambda b: seen.update(taps=is_tracer(b.taps)))(Block(jnp.ones(2)))
    assert seen["taps"] is False


def test_pytreeclass_frozen_fields_are_aux_data() -> None:
    """What `FIELD_CALLBACKS` says of pytreeclass: a TreeClass field given `on_setattr=[freeze]` holds its value
    frozen (a leafless node), a Python value under jit; a plain field is a leaf, a tracer."""
    tc = pytest.importorskip("pytreeclass")
    from jaxlint.analysis.semantics.library import FIELD_CALLBACKS, FIELDS, PYTREE_BASES, PYTREES_CHECKED

    assert PYTREE_BASES["pytreeclass.TreeClass"] == FIELDS and "pytreeclass" in PYTREES_CHECKED
    assert FIELD_CALLBACKS["pytreeclass.field"] == ("on_setattr", "pytreeclass.freeze")
    assert tc.field is importlib.import_module("pytreeclass._src.code_build").field
    seen: dict[str, bool] = {}

    class Probe(tc.TreeClass):
        n: int = tc.field(on_setattr=[tc.freeze], on_getattr=[tc.unfreeze])
        m: int

        def __init__(self, n: int, m: int) -> None:
            self.n, self.m = n, m

    jax.jit(lambda p: seen.update(n=is_tracer(p.n), m=is_tracer(p.m)))(Probe(2, 3))
    assert seen == {"n": False, "m": True}


# -- What JAX-based libraries give back on traced data (TRACED_FROM_ARGUMENTS, LIBRARY_ONE_ARRAY) ------------


def _one_array_calls() -> dict[str, Callable]:
    """Each LIBRARY_ONE_ARRAY name, called on `x`, a float (2, 4) array."""
    diffrax = pytest.importorskip("diffrax")
    labels = jnp.array([0, 3])

    def result(x):  # a solve's result code, computed from `x`
        term = diffrax.ODETerm(lambda t, y, a: -a * y)
        return diffrax.diffeqsolve(
            term, diffrax.Tsit5(), 0.0, 1.0, 0.1, 1.0, args=x.sum(), throw=False
        ).result

    calls: dict[str, Callable] = {
        "diffrax.is_okay": lambda x: diffrax.is_okay(result(x)),
        "diffrax.is_successful": lambda x: diffrax.is_successful(result(x)),
        "diffrax.is_event": lambda x: diffrax.is_event(result(x)),
        "optax.softmax_cross_entropy_with_integer_labels": lambda x: resolve(
            "optax.softmax_cross_entropy_with_integer_labels"
        )(x, labels),
        "optax.global_norm": lambda x: resolve("optax.global_norm")({"w": x}),
        "optax.safe_norm": lambda x: resolve("optax.safe_norm")(x, 1e-6),
        "optax.smooth_labels": lambda x: resolve("optax.smooth_labels")(x, 0.1),
        "flax.linen.one_hot": lambda x: resolve("flax.linen.one_hot")(labels, 4) * x,
        "flax.linen.make_causal_mask": lambda x: resolve("flax.linen.make_causal_mask")(x),
        "flax.linen.make_attention_mask": lambda x: resolve("flax.linen.make_attention_mask")(x, x),
        "flax.linen.dot_product_attention": lambda x: resolve("flax.linen.dot_product_attention")(
            x[None, :, None], x[None, :, None], x[None, :, None]
        ),
    }
    return calls


@pytest.mark.parametrize("name", sorted(LIBRARY_ONE_ARRAY))
def test_library_one_array_gives_one_traced_array(name: str) -> None:
    pytest.importorskip(name.split(".")[0])
    call = _one_array_calls().get(name)
    if call is None:  # a loss of two arrays, an activation of one
        function = resolve(name)
        two = name.startswith("optax.")

        def call(x):
            return function(x, x) if two else function(x)

    seen: list[object] = []

    def run(x):
        out = call(x)
        seen.append(out)
        return out

    jax.jit(run)(jnp.linspace(0.1, 0.8, 8).reshape(2, 4))
    assert is_tracer(seen[0]) and hasattr(seen[0], "shape"), f"{name}: one traced array"
    assert all(name.startswith(tuple(TRACED_FROM_ARGUMENTS)) for name in LIBRARY_ONE_ARRAY)


def test_library_calls_on_traced_data_hold_tracers() -> None:
    """A function of each TRACED_FROM_ARGUMENTS library gives traced data, a class an object holding tracers,
    on a traced argument; on static arguments only, a class's object holds none (what the model leaves unknown)."""
    for prefix in TRACED_FROM_ARGUMENTS:
        pytest.importorskip(prefix.rstrip("."))
    import diffrax
    import equinox as eqx
    import numpyro.distributions as dist
    import optax
    import optimistix as optx

    def leaves_traced(value: object) -> bool:
        leaves = jax.tree.leaves(value, is_leaf=lambda v: isinstance(v, dist.Distribution))
        leaves = [getattr(v, "loc", v) for v in leaves]
        return bool(leaves) and any(is_tracer(leaf) for leaf in leaves)

    def field(t, y, rate):
        return -rate * y

    checks: dict[str, Callable] = {
        "diffrax.": lambda x: diffrax.diffeqsolve(
            diffrax.ODETerm(field), diffrax.Tsit5(), 0.0, 1.0, 0.1, 1.0, args=x
        ),
        "optimistix.": lambda x: (
            optx.root_find(lambda y, a: y - a, optx.Newton(1e-5, 1e-5), 0.0, args=x).value
        ),
        "optax.": lambda x: optax.apply_updates({"w": jnp.ones(2)}, {"w": x * jnp.ones(2)}),
        "numpyro.distributions.": lambda x: dist.Normal(x, 1.0),
        "equinox.": lambda x: eqx.filter({"w": x, "n": 3}, eqx.is_array),
        "flax.linen.": lambda x: resolve("flax.linen.softmax")(x * jnp.ones(3)),
    }
    assert set(checks) == set(TRACED_FROM_ARGUMENTS)
    for prefix, check in checks.items():
        seen: list[object] = []

        def run(x, check=check, seen=seen):
            seen.append(check(x))
            return x

        jax.jit(run)(0.5)
        assert leaves_traced(seen[0]), prefix
    static: list[object] = []
    jax.jit(lambda x: static.append(dist.Normal(0.0, 1.0)) or x)(0.5)
    assert not is_tracer(static[0].loc), "built from constants: no tracer"
    for name in ("is_array", "is_inexact_array"):
        assert CALL_RESULTS[f"equinox.{name}"] == CONCRETE
        answers: list[object] = []
        jax.jit(lambda x, name=name, answers=answers: answers.append(getattr(eqx, name)(x)) or x)(jnp.ones(2))
        assert answers == [True], name
