"""A Ctrl-C or SIGTERM that Python would drop, delivered again.

Python raises KeyboardInterrupt (and jaxlint's SIGTERM handler its own exception) wherever the main thread
happens to be. When that is a weakref callback or a `__del__` (the import system runs such callbacks all
through an import), Python prints "Exception ignored in ..." and goes on: jaxlint kept running after the
user stopped it. The hook below sees exactly those dropped interrupts and raises the signal again, so it
lands at the next ordinary line and unwinds as usual (children killed, temporary folders removed).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from .start_path import dash_m_jaxlint

_installed = False


def _signal_of(error: BaseException) -> int | None:
    """The signal behind an interrupt exception (KeyboardInterrupt, or one that carries `signum`)."""
    if isinstance(error, KeyboardInterrupt):
        return signal.SIGINT
    signum = getattr(error, "signum", None)
    return signum if isinstance(signum, int) and not isinstance(error, Exception) else None


def _send_soon(signum: int) -> None:
    # Not from here: a signal sent now is handled inside this hook, whose own exceptions Python drops too.
    # A moment later the main thread is back in ordinary code (or in another such callback: then again).
    import threading  # here: the hook is for rare moments, and start-up time counts

    timer = threading.Timer(0.01, os.kill, (os.getpid(), signum))
    timer.daemon = True
    timer.start()


def _redeliver(unraisable: Any, previous: Any) -> None:
    try:
        signum = _signal_of(unraisable.exc_value)
        if signum is None:
            previous(unraisable)  # not an interrupt: Python's own report
        else:
            _send_soon(signum)
    except BaseException as error:  # a second interrupt while in here
        signum = _signal_of(error)
        if signum is None:
            raise
        _send_soon(signum)


def keep_interrupts() -> None:
    """From now on in this process, an interrupt Python would print and drop is raised again.
    For jaxlint's own processes only (a hook is process-wide): the CLI calls it, the library does not."""
    global _installed
    if _installed:
        return
    _installed = True
    previous = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: _redeliver(unraisable, previous)


def keep_interrupts_if_the_program() -> None:
    """At `import jaxlint`: when this process is the `jaxlint` command (`python -m jaxlint...` or the
    console script), from the first line on, since a Ctrl-C can land while jaxlint is still importing."""
    script = sys.argv[0].replace("\\", "/").rsplit("/", 1)[-1] if sys.argv else ""
    if dash_m_jaxlint() or script in ("jaxlint", "jaxlint.exe"):
        keep_interrupts()
