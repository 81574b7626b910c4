"""The pre-commit hooks, run by the real `pre-commit try-repo` in a temporary git repository.

`try-repo` builds the `jaxlint` hook (language: python) into a fresh virtualenv with pip, from a git copy of
this working tree: pip needs an index for libcst and setuptools. In CI that is the network; offline, point
`JAXLINT_TEST_WHEELHOUSE` at a folder of wheels (libcst, pyyaml, setuptools) and pip uses only that folder.
The `jaxlint-verify` hook (language: system) runs the `jaxlint` of this interpreter's environment.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def _pre_commit() -> list[str] | None:
    if importlib.util.find_spec("pre_commit") is not None:
        return [sys.executable, "-m", "pre_commit"]
    found = shutil.which("pre-commit")
    return [found] if found else None


PRE_COMMIT = _pre_commit()
needs_pre_commit = pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed")

BAD = """\
import jax


@jax.jit
def step(x):
    if x > 0:
        return x
    return -x
"""

GOOD = """\
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    return jnp.where(x > 0, x, -x)
"""


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    for key in [k for k in env if k.startswith(("GIT_", "PRE_COMMIT"))]:
        del env[key]
    env.update(
        PRE_COMMIT_HOME=str(home / "pre-commit-home"),
        # This interpreter's environment first: the verify hook (language: system) runs its `jaxlint`.
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.com",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        PIP_PROGRESS_BAR="off",
        PIP_DEFAULT_TIMEOUT=env.get("PIP_DEFAULT_TIMEOUT", "60"),
        PIP_RETRIES=env.get("PIP_RETRIES", "3"),
    )
    wheelhouse = os.environ.get("JAXLINT_TEST_WHEELHOUSE")
    if wheelhouse:
        env.update(PIP_FIND_LINKS=wheelhouse, PIP_NO_INDEX="1")
    return env


def _git(cwd: Path, env: dict[str, str], *args: str) -> None:
    settings = [
        "-c",
        "commit.gpgsign=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "init.defaultBranch=main",
    ]
    subprocess.run(["git", *settings, *args], cwd=cwd, env=env, check=True, capture_output=True)


def _copy_hook_repo(target: Path, env: dict[str, str]) -> Path:
    """This working tree's package, packaging and hook manifest, committed in a git repository of its own."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "jaxlint", target / "jaxlint", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, target / name)
    if not (target / "README.md").exists():
        (target / "README.md").write_text("jaxlint\n")
    _git(target, env, "init", "-q")
    _git(target, env, "add", "-A")
    _git(target, env, "commit", "-q", "--no-verify", "-m", "hook repo")
    return target


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("pre-commit")
    env = _env(base)
    hook_repo = _copy_hook_repo(base / "hook-repo", env)
    project = base / "project"
    project.mkdir()
    (project / "bad.py").write_text(BAD)
    (project / "good.py").write_text(GOOD)
    # Excluded by the project's settings: the hook (--force-exclude) must not lint it, though pre-commit
    # passes it by name.
    (project / "pyproject.toml").write_text('[tool.jaxlint]\nextend-exclude = ["vendor"]\n')
    (project / "vendor" / "lib").mkdir(parents=True)
    (project / "vendor" / "lib" / "m.py").write_text(BAD)
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": BAD}]
    (project / "nb.ipynb").write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    _git(project, env, "init", "-q")
    _git(project, env, "add", "-A")
    return hook_repo, project, env


def try_repo(repos: tuple[Path, Path, dict[str, str]], hook: str, *files: str) -> subprocess.CompletedProcess:
    hook_repo, project, env = repos
    assert PRE_COMMIT is not None
    command = [*PRE_COMMIT, "try-repo", str(hook_repo), hook, "--verbose", "--files", *files]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=900)


def _explain(result: subprocess.CompletedProcess) -> str:
    return f"rc={result.returncode}\n{result.stdout}\n{result.stderr}"


def _hooks() -> list[dict]:
    import yaml  # pre-commit depends on PyYAML

    return yaml.safe_load(HOOKS.read_text())


@needs_pre_commit
def test_manifest_is_valid() -> None:
    result = subprocess.run([*PRE_COMMIT, "validate-manifest", str(HOOKS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_pre_commit
def test_hook_definitions() -> None:
    hooks = {hook["id"]: hook for hook in _hooks()}
    assert set(hooks) == {"jaxlint", "jaxlint-verify"}
    static, verify = hooks["jaxlint"], hooks["jaxlint-verify"]
    assert static["entry"].split()[0] == "jaxlint" and "--verify" not in static["entry"]
    assert static["language"] == "python" and static["require_serial"] is True
    assert set(static["types_or"]) >= {"python", "jupyter"}
    assert verify["entry"].split()[:2] == ["jaxlint", "--verify"]
    # verify imports the user's code: it must run with the project's own environment and JAX build.
    assert verify["language"] == "system" and verify["require_serial"] is True
    assert verify["types"] == ["python"]
    for hook in hooks.values():
        assert tuple(int(p) for p in hook["minimum_pre_commit_version"].split(".")) >= (2, 9, 0)  # types_or


@needs_pre_commit
def test_static_hook_fails_on_bad_file_and_passes_on_good_file(repos) -> None:
    # Each try-repo builds the hook's virtualenv afresh (pip installs jaxlint and libcst): two runs only.
    bad = try_repo(repos, "jaxlint", "bad.py", "nb.ipynb", "good.py", "vendor/lib/m.py")
    assert bad.returncode == 1, _explain(bad)
    assert "vendor" not in bad.stdout, _explain(bad)
    assert "bad.py:6:8: JAX101" in bad.stdout, _explain(bad)
    assert "nb.ipynb:cell 1:6:8: JAX101" in bad.stdout, _explain(bad)  # types_or: jupyter
    assert "good.py" not in bad.stdout
    good = try_repo(repos, "jaxlint", "good.py")
    assert good.returncode == 0, _explain(good)
    assert "Passed" in good.stdout


@needs_pre_commit
@pytest.mark.slow
def test_verify_hook_fails_on_bad_file_and_passes_on_good_file(repos) -> None:
    bad = try_repo(repos, "jaxlint-verify", "bad.py")
    assert bad.returncode == 1, _explain(bad)
    assert "JAX101" in bad.stdout
    good = try_repo(repos, "jaxlint-verify", "good.py")
    assert good.returncode == 0, _explain(good)
