"""What `--run` sees the user's code do without an error: a `print` run while JAX traces, with a tracer
among its arguments (JAX201), a tracer formatted into `jax.debug.print`'s format string (JAX203), and a
logging call made while JAX traces a jitted function (JAX202: it logs once per compile, not per call).

`builtins.print` and `jax.debug.print` are wrapped (after `import jax`, so `from jax.debug import print`
gets the wrapper too), and `logging.Logger.handle`, which every enabled logging call reaches; the wrappers
only look at their arguments and call the original, so the program prints and logs what it did. A record
is `{"kind", "path", "line", "text"}` (one per kind, file and line): the user's file and line that made the
call (the innermost frame outside jax, jaxlib and this package; logging's own record for a log call), and
what it printed (clipped). Another kind of observation needs only these four keys (and may name its rule
in "code"): crossref.py matches records to the static findings at their lines, run_found.py makes the
rest findings of their own.

Nothing here imports jax; `install` is handed the module.
"""

from __future__ import annotations

import builtins
import os
import sys
import threading
from typing import Any

from .evidence import DEBUG_PRINT_TRACER, PRINTED_TRACER, RUNS_ONCE, TRACER_TEXT

MAX_OBSERVATIONS = 200
_TEXT_LIMIT = 120


class Observations:
    """Collects observations, each (kind, path, line) once, and hands new ones to `on_new`."""

    def __init__(self, skip_dirs: tuple[str, ...], on_new: Any) -> None:
        self.skip_dirs = skip_dirs
        self.on_new = on_new
        self.seen: set[tuple[str, str, int]] = set()
        self._lock = threading.Lock()
        self._busy = threading.local()  # a print inside our own bookkeeping is not looked at

    def add(self, kind: str, text: str, depth: int) -> None:
        where = self._user_line(depth + 1)
        if where is not None:
            self.add_at(kind, *where, text)

    def add_at(self, kind: str, path: str, line: int, text: str) -> None:
        where = (os.path.abspath(path), line)
        if path.startswith("<") or where[0].startswith(self.skip_dirs):
            return
        key = (kind, *where)
        with self._lock:
            if key in self.seen or len(self.seen) >= MAX_OBSERVATIONS:
                return
            self.seen.add(key)
        self.on_new({"kind": kind, "path": where[0], "line": where[1], "text": text[:_TEXT_LIMIT]})

    def _user_line(self, depth: int) -> tuple[str, int] | None:
        frame: Any = sys._getframe(depth + 1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not filename.startswith(self.skip_dirs):
                if filename.startswith("<"):
                    return None
                return os.path.abspath(filename), frame.f_lineno
            frame = frame.f_back
        return None


def _shows_tracer(value: Any, tracer_type: type) -> bool:
    """A tracer, or text made from one (`print(f"loss {loss}")`)."""
    if isinstance(value, tracer_type):
        return True
    return isinstance(value, str) and "Trace" in value and TRACER_TEXT.search(value) is not None


def install(jax: Any, observations: Observations, tracing: Any = None) -> None:
    """Wrap `print` and `jax.debug.print` to report tracers they are given while JAX traces, and logging
    to report what is logged while `tracing()` (inside a jit trace on this thread)."""
    if tracing is not None:
        _watch_logging(observations, tracing)
    tracer_type = jax.core.Tracer
    original_print = builtins.print

    def print(*args: Any, **kwargs: Any) -> None:  # noqa: A001 - it stands in for the builtin
        busy = observations._busy
        if not getattr(busy, "on", False) and any(_shows_tracer(a, tracer_type) for a in args):
            busy.on = True
            try:
                sep = kwargs.get("sep")
                text = (" " if sep is None else str(sep)).join(str(a) for a in args)
                observations.add(PRINTED_TRACER, text, 1)
            except Exception:
                pass
            finally:
                busy.on = False
        return original_print(*args, **kwargs)

    print.__wrapped__ = original_print  # type: ignore[attr-defined]
    builtins.print = print

    debug = getattr(jax, "debug", None)
    original_debug = getattr(debug, "print", None)
    if original_debug is None:
        return

    def debug_print(fmt: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            if isinstance(fmt, str) and TRACER_TEXT.search(fmt):
                observations.add(DEBUG_PRINT_TRACER, fmt, 1)
        except Exception:
            pass
        return original_debug(fmt, *args, **kwargs)

    debug_print.__wrapped__ = original_debug  # type: ignore[attr-defined]
    debug_print.__doc__ = original_debug.__doc__
    debug.print = debug_print


def _watch_logging(observations: Observations, tracing: Any) -> None:
    import logging

    original = logging.Logger.handle
    if getattr(original, "_jaxlint_original", None) is not None:
        return

    def handle(self: Any, record: Any) -> Any:
        busy = observations._busy
        if not getattr(busy, "on", False):
            busy.on = True
            try:
                if tracing():
                    text = f"logged {str(record.getMessage())[:80]!r} while JAX traced it: once per compile, not per call"
                    observations.add_at(RUNS_ONCE, str(record.pathname), int(record.lineno), text)
            except Exception:
                pass
            finally:
                busy.on = False
        return original(self, record)

    handle._jaxlint_original = original  # type: ignore[attr-defined]
    logging.Logger.handle = handle  # type: ignore[method-assign]
