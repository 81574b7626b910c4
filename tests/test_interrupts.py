"""A Ctrl-C or SIGTERM that lands in a `__del__` or weakref callback (Python prints "Exception ignored"
and goes on) is raised again, so jaxlint stops; other exceptions there are reported as Python does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlint import interrupts

ROOT = Path(__file__).resolve().parents[1]

_PROGRAM = """
import os, signal, sys, time, weakref
from jaxlint.interrupts import keep_interrupts
if sys.argv[1] == "hook":
    keep_interrupts()

class Terminated(BaseException):
    def __init__(self, signum):
        self.signum = signum

def on_term(signum, frame):
    raise Terminated(signum)

signal.signal(signal.SIGTERM, on_term)
SIGNUM = getattr(signal, sys.argv[2])

class Target:
    pass

def callback(ref):  # the signal arrives while Python runs a callback whose exceptions it drops
    os.kill(os.getpid(), SIGNUM)
    for _ in range(1000):
        pass

try:
    target = Target()
    ref = weakref.ref(target, callback)
    del target
    time.sleep(1)
    print("kept running")
except (KeyboardInterrupt, Terminated) as stopped:
    print("stopped by", type(stopped).__name__)
"""


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", _PROGRAM, *args], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_an_interrupt_dropped_in_a_callback_is_raised_again(signame):
    dropped = _run("no hook", signame)
    assert dropped.stdout.strip() == "kept running"  # what Python does on its own: the reason for the hook
    kept = _run("hook", signame)
    expected = "KeyboardInterrupt" if signame == "SIGINT" else "Terminated"
    assert kept.stdout.strip() == f"stopped by {expected}", kept.stderr
    assert "Exception ignored" not in kept.stderr


def test_other_exceptions_in_callbacks_are_reported_as_python_does():
    program = textwrap.dedent(
        """
        from jaxlint.interrupts import keep_interrupts
        keep_interrupts()
        class Broken:
            def __del__(self):
                raise ValueError("in __del__")
        Broken()
        print("went on")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "went on"
    assert "Exception ignored" in done.stderr and "ValueError" in done.stderr


@pytest.mark.parametrize(
    ("argv", "orig_argv", "installed"),
    [
        (["-m"], ["python", "-m", "jaxlint", "x.py"], True),
        (["-m"], ["python", "-m", "jaxlint.cli"], True),
        (["/venv/bin/jaxlint", "x.py"], ["python", "/venv/bin/jaxlint", "x.py"], True),
        (["-m"], ["python", "-m", "pytest"], False),
        (["-c"], ["python", "-c", "import jaxlint"], False),
        (["app.py", "-m", "jaxlint"], ["python", "app.py", "-m", "jaxlint"], False),
    ],
)
def test_the_hook_is_installed_in_the_jaxlint_program_only(monkeypatch, argv, orig_argv, installed):
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # restored after the test
    monkeypatch.setattr(interrupts, "_installed", False)
    before = sys.unraisablehook
    interrupts.keep_interrupts_if_the_program()
    assert (sys.unraisablehook is not before) == installed


def test_after_an_interrupt_a_closed_pool_pipe_prints_nothing(monkeypatch) -> None:
    """concurrent.futures' exit hook may write to a pool's wakeup pipe that the interrupt already closed: that
    BrokenPipeError, reported by Python's shutdown as "Exception ignored", must not follow "jaxlint: interrupted"
    (a race seen in CI); any other unraisable error is still reported."""
    import types

    from jaxlint import cli

    seen: list[type] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: seen.append(type(unraisable.exc_value)))
    cli._quiet_pool_wakeup()
    for error in (BrokenPipeError(), ValueError()):
        sys.unraisablehook(
            types.SimpleNamespace(
                exc_type=type(error), exc_value=error, exc_traceback=None, err_msg=None, object=None
            )
        )
    assert seen == [ValueError]
