"""The library table's host rows (library.py re-exports them): what a call does on the host, where JAX runs it
once, while it traces, under a transformation; and `jax.debug.print`, which prints on every run instead. Data
only, run by tests/analysis/test_library_host.py (the stdlib's, NumPy's and jax.debug's rows) and
tests/analysis/test_library_semantics.py (the logging, progress-bar and metric-writer APIs built on these kinds).
"""

from __future__ import annotations

HOST_CHECKED = "jax 0.10.2, numpy 2.4.6, python 3.11.7"

# Prints its `fmt.format(*args, **kwargs)` on the host each time the traced code runs, with the values (under
# jit, each call prints; formatting in Python first prints the tracer once instead).
DEBUG_PRINT = "jax.debug.print"

# -- Effects of library calls made under a transformation: once, at trace time -----------------------------

LOGS = "logs"  # formats its arguments into a log line: shows a tracer when given one
# Records a metric: handed a tracer, it raises while JAX traces (tensorboardX's and flax's writers:
# TracerArrayConversionError; torch's: NotImplementedError, it takes no JAX array at all; wandb.log: TypeError).
WRITES = "writes"
PROGRESS = "progress"  # draws or advances a progress bar: ticks while JAX traces, never while the code runs
HOST_EFFECTS = {LOGS: "logs", WRITES: "writes", PROGRESS: "advances the progress bar"}

# The stdlib's module-level logging functions (the first nine) and absl's (all but `critical`); loggers have them.
NO_ABSL = ("critical", "fatal")
LOG_METHODS = (
    "debug info warning warn error exception critical fatal log vlog log_every_n log_first_n "
    "log_every_n_seconds log_if"
).split()
# Methods of host objects (the kind an API `makes`) -> their effect. Iterating a progress bar ticks it too.
HOST_OBJECTS: dict[str, dict[str, str]] = {
    "logger": {name: LOGS for name in LOG_METHODS},
    "progress bar": {
        name: PROGRESS
        for name in "update set_postfix set_postfix_str set_description set_description_str".split()
    },
    "summary writer": {  # tensorboardX's and torch.utils.tensorboard's
        name: WRITES
        for name in "add_scalar add_scalars add_histogram add_image add_images add_text add_figure".split()
    },
    "flax summary writer": {  # flax.metrics.tensorboard's (it needs tensorflow); `write_scalars` is clu's, not its
        name: WRITES for name in "scalar image histogram text audio write".split()
    },
}

# Modules (as a test file imports them) whose `main()` runs the file's tests: under `if __name__ == "__main__":`
# it makes no program of a test module (absl's absltest, unittest, pytest; tensorflow's googletest and `tf.test`).
TEST_RUNNERS = ("absltest", "unittest", "pytest", "googletest", "test")
# Top-level calls that make a module a program: it prints, or it hands absl its `main`.
PROGRAM_CALLS = frozenset({"builtins.print", "absl.app.run"})

# Calls whose result is a Python iterator over data: `next()` on one bound outside a trace advances it at trace
# time only. (`itertools.count`/`repeat` are not here: `next(ids)` at trace time names things on purpose.)
ITERATOR_MAKERS = frozenset(
    {f"builtins.{n}" for n in "iter map filter zip enumerate reversed".split()}
    | {f"itertools.{n}" for n in "cycle chain islice starmap".split()}
)
ITERATOR_METHODS = frozenset({"as_numpy_iterator"})  # tf.data.Dataset's (documented)

# -- The stdlib's and NumPy's host calls: run under jit, each happens once, while JAX traces ---------------

# Writes to the file system or the process (os, os.environ, shutil, subprocess, the savers).
OS_WRITES = frozenset(
    "os." + name
    for name in (
        "remove unlink rename renames replace makedirs mkdir rmdir removedirs write system chmod chown lchown "
        "symlink link truncate ftruncate putenv unsetenv chdir kill killpg popen startfile utime mkfifo"
    ).split()
) | frozenset({"os.environ.update", "os.environ.pop", "os.environ.setdefault", "os.environ.clear"})
ENVIRON = "os.environ"  # `os.environ[k] = v` changes the process environment
SHELL = frozenset(
    {"shutil." + n for n in "copy copy2 copyfile copytree copymode copystat move rmtree chown".split()}
    | {"subprocess." + n for n in "run call check_call check_output Popen getoutput getstatusoutput".split()}
)
# Savers: given a tracer, numpy's raise under jit (TracerArrayConversionError); pickle's and json's fail too.
SAVES = frozenset(
    {"numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.savetxt", "pickle.dump", "json.dump"}
)
# Methods of a path object that write a file or change the file system, and the path classes.
PATH_WRITES = frozenset({"write_text", "write_bytes"})  # distinctive enough on any receiver
PATH_CHANGES = frozenset({"mkdir", "touch", "unlink", "rmdir", "rename", "replace", "symlink_to", "chmod"})
PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PosixPath", "pathlib.WindowsPath", "etils.epath.Path"})
# Opening a file (for writing, by its mode), and asking the user.
FILE_OPENERS = frozenset({"builtins.open", "io.open"})
INPUT = "builtins.input"
# timeit's functions that time a statement by running it: their own loop, not the caller's clock reads.
TIMEIT_RUNS = frozenset({"timeit.timeit", "timeit.repeat", "timeit.Timer"})
# Clocks: two readings around asynchronously dispatched work measure the dispatch only (JAX403); the difference
# of two `datetime.now()` is the elapsed wall time too (a `timedelta`) ...
CLOCKS = (
    frozenset(
        "time." + n
        for n in (
            "time perf_counter monotonic process_time thread_time time_ns perf_counter_ns monotonic_ns "
            "process_time_ns thread_time_ns"
        ).split()
    )
    | {"timeit.default_timer"}
    | {"datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today"}
)
# ... and what waits for that work: JAX's functions (called by these last words) that block until it is done.
WAITS = frozenset({"block_until_ready", "effects_barrier", "device_get"})
# Clock reads (the clocks, `sleep`, the datetime reads): under jit the value read while tracing is baked into
# the compiled code as a constant.
TIME_READS = CLOCKS | {"time.sleep", "datetime.date.today"}
# Draws from Python's global random state: under jit, drawn once and baked in.
STDLIB_RANDOM = frozenset(
    "random." + name
    for name in (
        "random randint randrange choice choices shuffle sample uniform gauss normalvariate lognormvariate "
        "expovariate betavariate gammavariate triangular vonmisesvariate paretovariate weibullvariate "
        "getrandbits randbytes seed binomialvariate"
    ).split()
)
# NumPy's global random state: every function of this namespace draws from it (or reseeds it) ...
NUMPY_RANDOM = "numpy.random."
# ... except these, which build generators of their own.
NUMPY_RANDOM_CONSTRUCTORS = frozenset(
    "default_rng RandomState Generator SeedSequence BitGenerator PCG64 PCG64DXSM MT19937 Philox SFC64".split()
)
