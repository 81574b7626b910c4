"""The `jaxlint` command's process ends without Python's shutdown when nothing waits for it
(`jaxlint/process_exit.py`), and the ordinary way when something does: real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BAD = "import jax\n\n\n@jax.jit\ndef f(x):\n" + "".join(
    f"    if x > {i}:\n        x = -x\n" for i in range(400)
)

# Runs `python -m jaxlint ARGS` inside a `-c` program that may first arrange something for the exit. The
# object kept in `__main__` says "torn down" when Python's shutdown frees the module.
PROGRAM = """\
import runpy, sys


class Witness:
    def __del__(self):
        sys.stderr.write("torn down\\n")


witness = Witness()
{setup}
sys.argv = ["jaxlint", *{args!r}]
runpy.run_module("jaxlint", run_name="__main__", alter_sys=True)
"""


def _run(tmp_path: Path, setup: str = "", args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    (tmp_path / "bad.py").write_text(BAD)
    program = PROGRAM.format(setup=setup, args=["bad.py", "--no-cache", "--format", "json", *args])
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )


def test_the_command_exits_at_once_with_its_whole_report_and_code(tmp_path: Path) -> None:
    result = _run(tmp_path)
    findings = json.loads(result.stdout)  # ~150 KB through a pipe: all of it flushed before the exit
    assert len(findings) == 400 and {f["code"] for f in findings} == {"JAX101"}
    assert result.returncode == 1
    assert "torn down" not in result.stderr  # no shutdown ran


def test_an_atexit_callback_gets_the_ordinary_exit(tmp_path: Path) -> None:
    setup = "import atexit\natexit.register(lambda: sys.stderr.write('atexit ran\\n'))"
    result = _run(tmp_path, setup)
    assert result.returncode == 1 and len(json.loads(result.stdout)) == 400
    assert "atexit ran" in result.stderr and "torn down" in result.stderr


def test_a_thread_that_is_not_a_daemon_is_waited_for(tmp_path: Path) -> None:
    setup = (  # writes once the main thread has ended: an exit that did not wait would cut it off
        "import threading, time\n"
        "def after_main():\n"
        "    while threading.main_thread().is_alive():\n"
        "        time.sleep(0.01)\n"
        "    sys.stderr.write('thread done\\n')\n"
        "threading.Thread(target=after_main).start()"
    )
    result = _run(tmp_path, setup)
    assert result.returncode == 1 and len(json.loads(result.stdout)) == 400
    assert "thread done" in result.stderr


def test_a_closed_stdout_exits_as_before(tmp_path: Path) -> None:
    """A report that cannot be written (stdout closed by the reader) keeps the exit code it had."""
    (tmp_path / "bad.py").write_text(BAD)
    reader = subprocess.Popen(
        [sys.executable, "-m", "jaxlint", "bad.py", "--no-cache", "--format", "json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # before jaxlint writes: its write (or flush) meets a broken pipe
    reader.stderr.read()
    assert reader.wait(timeout=120) == 2
