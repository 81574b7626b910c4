"""One attempt: trace the target with one set of inputs under `jax.jit(...).trace`, in a checking mode,
and keep everything a rule's expectation may look at: the exception, the jaxpr, and what was printed
(with the line that printed it)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import sys
import types
from collections.abc import Iterator
from typing import Any

from .expectations import KEY_REUSE, LEAKS, PLAIN
from .inputs import Arg, CallInputs
from .leaks import tracer_places
from .lines_run import SameFile
from .pinned_jax import PinnedJax
from .resolve import CLASSMETHOD, METHOD, Target

# A leak seen where the flagged statement stores (a global, `self.x`) once the trace is over, without
# JAX's leak checker: that checker scans the heap at the end of every nested trace (each flax layer,
# value_and_grad), ~30 s for one flax train step; a tracer still held by the global is the leak itself.
LEAK_PLACES = "leak-places"


@dataclasses.dataclass
class Outcome:
    error: BaseException | None = None
    jaxpr: Any = None
    writes: list[tuple[int, str]] = dataclasses.field(default_factory=list)  # (line, text) printed in tracing
    debug_formats: list[tuple[int, str]] = dataclasses.field(default_factory=list)  # jax.debug.print formats
    leaked_into: set[str] = dataclasses.field(default_factory=set)  # places holding new tracers (leak mode)
    # Lines of the module that ran during a first (tracing) and a second (cached) call, in RUN_TWICE mode.
    calls_lines: tuple[set[int], set[int]] | None = None
    # A jitted method with a static `self`: the attribute whose new value a second call did not see.
    stale: str | None = None
    changed: list[str] = dataclasses.field(default_factory=list)  # attributes changed between two calls
    unhashable: bool = False  # the class sets __hash__ = None (a non-frozen dataclass), not our inputs


class ModuleLines:
    """Finds the line of the user's module that is running, from inside a callee (print, debug.print)."""

    def __init__(self, path: str) -> None:
        self.is_module = SameFile(path)
        self.path = self.is_module.path

    def current_line(self, depth: int = 2) -> int:
        frame: types.FrameType | None = sys._getframe(depth)
        while frame is not None and not self.is_module(frame.f_code.co_filename):
            frame = frame.f_back
        return frame.f_lineno if frame is not None else 0


class _RecordingStream(io.TextIOBase):
    def __init__(self, lines: ModuleLines, sink: list[tuple[int, str]]) -> None:
        self._lines = lines
        self._sink = sink

    def write(self, text: str) -> int:
        self._sink.append((self._lines.current_line(), text))
        return len(text)

    def writable(self) -> bool:
        return True


class DebugPrintRecorder:
    """Wraps jax.debug.print (before the user's module is imported, so `from jax.debug import print` gets
    the wrapper too) to record the format string each call site passes while an attempt is recording."""

    def __init__(self, jax: Any, lines: ModuleLines) -> None:
        self.lines = lines
        self.sink: list[tuple[int, str]] | None = None
        original = jax.debug.print

        @functools.wraps(original)
        def recording_print(fmt: Any, *args: Any, **kwargs: Any) -> Any:
            if self.sink is not None:
                self.sink.append((self.lines.current_line(), str(fmt)))
            return original(fmt, *args, **kwargs)

        jax.debug.print = recording_print

    @contextlib.contextmanager
    def recording(self, sink: list[tuple[int, str]]) -> Iterator[None]:
        self.sink = sink
        try:
            yield
        finally:
            self.sink = None


@contextlib.contextmanager
def checking_mode(jax: Any, mode: str) -> Iterator[None]:
    if mode == LEAKS:
        with jax.checking_leaks():
            yield
    elif mode == KEY_REUSE:
        # Custom-PRNG mode makes legacy jax.random.PRNGKey keys typed, so the reuse checker sees them too.
        before = (jax.config.jax_debug_key_reuse, jax.config.jax_enable_custom_prng)
        jax.config.update("jax_debug_key_reuse", True)
        jax.config.update("jax_enable_custom_prng", True)
        try:
            yield
        finally:
            jax.config.update("jax_debug_key_reuse", before[0])
            jax.config.update("jax_enable_custom_prng", before[1])
    else:
        yield


def make_instance(target: Target, attributes: dict[str, Any]) -> Any:
    """`self` for a method: the class's instance without running __init__, with the attributes it reads."""
    instance: Any = types.SimpleNamespace()
    if target.owner is not None:
        try:
            instance = target.owner.__new__(target.owner)
        except Exception:
            instance = types.SimpleNamespace()
    for name, value in attributes.items():
        try:
            object.__setattr__(instance, name, value)
        except Exception:
            continue
    return instance


def _instance(target: Target, call: CallInputs) -> Any:
    if call.instance is not None:
        return call.instance.build(False)
    return make_instance(target, {k: s.build(False) for k, s in call.attributes.items()})


def _bound_first(target: Target, call: CallInputs) -> list[Any]:
    if target.binding == METHOD:
        return [_instance(target, call)]
    if target.binding == CLASSMETHOD:
        return [target.owner if target.owner is not None else types.SimpleNamespace()]
    return []


def _array_leaves(jax: Any, out: Any) -> list[Any]:
    # Only arrays can leave a jit trace; keep them, so that a discarded update differs from a used one.
    return [leaf for leaf in jax.tree_util.tree_leaves(out) if isinstance(leaf, jax.Array)]


def clear_caches(jax: Any) -> None:
    # A tracing-cache hit would skip the Python body, and with it every check.
    clear = getattr(jax, "clear_caches", None)
    if clear is not None:
        clear()


def pinned(jax: Any) -> PinnedJax:
    return jax if isinstance(jax, PinnedJax) else PinnedJax(jax)


def trace(jax: Any, function: Any, arguments: list[Any]) -> Any:
    """The jaxpr of `function` traced under jit, without lowering or compiling (make_jaxpr on JAX versions
    whose jit objects have no `.trace`), through the entry points pinned before the module was imported."""
    jax = pinned(jax)
    jitted = jax.jit(function)
    if jax.can_trace_jitted(jitted):
        return jax.trace_jitted(jitted, *arguments).jaxpr
    return jax.make_jaxpr(function)(*arguments)


def run_attempt(
    jax: Any,
    target: Target,
    call: CallInputs,
    mode: str,
    lines: ModuleLines,
    recorder: DebugPrintRecorder,
    namespace: dict[str, Any],
) -> Outcome:
    outcome = Outcome()
    clear_caches(jax)
    watch_places = mode in (LEAKS, LEAK_PLACES)
    try:
        # Keys are built under key-reuse checking (so that they are tracked); the leak checker covers the
        # trace only: building a flax state under it costs seconds and checks nothing the rule is about.
        with checking_mode(jax, mode if mode == KEY_REUSE else PLAIN):
            first = _bound_first(target, call)
            instance = first[0] if target.binding == METHOD else None
            before = tracer_places(namespace, instance) if watch_places else {}
            positional = [(a, a.spec.build(a.traced)) for a in call.positional]
            keyword = {name: (a, a.spec.build(a.traced)) for name, a in call.keyword.items()}
            dynamic = [v for a, v in positional if a.traced] + [v for a, v in keyword.values() if a.traced]

            def entry(*traced: Any) -> list[Any]:
                values = iter(traced)
                args = [*first, *[next(values) if a.traced else v for a, v in positional]]
                kwargs = {name: next(values) if a.traced else v for name, (a, v) in keyword.items()}
                return _array_leaves(jax, (call.function or target.function)(*args, **kwargs))

            stream = _RecordingStream(lines, outcome.writes)
            try:
                with (
                    checking_mode(jax, mode if mode != KEY_REUSE else PLAIN),
                    contextlib.redirect_stdout(stream),
                    contextlib.redirect_stderr(stream),
                    recorder.recording(outcome.debug_formats),
                ):
                    outcome.jaxpr = trace(jax, entry, dynamic)
            finally:
                if watch_places:
                    after = tracer_places(namespace, instance)
                    outcome.leaked_into = {p for p, ids in after.items() if ids - before.get(p, set())}
    except BaseException as error:  # user code may raise anything, SystemExit included
        outcome.error = error
    return outcome


def run_twice_attempt(jax: Any, target: Target, call: CallInputs, path: str, jitted: Any) -> Outcome:
    """Call the user's own jitted function twice with the same concrete inputs, recording which lines
    of the module ran each time: a line that ran in the first call (the trace) and not in the second
    (the cached executable) runs once per compile, not once per call."""
    from .lines_run import LinesRun

    outcome = Outcome()
    clear_caches(jax)
    try:
        args = [*_bound_first(target, call), *[a.spec.build(False) for a in call.positional]]
        kwargs = {name: a.spec.build(False) for name, a in call.keyword.items()}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            with LinesRun(path) as tracing:
                jax.block_until_ready(jitted(*args, **kwargs))
            with LinesRun(path) as cached:
                jax.block_until_ready(jitted(*args, **kwargs))
        outcome.calls_lines = (tracing.lines, cached.lines)
    except BaseException as error:
        outcome.error = error
    return outcome


def run_self_jit_attempt(jax: Any, target: Target, call: CallInputs, reassigned: list[str]) -> Outcome:
    """Call the user's own jitted method the way `instance.method(...)` does: with the instance as an
    argument of the jit, which JAX rejects unless `self` is static. With `self` static, JAX hashes the
    instance (an unhashable one raises) and, for an instance hashed by identity, reuses the compiled call
    after its attributes change: each attribute in `reassigned` is changed between two calls, and a second
    result that matches the first but not the method run eagerly on the changed instance is stale."""
    outcome = Outcome()
    clear_caches(jax)
    params = target.parameters
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            instance = _instance(target, call)
            if not (params and target.is_static(0, params[0].name)):
                args = [instance, *[_value(a) for a in call.positional]]
                kwargs = {name: _value(a) for name, a in call.keyword.items()}
                outcome.jaxpr = pinned(jax).trace_jitted(target.jitted, *args, **kwargs).jaxpr
                return outcome
            args = [a.spec.build(False) for a in call.positional]
            kwargs = {name: a.spec.build(False) for name, a in call.keyword.items()}
            outcome.unhashable = type(instance).__hash__ is None
            first = target.jitted(instance, *args, **kwargs)
            for name in reassigned:
                old = getattr(instance, name, None)
                new = _changed(jax, old)
                if new is None:
                    continue
                try:
                    setattr(instance, name, new)  # as the user's code can: a frozen class refuses
                except Exception:
                    continue
                try:
                    again = target.jitted(instance, *args, **kwargs)
                    with jax.disable_jit():
                        fresh = target.function(instance, *args, **kwargs)
                finally:
                    setattr(instance, name, old)
                outcome.changed.append(name)
                if _same(jax, again, first) and not _same(jax, again, fresh):
                    outcome.stale = name
                    break
    except BaseException as error:
        outcome.error = error
    return outcome


def _changed(jax: Any, value: Any) -> Any:
    """Another value of the same kind, or None for a kind this does not know how to change."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2 + 1
    if isinstance(value, jax.Array) or type(value).__module__ == "numpy":
        try:
            return value * 2 + 1
        except Exception:
            return None
    return None


def _same(jax: Any, a: Any, b: Any) -> bool:
    import numpy as np

    leaves_a, tree_a = jax.tree_util.tree_flatten(a)
    leaves_b, tree_b = jax.tree_util.tree_flatten(b)
    if tree_a != tree_b:
        return False
    try:
        return all(
            np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(leaves_a, leaves_b, strict=True)
        )
    except Exception:
        return False


def _value(arg: Arg) -> Any:
    return arg.spec.build(arg.traced)
