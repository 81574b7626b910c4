"""Project mode: facts cross module boundaries, through the `jaxlint` command and `jaxlint.lint_paths`.

Issue 13's "done when": `train.py` passes `False` to a jitted `step` that hands it to `model.dropout`, whose
`if not deterministic:` raises under jit: JAX101 in `model.py`. The same with `deterministic` static, or under
equinox's `filter_jit` (which keeps Python bools static), gets nothing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jaxlint
from tests.conftest import notebook

MODEL = """
import jax
import jax.numpy as jnp


def dropout(x, rate, deterministic, key):
    if not deterministic:
        keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
        x = jnp.where(keep, x / (1.0 - rate), 0.0)
    return x
"""

TRAIN = """
import jax
import jax.numpy as jnp

import model


@jax.jit
def step(x, deterministic, key):
    return model.dropout(x, 0.1, deterministic, key)


step(jnp.ones(3), False, jax.random.key(0))
"""

TRAIN_STATIC = """
from functools import partial

import jax
import jax.numpy as jnp

from model import dropout


@partial(jax.jit, static_argnames="deterministic")
def step(x, deterministic, key):
    return dropout(x, 0.1, deterministic, key)


step(jnp.ones(3), False, jax.random.key(0))
"""

# Equinox style: a module's layer helper, called from a filter_jit-ed step (bools static) or a jax.jit one.
EQX_MODEL = """
import equinox as eqx
import jax
import jax.numpy as jnp


class MLP(eqx.Module):
    weight: jax.Array

    def __call__(self, x):
        return self.weight @ x


def apply_dropout(x, *, inference, key):
    if inference:
        return x
    return jnp.where(jax.random.bernoulli(key, 0.9, x.shape), x / 0.9, 0.0)
"""

EQX_TRAIN = """
import equinox as eqx
import jax
import jax.numpy as jnp

from model import MLP, apply_dropout


@{jit}
def step(model, x, inference, key):
    return apply_dropout(model(x), inference=inference, key=key)


step(MLP(jnp.eye(3)), jnp.ones(3), False, jax.random.key(0))
"""

# Flax style: a package `net` whose layers module is imported by the training script.
FLAX_LAYERS = """
import flax.linen as nn
import jax
import jax.numpy as jnp


def maybe_dropout(x, rng, train):
    if train:
        x = jnp.where(jax.random.bernoulli(rng, 0.9, x.shape), x / 0.9, 0.0)
    return x


class Dense(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        return nn.Dense(self.features)(x)
"""

FLAX_TRAIN = """
import jax
import jax.numpy as jnp

from net import layers

model = layers.Dense(3)


def loss_fn(params, x, rng, train):
    y = model.apply(params, layers.maybe_dropout(x, rng, train))
    return jnp.mean(y**2)


train_step = jax.jit(jax.grad(loss_fn){static})
params = model.init(jax.random.key(0), jnp.ones(3))
train_step(params, jnp.ones(3), jax.random.key(1), True)
"""


@pytest.fixture(autouse=True)
def each_file_alone_finds_what_the_folder_finds(tmp_path: Path):
    """After every test here, whatever project it left: each source file named alone (`lint_paths([file])`,
    the project narrowed to the modules its imports link to it) gets exactly the findings the whole folder
    gives it (issue 28: same inputs, same findings, whatever names the file)."""
    yield
    sources = sorted(
        p for p in tmp_path.rglob("*") if p.suffix in (".py", ".ipynb") and ".jaxlint_cache" not in p.parts
    )
    if not sources:
        return
    whole = jaxlint.lint_paths([str(tmp_path)])
    for source in sources:
        expected = [f for f in whole if Path(f.path).resolve() == source.resolve()]
        alone = jaxlint.lint_paths([str(source)])
        assert [dataclasses.replace(f, path=str(source)) for f in expected] == alone, source


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def codes(findings) -> list[tuple[str, int, str]]:
    return sorted((Path(f.path).name, f.line, f.code) for f in findings)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(jaxlint.__file__).resolve().parent.parent)}
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_flags_the_helper_in_the_other_module(tmp_path: Path) -> None:
    write(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    result = run_cli("--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "JAX" in line]
    assert len(lines) == 1, result.stdout
    assert lines[0].startswith("model.py:6:12: JAX101") or lines[0].startswith("./model.py:6:12: JAX101")
    assert "called from jax.jit-compiled 'step' in train" in lines[0]


def test_lint_paths_flags_the_helper_in_the_other_module(tmp_path: Path) -> None:
    write(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("model.py", 6, "JAX101")]


def test_one_text_alone_knows_nothing_of_its_callers(tmp_path: Path) -> None:
    write(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    assert jaxlint.lint_source((tmp_path / "model.py").read_text(), "model.py") == []


# Issue 28 item 1: a helper module whose findings need its caller's module (JAX101: a Python bool reaches
# `if not deterministic` from a jitted step; JAX201: `print` of a traced value, fixable), in a package.
PKG_MODEL = (
    MODEL
    + """

def show(x):
    print(x)
    return x
"""
)
PKG_TRAIN = """
import jax
import jax.numpy as jnp

from pkg import model


@jax.jit
def step(x, deterministic, key):
    model.show(x)
    return model.dropout(x, 0.1, deterministic, key)


step(jnp.ones(3), False, jax.random.key(0))
"""
PKG_EXPECTED = [("pkg/model.py", 6, "JAX101"), ("pkg/model.py", 13, "JAX201")]


def _pkg(root: Path) -> Path:
    write(
        root, {".git/HEAD": "", "pkg/__init__.py": "", "pkg/model.py": PKG_MODEL, "pkg/train.py": PKG_TRAIN}
    )
    return root


def _json_rows(result: subprocess.CompletedProcess) -> list[tuple[str, int, str]]:
    import json

    assert result.returncode in (0, 1), result.stdout + result.stderr
    return sorted((row["path"], row["line"], row["code"]) for row in json.loads(result.stdout))


def test_every_face_gives_a_file_the_facts_of_its_whole_project(tmp_path: Path) -> None:
    """The folder, the file alone (what pre-commit passes when only it changed), the file alone from the
    findings cache, lint_paths on the file, and flake8 on the file: the same model.py findings."""
    root = _pkg(tmp_path)
    assert _json_rows(run_cli("--no-cache", "--format", "json", ".", cwd=root)) == PKG_EXPECTED
    alone = run_cli("--no-cache", "--format", "json", "pkg/model.py", cwd=root)
    assert _json_rows(alone) == PKG_EXPECTED
    assert _json_rows(run_cli("--format", "json", "pkg/model.py", cwd=root)) == PKG_EXPECTED  # cold cache
    assert _json_rows(run_cli("--format", "json", "pkg/model.py", cwd=root)) == PKG_EXPECTED  # warm cache
    assert _json_rows(run_cli("--format", "json", "pkg/train.py", cwd=root)) == []  # only the named file
    # An editor's buffer on stdin, named as the file: the same facts.
    stdin = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxlint",
            "--no-cache",
            "--format",
            "json",
            "--stdin-filename",
            "pkg/model.py",
            "-",
        ],
        input=(root / "pkg" / "model.py").read_text(),
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(Path(jaxlint.__file__).resolve().parent.parent)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert _json_rows(stdin) == PKG_EXPECTED
    found = jaxlint.lint_paths([str(root / "pkg" / "model.py")])
    assert [(line, code) for _, line, code in codes(found)] == [(6, "JAX101"), (13, "JAX201")]
    assert {f.path for f in found} == {str(root / "pkg" / "model.py")}
    cached = jaxlint.lint_paths([str(root / "pkg" / "model.py")], cache_dir=str(root / "api-cache"))
    assert cached == found
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "JAX", "pkg/model.py"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(Path(jaxlint.__file__).resolve().parent.parent)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert flake8.returncode == 1, flake8.stdout + flake8.stderr
    assert [line.split(" ")[0:2] for line in flake8.stdout.splitlines()] == [
        ["pkg/model.py:6:12:", "JAX101"],
        ["pkg/model.py:13:5:", "JAX201"],
    ]


def test_fix_and_diff_on_one_file_use_its_project(tmp_path: Path) -> None:
    """--diff and --fix on model.py alone fix what needs train.py (JAX201), and --fix reports every finding
    that remains (JAX101), as `jaxlint pkg/model.py` reports it afterwards."""
    root = _pkg(tmp_path)
    diff = run_cli("--no-cache", "--diff", "pkg/model.py", cwd=root)
    assert diff.returncode == 1 and '+    jax.debug.print("{}", x)' in diff.stdout, diff.stdout + diff.stderr
    fixed = run_cli("--no-cache", "--fix", "--format", "json", "pkg/model.py", cwd=root)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "Fixed 1 finding in 1 file." in fixed.stderr
    assert 'jax.debug.print("{}", x)' in (root / "pkg" / "model.py").read_text()
    assert _json_rows(fixed) == [("pkg/model.py", 6, "JAX101")]
    assert _json_rows(run_cli("--no-cache", "--format", "json", "pkg/model.py", cwd=root)) == _json_rows(
        fixed
    )


def test_static_parameter_gets_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"model.py": MODEL, "train.py": TRAIN_STATIC})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []
    result = run_cli("--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_equinox_style(tmp_path: Path) -> None:
    write(tmp_path, {"model.py": EQX_MODEL, "train.py": EQX_TRAIN.format(jit="jax.jit")})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("model.py", 14, "JAX101")]
    # filter_jit keeps the Python bool static (and the model's non-array fields): nothing to flag.
    write(tmp_path, {"train.py": EQX_TRAIN.format(jit="eqx.filter_jit")})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []


def test_flax_style_package(tmp_path: Path) -> None:
    files = {"net/__init__.py": "", "net/layers.py": FLAX_LAYERS, "train.py": FLAX_TRAIN.format(static="")}
    write(tmp_path, files)
    # grad differentiates params only; under the outer jit every argument is traced, `train` included.
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("layers.py", 7, "JAX101")]
    write(tmp_path, {"train.py": FLAX_TRAIN.format(static=", static_argnums=3")})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []


def test_cache_follows_the_other_module(tmp_path: Path) -> None:
    """The facts a file was linted with are in its cache key: editing train.py re-lints model.py."""
    write(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    first = run_cli(".", cwd=tmp_path)
    assert "model.py:6:12: JAX101" in first.stdout, first.stdout + first.stderr
    again = run_cli(".", cwd=tmp_path)  # from the cache, summaries included
    assert again.stdout == first.stdout
    write(tmp_path, {"train.py": TRAIN_STATIC})
    edited = run_cli(".", cwd=tmp_path)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    write(tmp_path, {"train.py": TRAIN})
    back = run_cli(".", cwd=tmp_path)
    assert back.stdout == first.stdout


def test_worker_pool_carries_summaries(tmp_path: Path) -> None:
    filler = {f"util{i}.py": "import jax\n\nx = jax.numpy.ones(3)\n" for i in range(10)}
    write(tmp_path, {"model.py": MODEL, "train.py": TRAIN, **filler})
    assert codes(jaxlint.lint_paths([str(tmp_path)], jobs=2)) == [("model.py", 6, "JAX101")]


def test_helpers_chain_across_three_modules(tmp_path: Path) -> None:
    files = {
        "ops.py": """
            import jax.numpy as jnp


            def gate(x, on):
                if on:
                    return x
                return jnp.zeros_like(x)
            """,
        "model.py": """
            import jax

            import ops


            def block(x, on):
                return ops.gate(x * 2, on)
            """,
        "train.py": TRAIN.replace(
            "model.dropout(x, 0.1, deterministic, key)", "model.block(x, deterministic)"
        ),
    }
    write(tmp_path, files)
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("ops.py", 5, "JAX101")]


def test_relative_imports_inside_a_package(tmp_path: Path) -> None:
    """`from .model import dropout` and `from . import model` inside package `pkg` name `pkg.model`."""
    relative_from = TRAIN_STATIC.replace("from model import dropout", "from .model import dropout").replace(
        ', static_argnames="deterministic"', ""
    )
    relative_module = TRAIN.replace("import model\n", "from . import model\n")
    for train in (relative_from, relative_module):
        write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": MODEL, "pkg/train.py": train})
        result = run_cli("--no-cache", ".", cwd=tmp_path)
        assert result.returncode == 1, result.stdout + result.stderr
        lines = [line for line in result.stdout.splitlines() if "JAX" in line]
        assert len(lines) == 1 and "model.py:6:12: JAX101" in lines[0], result.stdout
        assert "called from jax.jit-compiled 'step' in pkg.train" in lines[0]
    # Without the package's `__init__.py` the dots lead nowhere: nothing crosses.
    (tmp_path / "pkg" / "__init__.py").unlink()
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []


def test_tracer_check_guards_the_helper(tmp_path: Path) -> None:
    """equinox's `error_if` reads `pred` only when `not isinstance(pred, jax.core.Tracer)`: never under jit."""
    helper = """
        import jax


        def check(x, pred):
            if {test}:
                if pred:
                    raise ValueError("bad")
            return x
        """
    train = """
        import jax

        from .helpers import check


        @jax.jit
        def step(x):
            return check(x, x > 0)
        """
    files = {"pkg/__init__.py": "", "pkg/helpers.py": helper, "pkg/train.py": train}
    write(tmp_path, {**files, "pkg/helpers.py": helper.format(test="not isinstance(pred, jax.core.Tracer)")})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []
    write(tmp_path, {"pkg/helpers.py": helper.format(test="isinstance(pred, jax.core.Tracer)")})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("helpers.py", 6, "JAX101")]


# Issue 13's second "done when": a key consumed by `model.init` in train.py, with the flax Module class defined
# in model.py, and then passed to `step`, is reused.
LINEN_MODEL = """
import flax.linen as nn


class MLP(nn.Module):
    features: int = 4

    @nn.compact
    def __call__(self, x):
        return nn.Dense(self.features)(x)
"""

INIT_TRAIN = """
import jax
import jax.numpy as jnp

{imports}


@jax.jit
def step(params, key, x):
    return {cls}().apply(params, x + jax.random.normal(key, x.shape))


def main():
    key = jax.random.key(0)
    x = jnp.ones(3)
    net = {cls}()
    params = net.init(key, x)
    return step(params, key, x)
"""


def test_module_init_consumes_the_key_across_modules(tmp_path: Path) -> None:
    for imports, cls in (("from model import MLP", "MLP"), ("import model", "model.MLP")):
        write(tmp_path, {"model.py": LINEN_MODEL, "train.py": INIT_TRAIN.format(imports=imports, cls=cls)})
        findings = jaxlint.lint_paths([str(tmp_path)])
        assert codes(findings) == [("train.py", 17, "JAX301")], imports
        assert "by 'net.init', again by 'step'" in findings[0].message
    result = run_cli("--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1 and "train.py:17:" in result.stdout, result.stdout + result.stderr
    # One text alone does not know what `model.MLP` is: silent. The file named alone is linted with its
    # project's facts (issue 28): the same finding.
    assert jaxlint.lint_source((tmp_path / "train.py").read_text(), "train.py") == []
    assert codes(jaxlint.lint_paths([str(tmp_path / "train.py")])) == [("train.py", 17, "JAX301")]


OPTIONAL_KEY_MODEL = """
import jax
import jax.numpy as jnp


def attn(q, dropout_rng, pdrop):
    if pdrop > 0.0:
        q = q * jax.random.bernoulli(dropout_rng, 1.0 - pdrop, q.shape)
    return jnp.tanh(q)
"""
OPTIONAL_KEY_CALLER = """
import jax
import jax.numpy as jnp

from model import attn

KEY = jax.random.key(0)


def run(q):
    return attn(q, dropout_rng={given}, pdrop={rate})


@jax.jit
def step(q):
    return run(q).sum()


x = jnp.ones(3)
step(x)
step(x)
"""


def test_a_none_key_passed_to_another_modules_function_is_no_key(tmp_path: Path) -> None:
    """`attn(q, dropout_rng=None)` of another module, called on every call of a jitted function: None is no key
    (EasyLM's blockwise attention was flagged "key 'None' reused"); a module constant key is one, reused."""
    write(
        tmp_path,
        {"model.py": OPTIONAL_KEY_MODEL, "train.py": OPTIONAL_KEY_CALLER.format(given="None", rate="0.0")},
    )
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []
    write(tmp_path, {"train.py": OPTIONAL_KEY_CALLER.format(given="KEY", rate="0.5")})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("train.py", 20, "JAX301")]  # the second step(x)


STATIC_CALLEE = """
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames={static})
def fill(n, shape, key):
    init = jnp.zeros(shape)
    return jax.random.permutation(key, init.at[..., :n].set(1.0), axis=-1, independent=True)
"""
STATIC_COUNTS = """
from dataclasses import dataclass

import jax


@jax.tree_util.register_static
@dataclass(frozen=True)
class Counts:
    values: tuple
"""
STATIC_CALLER = """
import jax

from counts import Counts
from fock import fill


@jax.jit
def outer(counts, key):
    keys = jax.random.split(key, 2)
    return [fill(n, (3, 4), keys[i]) for i, n in enumerate(counts.values)]


outer(Counts((1, 2)), jax.random.key(0))
"""


def test_a_jitted_function_called_from_another_modules_traced_code_keeps_its_static_parameters(
    tmp_path: Path,
) -> None:
    """`fill(n, ...)` jitted with `n` static, called from another module's jitted code with a value the linter
    takes for traced (a field of a parameter whose class is static to JAX): `n` is a Python int in `fill`
    whatever the caller holds (netket's `_random_states_with_constraint_fock` was flagged JAX102); with `n` not
    static, its own jit traces it and the slice bound is found. Both run on JAX as said."""
    for static, expected in (('("n", "shape")', []), ('("shape",)', [("fock.py", 10, "JAX102")])):
        files = {
            "fock.py": STATIC_CALLEE.format(static=static),
            "counts.py": STATIC_COUNTS,
            "main.py": STATIC_CALLER,
        }
        write(tmp_path, files)
        assert codes(jaxlint.lint_paths([str(tmp_path)])) == expected, static
        run = subprocess.run(
            [sys.executable, "main.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
        )
        assert (run.returncode == 0) == (not expected), run.stderr[-2000:]
        assert not expected or "\nIndexError: " in run.stderr, run.stderr[-2000:]  # the class JAX102 names


def test_module_init_through_a_package_and_a_project_base_class(tmp_path: Path) -> None:
    """`from .model import MLP` inside a package; MLP derives from the package's own linen base class, and
    the package's `__init__.py` re-exports it."""
    base = LINEN_MODEL.replace("class MLP", "class Base")
    # (A module that names no JAX library is not linted, so it says nothing of its classes.)
    model = "import flax.linen as nn\n\nfrom .base import Base\n\n\nclass MLP(Base):\n    act: str = 'relu'\n"
    # The package's `__init__.py` re-exports MLP (one that names no JAX library: `test_re_export_only_...`).
    init = "import jax\n\nfrom .model import MLP\n"
    files = {"pkg/__init__.py": init, "pkg/base.py": base, "pkg/model.py": model}
    for imports in ("from .model import MLP", "from . import model as m", "from pkg import MLP"):
        cls = "m.MLP" if " as m" in imports else "MLP"
        write(tmp_path, {**files, "pkg/train.py": INIT_TRAIN.format(imports=imports, cls=cls)})
        assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("train.py", 17, "JAX301")], imports


def test_module_init_of_classes_that_are_not_linen_modules(tmp_path: Path) -> None:
    """An imported class whose `init` is its own (an equinox Module, a plain class) consumes nothing, and one
    module initialised twice from one key is a deliberate copy (target networks)."""
    eqx_model = """
        import equinox as eqx
        import jax


        class MLP(eqx.Module):
            weight: jax.Array

            def init(self, key, x):
                return self

            def apply(self, params, x):
                return self.weight @ x
        """
    write(
        tmp_path,
        {"model.py": eqx_model, "train.py": INIT_TRAIN.format(imports="from model import MLP", cls="MLP")},
    )
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []
    plain = "class MLP:\n    def init(self, key, x):\n        return {}\n"
    write(tmp_path, {"model.py": plain})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []
    copy = INIT_TRAIN.format(imports="from model import MLP", cls="MLP").replace(
        "return step(params, key, x)", "target = net.init(key, x)\n    return params, target"
    )
    write(tmp_path, {"model.py": LINEN_MODEL, "train.py": copy})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []


def test_cache_follows_the_class_kind(tmp_path: Path) -> None:
    """The kinds of imported classes are in the cache key: MLP ceasing to be a flax Module re-lints train.py."""
    write(
        tmp_path,
        {"model.py": LINEN_MODEL, "train.py": INIT_TRAIN.format(imports="from model import MLP", cls="MLP")},
    )
    first = run_cli(".", cwd=tmp_path)
    assert "train.py:17:" in first.stdout, first.stdout + first.stderr
    assert run_cli(".", cwd=tmp_path).stdout == first.stdout
    write(tmp_path, {"model.py": "class MLP:\n    def init(self, key, x):\n        return {}\n"})
    edited = run_cli(".", cwd=tmp_path)
    assert edited.returncode == 0, edited.stdout + edited.stderr


APPLY_MODEL = """
import flax.linen as nn


class MLP(nn.Module):
    features: int = 4

    @nn.compact
    def __call__(self, x, train):
        if self.features > 2:
            x = x + 1.0
        if train:
            x = x * 0.5
        return nn.Dense(self.features)(x)

    def score(self, x):
        if x.sum() > 0:
            return x
        return -x
"""

APPLY_TRAIN = """
import jax
import jax.numpy as jnp

{imports}

net = {cls}()


@jax.jit
def step(params, x, train):
    return net.apply(params, x, {train}) + net.apply(params, x, method="score")


step({{}}, jnp.ones(3), False)
"""


def test_module_apply_runs_the_method_of_the_other_module(tmp_path: Path) -> None:
    """`net.apply(params, x, train)` in a jitted step runs `MLP.__call__(x, train)` under jit: the `train` that
    crossed the jit boundary as `False` is traced there; the `x` passed to `method="score"` too."""
    for imports, cls in (("from model import MLP", "MLP"), ("import model", "model.MLP")):
        train = APPLY_TRAIN.format(imports=imports, cls=cls, train="train")
        write(tmp_path, {"model.py": APPLY_MODEL, "train.py": train})
        findings = jaxlint.lint_paths([str(tmp_path)])
        assert codes(findings) == [("model.py", 11, "JAX101"), ("model.py", 16, "JAX101")], imports
        assert "'__call__' (called from jax.jit-compiled 'step' in train)" in findings[0].message
    assert jaxlint.lint_source(APPLY_MODEL, "model.py") == []  # one file alone: nothing known of callers


def test_module_apply_negatives(tmp_path: Path) -> None:
    """A literal passed inside the jitted body stays a Python bool; an imported class that is not a flax
    Module (equinox style, with its own `apply`) runs nothing known."""
    train = APPLY_TRAIN.format(imports="from model import MLP", cls="MLP", train="True")
    write(tmp_path, {"model.py": APPLY_MODEL, "train.py": train})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("model.py", 16, "JAX101")]  # `score`'s x only
    eqx_model = APPLY_MODEL.replace("import flax.linen as nn", "import equinox as eqx").replace(
        "MLP(nn.Module)", "MLP(eqx.Module)"
    )
    eqx_model = eqx_model.replace("    @nn.compact\n", "").replace("nn.Dense(self.features)(x)", "x")
    eqx_model += (
        "\n    def apply(self, params, x, train=False, method=None):\n        return self(x, train)\n"
    )
    train = APPLY_TRAIN.format(imports="from model import MLP", cls="MLP", train="train")
    write(tmp_path, {"model.py": eqx_model, "train.py": train})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []


def test_methods_of_a_class_of_the_other_module(tmp_path: Path) -> None:
    """`norm(x)` and `norm.clip(x, 3.0)` on an instance of another module's class, from a jitted step: the
    methods are traced with `x`; the literal `3.0` passed inside the jitted body stays a Python float."""
    model = """
        import jax.numpy as jnp


        class Normalizer:
            def __init__(self, eps):
                self.eps = eps

            def __call__(self, x):
                if x.std() > self.eps:
                    return x / x.std()
                return x

            def clip(self, x, limit):
                if limit > 0:
                    x = jnp.clip(x, -limit, limit)
                return x
        """
    train = """
        import jax

        {imports}

        norm = {cls}(1e-6)


        @jax.jit
        def step(x):
            return norm(x) + norm.clip(x, 3.0)
        """
    for imports, cls in (
        ("from model import Normalizer", "Normalizer"),
        ("import model", "model.Normalizer"),
    ):
        write(tmp_path, {"model.py": model, "train.py": train.format(imports=imports, cls=cls)})
        findings = jaxlint.lint_paths([str(tmp_path)])
        assert codes(findings) == [("model.py", 9, "JAX101")], imports
        assert "'__call__' (called from jax.jit-compiled 'step' in train)" in findings[0].message
    # An object the caller did not build (a parameter) runs nothing known.
    unknown = train.format(imports="import model", cls="model.Normalizer").replace(
        "def step(x)", "def step(norm, x)"
    )
    write(tmp_path, {"train.py": unknown})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []


def test_notebooks_take_part_in_the_project(tmp_path: Path) -> None:
    """A notebook importing project modules sends them its calls (JAX101 in model.py) and receives the kinds
    of their classes (JAX301 in the notebook)."""
    first = """
        import jax
        import jax.numpy as jnp

        import model
        from classes import MLP
        """
    second = """
        @jax.jit
        def step(params, x, deterministic, key):
            y = MLP().apply(params, x + jax.random.normal(key, x.shape))
            return model.dropout(y, 0.1, deterministic, key)
        """
    third = """
        key = jax.random.key(0)
        params = MLP().init(key, jnp.ones(3))
        step(params, jnp.ones(3), False, key)
        """
    files = {"model.py": MODEL, "classes.py": LINEN_MODEL, "explore.ipynb": notebook(first, second, third)}
    write(tmp_path, files)
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [
        ("explore.ipynb", 4, "JAX301"),
        ("explore.ipynb", 5, "JAX301"),
        ("model.py", 6, "JAX101"),
    ]
    assert [f.cell for f in findings if f.code == "JAX301"] == [2, 3]
    # `step` draws noise from `key`, then hands it to `model.dropout`, which draws from it again.
    assert "by jax.random.normal, again by 'model.dropout'" in findings[0].message
    assert "called from jax.jit-compiled 'step' in explore.ipynb" in findings[2].message


def test_haiku_transformation_of_the_other_module(tmp_path: Path) -> None:
    """`net = hk.transform(forward)` in model.py: train.py's `net.apply(params, rng, x, training)` under jit
    runs `forward(x, training)` (JAX101 there when `False` crossed the jit boundary), and `net.init(key, x)`
    consumes `key` (JAX301 in train.py)."""
    model = """
        import haiku as hk
        import jax


        def forward(x, is_training):
            if is_training:
                x = x * 2
            return hk.Linear(3)(x)


        net = hk.transform(forward)
        """
    train = """
        import jax
        import jax.numpy as jnp

        from model import net


        @jax.jit
        def step(params, rng, x, training):
            return net.apply(params, rng, x, {training})


        def main():
            key = jax.random.key(0)
            params = net.init(key, jnp.ones(3), True)
            noise = jax.random.normal(key, (3,))
            return step(params, jax.random.key(1), noise, False)
        """
    write(tmp_path, {"model.py": model, "train.py": train.format(training="training")})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [("model.py", 6, "JAX101"), ("train.py", 15, "JAX301")]
    assert "by 'net.init'" in findings[1].message
    # A literal passed inside the jitted body stays a Python bool; one file alone knows nothing of `net`.
    write(tmp_path, {"train.py": train.format(training="True")})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("train.py", 15, "JAX301")]
    assert jaxlint.lint_source((tmp_path / "train.py").read_text(), "train.py") == []


# -- what other modules' functions do: keys consumed, arrays returned, jitted (issue 13, items 4 and 7) --------

KEY_HELPERS = """
import jax
import jax.numpy as jnp


def noise(key, shape):
    return jax.random.normal(key, shape)


def relay(key, shape):  # consumes its key through its own callee
    return noise(key, shape)


def shape_of(key):  # only reads the key
    return key.shape


def passes_on(key):  # hands the key to a function that does not consume it
    return shape_of(key)


def derive(key):  # fold_in makes a new key and consumes nothing
    return jax.random.fold_in(key, 1)


def first_of(keys):  # consumes the first of the keys it gets only
    return jax.random.normal(keys[0], (2,))
"""

KEY_CHAIN = """
import jax

from helpers import relay


def twice(key):
    return relay(key, (1,))
"""

KEY_TRAIN = """
import jax
import somelib

import chain
import helpers
from helpers import derive, first_of, noise, passes_on, relay, shape_of


def direct():
    key = jax.random.key(0)
    a = noise(key, (3,))
    return a, jax.random.uniform(key, (3,))


def through_a_relay():
    key = jax.random.key(0)
    a = helpers.relay(key, (3,))
    return a, relay(key, (3,))


def through_two_modules():
    key = jax.random.key(0)
    a = chain.twice(key)
    return a, jax.random.normal(key, (2,))


def negatives():
    key = jax.random.key(0)
    passes_on(key)
    shape_of(key)
    derive(key)
    somelib.sample(key)
    noise(jax.random.clone(key), (2,))
    first_of((jax.random.key(1), key))
    return jax.random.normal(key, (2,))
"""


def test_key_consumed_by_a_function_of_another_module(tmp_path: Path) -> None:
    """A key passed to another module's function that draws from it (directly, through its own callee, or
    through a third module) and consumed again: JAX301 in the caller, as for a same-module callee. A callee
    that only reads the key, hands it on to one that does not consume it, derives from it, or belongs to an
    unknown library, and a deliberate copy, consume nothing."""
    write(tmp_path, {"helpers.py": KEY_HELPERS, "chain.py": KEY_CHAIN, "train.py": KEY_TRAIN})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [
        ("train.py", 12, "JAX301"),
        ("train.py", 18, "JAX301"),
        ("train.py", 24, "JAX301"),
    ]
    assert "first consumed at line 11 by 'noise', again by jax.random.uniform" in findings[0].message
    assert "by 'helpers.relay', again by 'relay'" in findings[1].message
    assert "by 'chain.twice'" in findings[2].message
    result = run_cli("--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1 and "train.py:24:" in result.stdout, result.stdout + result.stderr
    # One file alone knows nothing of the other modules' functions: silent, as before.
    assert jaxlint.lint_source((tmp_path / "train.py").read_text(), "train.py") == []


EQX_KEY_LAYERS = """
import equinox as eqx
import jax


class Linear(eqx.Module):
    weight: jax.Array

    def __call__(self, x):
        return self.weight @ x


def make_linear(key, n):
    wkey, _ = jax.random.split(key)
    return Linear(jax.random.normal(wkey, (n, n)))


def describe(key):
    return key.dtype
"""

EQX_KEY_TRAIN = """
import equinox as eqx
import jax
import jax.numpy as jnp

from layers import describe, make_linear


def build(key):
    model = make_linear(key, 3)
    x = jax.random.normal(key, (3,))
    return model(x)


def build_fine(key):
    describe(key)
    mkey, xkey = jax.random.split(key)
    return make_linear(mkey, 3)(jax.random.normal(xkey, (3,)))
"""

FLAX_KEY_LAYERS = """
import jax
import jax.numpy as jnp


def dropout_mask(rng, rate, shape):
    return jax.random.bernoulli(rng, 1.0 - rate, shape)
"""

FLAX_KEY_MODEL = """
import flax.linen as nn
import jax.numpy as jnp

from .layers import dropout_mask


class Block(nn.Module):
    rate: float = 0.1

    @nn.compact
    def __call__(self, x):
        rng = self.make_rng("dropout")
        first = dropout_mask(rng, self.rate, x.shape)
        second = dropout_mask(rng, self.rate, x.shape)
        return x * first * second

    def fine(self, x):
        mask = dropout_mask(self.make_rng("dropout"), self.rate, x.shape)
        return x * mask * dropout_mask(self.make_rng("dropout"), self.rate, x.shape)
"""


def test_key_consumption_across_modules_in_equinox_and_flax_style(tmp_path: Path) -> None:
    files = {
        "layers.py": EQX_KEY_LAYERS,
        "train.py": EQX_KEY_TRAIN,
        "net/__init__.py": "",
        "net/layers.py": FLAX_KEY_LAYERS,
        "net/model.py": FLAX_KEY_MODEL,
    }
    write(tmp_path, files)
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [("model.py", 14, "JAX301"), ("train.py", 10, "JAX301")]
    assert "by 'dropout_mask', again by 'dropout_mask'" in findings[0].message
    assert "by 'make_linear', again by jax.random.normal" in findings[1].message


RETURNS_HELPERS = """
import jax.numpy as jnp


def loss(x):
    return jnp.mean(x**2)


def scaled(x):
    y = loss(x)
    return 2.0 * y


def size(x):
    return x.shape[0]


def pair(x):
    return jnp.sum(x), 1
"""

RETURNS_TRAIN = """
import equinox as eqx
import jax
import jax.numpy as jnp

import helpers
from helpers import loss, pair, scaled, size


@jax.jit
def step(x):
    if loss(x) > 0:
        x = x - 1
    return float(helpers.scaled(x)), scaled(x).item()


@eqx.filter_jit
def eqx_step(model, x):
    return int(loss(model(x)))


@jax.jit
def negatives(x):
    n = int(size(x))
    total, count = pair(x)
    return x * n, total, int(count)


def eager(x):
    return float(loss(x)), loss(x).item()
"""


RETURNS_METRICS = """
import jax.numpy as jnp  # (a module naming no JAX library is not linted, and exports nothing)

from helpers import loss, size


def doubled(x):
    y = loss(x)
    return y * 2


def wrapped(x):
    return loss(x), size(x)
"""

RETURNS_EVAL = """
import jax

from metrics import doubled, wrapped


@jax.jit
def evaluate(x):
    return float(doubled(x)), int(wrapped(x)[1])
"""


def test_what_a_helper_of_another_module_returns(tmp_path: Path) -> None:
    """A helper of another module whose every return is a jnp result gives a tracer to traced code:
    `float()`, `.item()`, `int()` and `if` on it raise, as for a same-module helper; also through a helper
    of a third module that returns its result (called from traced code, that helper calls `loss` from
    traced code too: its module's summary then delivers `loss`'s facts to it, and it exports `returns`). One that returns a shape or a tuple, and calls outside
    traced code, get nothing."""
    files = {"helpers.py": RETURNS_HELPERS, "train.py": RETURNS_TRAIN}
    write(tmp_path, {**files, "metrics.py": RETURNS_METRICS, "evaluate.py": RETURNS_EVAL})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [
        ("evaluate.py", 8, "JAX102"),
        ("train.py", 11, "JAX101"),
        ("train.py", 13, "JAX102"),
        ("train.py", 13, "JAX102"),
        ("train.py", 18, "JAX102"),
    ]
    assert findings[0].column == 12  # float(doubled(x)), not int(wrapped(x)[1])
    assert jaxlint.lint_source((tmp_path / "train.py").read_text(), "train.py") == []


TIMED_STEP = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    return jnp.tanh(x) @ x


def loss(x):
    return jnp.sum(x)


fast_loss = jax.jit(loss)
"""

TIMED_BENCH = """
import time

import jax
import jax.numpy as jnp

import steps
from steps import loss, step


def bench(x):
    t0 = time.perf_counter()
    for _ in range(10):
        x = step(x)
    t1 = time.perf_counter()
    y = steps.fast_loss(x)
    t2 = time.perf_counter()
    z = loss(x)
    t3 = time.perf_counter()
    w = jax.block_until_ready(step(x))
    t4 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, t4 - t3, y, z, w
"""


def test_timing_a_jitted_function_of_another_module(tmp_path: Path) -> None:
    """JAX403: a jitted function imported from another project module, timed without waiting for it. Its
    plain (unjitted) helper only dispatches `jnp.sum` and returns: asynchronous too, as in one module (its
    summary crosses modules); a blocked call is silent."""
    write(tmp_path, {"steps.py": TIMED_STEP, "bench.py": TIMED_BENCH})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [
        ("bench.py", 14, "JAX403"),
        ("bench.py", 16, "JAX403"),
        ("bench.py", 18, "JAX403"),
    ]
    assert "`step(x)` runs asynchronously" in findings[0].message
    assert jaxlint.lint_source((tmp_path / "bench.py").read_text(), "bench.py") == []
    # A notebook's `%timeit` of the imported jitted function (the notebook imports no clock).
    first = "import jax.numpy as jnp\n\nfrom steps import loss, step\n\nx = jnp.ones((3, 3))\n"
    write(tmp_path, {"explore.ipynb": notebook(first, "%timeit step(x)\n", "%timeit loss(x)\n")})
    findings = [f for f in jaxlint.lint_paths([str(tmp_path)]) if f.path.endswith(".ipynb")]
    assert [(f.cell, f.code) for f in findings] == [(2, "JAX403"), (3, "JAX403")]


def test_cache_follows_what_the_other_modules_functions_do(tmp_path: Path) -> None:
    """Editing helpers.py so that `noise` no longer draws from its key re-lints train.py: the facts it was
    linted with are in its cache key."""
    write(tmp_path, {"helpers.py": KEY_HELPERS, "chain.py": KEY_CHAIN, "train.py": KEY_TRAIN})
    first = run_cli(".", cwd=tmp_path)
    assert "train.py:12:" in first.stdout and "train.py:24:" in first.stdout, first.stdout + first.stderr
    assert run_cli(".", cwd=tmp_path).stdout == first.stdout
    write(tmp_path, {"helpers.py": KEY_HELPERS.replace("jax.random.normal(key, shape)", "key.shape")})
    edited = run_cli(".", cwd=tmp_path)
    assert edited.returncode == 0, edited.stdout + edited.stderr


def test_re_export_only_package_init(tmp_path: Path) -> None:
    """A package's `__init__.py` that names no JAX library and only re-exports still leaves its imports in
    its summary: `from pkg import noise` reaches `pkg.helpers.noise`, and `from pkg import MLP` the class."""
    train = """
        import jax
        import jax.numpy as jnp

        from pkg import MLP, noise


        def direct():
            key = jax.random.key(0)
            a = noise(key, (3,))
            return a, jax.random.uniform(key, (3,))


        def main():
            key = jax.random.key(0)
            params = MLP().init(key, jnp.ones(3))
            return params, jax.random.normal(key, (3,))
        """
    init = 'from .helpers import noise\nfrom .model import MLP\n\n__all__ = ["MLP", "noise"]\n'
    files = {"pkg/__init__.py": init, "pkg/helpers.py": KEY_HELPERS, "pkg/model.py": LINEN_MODEL}
    write(tmp_path, {**files, "train.py": train})
    # A package `__init__.py` that names no JAX library and does not parse is still not linted: no JAX000.
    write(tmp_path, {**files, "train.py": train, "old/__init__.py": "import os\nprint 'python 2'\n"})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [("train.py", 10, "JAX301"), ("train.py", 16, "JAX301")]


METHOD_ENVS = """
import jax


class Base:
    def reset(self, key):
        return jax.random.normal(key, (3,))

    def noise(self, key):
        return jax.random.normal(key, (3,))

    def abstract(self, key):
        raise NotImplementedError


class Env(Base):
    def step(self, state, action, key):
        return state + jax.random.normal(key, state.shape)

    def observe(self, state, key):
        return state, key.dtype


class Quiet(Base):
    def noise(self, key):
        return 0.0


def sample(key):
    return jax.random.uniform(key)
"""

METHOD_TRAIN = """
import jax

import pkg
from pkg.envs import Base, Env, sample


def built(key):
    env = Env()
    state = env.reset(key)
    return env.step(state, 0, key)


def annotated(env: pkg.Env, key):
    state = env.reset(key)
    return env.step(state, 1, key)


def jitted(key):
    a = jax.jit(sample)(key)
    return a + jax.random.normal(key)


def overridden(env: Base, key):
    return env.noise(key) + jax.random.normal(key)


def abstract_and_reading(key):
    env = Env()
    env.abstract(key)
    env.observe(0, key)
    return env.reset(key)


def split_first(key):
    env = Env()
    k1, k2 = jax.random.split(key)
    return env.step(env.reset(k1), 0, k2)


def bound(key):
    step = jax.jit(Env().step)
    draw = jax.vmap(sample)
    return step(draw(key), 0, key)
"""


def test_key_consumed_by_a_method_of_another_modules_class(tmp_path: Path) -> None:
    """`env.reset(key)` then `env.step(..., key)` on an instance of another module's class (built here, or a
    parameter annotated with it, through a package re-export; `reset` inherited from a base of that module),
    and `jax.jit(imported_f)(key)` (also bound to a name first): JAX301 in the caller. A method that an override of that module does not
    draw in, an abstract one, one that only reads the key: nothing."""
    write(
        tmp_path,
        {"pkg/__init__.py": "from .envs import Env\n", "pkg/envs.py": METHOD_ENVS, "train.py": METHOD_TRAIN},
    )
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [
        ("train.py", 10, "JAX301"),
        ("train.py", 15, "JAX301"),
        ("train.py", 20, "JAX301"),
        ("train.py", 43, "JAX301"),
    ]
    assert "by 'env.reset', again by 'env.step'" in findings[0].message
    assert "by 'jax.jit(sample)'" in findings[2].message
    # One file alone knows nothing of the other module's classes: silent.
    assert jaxlint.lint_source((tmp_path / "train.py").read_text(), "train.py") == []


NUMPY_UTILS = """
import numpy as np


def rotate(p):
    return np.cos(p) * 2.0


def scale(p):
    return p * 2.0
"""


def test_a_numpy_only_module_called_from_jitted_code_is_analysed(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No silent modules: `utils.py` names no JAX library (the prefilter would skip it), but a jitted cost
    function calls its helpers with tracers: `np.cos` of a tracer is JAX102 there. Called eagerly it is fine.
    (The eager twin is a project of its own: two script folders that each hold a `utils.py` are two projects.)"""
    cost = """
        import jax
        import jax.numpy as jnp

        from utils import rotate, scale


        @jax.jit
        def cost(p):
            return jnp.sum(rotate(p)) + jnp.sum(scale(p))
        """
    eager = """
        import jax.numpy as jnp

        from utils import rotate

        print(rotate(jnp.ones(3)))
        """
    root = write(tmp_path / "jitted", {"utils.py": NUMPY_UTILS, "cost.py": cost})
    result = run_cli("--no-cache", "--format", "json", ".", cwd=root)
    rows = json.loads(result.stdout)
    assert [(r["path"], r["line"], r["code"]) for r in rows] == [("utils.py", 5, "JAX102")], result.stderr
    assert "called from jax.jit-compiled 'cost' in cost" in rows[0]["message"]
    clean = write(tmp_path_factory.mktemp("eager"), {"utils.py": NUMPY_UTILS, "eager.py": eager})
    assert codes(jaxlint.lint_paths([str(clean)])) == []
    # With the cache: the first run stores the analysed module's findings, the second reads them back.
    first = run_cli(".", cwd=root)
    assert "utils.py:5:12: JAX102" in first.stdout, first.stdout + first.stderr
    assert run_cli(".", cwd=root).stdout == first.stdout


def test_a_numpy_only_module_named_alone_gets_its_finding_through_every_face(tmp_path: Path) -> None:
    """The NumPy-only `utils.py` named alone (pre-commit's list, stdin, --fix, flake8): the fact that jitted code
    calls it travels with its project facts, so every face analyses it as `jaxlint .` does."""
    cost = "import jax\nimport jax.numpy as jnp\n\nfrom utils import rotate\n\n\n@jax.jit\n"
    cost += "def cost(p):\n    return jnp.sum(rotate(p))\n"
    root = write(tmp_path, {"utils.py": NUMPY_UTILS, "cost.py": cost, "pyproject.toml": "[tool.jaxlint]\n"})
    expected = [("utils.py", 5, "JAX102")]
    named = run_cli("--no-cache", "--format", "json", "utils.py", cwd=root)
    assert [(r["path"], r["line"], r["code"]) for r in json.loads(named.stdout)] == expected, named.stderr
    fixed = run_cli("--no-cache", "--fix", "--format", "json", "utils.py", cwd=root)
    assert [(r["path"], r["line"], r["code"]) for r in json.loads(fixed.stdout)] == expected, fixed.stderr
    env = {**os.environ, "PYTHONPATH": str(Path(jaxlint.__file__).resolve().parent.parent)}
    stdin = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxlint",
            "--no-cache",
            "--format",
            "json",
            "--stdin-filename",
            "utils.py",
            "-",
        ],
        input=(root / "utils.py").read_text(),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert [(r["path"], r["line"], r["code"]) for r in json.loads(stdin.stdout)] == expected, stdin.stderr
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "JAX", "utils.py"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert [line.split(" ")[1] for line in flake8.stdout.splitlines()] == ["JAX102"], (
        flake8.stdout + flake8.stderr
    )


def test_a_notebook_calling_a_numpy_only_module_from_jitted_code(tmp_path: Path) -> None:
    first = "import jax\nimport jax.numpy as jnp\n\nimport utils\n"
    second = "@jax.jit\ndef cost(p):\n    return jnp.sum(utils.rotate(p))\n"
    files = {"utils.py": NUMPY_UTILS, "explore.ipynb": notebook(first, second)}
    write(tmp_path, files)
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("utils.py", 5, "JAX102")]


def test_calls_from_another_module_reach_the_last_definition(tmp_path: Path) -> None:
    """A module that defines a jitted function twice exports its last definition (what an importer gets):
    `True` passed to it is a traced bool there, not in the first definition."""
    steps = """
        import jax


        @jax.jit
        def step(x, flag):
            if flag:
                return x
            return -x


        @jax.jit
        def step(x, flag):
            if flag:
                return x + 1
            return x
        """
    train = """
        import jax.numpy as jnp

        from steps import step

        step(jnp.ones(3), True)
        """
    write(tmp_path, {"steps.py": steps, "train.py": train})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("steps.py", 13, "JAX101")]


def test_a_numpy_only_module_reached_through_a_package_re_export(tmp_path: Path) -> None:
    """`pkg.rotate` re-exported by `pkg/__init__.py` from a NumPy-only `pkg/utils.py`: the calls reach the
    module that defines it."""
    cost = """
        import jax
        import jax.numpy as jnp

        import pkg


        @jax.jit
        def cost(p):
            return jnp.sum(pkg.rotate(p))
        """
    files = {
        "pkg/utils.py": NUMPY_UTILS,
        "pkg/__init__.py": "from .utils import rotate, scale\n",
        "cost.py": cost,
    }
    write(tmp_path, files)
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("utils.py", 5, "JAX102")]


def test_a_helper_reached_through_its_package_re_export(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`from pkg import transform_block`, re-exported by `pkg/__init__.py` from `pkg/layers.py` (a module that
    names JAX): the call from jitted code reaches the def, as `from pkg.layers import transform_block` does.
    Not into a package that is a known library's (linting optax itself): there the callers' facts stay out."""
    layers = """
        import jax.numpy as jnp


        def transform_block(inputs):
            if inputs.sum() > 0:
                return inputs * 2
            return jnp.abs(inputs)


        def steady(inputs, scale):
            if scale > 0:
                return inputs * scale
            return inputs
        """
    main = """
        import jax

        from {pkg} import steady, transform_block


        @jax.jit
        def body(inputs):
            return transform_block(inputs) + steady(inputs, 2.0)
        """
    files = {"pkg/__init__.py": "from .layers import steady, transform_block\n", "pkg/layers.py": layers}
    write(tmp_path / "project", {**files, "main.py": main.format(pkg="pkg")})
    assert codes(jaxlint.lint_paths([str(tmp_path / "project")])) == [("layers.py", 5, "JAX101")]
    library = {name.replace("pkg/", "optax/"): text for name, text in files.items()}
    elsewhere = tmp_path_factory.mktemp("library")  # a project of its own, not a folder of this one
    write(elsewhere, {**library, "main.py": main.format(pkg="optax")})
    assert codes(jaxlint.lint_paths([str(elsewhere)])) == []


def test_an_eager_caller_passing_a_jax_array_to_another_modules_helper(tmp_path: Path) -> None:
    """`update(jnp.array(...))` in eager code: `ops.update`'s parameter holds a JAX array, and its item
    assignment fails (JAX103), also through a package re-export; a caller passing a NumPy array says nothing."""
    ops = """
        import jax.numpy as jnp


        def update(batch):
            batch[0] = 1.0
            return batch * 2


        def fill(batch):
            batch[0] = 1.0
            return jnp.asarray(batch)
        """
    run = """
        import jax.numpy as jnp
        import numpy as np

        from pkg import fill, update


        def run():
            return update(jnp.array([1.0, 2.0])), fill(np.zeros(2))
        """
    files = {"pkg/__init__.py": "from .ops import fill, update\n", "pkg/ops.py": ops, "run.py": run}
    write(tmp_path, files)
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("ops.py", 5, "JAX103")]


# -- issue 29 item 2: side effects and linen prints in another module's code --------------------------------

EFFECTS_DATA = """
    import io
    import logging

    from tqdm import tqdm

    logger = logging.getLogger(__name__)
    BAR = tqdm(total=100, file=io.StringIO())


    def _batches():
        while True:
            yield 1.0


    stream = _batches()


    def scale(x):
        logger.info("x %s", x)
        BAR.update(1)
        return x * next(stream)
    """
EFFECTS_MODEL = """
    import flax.linen as nn


    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            w = self.param("w", nn.initializers.ones, (3,))
            print("w", w)
            return nn.Dense(3)(x) * w
    """


def test_host_effects_and_linen_prints_in_another_modules_code(tmp_path: Path) -> None:
    """A helper of `data.py` called from a jitted step of `train.py` logs a tracer, advances its module's tqdm
    bar and draws from its module's generator at trace time (JAX202); `model.py`'s Module prints its
    parameter, a tracer when `train.py` applies it in a jitted function (JAX201). Called eagerly: silent."""
    train = """
        import jax
        import jax.numpy as jnp

        from data import scale
        from model import MLP

        model = MLP()
        variables = model.init(jax.random.key(0), jnp.ones(3))


        @jax.jit
        def step(variables, x):
            return model.apply(variables, x) + scale(x)


        step(variables, jnp.ones(3))
        """
    write(tmp_path, {"data.py": EFFECTS_DATA, "model.py": EFFECTS_MODEL, "train.py": train})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [
        ("data.py", 19, "JAX202"),
        ("data.py", 20, "JAX202"),
        ("data.py", 21, "JAX202"),
        ("model.py", 8, "JAX201"),
    ]
    assert "called from jax.jit-compiled 'step' in train" in findings[2].message
    eager = train.replace("        @jax.jit\n", "")
    write(tmp_path, {"train.py": eager})
    assert jaxlint.lint_paths([str(tmp_path)]) == []


def test_a_timer_context_manager_around_a_jitted_function_of_another_module(tmp_path: Path) -> None:
    """JAX403: the module's own `@contextmanager` timer around `step(x)` of `steps.py` (jitted there), with
    nothing waiting for it; the same block with `.block_until_ready()` is silent."""
    bench = """
        import time
        from contextlib import contextmanager

        import jax.numpy as jnp

        from steps import step


        @contextmanager
        def timer(name):
            start = time.perf_counter()
            yield
            print(name, time.perf_counter() - start)


        def bench(x):
            with timer("step"):
                y = step(x)
            with timer("blocked"):
                z = step(x).block_until_ready()
            return y, z
        """
    write(tmp_path, {"steps.py": TIMED_STEP, "bench.py": bench})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [("bench.py", 17, "JAX403")]
    assert "`step(x)` runs asynchronously" in findings[0].message
    assert jaxlint.lint_source((tmp_path / "bench.py").read_text(), "bench.py") == []


MODULES_MODEL = """
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    from flax import nnx


    class Model(nnx.Module):
        def __init__(self, rngs):
            self.linear = nnx.Linear(3, 3, rngs=rngs)

        def __call__(self, batch):
            if batch.sum() > 0:
                return self.linear(batch)
            return batch


    class Layer(eqx.Module):
        weight: jax.Array

        def __call__(self, h):
            h = h * self.weight
            if jnp.sum(h) > 0:
                return h * 2
            return h
    """
MODULES_STEPS = """
    @nnx.jit
    def train_step(model, batch):
        return model(batch)


    def apply_layers(layers, batch):
        def one(h, layer):
            return layer(h), None

        return jax.lax.scan(one, batch, layers)[0]
    """
MODULES_RUN = """
    model = Model(nnx.Rngs(0))
    x = jnp.ones(3)
    eqx.filter_jit(apply_layers)(Layer(jnp.ones((2, 3))), x)
    train_step(model, x)
    """
MODULES_IMPORTS = """
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    from flax import nnx

    from model import Layer, Model
    """


def test_module_methods_reached_through_parameters_across_modules_and_in_notebooks(tmp_path: Path) -> None:
    """`model(batch)` in an `@nnx.jit` step whose caller passes `Model(...)`, and `layer(h)` in a `lax.scan` over
    stacked equinox Modules: the classes' `__call__` run traced, whether the classes live in the module, in
    another module or in a notebook (the methods' `if` on their traced argument fails under JAX)."""
    steps = textwrap.dedent(MODULES_STEPS)
    run = "def main():\n" + textwrap.indent(textwrap.dedent(MODULES_RUN), "    ")
    write(tmp_path, {"model.py": MODULES_MODEL, "train.py": textwrap.dedent(MODULES_IMPORTS) + steps + run})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [("model.py", 12, "JAX101"), ("model.py", 22, "JAX101")]
    assert "called from nnx.jit-compiled 'train_step' in train" in findings[0].message
    assert "called from lax.scan body 'one' in train" in findings[1].message
    # The same in one notebook, and in a notebook importing the classes.
    (tmp_path / "train.py").unlink()
    (tmp_path / "model.py").unlink()
    classes = textwrap.dedent(MODULES_MODEL)
    write(tmp_path, {"alone.ipynb": notebook(classes, steps, MODULES_RUN)})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [
        ("alone.ipynb", 13, "JAX101"),  # the cell's text starts with an empty line
        ("alone.ipynb", 23, "JAX101"),
    ]
    (tmp_path / "alone.ipynb").unlink()
    write(
        tmp_path, {"model.py": MODULES_MODEL, "explore.ipynb": notebook(MODULES_IMPORTS, steps, MODULES_RUN)}
    )
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [
        ("model.py", 12, "JAX101"),
        ("model.py", 22, "JAX101"),
    ]
    # Clean twins: the methods testing shapes (static under any trace) are silent everywhere.
    clean = classes.replace("if batch.sum() > 0:", "if batch.shape[0] > 0:").replace(
        "if jnp.sum(h) > 0:", "if h.ndim > 0:"
    )
    write(tmp_path, {"model.py": clean, "explore.ipynb": notebook(MODULES_IMPORTS, steps, MODULES_RUN)})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []


def test_nnx_update_under_plain_jit_in_a_notebook(tmp_path: Path) -> None:
    """JAX202 on a Variable update of an nnx object argument of a plain `jax.jit` function, in a notebook (the
    class, the step and the call in separate cells); its clean twin returns the object."""
    classes = """
        import jax
        import jax.numpy as jnp
        from flax import nnx


        class Counter(nnx.Module):
            def __init__(self):
                self.count = nnx.Variable(jnp.array(0))
        """
    step = """
        @jax.jit
        def tick(model):
            model.count.value += 1
        """
    run = """
        model = Counter()
        tick(model)
        """
    write(tmp_path, {"explore.ipynb": notebook(classes, step, run)})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert [(f.code, f.line, f.cell) for f in findings] == [("JAX202", 4, 2)]
    returned = textwrap.dedent(step) + "    return model\n"
    write(tmp_path, {"explore.ipynb": notebook(classes, returned, run)})
    assert jaxlint.lint_paths([str(tmp_path)]) == []
    write(
        tmp_path, {"explore.ipynb": notebook(classes, returned.replace("return model", "return None"), run)}
    )
    assert [f.code for f in jaxlint.lint_paths([str(tmp_path)])] == ["JAX202"]  # the twin's text is sound


APPLIED_MODEL = """
    import flax.linen as nn


    class MLP(nn.Module):
        features: int = 3

        @nn.compact
        def __call__(self, x):
            if x.sum() > 0:
                x = x * 2
            print("x", x)
            return nn.Dense(self.features)(x)
    """
APPLIED_IMPORTS = """
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax
    from flax.training import train_state

    import models
    from models import MLP
    """
# Three ways to run another module's Module `__call__` under jit, each with its eager twin.
APPLIED_RUNS = {
    "jax.jit-compiled 'model.apply'": (
        "model = MLP()\napply = jax.jit(model.apply)\napply({}, jnp.ones(3))\n",
        "model = MLP()\napply = model.apply\napply({}, jnp.ones(3))\n",
    ),
    "jax.jit-compiled 'step'": (
        "model = models.MLP()\n"
        "state = train_state.TrainState.create(apply_fn=model.apply, params={}, tx=optax.sgd(0.1))\n"
        "\n\n@jax.jit\ndef step(state, x):\n    return state.apply_fn({'params': state.params}, x)\n\n\n"
        "step(state, jnp.ones(3))\n",
        "model = models.MLP()\n"
        "state = train_state.TrainState.create(apply_fn=model.apply, params={}, tx=optax.sgd(0.1))\n"
        "\n\ndef step(state, x):\n    return state.apply_fn({'params': state.params}, x)\n\n\n"
        "step(state, jnp.ones(3))\n",
    ),
    "nn.jit-compiled 'MLP'": (
        "model = nn.jit(MLP)()\nmodel.apply({}, jnp.ones(3))\n",
        "model = MLP()\nmodel.apply({}, jnp.ones(3))\n",
    ),
}


def test_a_module_of_another_module_applied_under_jit(tmp_path: Path) -> None:
    """The common layout: a flax.linen Module in models.py, run in train.py (or a notebook) by
    `jax.jit(model.apply)`, a jitted step calling a TrainState's `apply_fn`, or `nn.jit(MLP)`: its `__call__`
    is traced, so the `if` on `x` fails (JAX101) and the `print` shows a tracer (JAX201). The same applied
    eagerly is silent."""
    imports = textwrap.dedent(APPLIED_IMPORTS)
    for context, (jitted, eager) in APPLIED_RUNS.items():
        write(tmp_path, {"models.py": APPLIED_MODEL, "train.py": imports + "\n" + jitted})
        result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=tmp_path)
        found = json.loads(result.stdout)
        assert sorted((Path(f["path"]).name, f["line"], f["code"]) for f in found) == [
            ("models.py", 9, "JAX101"),
            ("models.py", 11, "JAX201"),
        ], context
        assert all(f"(called from {context} in train)" in f["message"] for f in found), found
        write(tmp_path, {"train.py": imports + "\n" + eager})
        assert codes(jaxlint.lint_paths([str(tmp_path)])) == [], context
    (tmp_path / "train.py").unlink()
    for context, (jitted, eager) in APPLIED_RUNS.items():
        write(tmp_path, {"explore.ipynb": notebook(APPLIED_IMPORTS, jitted)})
        findings = jaxlint.lint_paths([str(tmp_path)])
        assert codes(findings) == [("models.py", 9, "JAX101"), ("models.py", 11, "JAX201")], context
        assert f"(called from {context} in explore.ipynb)" in findings[0].message
        write(tmp_path, {"explore.ipynb": notebook(APPLIED_IMPORTS, eager)})
        assert codes(jaxlint.lint_paths([str(tmp_path)])) == [], context


RECEIVER_LAYERS = """
    import equinox as eqx
    import jax


    class Layer(eqx.Module):
        weight: jax.Array
        scale: float = eqx.field(static=True, default=1.0)

        def __call__(self, h):
            if self.weight.sum() > 0:
                return h * self.weight
            if self.scale > 0:
                return h * self.scale
            return h
    """
RECEIVER_IMPORTS = """
    import jax
    import jax.numpy as jnp

    from layers import Layer
    """
RECEIVER_STEP = """
    @jax.jit
    def step(layer, x):
        return layer(x)
    """
RECEIVER_RUN = """
    step(Layer(jnp.ones(3)), jnp.ones(3))
    """


def test_a_method_on_a_traced_instance_of_another_modules_class(tmp_path: Path) -> None:
    """`layer(x)` in a jitted step, `layer` an equinox Module of layers.py passed in: the instance crossed the
    jit boundary, so `__call__` reads `self.weight` as a tracer (JAX101 on its `if`); the static field
    `scale` stays a Python float. The same class closed over (a constant) or run eagerly: silent."""
    imports = textwrap.dedent(RECEIVER_IMPORTS)
    step, run = textwrap.dedent(RECEIVER_STEP), textwrap.dedent(RECEIVER_RUN)
    write(tmp_path, {"layers.py": RECEIVER_LAYERS, "train.py": imports + "\n\n" + step + "\n\n" + run})
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=tmp_path)
    found = json.loads(result.stdout)
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in found] == [("layers.py", 10, "JAX101")]
    assert "(called from jax.jit-compiled 'step' in train)" in found[0]["message"]
    write(tmp_path, {"explore.ipynb": notebook(RECEIVER_IMPORTS, RECEIVER_STEP, RECEIVER_RUN)})
    (tmp_path / "train.py").unlink()
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [("layers.py", 10, "JAX101")]
    assert "(called from jax.jit-compiled 'step' in explore.ipynb)" in findings[0].message
    constant = (
        "LAYER = Layer(jnp.ones(3))\n\n\n@jax.jit\ndef step(x):\n    return LAYER(x)\n\n\nstep(jnp.ones(3))\n"
    )
    eager = step.replace("@jax.jit\n", "")
    for clean in (constant, eager + "\n\n" + run):
        write(tmp_path, {"explore.ipynb": notebook(RECEIVER_IMPORTS, clean)})
        assert codes(jaxlint.lint_paths([str(tmp_path)])) == [], clean


NNX_COUNTER = """
    import jax.numpy as jnp
    from flax import nnx


    class Counter(nnx.Module):
        def __init__(self):
            self.count = nnx.Variable(jnp.array(0))
    """
NNX_TICK = """
    import jax
    from flax import nnx

    from models import Counter


    @jax.jit
    def tick(model):
        model.count.value += 1


    tick(Counter())


    @jax.jit
    def tock(model: Counter):
        model.count.value -= 1
    """


def test_an_nnx_object_of_another_modules_class_updated_under_plain_jit(tmp_path: Path) -> None:
    """JAX202: `tick` (jax.jit) updates a Variable of a `Counter` of models.py passed in, `tock` of one its
    annotation names: the updates land on the traced copy. Returning the object, or compiling with
    `nnx.jit`, is silent; so is the same class when models.py's `Counter` is not an nnx class."""
    write(tmp_path, {"models.py": NNX_COUNTER, "train.py": NNX_TICK})
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=tmp_path)
    found = json.loads(result.stdout)
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in found] == [
        ("train.py", 9, "JAX202"),
        ("train.py", 17, "JAX202"),
    ]
    (tmp_path / "train.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(NNX_TICK)})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert [(f.code, f.line) for f in findings] == [("JAX202", 10), ("JAX202", 18)]  # the cell starts empty
    tick = textwrap.dedent(NNX_TICK)
    returned = tick.replace("+= 1\n", "+= 1\n    return model\n").replace(
        "-= 1\n", "-= 1\n    return model\n"
    )
    for clean in (returned, tick.replace("@jax.jit", "@nnx.jit")):
        write(tmp_path, {"explore.ipynb": notebook(clean)})
        assert jaxlint.lint_paths([str(tmp_path)]) == [], clean
    plain = NNX_COUNTER.replace("(nnx.Module)", "").replace("nnx.Variable(jnp.array(0))", "jnp.array(0)")
    write(tmp_path, {"models.py": plain, "explore.ipynb": notebook(NNX_TICK)})
    assert jaxlint.lint_paths([str(tmp_path)]) == []


TIMER_UTILS = """
    import time
    from contextlib import contextmanager


    @contextmanager
    def timer(name):
        start = time.perf_counter()
        yield
        print(name, time.perf_counter() - start)
    """
TIMER_BENCH = """
    import jax.numpy as jnp

    import utils
    from steps import step
    from utils import timer


    def bench(x):
        with timer("step"):
            y = step(x)
        with utils.timer("again"):
            y = step(y)
        with timer("blocked"):
            z = step(x).block_until_ready()
        return y, z
    """


def test_a_timer_of_another_module_around_a_jitted_function(tmp_path: Path) -> None:
    """JAX403: `with timer(...)` of utils.py (a module naming no JAX library: its export says it is a timer)
    around a jitted `step` of steps.py, from a module that reads no clock itself, and from a notebook; the
    block that waits is silent, and so is every block when the timer itself waits for JAX work."""
    write(tmp_path, {"utils.py": TIMER_UTILS, "steps.py": TIMED_STEP, "bench.py": TIMER_BENCH})
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=tmp_path)
    found = json.loads(result.stdout)
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in found] == [
        ("bench.py", 9, "JAX403"),
        ("bench.py", 11, "JAX403"),
    ]
    assert "a timer of module utils" in found[0]["message"]
    (tmp_path / "bench.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(TIMER_BENCH, "bench(jnp.ones(3))\n")})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert [(f.code, f.line) for f in findings] == [("JAX403", 10), ("JAX403", 12)]  # the cell starts empty
    waits = TIMER_UTILS.replace("    yield\n", "    yield\n        jax.effects_barrier()\n").replace(
        "import time\n", "import time\n\n    import jax\n"
    )
    write(tmp_path, {"utils.py": waits})
    assert jaxlint.lint_paths([str(tmp_path)]) == []


HOST_UTILS = """
    import logging

    from tqdm import tqdm

    logger = logging.getLogger(__name__)
    bar = tqdm(total=10)
    """
HOST_STEP = """
    import jax

    import utils
    from utils import bar, logger


    @jax.jit
    def step(x):
        y = x * 2
        logger.info("y=%s", y)
        utils.logger.warning("x=%s", x)
        logger.info("step")
        bar.update(1)
        return y


    def run(x):
        logger.info("x=%s", x)
        bar.update(1)
        return step(x)
    """


def test_a_host_object_of_another_module_in_jitted_code(tmp_path: Path) -> None:
    """JAX202: a logger and a tqdm bar made at module level in utils.py (a module naming no JAX library: its
    summary says which of its names are host objects) and imported into steps.py, whose jitted `step` logs
    traced values and ticks the bar, through `from utils import logger` and `utils.logger`, and from a
    notebook; logging a static message and the eager uses in `run` are silent."""
    write(tmp_path, {"utils.py": HOST_UTILS, "steps.py": HOST_STEP})
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=tmp_path)
    found = json.loads(result.stdout)
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in found] == [
        ("steps.py", 10, "JAX202"),
        ("steps.py", 11, "JAX202"),
        ("steps.py", 13, "JAX202"),
    ]
    assert "logger.info() of traced value" in found[0]["message"]
    # The findings cache keys steps.py by utils.py's host objects: once `bar` is no progress bar, its tick is silent.
    assert len(json.loads(run_cli("-j", "1", "--format", "json", ".", cwd=tmp_path).stdout)) == 3
    write(tmp_path, {"utils.py": HOST_UTILS.replace("bar = tqdm(total=10)", "bar = set()")})
    cached = json.loads(run_cli("-j", "1", "--format", "json", ".", cwd=tmp_path).stdout)
    assert [(f["line"], f["code"]) for f in cached] == [(10, "JAX202"), (11, "JAX202")]
    write(tmp_path, {"utils.py": HOST_UTILS})
    (tmp_path / "steps.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(HOST_STEP, "run(1.0)\n")})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert [(f.code, f.line) for f in findings] == [("JAX202", 11), ("JAX202", 12), ("JAX202", 14)]
    # A name of utils.py that is no host object (a plain class instance) calls nothing the table knows.
    write(
        tmp_path,
        {
            "utils.py": HOST_UTILS.replace("tqdm(total=10)", "Counter()").replace(
                "from tqdm import tqdm", "from collections import Counter"
            )
        },
    )
    assert [(f.code, f.line) for f in jaxlint.lint_paths([str(tmp_path)])] == [("JAX202", 11), ("JAX202", 12)]


CLASS_STEPS = """
    import jax


    @jax.jit
    def tick(model, x):
        model.count.value += 1
        return x + 1
    """
CLASS_TRAIN = """
    import jax.numpy as jnp

    import models
    from steps import tick

    counter = models.Counter()
    tick(counter, jnp.ones(3))
    """


def test_an_instance_of_a_known_class_passed_to_another_modules_jitted_function(tmp_path: Path) -> None:
    """JAX202: `tick` of steps.py (jax.jit, no caller in its module) updates a Variable of its parameter, which
    train.py (and a notebook) gives a `Counter` of models.py, an nnx class that steps.py never imports: the
    call's fact names the argument's class. An instance of a class that is no nnx class, or callers passing
    instances of two different classes, are silent."""
    write(tmp_path, {"models.py": NNX_COUNTER, "steps.py": CLASS_STEPS, "train.py": CLASS_TRAIN})
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=tmp_path)
    found = json.loads(result.stdout)
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in found] == [("steps.py", 6, "JAX202")]
    assert "the flax.nnx object 'model'" in found[0]["message"]
    (tmp_path / "train.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(CLASS_TRAIN)})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("steps.py", 6, "JAX202")]
    plain = (
        textwrap.dedent(NNX_COUNTER) + "\n\nclass Plain:\n    def __init__(self):\n        self.count = 0\n"
    )
    two = textwrap.dedent(CLASS_TRAIN) + "tick(models.Plain(), 1.0)\n"
    write(tmp_path, {"models.py": plain, "explore.ipynb": notebook(two)})
    assert jaxlint.lint_paths([str(tmp_path)]) == []
    write(tmp_path, {"explore.ipynb": notebook(CLASS_TRAIN.replace("models.Counter()", "models.Plain()"))})
    assert jaxlint.lint_paths([str(tmp_path)]) == []


def test_a_class_given_by_position_and_by_keyword_in_one_module(tmp_path: Path) -> None:
    """Two calls of `step` with as many positional arguments, one passing a `Counter` by position and one by
    keyword: their facts differ only in how the argument is named, and the summary sorts them (a position was
    an int beside a keyword's str: an internal error on the project)."""
    steps = """
    import jax


    @jax.jit
    def step(a, b, extra=None):
        return a
    """
    train = """
    import jax.numpy as jnp

    import models
    from steps import step

    counter = models.Counter()
    step(counter, jnp.ones(3))
    step(jnp.ones(3), jnp.ones(3), extra=counter)
    """
    write(tmp_path, {"models.py": NNX_COUNTER, "steps.py": steps, "train.py": train})
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=tmp_path)
    assert result.returncode in (0, 1) and result.stderr == "", result.stderr
    json.loads(result.stdout)


THIRD_SCALE = """
    import equinox as eqx
    import jax.numpy as jnp


    class Scale(eqx.Module):
        w: jnp.ndarray

        def __call__(self, x):
            if self.w.sum() > 0:
                return x * self.w
            return x
    """
THIRD_STEP = """
    import jax


    @jax.jit
    def step(layer, x):
        return layer(x)
    """
THIRD_TRAIN = """
    import jax.numpy as jnp

    from models import Scale
    from steps import step

    layer = Scale(jnp.ones(3))
    step(layer, jnp.ones(3))
    """


def test_a_module_of_another_module_passed_to_a_third_modules_jitted_function(tmp_path: Path) -> None:
    """JAX101: train.py (and a notebook) passes a `Scale` of models.py (an equinox Module) to `step` of steps.py
    (jax.jit), which calls it: `Scale.__call__` runs on the traced instance, its fields tracers. Calling `step`
    with an instance of a plain class, whose `__call__` does the same, is silent."""
    write(tmp_path, {"models.py": THIRD_SCALE, "steps.py": THIRD_STEP, "train.py": THIRD_TRAIN})
    result = run_cli("--no-cache", "-j", "1", "--format", "json", ".", cwd=tmp_path)
    found = json.loads(result.stdout)
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in found] == [("models.py", 9, "JAX101")]
    (tmp_path / "train.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(THIRD_TRAIN)})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("models.py", 9, "JAX101")]
    plain = THIRD_SCALE.replace("(eqx.Module)", "").replace(
        "    w: jnp.ndarray\n", "    def __init__(self, w):\n            self.w = w\n"
    )
    write(tmp_path, {"models.py": plain})
    assert jaxlint.lint_paths([str(tmp_path)]) == []


PYTREES_MODULE = """
import dataclasses

import equinox as eqx
import jax


class SphArray:
    def __init__(self, array, lmax):
        self.array = array
        self.lmax = lmax


jax.tree_util.register_pytree_node(
    SphArray, lambda t: ((t.array,), t.lmax), lambda aux, children: SphArray(children[0], aux)
)


@dataclasses.dataclass
class Grid:
    values: jax.Array
    width: int


jax.tree_util.register_dataclass(Grid, data_fields=["values"], meta_fields=["width"])


class Head(eqx.Module):
    weight: jax.Array
    depth: int = eqx.field(static=True)
"""

PYTREES_USER = """
import jax
import jax.numpy as jnp

from pytrees import Grid, Head, SphArray


@jax.jit
def norms(x):
    return jnp.stack([jnp.sum(x.array[l]) for l in range(x.lmax + 1)])


@jax.jit
def zeros(grid: Grid, head: Head):
    for _ in range(head.depth):
        grid = grid
    return jnp.zeros(grid.width)


@jax.jit
def traced_bound(x: SphArray, grid: Grid):
    return [x.array[l] for l in range(x.array[0, 0])] + [jnp.zeros(grid.values[0])]
"""


def test_static_fields_of_another_modules_pytree_classes(tmp_path: Path) -> None:
    """What another module's registration keeps as aux data (`register_pytree_node` with a lambda flatten,
    `register_dataclass(meta_fields=)`, an equinox static field) is a Python value in the importing module's
    jitted code, annotated or not; their children stay tracers. Run on jax 0.10.2: `norms` and `zeros` run,
    `traced_bound` raises TracerIntegerConversionError at the range() bound (the twin of `norms`)."""
    write(tmp_path, {"pytrees.py": PYTREES_MODULE, "train.py": PYTREES_USER})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert [(name, line, code) for name, line, code in codes(findings)] == [
        ("train.py", 21, "JAX102"),
        ("train.py", 21, "JAX102"),
    ]
    result = run_cli("--no-cache", "--format", "json", ".", cwd=tmp_path)
    assert sorted((r["line"], r["code"]) for r in json.loads(result.stdout)) == [
        (21, "JAX102"),
        (21, "JAX102"),
    ]


# Another module's static field makers (project wrappers of eqx.field(static=True) and of pytreeclass's frozen
# field), a pytree base class with no field of its own, and class attributes declared on a base in another
# module (an abstract base that is no pytree, a jax_dataclasses pytree deriving from it).
FIELD_MAKERS = """
import equinox as eqx
import jax
import pytreeclass as tc


def frozen_field(**kwargs):
    return eqx.field(static=True, **kwargs)


def frozen_private_field(default=None, **kwargs):
    return frozen_field(default=default, init=False, **kwargs)


def tree_frozen_field(**kwargs):
    return tc.field(on_setattr=[tc.freeze], on_getattr=[tc.unfreeze], **kwargs)


class Node(eqx.Module):
    def leaf_count(self) -> int:
        return len(jax.tree_util.tree_leaves(self))


class TreeNode(tc.TreeClass):
    pass
"""

GROUPS = """
import abc
from typing import ClassVar

import jax


class Group(abc.ABC):
    dim: ClassVar[int]

    @abc.abstractmethod
    def log(self) -> jax.Array: ...
"""

OBJECTS = """
import jax
import jax_dataclasses as jdc

import groups
from fields import Node, TreeNode, frozen_field, frozen_private_field, tree_frozen_field


class Detector(Node):
    weight: jax.Array
    size: int = frozen_field()
    _slices: tuple = frozen_private_field(default=((0, 2), (1, 3)))
    count: int = 0

    @property
    def slices(self):
        return self._slices


class Probe(TreeNode):
    n: int = tree_frozen_field()
    m: int
    values: jax.Array

    def __init__(self, n, m, values):
        self.n, self.m, self.values = n, m, values


@jdc.pytree_dataclass
class SO2(groups.Group):
    dim = 1
    angle: jax.Array

    def log(self):
        return self.angle[None]


class Grid(Node):
    params: jax.Array

    @property
    def dims(self):
        return self.params.shape[-1]

    @property
    def total(self):
        return self.params.sum()
"""

FIELD_MAKERS_USER = """

import jax
import jax.numpy as jnp

import groups
import objects
from objects import Detector, Grid, Probe


@jax.jit
def read(d: Detector, p: Probe):
    out = jnp.zeros(d.size + p.n)
    for start, stop in d.slices:
        out = out + d.weight[start:stop].sum()
    return out


@jax.jit
def tangent(g: groups.Group, s: objects.SO2):
    return jnp.zeros(g.dim) + jnp.zeros(s.dim) + g.log()


@jax.jit
def read_twin(d: Detector):
    return jnp.zeros(d.count)


@jax.jit
def probe_twin(p: Probe):
    return jnp.zeros(p.m)



@jax.jit
def grid_dims(g: Grid):
    assert g.dims == 2
    return g.params * 2


@jax.jit
def grid_twin(g: Grid):
    if g.total > 0:
        return g.params
    return -g.params

"""


def test_static_fields_made_by_another_modules_helpers_and_class_attributes(tmp_path: Path) -> None:
    """Fields declared with a project's own static field maker imported from another module (`frozen_field`
    around `eqx.field(static=True)`, `tree_frozen_field` around pytreeclass's `field(on_setattr=[freeze])`, a
    maker calling a maker), on a subclass of a fieldless project pytree base, and a property over one, are
    Python values in a third module's jitted code; so is a `ClassVar` declared on an abstract base in another
    module, read through the base or a jax_dataclasses subclass (`groups.Group`, `objects.SO2`); and a property
    over a leaf's shape (`Grid.dims`) of a class whose only pytree fact is its fieldless project base. Their data
    fields (and a property summing a leaf) stay tracers. Run on jax 0.10.2 (equinox 0.13.8, pytreeclass 0.11.1,
    jax_dataclasses 1.6.3): `read`, `tangent` and `grid_dims` run, `read_twin` and `probe_twin` raise TypeError,
    `grid_twin` TracerBoolConversionError."""
    files = {
        "fields.py": FIELD_MAKERS,
        "groups.py": GROUPS,
        "objects.py": OBJECTS,
        "run.py": FIELD_MAKERS_USER,
    }
    write(tmp_path, files)
    expected = [(24, "JAX102"), (29, "JAX102"), (41, "JAX101")]
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == [("run.py", *where) for where in expected]
    result = run_cli("--no-cache", "--format", "json", ".", cwd=tmp_path)
    assert sorted((r["line"], r["code"]) for r in json.loads(result.stdout)) == expected


NOISE_HELPER = """
import jax


def noise(n, *, key):
    return jax.random.normal(key, (n,))
"""

SPLIT_HELPER = """
import jax


def noise(n, *, key):
    return jax.random.normal(jax.random.fold_in(key, n), (n,))
"""

NOISE_SCRIPT = """
import jax
from data.sampling import noise

key = jax.random.key(0)
train = noise(8, key=key)
test = noise(8, key=key)
"""


def test_a_module_name_two_folders_give_resolves_beside_the_script(tmp_path: Path) -> None:
    """`examples/a/data/sampling.py` and `examples/b/data/sampling.py` are both "data.sampling": a script
    imports the one beside it (its folder is first on `sys.path`), so its helper's keys count there; a script
    under a third root, where Python's search does not settle which one, gets no fact (signax PR 19)."""
    write(tmp_path, {"pyproject.toml": "", "a/data/__init__.py": "", "a/data/sampling.py": NOISE_HELPER})
    write(tmp_path, {"b/data/__init__.py": "", "b/data/sampling.py": SPLIT_HELPER})
    write(tmp_path, {"a/main.py": NOISE_SCRIPT, "b/main.py": NOISE_SCRIPT, "c/main.py": NOISE_SCRIPT})
    found = sorted((Path(f.path).parent.name, f.line, f.code) for f in jaxlint.lint_paths([str(tmp_path)]))
    assert found == [("a", 6, "JAX301")]
    result = run_cli("--no-cache", "a/main.py", cwd=tmp_path)
    assert result.returncode == 1 and "main.py:6:" in result.stdout, result.stdout + result.stderr


def test_a_library_tracing_another_modules_function(tmp_path: Path) -> None:
    """`NUTS(model)` and `optax.sgd(schedule)` in train.py of functions of models.py: the model runs under the
    inference's trace (its sample sites are tracers, its own arguments what `run` gets: a store of a site into
    module state leaks it, JAX105), the schedule gets the traced step count (JAX101). Without the driver:
    silent."""
    models = """
        import numpyro
        import numpyro.distributions as dist

        kept = {}


        def model(n, y=None):
            mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
            kept["d"] = dist.Normal(mu, 1.0)
            if n > 2:  # its own argument: concrete under MCMC
                mu = mu * 2
            numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)


        def warmup(step):
            if step < 100:
                return 1e-4
            return 1e-3
        """
    train = """
        import jax
        import optax
        from numpyro.infer import MCMC, NUTS

        from models import model, warmup

        mcmc = MCMC(NUTS(model), num_warmup=5, num_samples=5)
        mcmc.run(jax.random.key(0), 3, y=1.0)
        tx = optax.adam(warmup)
        """
    write(tmp_path, {"models.py": models, "train.py": train})
    findings = jaxlint.lint_paths([str(tmp_path)])
    assert codes(findings) == [("models.py", 9, "JAX105"), ("models.py", 16, "JAX101")], findings
    assert "numpyro model (run by a jitted inference) 'model' in train" in findings[0].message
    write(tmp_path, {"train.py": "from models import model, warmup\n\nmodel(3)\nwarmup(0)\n"})
    assert codes(jaxlint.lint_paths([str(tmp_path)])) == []


def test_an_instance_of_another_modules_class_has_its_own_methods(tmp_path: Path) -> None:
    """`assert isinstance(grads, Params)` with `Params` (an equinox Module with a `partition` method) imported
    from another module of the project: `grads.partition(mask)` is that method, not NumPy's in-place one, though
    `grads` is a gradient taken inside a jitted step (jinns' solver, batch 7). A field of it is still an array."""
    params = """
        import equinox as eqx
        import jax


        class Params(eqx.Module):
            nn: jax.Array
            eq: jax.Array

            def partition(self, mask):
                return eqx.partition(self, mask)
        """
    solver = """
        import jax
        import jax.numpy as jnp

        {imports}


        def masked(grads, mask):
            assert isinstance(grads, {cls})
            trained, _ = grads.partition(mask)
            rows = jnp.abs(grads.nn)
            rows.partition(1)
            return trained


        @jax.jit
        def step(p):
            grads = jax.grad(lambda p: jnp.sum(p.nn**2) + jnp.sum(p.eq))(p)
            return masked(grads, None)
        """
    for imports, cls in (("from params import Params", "Params"), ("import params", "params.Params")):
        write(tmp_path, {"params.py": params, "solver.py": solver.format(imports=imports, cls=cls)})
        found = [f for f in codes(jaxlint.lint_paths([str(tmp_path)])) if f[2] == "JAX103"]
        assert found == [("solver.py", 11, "JAX103")], imports
