"""Progress and pictures: `--verify`'s progress on stderr (one line per module off a terminal, stdout left to
the report), and the self-contained HTML report `--verify --run CMD --html FILE` writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "verify"


def _jaxlint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_verify_off_a_terminal_says_one_line_per_module_on_stderr_and_keeps_stdout_json(tmp_path):
    for name in ("verify_jax101.py", "verify_jax103.py"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    result = _jaxlint(tmp_path, "--verify", "--no-cache", "--format", "json", ".")
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)  # nothing but the report on stdout
    assert {f["verdict"] for f in findings} == {"CONFIRMED"}
    lines = [line for line in result.stderr.splitlines() if line.startswith("verify: [")]
    assert len(lines) == 2, result.stderr
    by_module = {line.split("] ", 1)[1].split(":", 1)[0]: line for line in lines}
    assert set(by_module) == {"verify_jax101", "verify_jax103"}
    assert sorted(line.split("] ", 1)[0] for line in lines) == ["verify: [1/2", "verify: [2/2"]
    per_file = {m: sum(1 for f in findings if Path(f["path"]).stem == m) for m in by_module}
    for module, line in by_module.items():
        count = per_file[module]
        assert f"{count} finding{'s' if count != 1 else ''}: {count} confirmed" in line
    assert "\r" not in result.stderr  # no terminal redraws in a log


def test_quiet_verify_prints_no_progress(tmp_path):
    shutil.copy(FIXTURES / "verify_jax103.py", tmp_path / "verify_jax103.py")
    result = _jaxlint(tmp_path, "--verify", "--no-cache", "-q", ".")
    assert result.returncode == 1, result.stderr
    assert "verify: [" not in result.stderr and "CONFIRMED" in result.stdout
