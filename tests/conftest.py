import json
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
# Every rule fixture and example: the real code the equivalence tests of the speed shortcuts run over.
LINTED_SOURCES = sorted((FIXTURES / "rules").glob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))

# A verdict's device, checked for shape only (tests run on any backend): `jax 0.10.2, cpu`,
# `jax 0.11.2, gpu: NVIDIA H200`. The header may add what this JAX lacks.
DEVICE = re.compile(r"jax \d+\.\d+[\w.+-]*, \w+(: [^;()]+)?")
VERIFY_HEADER = re.compile(rf"verify: {DEVICE.pattern}( \(this JAX lacks: [^()]+\))?")


def notebook(*cells: str) -> str:
    """A notebook's JSON with these code cells (each dedented), for tests that lint `.ipynb` files."""
    code = [
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": textwrap.dedent(c),
        }
        for c in cells
    ]
    return json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def exact_recompiles() -> bool:
    """Whether this JAX has the per-call jit hook (`pjit._trace_for_jit`, JAX 0.9 on) that recompile
    signatures and retrace reasons, `--run`'s call recording and the verify child's live calls need; before
    it, recompiles are counted per function and verify traces with made-up inputs only. Imports jax: call it
    inside a test."""
    try:
        from jaxlint.runtime.recompiles.jax_support import exact_signatures
    except ImportError:  # no jax
        return False
    return exact_signatures()


@pytest.fixture
def needs_jit_hook():
    if not exact_recompiles():
        pytest.skip(
            "needs JAX's per-call jit hook (JAX 0.9 on): this JAX lacks live calls and call recording"
        )


@pytest.fixture
def jaxlint_cmd():
    """The real command, run by this interpreter."""
    return [sys.executable, "-m", "jaxlint"]


@pytest.fixture
def clean_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


# jaxlint's own dependencies, planted beside the standard library's names (`planted_modules`).
_DEPENDENCIES = (
    "libcst",
    "pygls",
    "lsprotocol",
    "cattrs",
    "attrs",
    "attr",
    "typing_extensions",
    "yaml",
    "tomli",
    "flake8",
    "pycodestyle",
    "pyflakes",
    "mccabe",
)


class PlantedModules:
    """A module of every standard-library name (and of jaxlint's dependencies) in a folder, each leaving
    `NAME.py.RAN` beside itself when imported: a process of jaxlint's that runs one imported the project's
    module where it meant its own."""

    @staticmethod
    def plant(folder: Path) -> None:
        for name in (*sorted(sys.stdlib_module_names), *_DEPENDENCIES):
            (folder / f"{name}.py").write_text("open(__file__ + '.RAN', 'w').close()\n")

    @staticmethod
    def ran(folder: Path) -> list[str]:
        return sorted(path.name for path in folder.glob("*.RAN"))


@pytest.fixture
def planted_modules() -> PlantedModules:
    return PlantedModules()
