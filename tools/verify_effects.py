"""Run the positives of the side-effect fixtures against real JAX and say what each does.

    python tools/verify_effects.py

Imports `tests/fixtures/rules/JAX202_host_effects.py`, `JAX403_context_timers.py` and `JAX201_linen_call.py`
(JAX on CPU; needs flax, optax, dm-haiku, absl-py and tqdm, as in the dev virtualenv), and
`JAX202_summary_writer.py` where tensorboardX is installed (it is not in the dev virtualenv), and runs every function
their `# expect:` lines are in, printing one line per positive: what was observed, and whether it is the
misbehaviour the finding describes (the iterator advanced once for several steps, a log record or a printed
tracer once for two calls, a bar that ticks while tracing only, a timer that reads the dispatch). Exit status 1
when a positive behaves well. The timings are printed, never judged against a bound: only their ratio is read.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rules"
failures: list[str] = []


def load(name: str):
    """The fixture as a module (its top-level code runs: the linen fixture applies its Modules)."""
    spec = importlib.util.spec_from_file_location(name, FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def report(what: str, ok: bool, seen: str) -> None:
    print(f"{'misbehaves' if ok else 'BEHAVES WELL'}: {what}: {seen}")
    if not ok:
        failures.append(what)


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name != "jax" and not record.name.startswith("jax."):
            self.seen.append(record)


def tracer_in(record: logging.LogRecord) -> bool:
    return any(isinstance(a, jax.core.Tracer) for a in (record.args or ()))


def host_effects() -> None:
    fx = load("JAX202_host_effects")
    # next(): a scan of 5 steps sees one batch; the jitted step draws once for two calls.
    out = fx.epoch(jnp.zeros(()))
    left = next(fx.train_iter)
    report(
        "next(train_iter) in a jitted scan body",
        float(out) == 0.0 and float(left.sum()) == 3.0,
        f"5 steps summed {float(out)} (batch 0 every step); the iterator advanced once (next left: {left[0]})",
    )
    out = fx.fori_epoch(jnp.zeros(()))
    report(
        "next(stream) in a fori_loop body",
        float(out) == 0.0,
        f"10 steps summed {float(out)}: generator item 0 each time",
    )
    first, second = fx.jitted_step(jnp.ones(3)), fx.jitted_step(jnp.ones(3))
    report(
        "next(pairs/cycled/lazy) in a jitted step",
        bool((first == second).all()) and float(next(fx.cycled).sum()) == 0.0,
        f"two calls return the same {first.tolist()}; the cycle was advanced once (its next item: zeros)",
    )
    out = fx.train(jnp.zeros(()), [1.0, 2.0, 3.0])
    report(
        "next(it) of an eager caller's iter([1.0, 2.0, 3.0]) in a scan body",
        float(out) == 3.0,
        f"3 steps summed {float(out)} (item 1.0 every step; 6.0 if each step drew its own)",
    )
    # loggers: one record, holding a tracer, for two calls.
    handler = Records()
    root = logging.getLogger()
    old = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    logging.getLogger("absl").setLevel(logging.DEBUG)
    try:
        x = jnp.ones(3)
        fx.logs(x)
        fx.logs(x)
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    traced = [r for r in handler.seen if tracer_in(r)]
    report(
        "logger.info / getLogger().warning / absl log_every_n / local.error of a tracer in a jitted function",
        len(traced) == 4,
        f"{len(traced)} records with a tracer for two calls ({', '.join(r.getMessage()[:28] for r in traced)})",
    )
    # tqdm: the loop's bars are drawn while tracing only; BAR advanced once for two calls.
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        fx.progress(jnp.ones(3))
        drawn = err.getvalue().count("3/3")
        fx.progress(jnp.ones(3))
    report(
        "for .. in tqdm(range(3)) / trange(2) / BAR.update / BAR.set_postfix in a jitted function",
        drawn == 1 and err.getvalue().count("3/3") == 1 and fx.BAR.n == 1,
        f"the 3-step bar drawn {err.getvalue().count('3/3')}x for two calls; BAR.n = {fx.BAR.n}",
    )
    with contextlib.redirect_stderr(io.StringIO()) as err:
        fx.scanned(jnp.ones(4))
    report(
        "bar.update(1) in a scan body of 4 steps",
        "1/4" in err.getvalue() and "4/4" not in err.getvalue(),
        "the bar reached 1/4",
    )


def summary_writer() -> None:
    try:
        import tensorboardX  # noqa: F401
    except ImportError:
        print("skipped: JAX202_summary_writer (tensorboardX is not installed)")
        return
    import tempfile

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # the fixture writes to runs/fixture
        fx = load("JAX202_summary_writer")
        for what, run in (
            ("writer.add_scalar(loss) in a jitted step", lambda: fx.train_step(jnp.ones(3), jnp.zeros(3))),
            ("writer.add_histogram(p) in a scan body", lambda: fx.scanned(jnp.ones(3), jnp.zeros((2, 3)))),
        ):
            try:
                run()
                report(what, False, "ran")
            except jax.errors.TracerArrayConversionError as error:
                report(what, True, f"raises {type(error).__name__} while tracing")
        fx.writer.close()
        os.chdir(here)


def context_timers() -> None:
    fx = load("JAX403_context_timers")
    x = jnp.ones((1500, 1500))
    fx.forward(x).block_until_ready()  # compiled: only the run is timed below
    with contextlib.redirect_stdout(io.StringIO()) as out:
        with fx.timer("fwd"):
            fx.forward(x)
    read = float(out.getvalue().split(":")[1].split()[0])
    start = time.perf_counter()
    fx.forward(x).block_until_ready()
    blocked = time.perf_counter() - start
    report(
        "with timer('fwd'): y = forward(x)",
        read < blocked / 5,
        f"the timer read {read * 1e3:.2f} ms; the same call blocked takes {blocked * 1e3:.1f} ms",
    )
    with fx.Stopwatch() as watch:
        y = fx.forward(x)
    start = time.perf_counter()
    jax.block_until_ready(y)
    waited = time.perf_counter() - start
    report(
        "with Stopwatch(): y = forward(x)",
        watch.elapsed < waited,
        f"the stopwatch read {watch.elapsed * 1e3:.2f} ms; waiting for the result after it took {waited * 1e3:.1f} ms",
    )


def linen_call() -> None:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        load("JAX201_linen_call")
    lines = out.getvalue().splitlines()

    def shows(prefix: str) -> list[str]:
        return [line for line in lines if line.startswith(prefix)]

    for prefix, what in (
        ("w ", "print('w', self.param(...)) under jax.jit(model.apply)"),
        ("h ", "print('h', nn.Dense(...)(x)) under jax.jit(model.apply)"),
        ("norm ", "print(f'norm {jnp.linalg.norm(h)}') under jax.jit(model.apply)"),
        ("logits ", "print('logits', ...) of a TrainState's apply_fn in a jitted step"),
        ("scale ", "print('scale', self.param(...)) under nn.jit"),
    ):
        found = shows(prefix)
        tracer = [line for line in found if "Tracer" in line or "Traced<" in line]
        report(what, bool(tracer), tracer[0][:70] if tracer else f"printed {found[:1]}")
    eager = [line for line in shows("w ") if "Tracer" not in line]
    print(f"(twin: the eagerly applied Module printed values: {eager[-1][:60] if eager else 'nothing'})")


if __name__ == "__main__":
    host_effects()
    summary_writer()
    context_timers()
    linen_call()
    print(f"{len(failures)} positive(s) behaved well" if failures else "every positive misbehaves")
    sys.exit(1 if failures else 0)
