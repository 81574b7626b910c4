"""Hooks into JAX that report every trace and every compile of a jitted function.

How each count is taken (facts checked on jax 0.10.2 and 0.12.0.1, CPU):

- Traces: JAX calls `jax._src.pjit._trace_for_jit(fun, ji, ctx_mesh, dbg, avals, args, kwargs)` on each
  miss of jit's parameter cache, top-level or nested, with the Python callable, its static arguments
  and the abstract values of the others: everything a signature needs. That miss can still hit the
  tracing cache below it (then the body does not run), so a trace is counted only when JAX's
  `trace_to_jaxpr` test event fires inside the call. Both are private: they are checked at install and,
  if absent, the hooks fall back to public `jax.monitoring` events (top-level traces only, no
  signatures) plus JAX's cache-miss explanations for the function's file and line.
- Compiles: the public `backend_compile_duration` monitoring event, named `jit(NAME)`, is attributed to
  the function last traced under that name on the same thread (else in the process). This also counts
  the extra executables that grad/vmap of a jitted function compile without re-tracing it. Eager
  op-by-op dispatch compiles JAX-internal functions; they are counted apart.
- Key reuse: JAX's own `check_key_reuse_jaxpr` (jax.experimental.key_reuse, private module) is run on
  each outermost traced jaxpr, and a KeyReuseError it raises is reported, never raised in the program.
- Keys: after each outermost trace, `bus.key_watch` (key_fingerprints.py, under `--run`) is handed the traced
  function and its jaxpr, to learn which key arguments the function consumes.
- Hints: `jax_explain_cache_misses` is switched on (it is not part of any cache key) and its records
  are captured, kept off the user's stderr, and attached to the trace they explain, until
  `HINT_LIMIT` of them (listing the keys costs time on every miss).

`install()` runs once per process; the event bus lives on the `sys` module so that two copies of this
package (the `--run` bootstrap loads one under a private name) never hook JAX twice.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import linecache
import logging
import os
import re
import sys
import threading
from typing import Any

from .call_records import encode_call_or_reason, encode_error
from .events import CompileEvent, FunctionInfo, TraceEvent
from .jax_support import TRACE_FOR_JIT_PARAMS
from .jax_support import trace_for_jit as trace_for_jit_original
from .pickled_calls import pickle_call
from .retrace_reasons import RetraceExplainer
from .signatures import build_signature

BUS_ATTRIBUTE = "_jaxlint_recompile_bus"
HINT_LIMIT = 100
_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"
# JAX logs its cache-miss explanations from partial_eval (0.5 on) or pjit (0.4.x).
_EXPLAIN_LOGGERS = ("jax._src.interpreters.partial_eval", "jax._src.pjit")
_PERSISTENT_CACHE_LOGGERS = ("jax._src.compiler", "jax._src.compilation_cache")
_DEFINED_AT = re.compile(
    r"(?:(?P<name>[\w<>.]+)(?: id=\d+)? )?defined at (?P<path>.+?):(?P<line>\d+)\s*$", re.MULTILINE
)
_install_lock = threading.Lock()


class Bus:
    """Fans events out to the subscribed recorders; a failing recorder never breaks the user's program."""

    def __init__(self, mode: str) -> None:
        # "exact" (signatures, reasons), "functions" (JAX < 0.9: counts per function, no signatures) or
        # "fallback" (public monitoring events only)
        self.mode = mode
        self.errors: list[str] = []
        self._subscribers: tuple[Any, ...] = ()
        self._lock = threading.Lock()
        self.line_watch: Any = None  # line_watch.LineWatch: flagged statements watched while tracing
        self.key_watch: Any = None  # key_fingerprints.KeyWatch: told which key inputs each trace consumes
        self.tracing: Any = lambda: False  # whether this thread is inside a jit trace (not: "fallback")

    def subscribe(self, recorder: Any) -> None:
        with self._lock:
            self._subscribers = (*self._subscribers, recorder)

    def unsubscribe(self, recorder: Any) -> None:
        with self._lock:
            self._subscribers = tuple(r for r in self._subscribers if r is not recorder)

    def publish_trace(self, event: TraceEvent) -> None:
        for recorder in self._subscribers:
            self._guard(recorder.on_trace, event)

    def publish_compile(self, event: CompileEvent) -> None:
        for recorder in self._subscribers:
            self._guard(recorder.on_compile, event)

    @property
    def wants_calls(self) -> bool:
        return any(hasattr(recorder, "on_call") for recorder in self._subscribers)

    def publish_call(self, info: FunctionInfo, call: dict[str, Any] | None, error: dict | None) -> None:
        """A jitted call about to be traced (`call`, see call_records), or the error its tracing raised."""
        for recorder in self._subscribers:
            method = getattr(recorder, "on_call", None)
            if method is not None:
                self._guard(lambda event, method=method: method(*event), (info, call, error))

    def report_error(self, where: str, exc: BaseException) -> None:
        message = f"{where}: {type(exc).__name__}: {exc}"
        if message not in self.errors and len(self.errors) < 20:
            self.errors.append(message)
            print(
                f"jaxlint: recompile instrumentation error ({message}); counts may be incomplete",
                file=sys.stderr,
            )

    def _guard(self, method: Any, event: Any) -> None:
        try:
            method(event)
        except Exception as exc:
            self.report_error("recorder", exc)


def install() -> Bus:
    """Hook JAX (importing it) once per process and return the event bus."""
    bus = getattr(sys, BUS_ATTRIBUTE, None)
    if bus is None:
        with _install_lock:
            bus = getattr(sys, BUS_ATTRIBUTE, None)
            if bus is None:
                bus = _Instrumentation().install()
                setattr(sys, BUS_ATTRIBUTE, bus)
    return bus


class _Frame:
    """One `_trace_for_jit` call in progress on this thread."""

    __slots__ = ("body_ran", "hints")

    def __init__(self) -> None:
        self.body_ran = False
        self.hints: list[tuple[str, int, str]] = []  # (path, first_line, text) from JAX's explanations


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.frames: list[_Frame] = []
        self.names: dict[str, FunctionInfo] = {}  # jit name → function last traced under it here
        self.cache_hit = False  # a persistent-cache hit was announced for the next compile
        # JAX's explanations not yet matched to a trace: (function name, path, line, text). A nested
        # trace (jnp's own jits on old JAX) ends first, so a trace takes the latest one of its name.
        self.fallback_hints: list[tuple[str, str, int, str]] = []
        self.event_names: list[str] = []  # fun_name of the log_elapsed_time blocks open (old JAX)
        self.last_error = 0  # id() of the error last announced: nested jits see it once each


class _Instrumentation:
    def __init__(self) -> None:
        import jax

        self.jax = jax
        self.local = _ThreadState()
        self.names: dict[str, FunctionInfo] = {}
        self.infos: dict[tuple[Any, str], FunctionInfo] = {}
        self.trace_events_live = False
        self.test_listener: Any = None
        self.hints_taken = 0
        self.own_explain_flag = False
        self.show_explain = False
        self.context_fn: Any = None
        self.fallback_seen: set[tuple[str, int, str]] = set()
        self.explainer_lock = threading.Lock()
        self.key_reuse_checker: Any = None  # jax's check_key_reuse_jaxpr once imported; False: none
        jax_dir = os.path.dirname(os.path.abspath(jax.__file__))
        try:
            import jaxlib

            jaxlib_dir = os.path.dirname(os.path.abspath(jaxlib.__file__))
        except Exception:
            jaxlib_dir = jax_dir
        self.internal_dirs = tuple(d + os.sep for d in {jax_dir, jaxlib_dir})
        here = os.path.dirname(os.path.abspath(__file__))
        self.skip_dirs = (*self.internal_dirs, here + os.sep, os.path.dirname(functools.__file__) + os.sep)

    # -- install -------------------------------------------------------------------------------
    def install(self) -> Bus:
        private = os.environ.get("JAXLINT_RECOMPILES_PUBLIC_ONLY") != "1"
        if private and self._hook_trace_for_jit():
            mode = "exact"
        elif private and self._hook_create_jaxpr():
            mode = "functions"
        else:
            mode = "fallback"
        self.bus = Bus(mode)
        if mode != "fallback":
            local = self.local
            self.bus.tracing = lambda: bool(local.frames)
        context_names: tuple[str, ...] = ()
        try:
            from jax._src import config as jax_config

            self.context_fn = jax_config.trace_context
            context_names = tuple(jax_config.trace_context_names())
        except Exception:
            self.context_fn = None
        self.explainer = RetraceExplainer(context_names)
        self._name_old_events()
        monitoring = self.jax.monitoring
        monitoring.register_event_duration_secs_listener(self._on_duration)
        monitoring.register_event_listener(self._on_event)
        self._capture_explanations()
        return self.bus

    def _name_old_events(self) -> None:
        """JAX before 0.5 sends its duration events without `fun_name`; the block that times them,
        `dispatch.log_elapsed_time(fmt, fun_name, event)`, knows it: keep a per-thread stack of the open
        blocks' names, which the listener reads when the event lacks one."""
        try:
            from jax._src import dispatch

            original = dispatch.log_elapsed_time
            if list(inspect.signature(original).parameters)[:3] != ["fmt", "fun_name", "event"]:
                return
        except Exception:
            return
        if getattr(original, "_jaxlint_original", None) is not None:
            return
        names = self.local

        @contextlib.contextmanager
        def log_elapsed_time(fmt: str, fun_name: str, event: str | None = None, *args: Any, **kwargs: Any):
            names.event_names.append(fun_name)
            try:
                with original(fmt, fun_name, event, *args, **kwargs):
                    yield
            finally:
                names.event_names.pop()

        log_elapsed_time._jaxlint_original = original  # type: ignore[attr-defined]
        dispatch.log_elapsed_time = log_elapsed_time

    def _event_name(self, kwargs: dict[str, Any]) -> str:
        name = kwargs.get("fun_name")
        if name is None and self.local.event_names:
            name = self.local.event_names[-1]
        return "?" if name is None else str(name)

    def _hook_trace_for_jit(self) -> bool:
        try:
            from jax._src import pjit, util
        except Exception:
            return False
        original = getattr(pjit, "_trace_for_jit", None)
        if original is None or original is not trace_for_jit_original():
            return False  # absent, changed, or wrapped already
        if hasattr(util, "test_event_listener"):
            self._chain_test_events(util)

        def trace_for_jit(*args: Any, **kwargs: Any) -> Any:
            wants_calls = self.bus.wants_calls
            if wants_calls:  # at entry: a body that raises while tracing still leaves its inputs
                self._announce(original, args, kwargs, None)
            frame = _Frame()
            frames = self.local.frames
            watch = self.bus.line_watch if not frames else None  # the outermost trace only
            watching = watch is not None and watch.begin()
            frames.append(frame)
            try:
                result = original(*args, **kwargs)
            except Exception as error:
                if wants_calls and id(error) != self.local.last_error:  # nested jits: once
                    self.local.last_error = id(error)
                    self._announce(original, args, kwargs, error)
                raise
            finally:
                frames.pop()
                if watching:
                    try:
                        watch.end()
                    except Exception as exc:
                        self.bus.report_error("line watch", exc)
            try:
                bound = args if len(args) == 7 and not kwargs else self._bind(original, args, kwargs)
                self._after_trace(frame, result, *bound)
                if not frames and self.bus.key_watch is not None:
                    params = getattr(result, "params", None)
                    if isinstance(params, dict) and params.get("jaxpr") is not None:
                        self.bus.key_watch.traced(bound[0], params["jaxpr"])
                if wants_calls and not frames:  # the outermost trace holds the nested ones' equations
                    self._check_key_reuse(bound[0], result)
            except Exception as exc:
                self.bus.report_error("trace hook", exc)
            return result

        trace_for_jit._jaxlint_original = original  # type: ignore[attr-defined]
        pjit._trace_for_jit = trace_for_jit
        try:  # keep this wrapper out of the tracebacks JAX shows for errors in user code
            from jax._src import traceback_util

            traceback_util.register_exclusion(os.path.abspath(__file__))
        except Exception:
            pass
        return True

    def _hook_create_jaxpr(self) -> bool:
        """JAX before 0.9 (no `_trace_for_jit`): its jit traces in `pjit._create_pjit_jaxpr(fun, ...)`,
        memoized on `fun.f`, the user's callable. Each trace is counted for that function, without a
        signature; the trace duration event that fires inside tells a traced body from a cache hit."""
        try:
            from jax._src import pjit
        except Exception:
            return False
        original = getattr(pjit, "_create_pjit_jaxpr", None)
        if original is None or getattr(original, "_jaxlint_original", None) is not None:
            return False
        try:
            first = next(iter(inspect.signature(original).parameters))
        except (TypeError, ValueError, StopIteration):
            return False
        if first != "fun":
            return False
        self.trace_events_live = True

        @functools.wraps(original)  # keeps `cache_clear`, which jax.clear_caches() calls
        def create_pjit_jaxpr(fun: Any, *args: Any, **kwargs: Any) -> Any:
            frame = _Frame()
            frames = self.local.frames
            frames.append(frame)
            try:
                result = original(fun, *args, **kwargs)
            finally:
                frames.pop()
            try:
                self._after_function_trace(frame, getattr(fun, "f", fun))
                if not frames and self.bus.key_watch is not None:
                    closed = result[0] if isinstance(result, tuple) and result else result
                    if hasattr(closed, "jaxpr") or hasattr(closed, "eqns"):
                        self.bus.key_watch.traced(getattr(fun, "f", fun), closed)
            except Exception as exc:
                self.bus.report_error("trace hook", exc)
            return result

        create_pjit_jaxpr._jaxlint_original = original  # type: ignore[attr-defined]
        pjit._create_pjit_jaxpr = create_pjit_jaxpr
        try:
            from jax._src import traceback_util

            traceback_util.register_exclusion(os.path.abspath(__file__))
        except Exception:
            pass
        return True

    def _after_function_trace(self, frame: _Frame, fun: Any) -> None:
        info = self._function_info(fun)
        self._remember_name(info.qualname.rsplit(".", 1)[-1], info)
        if not frame.body_ran:
            return  # the tracing cache hit
        if info.internal:
            self.bus.publish_trace(TraceEvent(info))
            return
        self.bus.publish_trace(TraceEvent(info, (), None, self._callsite()))

    def _announce(self, original: Any, args: tuple, kwargs: dict, error: BaseException | None) -> None:
        try:
            fun, ji, _, _, _, call_args, call_kwargs = (
                args if len(args) == 7 and not kwargs else self._bind(original, args, kwargs)
            )
            info = self._function_info(fun)
            if info.internal:
                return
            if error is not None:
                self.bus.publish_call(info, None, encode_error(error, self.skip_dirs))
                return
            statics = (
                tuple(getattr(ji, "static_argnums", ()) or ()),
                tuple(getattr(ji, "static_argnames", ()) or ()),
            )
            values = (tuple(call_args), dict(call_kwargs or {}))
            names = _positional_names(getattr(ji, "fun_signature", None))
            call = encode_call_or_reason(self.jax, *values, *statics, names)
            if "unkept" in call and not _installed(info.path):  # closures, optax transformations: pickle
                pickled = pickle_call(self.jax, *values, *statics)
                call = (
                    pickled if "pickled" in pickled else {"unkept": f"{call['unkept']}; {pickled['unkept']}"}
                )
            self.bus.publish_call(info, call, None)
        except Exception as exc:
            self.bus.report_error("call hook", exc)

    def _check_key_reuse(self, fun: Any, result: Any) -> None:
        """JAX's own key-reuse analysis of the traced jaxpr, run here and its error kept, not raised: the
        program runs as it would (`jax_debug_key_reuse` would raise in it). Typed keys only: legacy
        `PRNGKey` arrays are plain uint32 unless the program enables custom PRNG itself."""
        if self.key_reuse_checker is False or getattr(self.jax.config, "jax_debug_key_reuse", False):
            return  # unavailable, or JAX checks (and raises) itself
        if self.key_reuse_checker is None:
            try:
                from jax.experimental.key_reuse._core import check_key_reuse_jaxpr
            except Exception:
                self.key_reuse_checker = False
                return
            self.key_reuse_checker = check_key_reuse_jaxpr
        params = getattr(result, "params", None)
        closed = params.get("jaxpr") if isinstance(params, dict) else None
        info = self._function_info(fun)
        if closed is None or info.internal:
            return
        try:
            self.key_reuse_checker(getattr(closed, "jaxpr", closed))
        except Exception as error:
            if "KeyReuseError" in {cls.__name__ for cls in type(error).__mro__}:
                found = encode_error(error, self.skip_dirs)
                found["checked"] = True  # found by the check, not raised in the program
                self.bus.publish_call(info, None, found)

    @staticmethod
    def _bind(original: Any, args: tuple, kwargs: dict) -> tuple:
        bound = inspect.signature(original).bind(*args, **kwargs)
        return tuple(bound.arguments[name] for name in TRACE_FOR_JIT_PARAMS)

    def _chain_test_events(self, util: Any) -> None:
        previous = util.test_event_listener
        local = self.local

        def listener(name: str, *args: Any) -> None:
            if name == "trace_to_jaxpr":
                self.trace_events_live = True
                frames = local.frames
                if frames:
                    frames[-1].body_ran = True
            if previous is not None:
                previous(name, *args)

        self.util = util
        self.test_listener = listener
        util.test_event_listener = listener

    def _capture_explanations(self) -> None:
        config = self.jax.config
        try:
            already = bool(config.jax_explain_cache_misses)
        except Exception:
            return
        self.show_explain = already
        if not already:
            try:
                config.update("jax_explain_cache_misses", True)
                self.own_explain_flag = True
            except Exception:
                return
        for name in _EXPLAIN_LOGGERS:
            logging.getLogger(name).addFilter(_ExplainFilter(self))
        if self.own_explain_flag:
            for name in _PERSISTENT_CACHE_LOGGERS:
                logging.getLogger(name).addFilter(_PersistentCacheNoise(self))

    # -- traces --------------------------------------------------------------------------------
    def _after_trace(
        self,
        frame: _Frame,
        result: Any,
        fun: Any,
        ji: Any,
        ctx_mesh: Any,
        dbg: Any,
        avals: Any,
        args: Any,
        kwargs: Any,
    ) -> None:
        if self.test_listener is not None and self.util.test_event_listener is not self.test_listener:
            self.trace_events_live = False  # someone replaced the listener: count every call instead
        info = self._function_info(fun)
        params = getattr(result, "params", None)
        name = params.get("name") if isinstance(params, dict) else None
        self._remember_name(name or info.qualname.rsplit(".", 1)[-1], info)
        if self.trace_events_live and not frame.body_ran:
            return  # the tracing cache hit: the Python body did not run
        if info.internal:
            self.bus.publish_trace(TraceEvent(info))
            return
        signature = build_signature(
            leaf_names=_leaf_names(dbg, len(avals)),
            avals=avals,
            args=args,
            kwargs=kwargs,
            static_argnums=tuple(getattr(ji, "static_argnums", ()) or ()),
            static_argnames=tuple(getattr(ji, "static_argnames", ()) or ()),
            param_names=_positional_names(getattr(ji, "fun_signature", None)),
        )
        context = self._context()
        with self.explainer_lock:  # threads may trace at the same time
            reason = self.explainer.explain(info.key, fun, signature, context)
        hint = next(
            (text for path, line, text in reversed(frame.hints) if (path, line) == info.key[:2]), None
        )
        self.bus.publish_trace(TraceEvent(info, signature, reason, self._callsite(), hint))
        if self.own_explain_flag and self.hints_taken >= HINT_LIMIT:
            self._stop_explaining()

    def _context(self) -> tuple:
        if self.context_fn is None:
            return ()
        try:
            return tuple(self.context_fn())
        except Exception:
            return ()

    def _remember_name(self, name: str, info: FunctionInfo) -> None:
        self.local.names[name] = info
        self.names[name] = info

    def _function_info(self, fun: Any) -> FunctionInfo:
        target = _unwrap(fun)
        code = getattr(target, "__code__", None)
        owner: Any = target
        if code is None:  # a callable object: its class's __call__
            owner = type(target).__call__ if callable(target) else None
            code = getattr(owner, "__code__", None)
        qualname = getattr(owner, "__qualname__", None) or getattr(code, "co_name", None) or repr(target)
        cache_key = (code, qualname)
        info = self.infos.get(cache_key)
        if info is None:
            module = getattr(owner, "__module__", None) or "?"
            if code is None:
                info = FunctionInfo(
                    module, qualname, "?", 0, 0, internal=module.split(".")[0] in ("jax", "jaxlib")
                )
            else:
                path = (
                    os.path.abspath(code.co_filename)
                    if not code.co_filename.startswith("<")
                    else code.co_filename
                )
                first = code.co_firstlineno
                line = self._def_line(path, first, code.co_name)
                info = FunctionInfo(
                    module, qualname, path, first, line, internal=path.startswith(self.internal_dirs)
                )
            self.infos[cache_key] = info
        return info

    def _def_line(self, path: str, first_line: int, name: str) -> int:
        """The `def` line: a decorated function's code starts at its first decorator."""
        if name == "<lambda>":
            return first_line
        pattern = re.compile(rf"\s*(async\s+)?def\s+{re.escape(name)}\b")
        lines = linecache.getlines(path)
        for index in range(first_line - 1, min(len(lines), first_line + 60)):
            if pattern.match(lines[index]):
                return index + 1
        return first_line

    def _callsite(self) -> str | None:
        frame = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not filename.startswith(self.skip_dirs) and not filename.startswith("<frozen"):
                path = os.path.abspath(filename) if not filename.startswith("<") else filename
                return f"{path}:{frame.f_lineno}"
            frame = frame.f_back
        return None

    # -- monitoring events ---------------------------------------------------------------------
    def _on_duration(self, event: str, duration: float, **kwargs: Any) -> None:
        try:
            if event == _COMPILE_EVENT:
                self._on_compile(self._event_name(kwargs), duration)
            elif event == _TRACE_EVENT and self.bus.mode == "functions":
                if self.local.frames:
                    self.local.frames[-1].body_ran = True
            elif event == _TRACE_EVENT and self.bus.mode == "fallback":
                self._on_fallback_trace(self._event_name(kwargs))
        except Exception as exc:
            self.bus.report_error("monitoring listener", exc)

    def _on_event(self, event: str, **kwargs: Any) -> None:
        if event == _CACHE_HIT_EVENT:
            self.local.cache_hit = True

    def _on_compile(self, fun_name: str, seconds: float) -> None:
        name = fun_name[4:-1] if fun_name.startswith("jit(") and fun_name.endswith(")") else fun_name
        info = self.local.names.get(name) or self.names.get(name)
        hit, self.local.cache_hit = self.local.cache_hit, False
        self.bus.publish_compile(CompileEvent(name, info, seconds, hit))

    def _on_fallback_trace(self, name: str) -> None:
        """Public events only: a top-level trace, placed by JAX's explanation when it gave one."""
        pending = self.local.fallback_hints
        found = next((i for i in range(len(pending) - 1, -1, -1) if pending[i][0] in (name, "")), None)
        hint = pending.pop(found)[1:] if found is not None else None
        if hint is not None and hint[0].startswith(self.internal_dirs):
            hint = None
        if hint is None:  # JAX explains misses of user functions only: this one is JAX's own
            info = FunctionInfo("jax", name, "?", 0, 0, internal=True)
        else:
            path, first_line, _ = hint
            info = FunctionInfo(
                _module_of(path), name, path, first_line, self._def_line(path, first_line, name)
            )
        self._remember_name(name, info)
        if info.internal:
            self.bus.publish_trace(TraceEvent(info))
            return
        repeat = info.key in self.fallback_seen
        self.fallback_seen.add(info.key)
        reason = f"per JAX (no signatures without its private jit hook): {hint[2]}" if repeat else None
        self.bus.publish_trace(TraceEvent(info, (), reason, self._callsite(), hint[2] if repeat else None))

    # -- JAX's explanations --------------------------------------------------------------------
    def take_hint(self, message: str) -> None:
        match = _DEFINED_AT.search(message.split("\n  all previously seen")[0])
        if match is None:
            return
        path, line = os.path.abspath(match["path"]), int(match["line"])
        text = _hint_text(message)
        self.hints_taken += 1
        frames = self.local.frames
        if frames:
            frames[-1].hints.append((path, line, text))
        pending = self.local.fallback_hints
        pending.append((match["name"] or "", path, line, text))
        del pending[:-32]

    def _stop_explaining(self) -> None:
        try:
            self.jax.config.update("jax_explain_cache_misses", False)
        except Exception:
            pass
        self.own_explain_flag = False


class _ExplainFilter(logging.Filter):
    """Takes JAX's "TRACING CACHE MISS" records; keeps them off stderr unless the user asked for them."""

    def __init__(self, instrumentation: _Instrumentation) -> None:
        super().__init__()
        self.instrumentation = instrumentation

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        if not message.startswith("TRACING CACHE MISS"):
            return True
        try:
            self.instrumentation.take_hint(message)
        except Exception as exc:
            self.instrumentation.bus.report_error("explain capture", exc)
        return self.instrumentation.show_explain


class _PersistentCacheNoise(logging.Filter):
    """With explanations on, JAX also logs each persistent-cache write or skip as a warning; the user did
    not ask for those. Cache hits are logged under `jax_log_compiles`, which the user may want: kept."""

    def __init__(self, instrumentation: _Instrumentation) -> None:
        super().__init__()
        self.instrumentation = instrumentation

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not self.instrumentation.own_explain_flag:
            return True
        message = str(record.msg).lower()
        return not ("persistent" in message and "cache" in message and "cache hit" not in message)


def _hint_text(message: str) -> str:
    if "never seen function" in message:
        return "never seen function (a new function object)"
    marker = "For the closest previous key:"
    text = message.split(marker, 1)[1] if marker in message else message.split("\n", 1)[-1]
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:299] + "…"


def _unwrap(fun: Any) -> Any:
    """The user's function behind partials, bound methods and functools.wraps wrappers (vmap, grad…)."""
    for _ in range(32):
        if isinstance(fun, functools.partial):
            fun = fun.func
            continue
        try:
            inner = getattr(fun, "__func__", None) or getattr(fun, "__wrapped__", None)
        except Exception:  # an object whose __getattr__ raises something else than AttributeError
            inner = None
        if inner is None or inner is fun or not callable(inner):
            return fun
        fun = inner
    return fun


def _installed(path: str) -> bool:
    """A file of an installed library: its calls are not kept for `--verify` (the store skips them too)."""
    parts = path.replace("\\", "/").split("/")
    return "site-packages" in parts or "dist-packages" in parts


def _leaf_names(dbg: Any, count: int) -> tuple[str, ...] | None:
    try:
        names = dbg.safe_arg_names(count)
    except Exception:
        names = getattr(dbg, "arg_names", None)
    return tuple(names) if names is not None else None


def _positional_names(signature: Any) -> list[str]:
    if signature is None:
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    try:
        return [p.name for p in signature.parameters.values() if p.kind in kinds]
    except Exception:
        return []


def _module_of(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]
