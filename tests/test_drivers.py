"""The file drivers (lint.py, autofix.py) and selection, through the real command in a subprocess.

Faults are injected by running the CLI under `python -c` with one function replaced; worker processes are
forked, so they inherit the replacement.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

PRINTS = "import jax\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
FIXED = 'import jax\n\n@jax.jit\ndef f(x):\n    jax.debug.print("{}", x)\n    return x\n'
CLEAN = "import jax\n\ndef g(x):\n    return x\n"


def run(*args: str, cwd: Path, patch: str = "", stdin: str | None = None) -> subprocess.CompletedProcess:
    """`jaxlint ARGS` in `cwd`; `patch` is Python run first (to inject a fault)."""
    code = f"import sys\n{patch}\nfrom jaxlint.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.run(
        [sys.executable, "-c", code, "--no-cache", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        timeout=300,
    )


def findings(result: subprocess.CompletedProcess) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for finding in json.loads(result.stdout):
        out.setdefault(Path(finding["path"]).name, []).append(finding)
    return out


def many(folder: Path, count: int = 9) -> None:
    """Enough clean files for the worker pool to be used (it is not below 8 files)."""
    for i in range(count):
        (folder / f"clean{i}.py").write_text(CLEAN)


# -- issue 15 item 1: one file must not take the run down ----------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_deep_nesting_is_a_jax000_not_a_crash(tmp_path: Path, jobs: str) -> None:
    (tmp_path / "deep.py").write_text("import jax\nx = " + "(" * 1300 + "1" + ")" * 1300 + "\n")
    (tmp_path / "bad.py").write_text(PRINTS)
    many(tmp_path)
    result = run(".", "--format", "json", "-j", jobs, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = findings(result)
    (deep,) = found["deep.py"]
    assert deep["code"] == "JAX000" and "too many nested parentheses" in deep["message"]
    assert [f["code"] for f in found["bad.py"]] == ["JAX201"]


def test_brackets_in_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(PRINTS + "S = '" + "(" * 300 + "'\n")
    result = run("m.py", "--format", "json", cwd=tmp_path)
    assert [f["code"] for f in findings(result)["m.py"]] == ["JAX201"]


_RAISE = """
import jaxlint.engine as engine
_real = engine.lint_text
def lint_text(source, path, *args, **kwargs):
    if "boom" in path:
        raise ValueError("injected")
    return _real(source, path, *args, **kwargs)
engine.lint_text = lint_text  # the drivers import it from the engine where they lint a file
"""

_SEGFAULT = """
import os, signal
import jaxlint.engine as engine
_real = engine.lint_text
def lint_text(source, path, *args, **kwargs):
    if "crash" in path:
        os.kill(os.getpid(), signal.SIGSEGV)
    return _real(source, path, *args, **kwargs)
engine.lint_text = lint_text
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_exception_in_one_file_is_a_jax000_for_that_file(tmp_path: Path, jobs: str) -> None:
    (tmp_path / "boom.py").write_text(PRINTS)
    (tmp_path / "bad.py").write_text(PRINTS)
    many(tmp_path)
    result = run(".", "--format", "json", "-j", jobs, cwd=tmp_path, patch=_RAISE)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    found = findings(result)
    (boom,) = found["boom.py"]
    assert boom["code"] == "JAX000" and "internal error" in boom["message"] and "injected" in boom["message"]
    assert [f["code"] for f in found["bad.py"]] == ["JAX201"]


def test_a_worker_that_dies_costs_only_its_file(tmp_path: Path) -> None:
    (tmp_path / "crash.py").write_text(PRINTS)
    (tmp_path / "bad.py").write_text(PRINTS)
    many(tmp_path, 12)
    result = run(".", "--format", "json", "-j", "2", cwd=tmp_path, patch=_SEGFAULT)
    assert result.returncode == 1 and "BrokenProcessPool" not in result.stderr, result.stderr
    found = findings(result)
    (crash,) = found["crash.py"]
    assert crash["code"] == "JAX000" and "worker process died" in crash["message"]
    assert [f["code"] for f in found["bad.py"]] == ["JAX201"]


def test_fix_survives_an_exception_in_one_file(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text(PRINTS)
    (tmp_path / "bad.py").write_text(PRINTS)
    many(tmp_path)
    result = run(".", "--fix", "-j", "2", cwd=tmp_path, patch=_RAISE)
    assert "Traceback" not in result.stderr
    assert (tmp_path / "bad.py").read_text() == FIXED
    assert (tmp_path / "boom.py").read_text() == PRINTS
    assert "boom.py:1:1: JAX000 internal error" in result.stdout


# -- item 3: a size limit ----------------------------------------------------------------------------------


def test_files_over_max_file_size_are_skipped_with_a_jax000(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\nmax-file-size = 200\n")
    (tmp_path / "big.py").write_text(PRINTS + "# padding\n" * 30)
    (tmp_path / "bad.py").write_text(PRINTS)
    result = run(".", "--format", "json", cwd=tmp_path)
    found = findings(result)
    (big,) = found["big.py"]
    assert big["code"] == "JAX000" and big["message"].startswith("skipped: too large")
    assert [f["code"] for f in found["bad.py"]] == ["JAX201"]
    # stdin has the same limit
    piped = run("-", "--stdin-filename", "big.py", cwd=tmp_path, stdin=(tmp_path / "big.py").read_text())
    assert "JAX000 skipped: too large" in piped.stdout


def test_max_file_size_must_be_a_positive_integer(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nmax-file-size = "5MB"\n')
    result = run(".", cwd=tmp_path)
    assert result.returncode == 2 and "'max-file-size' must be a positive number of bytes" in result.stderr


# -- item 4: --fix changes only what it must -----------------------------------------------------------------


def test_fix_refuses_read_only_files(tmp_path: Path) -> None:
    (tmp_path / "ro.py").write_text(PRINTS)
    (tmp_path / "rw.py").write_text(PRINTS)
    (tmp_path / "ro.py").chmod(0o444)
    result = run(".", "--fix", cwd=tmp_path)
    assert (tmp_path / "ro.py").read_text() == PRINTS
    assert (tmp_path / "rw.py").read_text() == FIXED
    assert result.returncode == 2
    assert "cannot write ro.py: the file is read-only; not fixed" in result.stderr
    assert "Fixed 1 finding in 1 file." in result.stderr  # only files written count
    assert "ro.py:5:5: JAX201" in result.stdout  # what remains in the file as it is


def test_fix_keeps_mode_owner_and_group(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(PRINTS)
    path.chmod(0o640)
    if os.geteuid() == 0:
        os.chown(path, 1234, 5678)
    run(".", "--fix", cwd=tmp_path)
    status = path.stat()
    assert path.read_text() == FIXED and status.st_mode & 0o7777 == 0o640
    if os.geteuid() == 0:
        assert (status.st_uid, status.st_gid) == (1234, 5678)


def test_fix_edits_hard_links_in_place(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(PRINTS)
    other = tmp_path / "elsewhere.txt"
    os.link(path, other)
    run("m.py", "--fix", cwd=tmp_path)
    assert path.read_text() == FIXED and other.read_text() == FIXED
    assert path.stat().st_ino == other.stat().st_ino


def test_fix_refuses_links_that_leave_the_project(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (outside / "target.py").write_text(PRINTS)
    (project / "link.py").symlink_to(outside / "target.py")
    (project / "inner.py").write_text(PRINTS)
    (project / "inner_link.py").symlink_to(project / "inner.py")
    result = run("link.py", "inner_link.py", "--fix", cwd=project)
    assert (outside / "target.py").read_text() == PRINTS
    assert "cannot write link.py: it is a link to" in result.stderr and "outside the project" in result.stderr
    assert (project / "inner.py").read_text() == FIXED and (project / "inner_link.py").is_symlink()


_EDIT_WHILE_FIXING = """
import jaxlint.autofix as autofix
_real = autofix.fix_source
def fix_source(source, path, *args, **kwargs):
    result = _real(source, path, *args, **kwargs)
    with open(path, "a") as handle:
        handle.write("# saved by the user meanwhile\\n")
    return result
autofix.fix_source = fix_source
"""


def test_fix_skips_a_file_changed_since_it_was_read(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(PRINTS)
    result = run("m.py", "--fix", cwd=tmp_path, patch=_EDIT_WHILE_FIXING)
    assert (tmp_path / "m.py").read_text() == PRINTS + "# saved by the user meanwhile\n"
    assert "the file changed since jaxlint read it" in result.stderr
    assert "Fixed" not in result.stderr


def test_fix_keeps_cr_line_endings_and_escapes(tmp_path: Path) -> None:
    (tmp_path / "cr.py").write_bytes(PRINTS.replace("\n", "\r").encode())
    latin = '# -*- coding: latin-1 -*-\nimport jax\n\n@jax.jit\ndef f(x):\n    print("\\u00e9 \\u20ac", x)\n'
    (tmp_path / "latin.py").write_bytes(latin.encode("latin-1"))
    result = run(".", "--fix", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cr.py").read_bytes() == FIXED.replace("\n", "\r").encode()
    fixed = (tmp_path / "latin.py").read_bytes().decode("latin-1")
    assert 'jax.debug.print("\\u00e9 \\u20ac {}", x)' in fixed  # € has no Latin-1 byte
    assert "Fixed 2 findings in 2 files." in result.stderr


def test_unchanged_files_stay_byte_identical(tmp_path: Path) -> None:
    data = b'\xef\xbb\xbfimport jax\r\n\r\ndef g(x):\r\n    return "\\u00e9"  # \xc3\xa9\r\n'
    (tmp_path / "bom.py").write_bytes(data)
    run(".", "--fix", cwd=tmp_path)
    assert (tmp_path / "bom.py").read_bytes() == data


# -- item 5: workers die with the parent; stale temp files go ----------------------------------------------


def _slowed(module: str, function: str) -> str:
    """Patch code: `module.function` notes the pid of each process that runs it, then takes 0.5 s longer."""
    return f"""
import os, time
import {module} as patched
_real = patched.{function}
def slowed(path, *args, **kwargs):
    open(os.path.join(os.environ["PIDS"], str(os.getpid())), "w").close()
    time.sleep(0.5)
    return _real(path, *args, **kwargs)
patched.{function} = slowed
"""


_SLOW = _slowed("jaxlint.autofix", "fix_file")
_SLOW_LINT = _slowed("jaxlint.lint", "lint_project_file")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return not any(line.startswith("State:") and "Z" in line for line in handle)
    except FileNotFoundError:
        return False


def _pooled_run(
    tmp_path: Path, patch: str, *args: str, **popen: Any
) -> tuple[subprocess.Popen, Path, list[int]]:
    """`jaxlint --no-cache -j 2 ARGS .` over 40 files with `patch` slowing each file down, once its two workers
    are busy: the process, the project folder, the workers' pids."""
    project, pids = tmp_path / "project", tmp_path / "pids"
    project.mkdir()
    pids.mkdir()
    for i in range(40):
        (project / f"m{i}.py").write_text(PRINTS)
    code = f"import sys\n{patch}\nfrom jaxlint.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    parent = subprocess.Popen(
        [sys.executable, "-c", code, "--no-cache", "-j", "2", *args, "."],
        cwd=project,
        env={**os.environ, "PIDS": str(pids)},
        stdout=subprocess.DEVNULL,
        **popen,
    )
    # Ready when both workers have started a file. On a loaded machine that can take minutes; the wait ends
    # as soon as they have, or as soon as the run ends without them.
    deadline = time.monotonic() + 600
    while len(os.listdir(pids)) < 2 and parent.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = [int(name) for name in os.listdir(pids)]
    assert parent.pid not in workers, "the files were linted in the parent, not in worker processes"
    assert len(workers) >= 2, f"{len(workers)} of 2 workers started (the run {parent.poll() or 'went on'})"
    return parent, project, workers


def _all_gone(pids: list[int]) -> bool:
    """Whether the processes end (returns as soon as they have: the kernel kills them at once, a loaded
    machine may take a while to schedule their exit)."""
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(_alive(pid) for pid in pids)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_die_with_the_parent(tmp_path: Path) -> None:
    parent, project, workers = _pooled_run(tmp_path, _SLOW, "--fix", stderr=subprocess.DEVNULL)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert _all_gone(workers)
    written = [p for p in project.glob("m*.py") if p.read_text() == FIXED]
    time.sleep(1)
    assert [p for p in project.glob("m*.py") if p.read_text() == FIXED] == written  # no writes after


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("whole_group", [False, True], ids=["parent", "process-group"])
def test_ctrl_c_stops_a_pooled_run_at_once(tmp_path: Path, whole_group: bool) -> None:
    """An interrupt ends the run within seconds (not after the queued files: 40 x 0.5 s here), says so, exits
    130, and leaves no worker. A terminal's Ctrl-C reaches the whole process group; `kill -INT` the parent."""
    parent, _, workers = _pooled_run(
        tmp_path, _SLOW_LINT, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    if whole_group:
        os.killpg(parent.pid, signal.SIGINT)
    else:
        parent.send_signal(signal.SIGINT)
    _, stderr = parent.communicate(timeout=8)  # the queued files alone would take ~10 s per worker
    assert parent.returncode == 130 and stderr.strip().splitlines()[-1] == "jaxlint: interrupted", stderr
    assert _all_gone(workers)


def test_the_next_run_removes_stale_temp_files(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(PRINTS)
    stale = tmp_path / ".m.py.999999999.jaxlint-tmp"  # a pid no system has
    stale.write_text("half a file")
    live = tmp_path / f".m.py.{os.getpid()}.jaxlint-tmp"  # a running writer's: kept
    live.write_text("being written")
    run(".", "--fix", cwd=tmp_path)
    assert not stale.exists() and live.exists()
    assert (tmp_path / "m.py").read_text() == FIXED
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".jaxlint-tmp")] == [live.name]


# -- item 10: selection is the same everywhere -------------------------------------------------------------


def test_cli_select_drops_the_files_extend_select(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nextend-select = ["JAX201"]\n')
    (tmp_path / "m.py").write_text(
        PRINTS + "\n@jax.jit\ndef h(x):\n    if x > 0:\n        return x\n    return -x\n"
    )
    codes = [
        f["code"] for f in findings(run("m.py", "--format", "json", "--select", "JAX1", cwd=tmp_path))["m.py"]
    ]
    assert codes == ["JAX101"]


def test_lint_paths_applies_the_pyproject_like_the_cli(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nper-file-ignores = {"gen/*" = ["JAX201"]}\n')
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "m.py").write_text(PRINTS)
    (tmp_path / "m.py").write_text(PRINTS)
    script = "import json, jaxlint; print(json.dumps([f.path for f in jaxlint.lint_paths(['.'])]))"
    api = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    cli = run(".", "--format", "json", cwd=tmp_path)
    assert json.loads(api.stdout) == [f["path"] for f in json.loads(cli.stdout)]
    assert [Path(p).name for p in json.loads(api.stdout)] == ["m.py"]


def test_lowercase_noqa_codes_suppress_nothing_in_jaxlint_and_flake8(tmp_path: Path) -> None:
    source = PRINTS.replace("print(x)", "print(x)  # noqa: jax201")
    (tmp_path / "m.py").write_text(source)
    ours = run("m.py", cwd=tmp_path)
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "JAX", "m.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert "m.py:5:5: JAX201" in ours.stdout and "m.py:5:5: JAX201" in flake8.stdout
    (tmp_path / "m.py").write_text(PRINTS.replace("print(x)", "print(x)  # NOQA: JAX201"))
    assert run("m.py", cwd=tmp_path).stdout == "All checks passed!\n"


def test_jax000_is_explained_and_can_be_ignored(tmp_path: Path) -> None:
    explained = run("--explain", "jax000", cwd=tmp_path)
    assert explained.returncode == 0 and explained.stdout.startswith("# JAX000 parse-error")
    (tmp_path / "broken.py").write_text("import jax\nx = (\n")
    assert "JAX000" in run("broken.py", cwd=tmp_path).stdout
    ignored = run("broken.py", "--ignore", "JAX000", cwd=tmp_path)
    assert ignored.returncode == 0 and ignored.stdout == "All checks passed!\n"


def test_unknown_selectors_in_the_pyproject_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nignore = ["JAX8"]\n')
    result = run(".", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        textwrap.dedent(f"{tmp_path / 'pyproject.toml'}: [tool.jaxlint] 'ignore': unknown") in result.stderr
    )


def test_a_pooled_run_leaves_no_thread_that_stops_the_next_pool(tmp_path: Path) -> None:
    """A pool's shutdown joins its threads (the executor's manager, its queue's feeder), but each stays in
    /proc/self/task, which `pool_jobs` counts, until its OS thread has exited: `--fix` right after the
    project's lint then fixed every file in the parent (often on a loaded machine, sometimes on an idle one)."""
    for i in range(8):
        (tmp_path / f"m{i}.py").write_text(PRINTS)
    code = (
        "import glob\n"
        "from jaxlint import lint\n"
        "from jaxlint.config import Config\n"
        "for _ in range(10):\n"
        "    lint.lint_files(sorted(glob.glob('m*.py')), Config(), jobs=2)\n"
        "    print(lint.pool_jobs(2))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert result.stdout.split() == ["2"] * 10


def test_the_deep_stack_thread_does_not_stop_the_pool() -> None:
    """A process that has linted a file itself keeps `syntax.run_deep`'s thread alive; that thread holds no
    lock between runs, so it must not turn a later `-j 2` run serial (it did: `--fix` fixed every file in the
    parent once the driver had linted one there)."""
    code = (
        "from jaxlint import lint, syntax\n"
        "before = lint.pool_jobs(2)\n"
        "syntax.run_deep(lambda: None)\n"
        "print(before, lint.pool_jobs(2))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["2", "2"]
