"""The pytest plugin, run as a real `pytest` in a child process on the fixture test files."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import exact_recompiles

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(ROOT, "tests", "fixtures", "recompiles")


def _entry_point_installed() -> bool:
    return any(
        ep.value in ("jaxlint.pytest_plugin", "jaxlint.runtime.recompiles.pytest_plugin")
        for ep in importlib.metadata.entry_points(group="pytest11")
    )


def pytest_run(tmp_path, case: str, *args: str) -> subprocess.CompletedProcess:
    """Copy a case file under a test name into an empty project and run pytest there."""
    shutil.copy(os.path.join(CASES, case), tmp_path / f"test_{case}")
    plugin = [] if _entry_point_installed() else ["-p", "jaxlint.runtime.recompiles.pytest_plugin"]
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *plugin, *args, f"test_{case}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )


def test_inactive_without_the_flag_and_imports_no_jax(tmp_path):
    result = pytest_run(tmp_path, "plugin_no_jax_cases.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "jaxlint recompiles" not in result.stdout


def test_counts_per_test_and_fails_over_budget(tmp_path):
    result = pytest_run(
        tmp_path, "plugin_demo_cases.py", "--jaxlint-recompiles", "--jaxlint-max-compiles", "3"
    )
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "1 failed, 5 passed" in out
    assert "FAILED test_plugin_demo_cases.py::test_lambda_in_loop - " in out
    assert "jaxlint: compile budget exceeded: test_lambda_in_loop.<locals>.<lambda> compiled 5 times" in out
    assert "test_lambda_in_loop.<locals>.<lambda> compiled 5 times, budget 3" in out
    assert "jaxlint recompiles" in out
    assert "5 compiles       5 traces  test_plugin_demo_cases.py::test_lambda_in_loop" in out
    assert "test_plugin_demo_cases:step" in out
    if exact_recompiles():  # JAX 0.9 on: the session table explains step's retraces
        assert "arg 'x': f32[1] → f32[2]" in out


def test_budget_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.jaxlint]\nmax-compiles = 3\n\n[tool.jaxlint.max-compiles-per-function]\n"
        '"test_lambda_in_loop.<locals>.<lambda>" = 5\n'
    )
    result = pytest_run(tmp_path, "plugin_demo_cases.py", "--jaxlint-recompiles")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "budget: 3 compiles per jitted function within one test" in result.stdout


def test_a_bad_budget_in_pyproject_is_a_usage_error_as_in_jaxlint(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nmax-compiles = "3"\n')
    result = pytest_run(tmp_path, "plugin_demo_cases.py", "--jaxlint-recompiles")
    assert result.returncode == 4, result.stdout + result.stderr  # pytest's usage error
    assert "'max-compiles' must be a positive integer" in result.stderr


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed")
def test_xdist_workers_report_to_the_controller(tmp_path):
    result = pytest_run(
        tmp_path, "plugin_demo_cases.py", "--jaxlint-recompiles", "--jaxlint-max-compiles", "3", "-n", "2"
    )
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "1 failed, 5 passed" in out
    assert "over the compile budget (1 tests)" in out
    assert "test_plugin_demo_cases:step" in out
