"""Project mode recall (issues 25 and 26): transformations of another module's functions and linen `apply`, timer
classes of another module, modules with no JAX word that import analysed ones, and `nnx.jit`'s traced scalars.

Each case is linted through the real command, as `.py` modules and as a notebook importing them, beside its clean
twin; and each is run on real JAX (`_run`): a positive raises the error class the finding names at the finding's
line, its twin runs clean.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import notebook
from tests.test_project import run_cli, write

# Runs each folder's `main.py` in one interpreter and prints, per folder, None (it ran) or the error's class
# with the file and line of its innermost frame in the folder (JAX keeps the user's frames in the traceback).
_DRIVER = """
import json, os, runpy, sys, traceback
out = {}
for folder in sys.argv[1:]:
    sys.path.insert(0, folder)
    try:
        runpy.run_path(os.path.join(folder, "main.py"), run_name="__main__")
        out[folder] = None
    except Exception as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(folder)]
        out[folder] = [type(error).__name__, os.path.basename(frames[-1].filename), frames[-1].lineno]
    finally:
        sys.path.remove(folder)
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(folder):
                del sys.modules[name]
print(json.dumps(out))
"""


def _run(root: Path, scenarios: dict[str, dict[str, str]]) -> dict[str, list | None]:
    """Each scenario (its files, `main.py` among them) run on real JAX: name -> [error class, file, line] or
    None when it ran clean."""
    folders = {}
    for name, files in scenarios.items():
        folder = root / "runs" / name
        write(folder, files)
        folders[str(folder)] = name
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    result = subprocess.run(
        [sys.executable, "-c", _DRIVER, *folders],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    return {folders[folder]: found for folder, found in json.loads(result.stdout.splitlines()[-1]).items()}


def _lint(root: Path) -> list[tuple[str, int, str]]:
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return sorted((Path(f["path"]).name, f["line"], f["code"]) for f in json.loads(result.stdout))


def _messages(root: Path) -> list[str]:
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=root)
    return [f["message"] for f in json.loads(result.stdout)]


# -- 1. transformations of another module's linen `apply` and functions -------------------------------------

MODELS = """
    import flax.linen as nn
    import numpy as np


    class Scale(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            w = self.param("w", nn.initializers.ones, (3,))
            if train:
                x = x * 2
            return (np.asarray(x) * w).sum()


    class Weigh(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            w = self.param("w", nn.initializers.ones, (3,))
            return (x * float(w.sum())).sum()


    def step(x, train):
        if train:
            x = x * 2
        return np.asarray(x).sum()
    """
CLEAN_MODELS = (
    MODELS.replace("import numpy as np", "import jax.numpy as jnp")
    .replace("np.asarray", "jnp.asarray")
    .replace("float(w.sum())", "w.sum()")
)
APPLY_HEAD = """
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    import models
    from models import Scale, Weigh, step

    x = jnp.ones(3)
    scale = Scale()
    weigh = Weigh()
    scale_vars = scale.init(jax.random.key(0), x, False)
    weigh_vars = weigh.init(jax.random.key(0), x, False)
    """
# Each run, the context its finding names, what it finds in models.py and what JAX raises there.
APPLY_RUNS = {
    "grad": (
        "jax.grad(scale.apply, argnums=1)(scale_vars, x, True)",
        "jax.grad-differentiated 'scale.apply'",
        [("models.py", 11, "JAX102")],
        ["TracerArrayConversionError", "models.py", 11],
    ),
    "value_and_grad": (
        "jax.value_and_grad(scale.apply, argnums=(0, 1))(scale_vars, x, True)",
        "jax.value_and_grad-differentiated 'scale.apply'",
        [("models.py", 11, "JAX102")],
        ["TracerArrayConversionError", "models.py", 11],
    ),
    "filter_jit": (
        "eqx.filter_jit(weigh.apply)(weigh_vars, x, True)",
        "equinox.filter_jit-compiled 'weigh.apply'",
        [("models.py", 18, "JAX102")],
        ["ConcretizationTypeError", "models.py", 18],
    ),
    # `train` is static (counted from the end): the `if train:` on line 9 runs, line 11 raises.
    "negative_static_apply": (
        "jax.jit(scale.apply, static_argnums=-1)(scale_vars, x, True)",
        "jax.jit-compiled 'scale.apply'",
        [("models.py", 11, "JAX102")],
        ["TracerArrayConversionError", "models.py", 11],
    ),
    "negative_static_function": (
        "jax.jit(step, static_argnums=-1)(x, True)",
        "jax.jit-compiled 'step'",
        [("models.py", 24, "JAX102")],
        ["TracerArrayConversionError", "models.py", 24],
    ),
    # A Python bool passed to the jitted `apply` or function is a traced bool there.
    "traced_flag": (
        "jax.jit(scale.apply)(scale_vars, x, True)",
        "jax.jit-compiled 'scale.apply'",
        [("models.py", 9, "JAX101"), ("models.py", 11, "JAX102")],
        ["TracerBoolConversionError", "models.py", 9],
    ),
    "traced_scalar": (
        "jax.jit(models.step)(x, True)",
        "jax.jit-compiled 'models.step'",
        [("models.py", 22, "JAX101"), ("models.py", 24, "JAX102")],
        ["TracerBoolConversionError", "models.py", 22],
    ),
}
# Clean twins with the same models: grad of the variables only (x stays concrete), the Module applied eagerly.
APPLY_TWINS = [
    "jax.grad(scale.apply)(scale_vars, x, True)",
    "weigh.apply(weigh_vars, x, True)",
]
# With the clean models every run is clean, `train` kept static where it selects behaviour.
CLEAN_RUNS = [run for key, (run, *_) in APPLY_RUNS.items() if not key.startswith("traced_")] + [
    "jax.jit(scale.apply, static_argnums=2)(scale_vars, x, True)",
    "jax.jit(models.step, static_argnames='train')(x, True)",
]


def _main(head: str, *runs: str) -> str:
    return textwrap.dedent(head).lstrip() + "\n" + "\n".join(runs) + "\n"


def test_transformations_of_another_modules_apply_and_functions(tmp_path: Path) -> None:
    """`jax.grad`/`jax.value_and_grad` (their differentiated arguments), `eqx.filter_jit` (arrays only) and
    `jax.jit(..., static_argnums=-1)` of another module's linen `apply`, and `jax.jit` of its plain function,
    trace the method or function as the module's own transformation would: found in models.py, with the
    caller's context; the twins are silent."""
    for key, (run, context, expected, _) in APPLY_RUNS.items():
        write(tmp_path, {"models.py": MODELS, "train.py": _main(APPLY_HEAD, run)})
        assert _lint(tmp_path) == expected, key
        assert all(f"(called from {context} in train)" in m for m in _messages(tmp_path)), key
    write(tmp_path, {"train.py": _main(APPLY_HEAD, *APPLY_TWINS)})
    assert _lint(tmp_path) == []
    write(tmp_path, {"models.py": CLEAN_MODELS, "train.py": _main(APPLY_HEAD, *CLEAN_RUNS)})
    assert _lint(tmp_path) == []
    # A notebook importing the modules: every run in one cell.
    (tmp_path / "train.py").unlink()
    runs = "\n".join(run for run, *_ in APPLY_RUNS.values()) + "\n"
    write(tmp_path, {"models.py": MODELS, "explore.ipynb": notebook(APPLY_HEAD, runs)})
    assert _lint(tmp_path) == sorted({f for *_, found, _ in APPLY_RUNS.values() for f in found})
    write(tmp_path, {"models.py": CLEAN_MODELS, "explore.ipynb": notebook(APPLY_HEAD, "\n".join(CLEAN_RUNS))})
    assert _lint(tmp_path) == []


def test_transformations_of_another_modules_apply_on_jax(tmp_path: Path) -> None:
    """What JAX does with each run: the error class at the line found above; the twins run clean."""
    scenarios = {
        key: {"models.py": MODELS, "main.py": _main(APPLY_HEAD, run)} for key, (run, *_) in APPLY_RUNS.items()
    }
    scenarios["twins"] = {"models.py": MODELS, "main.py": _main(APPLY_HEAD, *APPLY_TWINS)}
    scenarios["clean"] = {"models.py": CLEAN_MODELS, "main.py": _main(APPLY_HEAD, *CLEAN_RUNS)}
    ran = _run(tmp_path, scenarios)
    for key, (*_, raised) in APPLY_RUNS.items():
        assert ran[key] == raised, key
    assert ran["twins"] is None and ran["clean"] is None, ran


# -- 2. a timer class of another module -----------------------------------------------------------------------

TIMER_CLASS = """
    import time


    class Timer:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            self.start = time.perf_counter()
            return self

        def __exit__(self, *exc):
            print(self.name, time.perf_counter() - self.start)
    """
WAITING_TIMER = TIMER_CLASS.replace("import time\n", "import time\n\n    import jax\n").replace(
    "    def __exit__(self, *exc):\n", "    def __exit__(self, *exc):\n            jax.effects_barrier()\n"
)
STEPS = """
    import jax
    import jax.numpy as jnp


    @jax.jit
    def step(x):
        return jnp.tanh(x) * x
    """
TIMED = """
    import jax.numpy as jnp

    import utils
    from steps import step
    from utils import Timer


    def bench(x):
        with Timer("step"):
            y = step(x)
        with utils.Timer("again"):
            y = step(y)
        with Timer("blocked"):
            z = step(x).block_until_ready()
        return y, z


    bench(jnp.ones(3))
    """


def test_a_timer_class_of_another_module(tmp_path: Path) -> None:
    """JAX403: `with Timer(...)` of utils.py (a class whose `__enter__`/`__exit__` read a clock, in a module naming
    no JAX library) around a jitted `step` of steps.py, in a module and in a notebook; the block that waits is
    silent, and every block when the timer waits for JAX work itself. (JAX403 raises nothing: both run.)"""
    write(tmp_path, {"utils.py": TIMER_CLASS, "steps.py": STEPS, "bench.py": TIMED})
    assert _lint(tmp_path) == [("bench.py", 9, "JAX403"), ("bench.py", 11, "JAX403")]
    assert "a timer of module utils" in _messages(tmp_path)[0]
    (tmp_path / "bench.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(TIMED)})
    assert _lint(tmp_path) == [("explore.ipynb", 10, "JAX403"), ("explore.ipynb", 12, "JAX403")]
    write(tmp_path, {"utils.py": WAITING_TIMER})
    assert _lint(tmp_path) == []
    ran = _run(
        tmp_path,
        {
            "timed": {"utils.py": TIMER_CLASS, "steps.py": STEPS, "main.py": TIMED},
            "waits": {"utils.py": WAITING_TIMER, "steps.py": STEPS, "main.py": TIMED},
        },
    )
    assert ran == {"timed": None, "waits": None}


# -- 3. a module with no JAX word that imports an analysed one -------------------------------------------------

JITTED_MODEL = """
    from functools import partial

    import jax
    import jax.numpy as jnp


    @jax.jit
    def step(x, train):
        if train:
            x = x * 2
        return jnp.sin(x)


    @partial(jax.jit, static_argnames="train")
    def static_step(x, train):
        if train:
            x = x * 2
        return jnp.sin(x)
    """
# No JAX word: the engine's prefilter alone would skip these.
PLAIN_CALLER = """
    from model import step

    step(1.0, True)
    """
PLAIN_TIMING = """
    from model import static_step
    from utils import Timer

    with Timer("step"):
        y = static_step(1.0, True)
    """


def test_a_module_with_no_jax_word_importing_an_analysed_one(tmp_path: Path) -> None:
    """`from model import step; step(1.0, True)` in a script naming no JAX library: it is analysed (it imports an
    analysed module), so `step` (jitted in model.py) gets a traced `train` (JAX101 there), found also when only
    model.py is named (its importers are linked); a script that only imports project modules gets its own
    JAX403; from a notebook too. The static twin is silent."""
    write(tmp_path, {"model.py": JITTED_MODEL, "run.py": PLAIN_CALLER})
    assert _lint(tmp_path) == [("model.py", 9, "JAX101")]
    # One that does not parse is no concern of this run (no JAX000), as when the prefilter skipped it.
    write(tmp_path, {"broken.py": "from model import step\n\n.internal.module as xm\n"})
    assert _lint(tmp_path) == [("model.py", 9, "JAX101")]
    (tmp_path / "broken.py").unlink()
    assert (
        "(called from" not in _messages(tmp_path)[0]
    )  # a literal given to a jitted function: its own context
    named = run_cli("--no-cache", "-j", "1", "--format", "json", "model.py", cwd=tmp_path)
    assert [(f["line"], f["code"]) for f in json.loads(named.stdout)] == [(9, "JAX101")]
    write(tmp_path, {"run.py": PLAIN_CALLER.replace("step", "static_step")})
    assert _lint(tmp_path) == []
    write(tmp_path, {"utils.py": TIMER_CLASS, "run.py": PLAIN_TIMING})
    assert _lint(tmp_path) == [("run.py", 4, "JAX403")]
    (tmp_path / "run.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(PLAIN_CALLER)})
    assert _lint(tmp_path) == [("model.py", 9, "JAX101")]
    write(tmp_path, {"explore.ipynb": notebook(PLAIN_CALLER.replace("step", "static_step"))})
    assert _lint(tmp_path) == []
    ran = _run(
        tmp_path,
        {
            "caller": {"model.py": JITTED_MODEL, "main.py": PLAIN_CALLER},
            "static": {"model.py": JITTED_MODEL, "main.py": PLAIN_CALLER.replace("step", "static_step")},
        },
    )
    assert ran == {"caller": ["TracerBoolConversionError", "model.py", 9], "static": None}


# -- 4. nnx.jit traces a Python scalar ------------------------------------------------------------------------

NNX_MODEL = """
    from functools import partial

    from flax import nnx


    class Model(nnx.Module):
        def __init__(self, rngs):
            self.linear = nnx.Linear(3, 3, rngs=rngs)


    def forward(model, x, train):
        if train:
            x = x * 2
        return model.linear(x)


    @nnx.jit
    def jitted(model, x, train):
        if train:
            x = x * 2
        return model.linear(x)


    @partial(nnx.jit, static_argnames="train")
    def static(model, x, train):
        if train:
            x = x * 2
        return model.linear(x)
    """
NNX_IMPORTS = """
    import jax.numpy as jnp
    from flax import nnx

    from model import Model, forward, jitted, static

    model = Model(nnx.Rngs(0))
    """
NNX_RUNS = {
    "nnx_jit": ("nnx.jit(forward)(model, jnp.ones(3), True)", 12),
    "decorated": ("jitted(model, jnp.ones(3), True)", 19),
}
NNX_TWINS = (
    'nnx.jit(forward, static_argnames="train")(model, jnp.ones(3), True)\nstatic(model, jnp.ones(3), True)\n'
)


def test_nnx_jit_traces_a_python_scalar(tmp_path: Path) -> None:
    """`nnx.jit(f)(model, x, True)` and an `@nnx.jit` function called with `True` give `f` a traced bool
    (flax 0.12.8, unlike equinox's filter_jit): JAX101 on `if train:` with the advice to make it static, in one
    module, across modules and from a notebook; `static_argnames="train"` is silent."""
    alone = (
        textwrap.dedent(NNX_MODEL).lstrip() + "\n\nimport jax.numpy as jnp\n\nmodel = Model(nnx.Rngs(0))\n"
    )
    for key, (run, line) in NNX_RUNS.items():
        write(tmp_path, {"alone.py": alone + run + "\n"})
        assert _lint(tmp_path) == [("alone.py", line, "JAX101")], key
        assert "'train' selects behaviour: make it static" in _messages(tmp_path)[0]
        (tmp_path / "alone.py").unlink()
        write(tmp_path, {"model.py": NNX_MODEL, "train.py": _main(NNX_IMPORTS, run)})
        assert _lint(tmp_path) == [("model.py", line, "JAX101")], key
        (tmp_path / "train.py").unlink()
        write(tmp_path, {"explore.ipynb": notebook(NNX_IMPORTS, run)})
        assert _lint(tmp_path) == [("model.py", line, "JAX101")], key
        (tmp_path / "explore.ipynb").unlink()
    write(tmp_path, {"alone.py": alone + NNX_TWINS})
    assert _lint(tmp_path) == []
    (tmp_path / "alone.py").unlink()
    write(tmp_path, {"train.py": _main(NNX_IMPORTS, NNX_TWINS)})
    assert _lint(tmp_path) == []
    write(tmp_path, {"explore.ipynb": notebook(NNX_IMPORTS, NNX_TWINS)})
    assert _lint(tmp_path) == []
    scenarios = {
        key: {"model.py": NNX_MODEL, "main.py": _main(NNX_IMPORTS, run)} for key, (run, _) in NNX_RUNS.items()
    }
    scenarios["twins"] = {"model.py": NNX_MODEL, "main.py": _main(NNX_IMPORTS, NNX_TWINS)}
    ran = _run(tmp_path, scenarios)
    assert ran == {
        **{key: ["TracerBoolConversionError", "model.py", line] for key, (_, line) in NNX_RUNS.items()},
        "twins": None,
    }


# -- 5. a transformation of an instance's method --------------------------------------------------------------

METHOD_MODEL = """
    import jax.numpy as jnp


    class Model:
        def __init__(self, scale):
            self.scale = scale

        def step(self, x):
            if x.sum() > 0:
                return x * self.scale
            return x

        def scaled(self, x, n):
            if n > 2:
                return x * n
            return x
    """
METHOD_IMPORTS = """
    import jax
    import jax.numpy as jnp

    from model import Model

    model = Model(2.0)
    x = jnp.ones(3)
    """
# `model.step` bound to an instance of the project's class: `x` is traced under each transformation, `self` is
# the instance (line 9 of the model: `if x.sum() > 0:`). In a function, the receiver may be a parameter
# annotated with the class.
METHOD_RUNS = {
    "jit": "jax.jit(model.step)(x)",
    "vmap": "jax.vmap(model.step)(jnp.ones((2, 3)))",
    "in_function": "def run(m: Model, v):\n    return jax.jit(m.step)(v)\n\n\nrun(model, x)",
    "built_here": "def build(v):\n    fresh = Model(3.0)\n    return jax.jit(fresh.step)(v)\n\n\nbuild(x)",
}
# `n` static by position (the bound method's argument 1 counts from `x`), and the method called eagerly.
METHOD_TWINS = "jax.jit(model.scaled, static_argnums=1)(x, 3)\nmodel.step(x)\njax.jit(model.scaled, static_argnums=(1,))(x, 1)\n"


def test_a_transformation_of_an_instances_method(tmp_path: Path) -> None:
    """`jax.jit(model.step)` / `jax.vmap(model.step)` with `model` an instance of the project's class (bound once
    to `Model(...)`, or a parameter annotated with it) traces the method bound to the instance: JAX101 on its
    `if`, in one module, across modules and from a notebook; static positions count from the bound method's
    first argument, so the twins are silent."""
    alone = textwrap.dedent(METHOD_MODEL).lstrip() + "\n\nimport jax\n\nmodel = Model(2.0)\nx = jnp.ones(3)\n"
    for key, run in METHOD_RUNS.items():
        write(tmp_path, {"alone.py": alone + run + "\n"})
        assert _lint(tmp_path) == [("alone.py", 9, "JAX101")], key
        (tmp_path / "alone.py").unlink()
        write(tmp_path, {"model.py": METHOD_MODEL, "train.py": _main(METHOD_IMPORTS, run)})
        assert _lint(tmp_path) == [("model.py", 9, "JAX101")], key
        (tmp_path / "train.py").unlink()
        if "\n" not in run:  # a notebook cell per run
            write(tmp_path, {"explore.ipynb": notebook(METHOD_IMPORTS, run)})
            assert _lint(tmp_path) == [("model.py", 9, "JAX101")], key
            (tmp_path / "explore.ipynb").unlink()
    write(tmp_path, {"alone.py": alone + METHOD_TWINS})
    assert _lint(tmp_path) == []
    (tmp_path / "alone.py").unlink()
    write(tmp_path, {"train.py": _main(METHOD_IMPORTS, METHOD_TWINS)})
    assert _lint(tmp_path) == []
    write(tmp_path, {"explore.ipynb": notebook(METHOD_IMPORTS, METHOD_TWINS)})
    assert _lint(tmp_path) == []
    scenarios = {
        key: {"model.py": METHOD_MODEL, "main.py": _main(METHOD_IMPORTS, run)}
        for key, run in METHOD_RUNS.items()
    }
    scenarios["twins"] = {"model.py": METHOD_MODEL, "main.py": _main(METHOD_IMPORTS, METHOD_TWINS)}
    ran = _run(tmp_path, scenarios)
    assert ran == {
        **{key: ["TracerBoolConversionError", "model.py", 9] for key in METHOD_RUNS},
        "twins": None,
    }


# -- 6. what another module's helper returns, in eager code ---------------------------------------------------

SPECTRA = """
    import jax.numpy as jnp
    import numpy as np


    def peak(E, mean, width):
        return jnp.exp(-0.5 * ((E - mean) / width) ** 2) / width


    def peak_numpy(E, mean, width):
        return np.exp(-0.5 * ((E - mean) / width) ** 2) / width
    """
DETECTED = """
    import jax.numpy as jnp

    from spectra import peak, peak_numpy


    def detected(E, E_min):
        spec = peak(E, 14.0, 0.3)
        spec[E < E_min] = 0.0
        return spec


    def detected_fixed(E, E_min):
        spec = peak(E, 14.0, 0.3)
        return jnp.where(E < E_min, 0.0, spec)


    def detected_numpy(E, E_min):
        spec = peak_numpy(E, 14.0, 0.3)
        spec[E < E_min] = 0.0
        return spec


    E = jnp.linspace(12.0, 16.0, 9)
    detected_fixed(E, 13.0)
    detected_numpy(E, 13.0)
    """


def test_a_helper_of_another_module_returns_a_jax_array_in_eager_code(tmp_path: Path) -> None:
    """A helper of another module whose every return is a jnp result gives a JAX array to eager code too (as a
    same-module one does): a masked write into it is found (JAX raises TypeError there); the `jnp.where` twin
    and the NumPy helper's result are silent."""
    write(tmp_path, {"spectra.py": SPECTRA, "main.py": DETECTED + "detected(E, 13.0)\n"})
    assert _lint(tmp_path) == [("main.py", 8, "JAX103")]
    write(tmp_path, {"main.py": DETECTED})
    assert _lint(tmp_path) == [("main.py", 8, "JAX103")]  # found without a caller: the helper decides
    ran = _run(tmp_path, {"bad": {"spectra.py": SPECTRA, "main.py": DETECTED + "detected(E, 13.0)\n"}})
    assert ran["bad"] == ["TypeError", "main.py", 8]
    ran = _run(tmp_path, {"twin": {"spectra.py": SPECTRA, "main.py": DETECTED}})
    assert ran["twin"] is None


# -- 7. a chain of transformations of another module's function ---------------------------------------------

FUNCTIONAL = """
    import jax.numpy as jnp


    def functional(X, m, n):
        X_im = jnp.reshape(X, (X.shape[0], m, n))
        return jnp.sum(jnp.abs(jnp.diff(X_im, axis=1)))
    """
CHAINED = """
    import jax
    import jax.numpy as jnp

    from functional import functional

    m, n = 4, 3
    X = jnp.ones((2, m * n))
    print({run})
    """
# Each run, and whether it passes m and n traced (a chain's strictest transformation decides, its static
# options merged): jit(grad(f)) traces the Python ints, grad alone or jit with them static does not.
CHAINS = {
    "jit_grad": ("jax.jit(jax.grad(functional))(X, m, n)", True),
    "jit_value_and_grad": ("jax.jit(jax.value_and_grad(functional))(X, m, n)[0]", True),
    "grad": ("jax.grad(functional)(X, m, n)", False),
    "jit_grad_static": ("jax.jit(jax.grad(functional), static_argnums=(1, 2))(X, m, n)", False),
}


def test_a_chain_of_transformations_of_another_modules_function(tmp_path: Path) -> None:
    """`jax.jit(jax.grad(f))` of another module's `f`, called with Python ints bound by tuple unpacking
    (`m, n = 4, 3`): traced there as a same-module chain is (JAX102 at the reshape; JAX raises TypeError
    there); grad alone, or the jit with them static, is silent and runs."""
    runs = {}
    for key, (run, traced) in CHAINS.items():
        runs[key] = {"functional.py": FUNCTIONAL, "main.py": CHAINED.format(run=run)}
        write(tmp_path, runs[key])
        assert _lint(tmp_path) == ([("functional.py", 5, "JAX102")] if traced else []), key
    ran = _run(tmp_path, runs)
    for key, (_, traced) in CHAINS.items():
        assert ran[key] == (["TypeError", "functional.py", 5] if traced else None), key


# -- 8. a helper of another module that hands a function to a transformation -------------------------------

RUNNER = """
    import jax


    def compiled(fn, arg):
        return jax.jit(fn)(arg)


    def fit(loss, x):
        return compiled(loss, x)


    def batched(fn, xs):
        return jax.vmap(fn)(xs)


    def differentiate(f, x):
        return jax.grad(f)(x)


    def plain(fn, arg):
        return fn(arg)


    def shapes(fn, arg):
        return jax.eval_shape(fn, arg)
    """
UPDATE = """
    import jax.numpy as jnp

    {imports}


    def update(values):
        if jnp.sum(values) > 0:
            return values * 2.0
        return values


    print({run})
    """
# Each run, and whether `update` is staged out (jit, vmap) by the helper it is handed to, through one or two
# helpers: grad alone differentiates with concrete values, and `plain` calls it eagerly.
HANDED = {
    "compiled": ("from runner import compiled", "compiled(update, jnp.ones(3))", True),
    "module_attribute": ("import runner", "runner.compiled(update, jnp.ones(3))", True),
    "two_helpers": ("from runner import fit", "fit(update, jnp.ones(3))", True),
    "keyword": ("from runner import compiled", "compiled(arg=jnp.ones(3), fn=update)", True),
    "batched": ("from runner import batched", "batched(update, jnp.ones((2, 3)))", True),
    "grad": (
        "from runner import differentiate",
        "differentiate(lambda v: update(v).sum(), jnp.ones(3))",
        False,
    ),
    "plain": ("from runner import plain", "plain(update, jnp.ones(3))", False),
    # eval_shape runs `fn` at once on what follows it: the helper's `arg` is its input, not an option.
    "at_once": ("from runner import shapes", "shapes(update, jnp.ones(3))", True),
}


def test_a_helper_of_another_module_hands_a_function_to_a_transformation(tmp_path: Path) -> None:
    """`compiled(update, x)` with `compiled` another module's `def compiled(fn, arg): return jax.jit(fn)(arg)`:
    `update` is traced there, through two helpers, by keyword, as a module attribute (JAX101 on its `if`; JAX
    raises TracerBoolConversionError there); handed to `jax.grad` alone or called eagerly, it is silent and
    runs."""
    runs = {}
    for key, (imports, run, traced) in HANDED.items():
        runs[key] = {"runner.py": RUNNER, "main.py": UPDATE.format(imports=imports, run=run)}
        write(tmp_path, runs[key])
        assert _lint(tmp_path) == ([("main.py", 7, "JAX101")] if traced else []), key
    ran = _run(tmp_path, runs)
    for key, (_, _, traced) in HANDED.items():
        assert ran[key] == (["TracerBoolConversionError", "main.py", 7] if traced else None), key


OPTIONS = """
    import jax


    def maybe_jit(fn, **options):
        return jax.jit(fn, **options)
    """
SCALED = """
    import jax.numpy as jnp

    from options import maybe_jit


    def scale(values, times):
        for _ in range(int(times)):
            values = values * 2.0
        return values


    def scale_here(values, times):
        for _ in range(int(times)):
            values = values * 2.0
        return values


    def maybe_jit_here(fn, *args, **kwargs):
        return jax.jit(fn, *args, **kwargs)


    print(maybe_jit(scale, static_argnums=(1,))(jnp.ones(3), 2))
    print(maybe_jit_here(scale_here, static_argnums=(1,))(jnp.ones(3), 2))
    """


def test_a_helper_whose_caller_gives_the_transformations_options_hands_nothing_on(tmp_path: Path) -> None:
    """`maybe_jit(scale, static_argnums=(1,))` with `def maybe_jit(fn, **options): return jax.jit(fn, **options)`
    (numpyro's own helper): the caller's options may make any parameter static, so `int(times)` in `scale` is
    not reported, in another module or in the same one; it runs."""
    files = {
        "options.py": OPTIONS,
        "main.py": SCALED.replace("    import jax.numpy", "    import jax\n    import jax.numpy"),
    }
    write(tmp_path, files)
    assert _lint(tmp_path) == []
    assert _run(tmp_path, {"static": files})["static"] is None


# -- array namespaces chosen by another module's getter ------------------------------------------------------

NAMESPACE_GETTER = """
    import jax
    import jax.numpy as jnp
    import numpy as np


    def array_namespace(x):
        return jnp if isinstance(x, jax.Array) else np
    """

NAMESPACE_USER = """
    import jax
    from helpers import array_namespace


    def clip_loop(x):
        xp = array_namespace(x)
        while xp.max(x) > 1.0:
            x = x / 2
        return x


    def whiten(obs):
        xp = array_namespace(obs)
        std = xp.std(obs, axis=0)
        std[std == 0] = 1.0
        return obs / std
    """


def test_an_array_namespace_from_another_modules_getter(tmp_path: Path) -> None:
    """`xp = array_namespace(x)` of helpers.py (`jnp if isinstance(x, jax.Array) else np`): of a traced argument,
    `xp.max(x)` is a tracer (JAX101 in the jitted loop); of a JAX array, `xp.std(obs)` is a JAX array (JAX103 on
    its in-place write); of NumPy arrays both run and nothing is found. Linted and run on real JAX."""
    jitted = "import jax\nimport jax.numpy as jnp\nfrom ops import clip_loop\n\nprint(jax.jit(clip_loop)(jnp.ones(3) * 4))\n"
    written = "import jax.numpy as jnp\nfrom ops import whiten\n\nprint(whiten(jnp.ones((3, 2))))\n"
    numpy = "import numpy as np\nfrom ops import clip_loop, whiten\n\nprint(clip_loop(np.ones(3) * 4), whiten(np.ones((3, 2))))\n"
    base = {"helpers.py": textwrap.dedent(NAMESPACE_GETTER), "ops.py": textwrap.dedent(NAMESPACE_USER)}
    write(tmp_path, {**base, "main.py": jitted})
    assert _lint(tmp_path) == [("ops.py", 7, "JAX101")]
    write(tmp_path, {"main.py": written})
    assert _lint(tmp_path) == [("ops.py", 15, "JAX103")]
    write(tmp_path, {"main.py": numpy})
    assert _lint(tmp_path) == []
    ran = _run(
        tmp_path,
        {
            "jitted": {**base, "main.py": jitted},
            "written": {**base, "main.py": written},
            "numpy": {**base, "main.py": numpy},
        },
    )
    assert ran == {
        "jitted": ["TracerBoolConversionError", "ops.py", 7],
        "written": ["TypeError", "ops.py", 15],
        "numpy": None,
    }


# -- 9. an object another module's function returns -----------------------------------------------------------

SOLVER = """
    from typing import NamedTuple

    import jax
    import jax.numpy as jnp


    class Output(NamedTuple):
        errors: jax.Array

        @property
        def converged(self):
            return not jnp.any(jnp.isnan(self.errors))

        def check(self):
            if jnp.max(self.errors) > 1.0:
                raise ValueError("diverged")
            return self.errors


    class Plain:
        def __init__(self, errors):
            self.errors = errors

        @property
        def converged(self):
            return not jnp.any(jnp.isnan(self.errors))


    def solve(x):
        return Output(jnp.cumsum(x))


    def maybe(x):
        if x is None:
            return None
        return Output(jnp.cumsum(x))


    def plain(x):
        return Plain(jnp.cumsum(x))
    """
USE = """
    import jax
    import jax.numpy as jnp

    {imports}


    {decorator}
    def run(x):
        out = {call}
        return {read}


    print(run(jnp.ones(3)))
    """
# Each run: the imports, how `run` is traced, the call and what it reads of the result, and the line of
# solver.py JAX reports (None: it runs).
RESULTS = {
    "property": ("from solver import solve", "@jax.jit", "solve(x)", "out.converged", 12),
    "method": ("from solver import solve", "@jax.vmap", "solve(x)", "out.check()", 15),
    "module_attribute": ("import solver", "@jax.jit", "solver.solve(x)", "out.converged", 12),
    "plain_class": ("from solver import plain", "@jax.jit", "plain(x)", "out.converged", 26),
    # twins: called eagerly; a function that may return something else; the class's field read
    "eager": ("from solver import solve", "", "solve(x)", "out.converged", None),
    "other_returns": ("from solver import maybe", "@jax.jit", "maybe(x)", "out.errors", None),
    "field": ("from solver import solve", "@jax.jit", "solve(x)", "out.errors", None),
}


def test_a_property_of_an_object_another_modules_function_returns(tmp_path: Path) -> None:
    """`out = solve(x)` in traced code, with `solve` another module's function whose every return builds an
    instance of its class (ott-384): `out.converged` / `out.check()` run that class's property or method on an
    instance holding tracers (JAX101 there; JAX raises TracerBoolConversionError at that line); eagerly, on a
    function that may return something else, or reading a field, silent (and it runs)."""
    runs = {}
    for key, (imports, decorator, call, read, line) in RESULTS.items():
        main = USE.format(imports=imports, decorator=decorator, call=call, read=read)
        runs[key] = {"solver.py": SOLVER, "main.py": main}
        write(tmp_path, runs[key])
        assert _lint(tmp_path) == ([("solver.py", line, "JAX101")] if line else []), key
    ran = _run(tmp_path, runs)
    for key, (_, _, _, _, line) in RESULTS.items():
        assert ran[key] == (["TracerBoolConversionError", "solver.py", line] if line else None), key
