"""`jaxlint --verify` as users run it: the real command on a small project with a pyproject.toml."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest

from jaxlint.config import ConfigError, verify_settings
from tests.conftest import DEVICE, VERIFY_HEADER

pytestmark = pytest.mark.slow

MODEL = textwrap.dedent(
    """\
    import jax


    @jax.jit
    def needs(params, x):
        h = params["w"] @ x
        if h.sum() > 0:
            return h
        return -h


    @jax.jit
    def plain(x):
        if x > 0:
            return x
        return -x
    """
)


def _project(tmp_path, verify_table: str):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "pyproject.toml").write_text(verify_table)
    return tmp_path


def _jaxlint(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", "--verify", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _needs_linter(result):
    if "--verify is not available" in result.stderr or "No module named" in result.stderr:
        pytest.skip(result.stderr.strip())


def test_text_output_has_the_device_header_and_a_verdict_per_finding(tmp_path):
    project = _project(tmp_path, "")
    result = _jaxlint(project, ".")
    _needs_linter(result)
    lines = result.stdout.splitlines()
    assert VERIFY_HEADER.fullmatch(lines[0]), result.stdout + result.stderr
    plain = [line for line in lines if ":14:" in line]
    assert plain and plain[0].endswith("[CONFIRMED: TracerBoolConversionError]")
    assert result.returncode == 1


def test_examples_from_pyproject_reach_the_child_and_json_carries_verdicts(tmp_path):
    table = """\
[tool.jaxlint.verify]
jobs = 1

[tool.jaxlint.verify.examples]
"model:needs" = "{'w': jnp.ones((2, 3))}, jnp.ones(3)"
"""
    project = _project(tmp_path, table)
    result = _jaxlint(project, "--format", "json", ".")
    _needs_linter(result)
    rows = {row["line"]: row for row in json.loads(result.stdout)}
    assert rows[7]["verdict"] == "CONFIRMED", rows[7]
    assert rows[7]["inputs"] == ["example: {'w': jnp.ones((2, 3))}, jnp.ones(3)"]
    assert DEVICE.fullmatch(rows[7]["device"]) and rows[14]["verdict"] == "CONFIRMED"
    assert result.returncode == 1


def test_sarif_results_carry_verdict_properties(tmp_path):
    project = _project(tmp_path, "")
    result = _jaxlint(project, "--format", "sarif", ".")
    _needs_linter(result)
    results = json.loads(result.stdout)["runs"][0]["results"]
    properties = {
        r["locations"][0]["physicalLocation"]["region"]["startLine"]: r["properties"] for r in results
    }
    assert properties[14]["verdict"] == "CONFIRMED" and properties[14]["inputs"] == ["x: f32[]"]


def test_unknown_verify_setting_is_a_config_error(tmp_path):
    project = _project(tmp_path, "[tool.jaxlint.verify]\ntimeout_s = 3\n")
    result = _jaxlint(project, ".")
    _needs_linter(result)
    assert result.returncode == 2 and "unknown setting 'verify.timeout_s'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_settings_split_examples_from_options(tmp_path):
    settings = verify_settings({"jobs": 2, "examples": {"a:f": "1"}, "b:g": ["2", "3"]}, tmp_path)
    assert settings.jobs == 2 and settings.examples == (("a:f", ("1",)), ("b:g", ("2", "3")))
    assert verify_settings({"python": "venv/bin/python"}, tmp_path).python == str(
        tmp_path / "venv/bin/python"
    )
    assert verify_settings({"python": "python3"}, tmp_path).python == "python3"


@pytest.mark.parametrize(
    "table, says",
    [
        ({"examples": 3}, "'verify.examples' must be a table"),
        ({"select": "JAX1"}, "unknown setting 'verify.select'"),
        ({"jobs": 0}, "'verify.jobs' must be a positive integer"),
        ({"jobs": True}, "'verify.jobs' must be a positive integer"),
        ({"memory-limit-mb": "4G"}, "'verify.memory-limit-mb' must be an integer"),
        ({"python": 3}, "'verify.python' must be the path"),
        ({"examples": {"nocolon": "1"}}, "is not 'module:function'"),
        ({"m:f": 3}, "must be a string or a list of strings"),
    ],
)
def test_bad_verify_settings_are_one_line_config_errors(table, says):
    with pytest.raises(ConfigError, match=re.escape(says)):
        verify_settings(table)


def test_bad_verify_setting_exits_2_with_one_line_even_without_verify(tmp_path):
    project = _project(tmp_path, "[tool.jaxlint.verify]\nexamples = 3\n")
    result = subprocess.run(
        [sys.executable, "-m", "jaxlint", "."], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "'verify.examples' must be a table" in result.stderr


def test_example_keys_that_match_nothing_are_warnings(tmp_path):
    table = """\
[tool.jaxlint.verify.examples]
"model:needs" = "{'w': jnp.ones((2, 3))}, jnp.ones(3)"
"model:neeeds" = "1"
"nomodule:f" = "1"
"""
    project = _project(tmp_path, table)
    result = _jaxlint(project, ".")
    _needs_linter(result)
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 2, result.stderr
    assert "model:neeeds (no function 'neeeds'" in warnings[0]
    assert "nomodule:f (no module 'nomodule'" in warnings[1]
