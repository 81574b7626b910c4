"""Faults found by fault injection (issue 15), each reproduced through the real `jaxlint` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BAD = "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
INPLACE = "import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1\n"

# Runs the command with os.scandir refusing one folder, as chmod 000 does for anyone but root: the tests
# run as root in some CI containers, where permissions cannot make a folder unreadable.
_UNREADABLE = """\
import errno, os, sys
refused = os.path.realpath(os.environ["JAXLINT_TEST_UNREADABLE"])
real_scandir = os.scandir
def scandir(path="."):
    if os.path.realpath(path) == refused:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))
    return real_scandir(path)
os.scandir = scandir
from jaxlint.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run(*args: str, cwd: Path, stdin: str | bytes | None = None, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.update(kwargs.pop("env", {}))
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", *args],
        capture_output=True,
        cwd=cwd,
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        env=env,
        timeout=120,
        **kwargs,
    )


def out(result: subprocess.CompletedProcess) -> str:
    return result.stdout.decode()


def err(result: subprocess.CompletedProcess) -> str:
    return result.stderr.decode()


def assert_one_line_error(result: subprocess.CompletedProcess, words: str) -> None:
    assert result.returncode == 2, (result.returncode, err(result))
    assert "Traceback" not in err(result)
    assert f"jaxlint: error: {words}" in err(result)


# -- item 2: messages, not tracebacks; exit 2 for usage and internal errors ----------------------------------


def test_undefined_coding_is_jax000_and_the_other_files_are_linted(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("# coding: undefined\nimport jax\n")
    (tmp_path / "good.py").write_text(INPLACE)
    result = run(".", cwd=tmp_path)
    assert result.returncode == 1, err(result)
    assert "Traceback" not in err(result)
    assert "bad.py:1:1: JAX000 cannot decode" in out(result)
    assert "good.py:4:1: JAX103" in out(result)
    fixed = run("--fix", ".", cwd=tmp_path)
    assert fixed.returncode == 1 and "bad.py:1:1: JAX000 cannot decode" in out(fixed), err(fixed)


def test_symlink_loop_in_the_tree_and_as_the_first_path(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(INPLACE)
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "loop.py").symlink_to("loop.py")
    result = run(".", cwd=tmp_path)
    assert result.returncode == 1, err(result)
    assert "m.py:4:1: JAX103" in out(result)
    assert "loop.py:1:1: JAX000 skipped: symlink loop" in out(result)
    assert_one_line_error(run("loop", cwd=tmp_path), "path is a symlink loop: loop")


def test_missing_path_and_broken_symlink(tmp_path: Path) -> None:
    (tmp_path / "gone.py").symlink_to("nowhere.py")
    assert_one_line_error(run("missing.py", cwd=tmp_path), "path does not exist: missing.py")
    assert_one_line_error(run("gone.py", cwd=tmp_path), "path a broken symlink: gone.py")


def _unreadable(folder: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    if os.geteuid() != 0:
        folder.chmod(0)
        try:
            return run(*args, cwd=cwd)
        finally:
            folder.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAXLINT_TEST_UNREADABLE": str(folder)}
    return subprocess.run(
        [sys.executable, "-c", _UNREADABLE, "--no-cache", *args],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def test_unreadable_folder_as_first_path_and_inside_the_tree(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "m.py").write_text(INPLACE)
    (tmp_path / "m.py").write_text(INPLACE)
    assert_one_line_error(
        _unreadable(locked, "locked", cwd=tmp_path), "cannot read folder locked: Permission denied"
    )
    inside = _unreadable(locked, ".", cwd=tmp_path)
    assert inside.returncode == 1, err(inside)
    assert "locked:1:1: JAX000 cannot read folder: Permission denied" in out(inside)
    assert "m.py:4:1: JAX103" in out(inside)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_reported_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "m.py").write_text(INPLACE)
    for args in ((".",), ("pipe.py", "m.py")):
        result = run(*args, cwd=tmp_path)  # opening the FIFO would block until the timeout
        assert result.returncode == 1, err(result)
        assert "pipe.py:1:1: JAX000 skipped: a FIFO (named pipe), not a file" in out(result)
        assert "m.py:4:1: JAX103" in out(result)


def test_closed_stdin(tmp_path: Path) -> None:
    for args in (("-",), ("--fix", "-")):
        assert_one_line_error(_closed(tmp_path, *args), "cannot read stdin: it is closed")


def _closed(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # The child starts with file descriptor 0 closed, as `jaxlint - <&-` in a shell.
    return subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m jaxlint --no-cache {" ".join(args)} <&-'],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


def test_rot13_coding_on_stdin(tmp_path: Path) -> None:
    for args in (("-",), ("--fix", "-")):
        result = run(*args, cwd=tmp_path, stdin="# coding: rot13\nimport jax\n")
        assert result.returncode == 1, err(result)
        assert "Traceback" not in err(result)
        assert "JAX000 cannot decode: 'rot13' is not a text encoding" in out(result) + err(result)


def test_internal_error_exits_2_with_one_line(tmp_path: Path) -> None:
    # A bug anywhere outside the per-file guard (here: discovery) must not exit 1, the code for findings.
    script = (
        "import sys, jaxlint.files as files\n"
        "def broken(*args, **kwargs):\n    raise RuntimeError('boom')\n"
        "files.discover = broken\n"
        "from jaxlint.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    (tmp_path / "m.py").write_text(INPLACE)
    result = subprocess.run(
        [sys.executable, "-c", script, "--no-cache", "."],
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert_one_line_error(result, "internal error: RuntimeError: boom")


def _json(result: subprocess.CompletedProcess) -> list[dict]:
    return json.loads(out(result))


# -- item 8: --force-exclude (what the pre-commit hook runs) matches parents, relative to the project root --


def test_force_exclude_matches_parent_folders_default_excludes_and_absolute_paths(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nextend-exclude = ["vendor", "src/gen"]\n')
    for folder in ("vendor", "vendor/deep/er", "build", "src/gen/x", "src/ok", "tools/vendor"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "m.py").write_text(INPLACE)
    excluded = ["vendor/m.py", "vendor/deep/er/m.py", "build/m.py", "src/gen/x/m.py", "tools/vendor/m.py"]
    given = [*excluded, str(tmp_path / "vendor/deep/er/m.py"), "src/ok/m.py"]
    result = run("--force-exclude", *given, cwd=tmp_path)
    assert result.returncode == 1, err(result)
    assert out(result).splitlines() == [
        "src/ok/m.py:4:1: JAX103 In-place update of JAX array 'x': JAX arrays are immutable (TypeError); "
        "use x = x.at[0].set(...)"
    ]
    # From a subfolder, `src/gen` is still anchored at the project root.
    (tmp_path / "src" / "pyproject.toml").write_text("")
    inner = run("--force-exclude", "gen/x/m.py", "ok/m.py", cwd=tmp_path / "src")
    assert [line.split(":")[0] for line in out(inner).splitlines()] == ["ok/m.py"], out(inner)
    # Without --force-exclude a file named explicitly is linted; a folder walk still skips excluded ones.
    assert "vendor/m.py:4:1: JAX103" in out(run("vendor/m.py", cwd=tmp_path))
    walked = out(run(".", cwd=tmp_path))
    assert [line.split(":")[0] for line in walked.splitlines()] == ["src/ok/m.py"], walked
