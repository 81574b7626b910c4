"""The flags jaxlint shares with ruff, each through the real `jaxlint` command in a subprocess (issue 28)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

BAD = textwrap.dedent(
    """\
    import jax


    @jax.jit
    def f(x):
        if x > 0:
            return x
        return -x
    """
)
INPLACE = "import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1\n"


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args, "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    (tmp_path / "m.py").write_text(BAD)
    return tmp_path


def test_output_format_and_its_format_alias_and_check(bad: Path) -> None:
    plain = run("--format", "json", "m.py", cwd=bad)
    assert plain.returncode == 1 and json.loads(plain.stdout)[0]["code"] == "JAX101"
    assert run("--output-format", "json", "m.py", cwd=bad).stdout == plain.stdout
    assert run("check", "--output-format", "json", "m.py", cwd=bad).stdout == plain.stdout
    text = run("m.py", cwd=bad)
    assert run("check", "m.py", cwd=bad).stdout == text.stdout
    assert run("--output-format", "concise", "m.py", cwd=bad).stdout == text.stdout
    assert run("--output-format", "nope", "m.py", cwd=bad).returncode == 2


def test_the_summary_is_on_stdout_as_ruffs(bad: Path) -> None:
    result = run("m.py", cwd=bad)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("m.py:6:8: JAX101 ") and lines[1:] == ["Found 1 finding."]
    assert result.stderr == ""


def test_full_output_shows_the_lines_and_carets_under_the_flagged_code(bad: Path) -> None:
    result = run(
        "--output-format", "full", "m.py", cwd=bad, env={**os.environ, "NO_COLOR": "", "FORCE_COLOR": ""}
    )
    assert result.returncode == 1
    assert "\x1b[" not in result.stdout  # a pipe, not a terminal: no colour
    lines = result.stdout.splitlines()
    assert lines[0].startswith("m.py:6:8: JAX101 ")
    assert lines[1:9] == [
        "  |",
        "4 | @jax.jit",
        "5 | def f(x):",
        "6 |     if x > 0:",
        "  |        ^^^^^ JAX101",
        "7 |         return x",
        "8 |     return -x",
        "  |",
    ]
    assert lines[-1] == "Found 1 finding."


def test_full_output_colour_follows_force_color_and_no_color(bad: Path) -> None:
    forced = run("--output-format", "full", "m.py", cwd=bad, env={**os.environ, "FORCE_COLOR": "1"})
    assert "\x1b[31m" in forced.stdout and "^^^^^ JAX101" in forced.stdout
    both = {**os.environ, "FORCE_COLOR": "1", "NO_COLOR": "1"}
    assert "\x1b[" not in run("--output-format", "full", "m.py", cwd=bad, env=both).stdout


def test_full_output_shows_a_notebook_cell(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# notes\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["import jax\n", "\n", "@jax.jit\n", "def f(x):\n", "    return float(x)\n"]},
    ]  # fmt: skip
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}, indent=1))
    result = run("--output-format", "full", "nb.ipynb", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("nb.ipynb:cell 2:5:12: JAX102 ")
    assert "5 |     return float(x)" in lines and "  |            ^^^^^^^^ JAX102" in lines


def test_add_noqa_suppresses_every_finding_and_keeps_existing_codes(tmp_path: Path) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1  # noqa: JAX000\n\n\n"
        "@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    s = x[int(x)] + len('''a\n    b''')\n    return -x\n"
    )
    (tmp_path / "m.py").write_text(source)
    before = run("--format", "json", "m.py", cwd=tmp_path)
    assert {(r["line"], r["code"]) for r in json.loads(before.stdout)} == {
        (5, "JAX103"), (10, "JAX101"), (12, "JAX102")
    }  # fmt: skip
    added = run("--add-noqa", "m.py", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert "Added 2 noqa directives." in added.stderr
    # Line 12 ends inside a triple-quoted string: no comment can suppress it there, and it is said.
    assert "m.py:12: no noqa added" in added.stderr
    text = (tmp_path / "m.py").read_text().splitlines()
    assert text[4] == "x[0] = 1  # noqa: JAX000, JAX103"
    assert text[9] == "    if x > 0:  # noqa: JAX101"
    after = run("--format", "json", "m.py", cwd=tmp_path)
    assert [(r["line"], r["code"]) for r in json.loads(after.stdout)] == [(12, "JAX102")]
    again = run("--add-noqa", "m.py", cwd=tmp_path)
    assert "Added 0 noqa directives." in again.stderr
    assert (tmp_path / "m.py").read_text().splitlines() == text


def test_add_noqa_and_full_output_count_lines_as_python_does(tmp_path: Path) -> None:
    """A form feed (or U+2028) inside a line is no line end for Python, libcst or the findings' numbers: the
    noqa lands on the flagged line and the snippet shows it."""
    source = "import jax\n\x0c\n\n@jax.jit\ndef f(x):\n    y = 1  # a\u2028b\n    if x > 0:\n        return x\n    return -x\n"
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    full = run("--output-format", "full", "m.py", cwd=tmp_path)
    assert "7 |     if x > 0:" in full.stdout and "^^^^^ JAX101" in full.stdout, full.stdout
    added = run("--add-noqa", "m.py", cwd=tmp_path)
    assert "Added 1 noqa directive" in added.stderr, added.stderr
    assert "    if x > 0:  # noqa: JAX101\n" in (tmp_path / "m.py").read_text(encoding="utf-8")
    assert run("m.py", cwd=tmp_path).returncode == 0


def test_show_settings_and_show_files(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jaxlint]\nextend-exclude = ["vendor"]\nper-file-ignores = { "tests/*" = ["JAX1"] }\n'
    )
    for name in ("src/a.py", "tests/t.py", "vendor/v.py", "nb.ipynb"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(BAD if name.endswith(".py") else "{}")
    files = run("--show-files", ".", cwd=tmp_path)
    assert files.returncode == 0
    assert files.stdout.splitlines() == ["nb.ipynb", "src/a.py", "tests/t.py"]
    settings = run("--show-settings", "tests/t.py", cwd=tmp_path)
    assert settings.returncode == 0
    lines = settings.stdout.splitlines()
    assert lines[0] == "Resolved settings for: tests/t.py"
    assert lines[1] == f"Settings path: {tmp_path.resolve() / 'pyproject.toml'}"
    assert "extend-exclude = ('vendor',)" in lines
    rules = next(line for line in lines if line.startswith("rules = "))
    assert "JAX101" not in rules and "JAX201" in rules  # per-file-ignores applied to this path


def test_exclude_extend_exclude_per_file_ignores_extend_ignore(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nextend-exclude = ["gen"]\n')
    for name in ("a.py", "gen/g.py", "build/b.py", "tests/t.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(INPLACE)

    def flagged(*args: str) -> list[str]:
        result = run("--format", "json", *args, ".", cwd=tmp_path)
        return sorted({row["path"] for row in json.loads(result.stdout)})

    assert flagged() == ["a.py", "tests/t.py"]
    assert flagged("--extend-exclude", "tests") == ["a.py"]  # on top of the file's `gen`
    # --exclude replaces the defaults (build) and the file's exclude; extend-exclude (gen) still applies.
    assert flagged("--exclude", "tests") == ["a.py", "build/b.py"]
    assert flagged("--per-file-ignores", "tests/*:JAX103") == ["a.py"]
    assert flagged("--per-file-ignores", "tests/*:JAX2,JAX103,a.py:JAX1") == []
    assert flagged("--extend-ignore", "JAX103") == []
    bad = run("--per-file-ignores", "tests/*:JAX999", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown rule selector 'JAX999'" in bad.stderr


def test_watch_lints_again_when_a_file_changes(tmp_path: Path) -> None:
    pytest.importorskip("watchfiles")  # the `watch` extra; part of `dev`
    (tmp_path / "m.py").write_text("import jax\n")
    child = subprocess.Popen(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--watch", "."],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    seen = b""
    try:
        seen = _read_until(child.stderr.fileno(), seen, 1)
        # The watcher starts once the first lint is printed: an edit made in between is not seen, so the
        # edit is made again until the child answers.
        for _ in range(10):
            (tmp_path / "m.py").write_text(BAD)
            seen = _read_until(child.stderr.fileno(), seen, 2, timeout=6.0)
            if seen.count(b"Watching for file changes.") >= 2:
                break
    finally:
        child.send_signal(signal.SIGINT)
        out, rest = child.communicate(timeout=30)
    assert seen.count(b"Watching for file changes.") >= 2, seen + rest
    assert child.returncode == 130
    assert "m.py:6:8: JAX101" in out.decode() and out.decode().count("Found 1 finding.") == 1


def _read_until(fd: int, seen: bytes, count: int, timeout: float = 60.0) -> bytes:
    """Read the child's stderr until "Watching for file changes." has come `count` times (at the child's
    own pace: no fixed sleep)."""
    import selectors

    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    end = time.monotonic() + timeout
    while seen.count(b"Watching for file changes.") < count and time.monotonic() < end:
        if selector.select(timeout=1.0):
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            seen += chunk
    selector.close()
    return seen


def test_full_output_is_coloured_on_a_terminal_unless_no_color(bad: Path) -> None:
    pty = pytest.importorskip("pty")  # POSIX: stdout a real terminal

    def on_a_terminal(env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        child = subprocess.Popen(
            [sys.executable, "-m", "jaxlint", "--no-cache", "--output-format", "full", "m.py"],
            cwd=bad,
            stdout=follower,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        os.close(leader)
        assert child.wait(timeout=120) == 1
        return out.decode()

    plain_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    coloured = on_a_terminal(plain_env)
    assert "\x1b[31m" in coloured and "JAX101" in coloured
    assert "\x1b[" not in on_a_terminal({**plain_env, "NO_COLOR": "1"})


def test_watch_on_one_file_follows_the_other_modules_of_its_project(tmp_path: Path) -> None:
    """`jaxlint --watch model.py`: an edit of train.py (another module of the project) re-lints, and the
    finding train.py's jitted call causes in model.py appears."""
    pytest.importorskip("watchfiles")
    (tmp_path / ".git").mkdir()  # the project's top folder
    model = "import jax\n\n\ndef helper(x, flag):\n    if flag:\n        return x\n    return -x\n"
    static = (
        "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n\nimport model\n\n\n"
        "@partial(jax.jit, static_argnames='flag')\ndef step(x, flag):\n    return model.helper(x, flag)\n\n\n"
        "step(jnp.ones(3), False)\n"
    )
    (tmp_path / "model.py").write_text(model)
    (tmp_path / "train.py").write_text(static)
    child = subprocess.Popen(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--watch", "model.py"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    seen = b""
    try:
        seen = _read_until(child.stderr.fileno(), seen, 1)
        for _ in range(10):  # made again until the child answers (see the test above)
            (tmp_path / "train.py").write_text(
                static.replace("@partial(jax.jit, static_argnames='flag')", "@jax.jit")
            )
            seen = _read_until(child.stderr.fileno(), seen, 2, timeout=6.0)
            if seen.count(b"Watching for file changes.") >= 2:
                break
    finally:
        child.send_signal(signal.SIGINT)
        out, rest = child.communicate(timeout=30)
    assert seen.count(b"Watching for file changes.") >= 2, seen + rest
    lines = [line for line in out.decode().splitlines() if "JAX" in line]
    assert len(lines) == 1 and lines[0].startswith("model.py:5:8: JAX101"), out.decode()
