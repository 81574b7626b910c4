"""What `--run` sees the user's code do that proves a static finding without an error: a `print` run while
JAX traces, with a tracer among its arguments (JAX201), and a tracer formatted into `jax.debug.print`'s
format string (JAX203).

`builtins.print` and `jax.debug.print` are wrapped (after `import jax`, so `from jax.debug import print`
gets the wrapper too); the wrappers only look at their arguments and call the original, so the program
prints what it printed. A record is `{"kind", "path", "line", "text"}`: the user's file and line that
made the call (the innermost frame outside jax, jaxlib and this package), and what it printed (clipped).
crossref.py matches them to the findings at those lines.

Nothing here imports jax; `install` is handed the module.
"""

from __future__ import annotations

import builtins
import os
import sys
import threading
from typing import Any

from .evidence import DEBUG_PRINT_TRACER, PRINTED_TRACER, TRACER_TEXT

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
        if where is None:
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


def install(jax: Any, observations: Observations) -> None:
    """Wrap `print` and `jax.debug.print` to report tracers they are given while JAX traces."""
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
