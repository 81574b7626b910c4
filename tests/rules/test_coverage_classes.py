"""Issue 29's coverage classes beyond one module's fixture, through the `jaxlint` command: in notebook cells
and across the modules of a project, each positive with its clean twin. The fixtures
(`tests/fixtures/rules/JAX404_sums.py`, `JAX103_inplace_methods.py`, `JAX106_sort.py`, `JAX405_linen_args.py`,
`JAX501.py`, `JAX503.py`) hold the single-module cases; `test_library_semantics.py` runs the JAX facts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jaxlint

SETUP = """\
from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
"""

MODULE = """\
class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(4)(x)


def train_step(model, params, x):
    return model.apply(params, x)


model = MLP()
x = jnp.ones((2, 3))
params = model.init(jax.random.key(0), x)
"""

# (cell source, the (line, code) findings it must give): each positive followed by its twin.
CELLS = [
    (SETUP, []),
    (MODULE, []),
    (
        "@partial(jax.jit, static_argnames='n')\ndef mix(a, w, n):\n"
        "    return sum(jnp.dot(a[i], w) for i in range(n)) + a.mean()\n",
        [(3, "JAX404")],
    ),
    ("@jax.jit\ndef mix2(a, w):\n    return jax.vmap(lambda r: jnp.dot(r, w))(a).sum(0) + a.mean()\n", []),
    ("grid = jnp.zeros(3)\ngrid.fill(1.0)\n", [(2, "JAX103")]),
    ("grid = jnp.full_like(grid, 1.0)\n", []),
    ("scores = jnp.array([3.0, 1.0])\nscores.sort()\n", [(2, "JAX106")]),
    ("scores = scores.sort()\n", []),
    ("jax.jit(train_step)(model, params, x)\n", [(1, "JAX405")]),
    ("jax.jit(train_step, static_argnums=0)(model, params, x)\n", []),
    ("m = jnp.ones(3).mean(dtype=jnp.float64)\n", [(1, "JAX501")]),
    ("m = jnp.ones(3).mean(dtype=jnp.float32)\n", []),
    ("powers = jnp.arange(100) ** 10\n", [(1, "JAX503")]),
    ("powers = jnp.arange(100.0) ** 10\n", []),
]


def run_cli(*args: str, cwd: Path) -> list[tuple[str, int, int | None, str]]:
    env = {**os.environ, "PYTHONPATH": str(Path(jaxlint.__file__).resolve().parent.parent)}
    result = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--format", "json", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    rows = json.loads(result.stdout)
    return sorted((Path(r["path"]).name, r["line"], r.get("cell"), r["code"]) for r in rows)


def test_each_class_in_notebook_cells(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
        for source, _ in CELLS
    ]
    meta = {"kernelspec": {"language": "python", "name": "python3"}}
    notebook = {"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "classes.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    expected = sorted(
        ("classes.ipynb", line, number, code)
        for number, (_, found) in enumerate(CELLS, 1)
        for line, code in found
    )
    assert run_cli("classes.ipynb", cwd=tmp_path) == expected


MODELS = """
import flax.linen as nn


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(4)(x)
"""

HELPERS = """
import jax.numpy as jnp


def mix(a, w, n):
    return sum(jnp.dot(a[i], w) for i in range(n)) + a.mean()


def ranked(v):
    v.sort()
    return v


def filled(v):
    v.fill(0.0)
    return v
"""

TRAIN = """
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from pkg import helpers
from pkg.models import MLP


def train_step(model, params, x):
    return model.apply(params, x)


{jit}def step(a, w):
    return helpers.mix(a, w, 4)


model = MLP()
x = jnp.ones((2, 3))
params = model.init(jax.random.key(0), x)
{calls}
"""

POSITIVE_CALLS = """
jax.jit(train_step)(model, params, x)
step(jnp.ones((4, 3)), jnp.ones(3))
helpers.ranked(jnp.array([3.0, 1.0]))
helpers.filled(jnp.zeros(3))
"""

# The same calls, each made clean: the Module static, `step` not jitted (Python's sum runs eagerly), NumPy arrays for in-place methods.
TWIN_CALLS = """
jax.jit(train_step, static_argnums=0)(model, params, x)
step(jnp.ones((4, 3)), jnp.ones(3))
helpers.ranked(np.array([3.0, 1.0]))
helpers.filled(np.zeros(3))
"""


def _project(root: Path, calls: str, jit: str) -> Path:
    files = {
        ".git/HEAD": "",
        "pkg/__init__.py": "",
        "pkg/models.py": MODELS,
        "pkg/helpers.py": HELPERS,
        "train.py": TRAIN.replace("{calls}", calls).replace("{jit}", jit),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def test_each_class_across_modules(tmp_path: Path) -> None:
    root = _project(tmp_path, POSITIVE_CALLS, "@jax.jit\n")
    assert run_cli(".", cwd=root) == [
        ("helpers.py", 5, None, "JAX404"),  # traced: `step` is jitted in train.py
        ("helpers.py", 9, None, "JAX106"),  # a JAX array from train.py
        ("helpers.py", 14, None, "JAX103"),
        ("train.py", 24, None, "JAX405"),  # a Module class of pkg/models.py
    ]


def test_twins_across_modules_are_clean(tmp_path: Path) -> None:
    assert run_cli(".", cwd=_project(tmp_path, TWIN_CALLS, "")) == []
