"""The library table's host rows (analysis/semantics/host.py), run on real JAX on CPU: `jax.debug.print` prints
with the values on every run of a jitted function; the stdlib's and NumPy's writes, clock reads and global
random draws happen once, while JAX traces, and what they read is baked in; NumPy's savers raise on a tracer;
NumPy's random constructors leave the global state alone."""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jaxlint.analysis.semantics.library import (
    CLOCKS,
    DEBUG_PRINT,
    ENVIRON,
    FILE_OPENERS,
    HOST_CHECKED,
    INPUT,
    NUMPY_RANDOM,
    NUMPY_RANDOM_CONSTRUCTORS,
    OS_WRITES,
    PATH_CHANGES,
    PATH_CLASSES,
    PATH_WRITES,
    PROGRAM_CALLS,
    SAVES,
    SHELL,
    STDLIB_RANDOM,
    TEST_RUNNERS,
    TIME_READS,
    TIMEIT_RUNS,
    WAITS,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

from tests.analysis.test_library_semantics import resolve  # noqa: E402

_WINDOWS_ONLY = {"os.startfile"}
_OPTIONAL = {"etils.epath.Path"}  # etils is not a dependency
_NEWER = {"random.binomialvariate": (3, 12)}  # rows for newer Pythons


def test_checked_on_the_running_versions() -> None:
    assert f"jax {jax.__version__}" in HOST_CHECKED and f"numpy {np.__version__}" in HOST_CHECKED
    assert f"python {sys.version_info.major}.{sys.version_info.minor}" in HOST_CHECKED


@pytest.mark.parametrize(
    "name",
    sorted(OS_WRITES | SHELL | SAVES | TIME_READS | STDLIB_RANDOM | PATH_CLASSES | {ENVIRON}),
)
def test_every_row_names_a_callable_of_the_running_python(name: str) -> None:
    if name in _WINDOWS_ONLY and sys.platform != "win32":
        pytest.skip("Windows only")
    if sys.version_info < _NEWER.get(name, (3,)):
        pytest.skip(f"{name}: Python {_NEWER[name]}")
    if name in _OPTIONAL:
        pytest.importorskip(name.rsplit(".", 1)[0])
    found = resolve(name)
    assert found is os.environ if name == ENVIRON else callable(found), name


def test_debug_print_prints_the_values_on_every_run(capfd: pytest.CaptureFixture[str]) -> None:
    @jax.jit
    def f(x):
        resolve(DEBUG_PRINT)("x={}", x)
        return x + 1

    for value in (1.0, 2.0):
        f(jnp.float32(value))
    jax.effects_barrier()
    out = capfd.readouterr().out
    assert "x=1.0" in out and "x=2.0" in out


def test_writes_under_jit_run_once_at_trace_time(tmp_path: Path) -> None:
    made: list[str] = []

    @jax.jit
    def f(x):
        target = tmp_path / f"d{len(made)}"
        os.makedirs(target)
        made.append(str(target))
        (target / "t.txt").write_text("x")  # PATH_WRITES
        return x + 1

    for _ in range(3):
        f(jnp.ones(2))
    assert len(made) == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["d0"]
    assert {"write_text", "mkdir"} <= PATH_WRITES | PATH_CHANGES and "os.makedirs" in OS_WRITES


@pytest.mark.parametrize("name", sorted(n for n in SAVES if n.startswith("numpy.")))
def test_numpy_saver_raises_on_a_tracer(name: str, tmp_path: Path) -> None:
    save = resolve(name)

    @jax.jit
    def f(x):
        save(tmp_path / "out.npy" if name != "numpy.savetxt" else tmp_path / "out.txt", x)
        return x

    with pytest.raises(jax.errors.TracerArrayConversionError):
        f(jnp.ones(2))


@pytest.mark.parametrize("name", ["pickle.dump", "json.dump"])
def test_python_saver_fails_on_a_tracer(name: str, tmp_path: Path) -> None:
    assert name in SAVES
    dump = {"pickle.dump": pickle.dump, "json.dump": json.dump}[name]

    @jax.jit
    def f(x):
        with open(tmp_path / "out", "wb" if name == "pickle.dump" else "w") as handle:
            dump(x, handle)
        return x

    with pytest.raises((TypeError, jax.errors.ConcretizationTypeError, pickle.PicklingError)):
        f(jnp.ones(2))


@pytest.mark.parametrize("name", sorted(n for n in TIME_READS if n != "time.sleep"))
def test_clock_read_under_jit_is_baked_in(name: str) -> None:
    read = resolve(name)
    reads: list[object] = []

    @jax.jit
    def f(x):
        reads.append(read())
        return x + 1

    for _ in range(3):
        f(jnp.float32(0.0))
        time.sleep(0.001)
    assert len(reads) == 1, f"{name}: the clock was read {len(reads)} times in 3 runs"


@pytest.mark.parametrize("name", sorted(CLOCKS))
def test_timing_clock_difference_is_elapsed_time(name: str) -> None:
    """A JAX403 clock: the difference of two readings is the time spent between them, in seconds (a `timedelta`
    for `datetime.now()`, nanoseconds for the `_ns` clocks): positive once the clock moves, and no more than the
    wall time that passed (CPU-time clocks advance only while the process runs, so the loop is a busy one)."""
    read = resolve(name)

    def seconds(elapsed) -> float:
        elapsed = elapsed.total_seconds() if hasattr(elapsed, "total_seconds") else elapsed
        return elapsed / 1e9 if name.endswith("_ns") else elapsed

    start = time.perf_counter()
    first = read()
    passed = 0.0
    while passed <= 0 and time.perf_counter() - start < 5:
        passed = seconds(read() - first)
    wall = time.perf_counter() - start
    assert 0 < passed <= wall + 0.02, f"{name}: {passed} s read over {wall} s"


@pytest.mark.parametrize("name", sorted(STDLIB_RANDOM - {"random.seed", "random.shuffle"}))
def test_stdlib_random_draw_under_jit_is_baked_in(name: str) -> None:
    if sys.version_info < _NEWER.get(name, (3,)):
        pytest.skip(f"{name}: Python {_NEWER[name]}")
    draw = resolve(name)
    two = {"randint", "randrange", "uniform", "gauss", "normalvariate", "lognormvariate", "betavariate"}
    two |= {"gammavariate", "vonmisesvariate", "weibullvariate", "triangular", "binomialvariate"}
    short = name.rsplit(".", 1)[1]
    if short in ("choice", "choices"):
        args: tuple = ([1, 2, 3, 4, 5, 6, 7, 8],)
    elif short == "sample":
        args = ([1, 2, 3, 4, 5, 6, 7, 8], 3)
    elif short in ("getrandbits", "randbytes"):
        args = (32,)
    elif short in ("expovariate", "paretovariate"):
        args = (1.5,)
    elif short in two:
        args = (2, 9) if short in ("randint", "randrange", "binomialvariate") else (2.0, 3.0)
    else:
        args = ()
    drawn: list[object] = []

    @jax.jit
    def f(x):
        drawn.append(draw(*args))
        return x + 1

    for _ in range(4):
        f(jnp.float32(0.0))
    assert len(drawn) == 1, f"{name}: drew {len(drawn)} times in 4 runs"


def test_numpy_global_draw_under_jit_is_baked_in_and_constructors_leave_the_state() -> None:
    normal = resolve(NUMPY_RANDOM + "normal")
    f = jax.jit(lambda x: x + normal())
    assert f(jnp.float32(0.0)) == f(jnp.float32(0.0)) and normal() != normal()

    def state():
        _, keys, *rest = np.random.get_state()  # rest: the position and the cached gaussian
        return keys.tobytes(), tuple(rest)

    before = state()
    for name in sorted(NUMPY_RANDOM_CONSTRUCTORS):
        assert callable(resolve(NUMPY_RANDOM + name))
    np.random.default_rng(0).normal()
    np.random.RandomState(0).normal()
    assert state() == before
    np.random.normal()
    assert state() != before


def test_environ_write_under_jit_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAXLINT_HOST_PROBE", raising=False)
    environ = resolve(ENVIRON)

    @jax.jit
    def f(x):
        environ["JAXLINT_HOST_PROBE"] = environ.get("JAXLINT_HOST_PROBE", "") + "x"
        return x

    for _ in range(3):
        f(jnp.ones(1))
    assert os.environ["JAXLINT_HOST_PROBE"] == "x"


def _unready() -> Any:
    """A JAX array whose computation is still running."""
    slow = jax.jit(lambda x: jax.lax.fori_loop(0, 25, lambda i, m: jnp.tanh(m @ m), x))
    x = jnp.eye(600) * 0.5
    jax.block_until_ready(slow(x))  # compiled
    result = slow(x)
    assert not result.is_ready()
    return result


@pytest.mark.parametrize("word", sorted(WAITS))
def test_wait_returns_once_the_work_is_done(word: str) -> None:
    """`jax.<word>` returns once the work is done: the array computed (`effects_barrier`: the callbacks of
    the dispatched work run)."""
    if word == "effects_barrier":
        seen: list[int] = []

        @jax.jit
        def f(x):
            y = jax.lax.fori_loop(0, 25, lambda i, m: jnp.tanh(m @ m), x)
            jax.debug.callback(lambda v: seen.append(1), y[0, 0], ordered=True)
            return y

        f(jnp.eye(600) * 0.5)
        jax.effects_barrier()
        assert seen == [1]
        return
    result = _unready()
    getattr(jax, word)(result)
    assert result.is_ready(), word


# Where each test runner's module is (the local name a test file imports it as).
_RUNNER_MODULES = {
    "absltest": "absl.testing.absltest",
    "unittest": "unittest",
    "pytest": "pytest",
    "googletest": "tensorflow.python.platform.googletest",
    "test": "tensorflow.test",
}


@pytest.mark.parametrize("runner", TEST_RUNNERS)
def test_test_runner_main_runs_tests(runner: str) -> None:
    """Each runner's `main` is a function that runs the tests (tensorflow's: skipped where it is absent)."""
    module = _RUNNER_MODULES[runner]
    pytest.importorskip(module.split(".")[0] if runner != "absltest" else "absl")
    main = resolve(module + ".main")
    assert callable(main) and "test" in (main.__doc__ or "").lower(), runner  # "runs a set of tests"


@pytest.mark.parametrize("name", sorted(PROGRAM_CALLS))
def test_program_call_runs_a_program(name: str) -> None:
    pytest.importorskip(name.split(".")[0])
    if name == "absl.app.run":
        ran: list[list[str]] = []
        with pytest.raises(SystemExit):
            resolve(name)(ran.append, argv=["prog"])
        assert ran == [["prog"]]
    else:
        assert resolve(name) is print


@pytest.mark.parametrize("name", sorted(FILE_OPENERS))
def test_file_opener_writes_a_file_by_its_mode(name: str, tmp_path: Path) -> None:
    with resolve(name)(tmp_path / "out.txt", "w") as handle:
        handle.write("x")
    assert (tmp_path / "out.txt").read_text() == "x"


def test_input_reads_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("answer\n"))
    assert resolve(INPUT)() == "answer"


@pytest.mark.parametrize("name", sorted(TIMEIT_RUNS))
def test_timeit_runs_the_statement_in_its_own_loop(name: str) -> None:
    runs: list[int] = []
    timer = resolve(name)
    if name.endswith("Timer"):
        timer(lambda: runs.append(1)).timeit(number=3)
    elif name.endswith("repeat"):
        timer(lambda: runs.append(1), number=3, repeat=1)
    else:
        timer(lambda: runs.append(1), number=3)
    assert runs == [1, 1, 1], name
