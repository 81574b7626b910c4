"""Why a jitted function was traced again: computed from what changed, not from JAX's guess.

JAX keys its tracing cache on the function object, the abstract signature, and the tracing context
(config flags and context managers such as `jax.default_matmul_precision`). The process-wide history
kept here compares each new trace with the earlier ones of the same function.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from .signatures import Signature, closest, summarize

NEW_FUNCTION_OBJECT = "new function object: jax.jit got a lambda, inner function, bound method or partial made anew for each call"
UNEXPLAINED = "same signature, function object and context: the cache was cleared, or jit options differ"
_HISTORY_LIMIT = 64  # distinct (signature, context) pairs kept per function


class _History:
    def __init__(self) -> None:
        self.objects: weakref.WeakSet[Any] = weakref.WeakSet()
        self.object_ids: set[int] = set()  # for callables that cannot be weakly referenced
        self.seen: list[tuple[Signature, tuple]] = []

    def knows(self, fun: Any) -> bool:
        try:
            return fun in self.objects
        except TypeError:
            return id(fun) in self.object_ids

    def add_object(self, fun: Any) -> None:
        try:
            self.objects.add(fun)
        except TypeError:
            self.object_ids.add(id(fun))


class RetraceExplainer:
    """Turns (function, signature, context) into the reason for a retrace."""

    def __init__(self, context_names: Sequence[str] | None = None) -> None:
        self._context_names = tuple(context_names or ())
        self._histories: dict[Any, _History] = {}

    def explain(self, key: Any, fun: Any, signature: Signature, context: tuple = ()) -> str | None:
        """The reason for this trace, or None when it is the function's first."""
        history = self._histories.get(key)
        if history is None:
            history = self._histories[key] = _History()
            history.add_object(fun)
            history.seen.append((signature, context))
            return None
        reason = self._reason(history, fun, signature, context)
        history.add_object(fun)
        if (signature, context) not in history.seen:
            history.seen.append((signature, context))
            del history.seen[:-_HISTORY_LIMIT]
        return reason

    def _reason(self, history: _History, fun: Any, signature: Signature, context: tuple) -> str:
        if not history.knows(fun):
            return NEW_FUNCTION_OBJECT
        same_context = [sig for sig, ctx in history.seen if ctx == context]
        if same_context:
            _, diff = closest(signature, same_context)
            if diff:
                return summarize(diff)
        if any(sig == signature for sig, _ in history.seen):
            context_diff = self._context_diff(history, signature, context)
            return context_diff or UNEXPLAINED
        _, diff = closest(signature, [sig for sig, _ in history.seen])
        return summarize(diff) if diff else UNEXPLAINED

    def _context_diff(self, history: _History, signature: Signature, context: tuple) -> str | None:
        olds = [ctx for sig, ctx in history.seen if sig == signature and ctx != context]
        if not olds:
            return None
        old = olds[-1]
        changes = []
        for i, (before, after) in enumerate(zip(old, context, strict=False)):
            if before != after:
                name = self._context_names[i] if len(self._context_names) == len(context) else f"#{i}"
                changes.append(f"{name}: {_short(before)} → {_short(after)}")
        detail = "; ".join(changes[:3]) or "a config flag or context manager"
        return f"tracing context changed ({detail})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
