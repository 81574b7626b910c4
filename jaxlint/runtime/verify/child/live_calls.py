"""Calls of the module's own jitted functions made by its top-level code while it is imported (scripts and
notebooks build their state and call `train_step` there), kept with their live arguments.

A flax `TrainState` holds `apply_fn` and optax `tx` closures in its static part: nothing rebuilds it in
another process, but here the object is in memory, so the flagged function is traced (or called twice)
with exactly what the module passed. Calls are caught where JAX starts tracing a jitted call
(`jax._src.pjit._trace_for_jit`, private; checked by its signature, absent means no live calls), so a
call that raised while tracing is kept too. Calls made inside another trace (their leaves are tracers
that die with it) are not kept. The traced arguments' device arrays are kept as `ShapeDtypeStruct`s
(tracing needs no more; a call that must run gets ones): holding a training state's buffers would keep
the accelerator's memory the module itself let go. Everything else (the static part, static arguments,
keys, host values) is kept as it is.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
import types
from typing import Any

from .inputs import Arg, CallInputs
from .lines_run import SameFile
from .pinned_jax import api
from .resolve import METHOD, Target

MAX_CALLS = 4  # per function: enough for a few static variants, without holding much memory
_PARAMS = ["fun", "ji", "ctx_mesh", "dbg", "avals", "args", "kwargs"]


@dataclasses.dataclass
class LiveCall:
    function: types.FunctionType
    args: tuple
    kwargs: dict[str, Any]
    static_argnums: tuple[int, ...]
    static_argnames: tuple[str, ...]
    line: int  # the module's line that made the call (0: unknown)


@dataclasses.dataclass(frozen=True)
class LiveSpec:
    """One argument as the module passed it."""

    value: Any = dataclasses.field(compare=False)
    text: str

    def describe(self) -> str:
        return self.text

    def build(self, traced: bool) -> Any:
        import jax.numpy as jnp

        jax = api()  # the ShapeDtypeStruct placeholders were made with JAX's own class

        def usable(leaf: Any) -> Any:
            if isinstance(leaf, jax.ShapeDtypeStruct) and not traced:
                if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):  # a recorded key's placeholder
                    count = max(1, math.prod(leaf.shape))
                    keys = jax.random.split(jax.random.key(0, impl=_impl_name(leaf.dtype)), count)
                    return keys.reshape(leaf.shape)
                return jnp.ones(leaf.shape, leaf.dtype)
            return leaf

        return jax.tree_util.tree_map(usable, self.value)


def _impl_name(dtype: Any) -> str | None:
    name = getattr(getattr(dtype, "_impl", None), "name", None)
    return name if isinstance(name, str) else None


def _abstract(jax: Any, value: Any) -> Any:
    def leaf_of(leaf: Any) -> Any:
        if isinstance(leaf, jax.Array) and not jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, weak_type=leaf.weak_type)
        return leaf

    return jax.tree_util.tree_map(leaf_of, value)


class LiveCalls:
    """While active, keeps up to MAX_CALLS calls per function of the module's file (by code object)."""

    def __init__(self, jax: Any, path: str) -> None:
        self.jax = jax
        self._ours = SameFile(path)
        self.calls: dict[types.CodeType, list[LiveCall]] = {}
        self._pjit: Any = None
        self._original: Any = None
        self._signature_of: Any = None

    def __enter__(self) -> LiveCalls:
        try:
            from jax._src import pjit
        except Exception:
            return self
        original = getattr(pjit, "_trace_for_jit", None)
        # `--run`'s recompile hooks may wrap it already (in tests, in this same process): check JAX's own.
        self._signature_of = getattr(original, "_jaxlint_original", original)
        try:
            if original is None or list(inspect.signature(self._signature_of).parameters) != _PARAMS:
                return self
        except (TypeError, ValueError):
            return self
        keep = self._keep

        def trace_for_jit(*args: Any, **kwargs: Any) -> Any:
            try:
                keep(args, kwargs)
            except Exception:
                pass  # never in the way of the module's own call
            return original(*args, **kwargs)

        self._pjit, self._original = pjit, original
        pjit._trace_for_jit = trace_for_jit
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pjit is not None:
            self._pjit._trace_for_jit = self._original
            self._pjit = None

    def _keep(self, args: tuple, kwargs: dict) -> None:
        if len(args) == 7 and not kwargs:
            fun, ji, _, _, _, call_args, call_kwargs = args
        else:
            bound = inspect.signature(self._signature_of).bind(*args, **kwargs).arguments
            fun, ji, call_args, call_kwargs = (bound[n] for n in ("fun", "ji", "args", "kwargs"))
        function = _plain_function(fun)
        if function is None or not self._ours(function.__code__.co_filename):
            return
        kept = self.calls.setdefault(function.__code__, [])
        if len(kept) >= MAX_CALLS:
            return
        values = (tuple(call_args), dict(call_kwargs or {}))
        tracer = self.jax.core.Tracer
        if any(isinstance(leaf, tracer) for leaf in self.jax.tree_util.tree_leaves(values)):
            return  # called inside another trace: its tracers are dead once that trace ends
        statics = tuple(getattr(ji, "static_argnums", ()) or ())
        names = tuple(getattr(ji, "static_argnames", ()) or ())
        count = len(values[0])
        static_at = {n + count if n < 0 else n for n in statics}
        args = tuple(v if i in static_at else _abstract(self.jax, v) for i, v in enumerate(values[0]))
        kwargs = {k: v if k in names else _abstract(self.jax, v) for k, v in values[1].items()}
        kept.append(LiveCall(function, args, kwargs, statics, names, self._calling_line()))

    def _calling_line(self) -> int:
        frame: types.FrameType | None = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_name == "<module>" and self._ours(frame.f_code.co_filename):
                return frame.f_lineno
            frame = frame.f_back
        return 0

    def for_target(self, target: Target) -> list[CallInputs]:
        """The kept calls of the target's function as inputs, the function as called (with its real closure)."""
        calls = self.calls.get(target.function.__code__, [])
        return [_inputs(self.jax, target, call) for call in calls if _fits(target, call)]


def _plain_function(fun: Any) -> types.FunctionType | None:
    for _ in range(8):
        if isinstance(fun, types.FunctionType):
            return fun
        inner = getattr(fun, "__wrapped__", None) or getattr(fun, "func", None)
        if inner is None or inner is fun:
            return None
        fun = inner
    return None


def _fits(target: Target, call: LiveCall) -> bool:
    try:
        inspect.signature(call.function).bind(*call.args, **call.kwargs)
    except TypeError:
        return False
    return True


def describe_value(jax: Any, value: Any) -> str:
    leaves, treedef = jax.tree_util.tree_flatten(value)
    shown = []
    for leaf in leaves[:3]:
        aval = leaf if isinstance(leaf, jax.ShapeDtypeStruct) else jax.typeof(leaf)
        dims = ",".join(str(d) for d in aval.shape)
        shown.append(f"{'weak ' if getattr(aval, 'weak_type', False) else ''}{aval.dtype}[{dims}]")
    more = f", +{len(leaves) - 3}" if len(leaves) > 3 else ""
    if treedef.num_nodes == 1 and len(leaves) == 1:
        return shown[0]
    return f"{type(value).__name__}({', '.join(shown)}{more})"


def inputs_of(jax: Any, target: Target, call: LiveCall, origin: str) -> CallInputs:
    """A call kept in memory (here: unpickled by recorded.py) as inputs, its text starting with `origin`."""
    made = _inputs(jax, target, call)
    return dataclasses.replace(made, text=f"{origin}: {made.text.split(': ', 1)[1]}")


def fits(target: Target, call: LiveCall) -> bool:
    return _fits(target, call)


def _inputs(jax: Any, target: Target, call: LiveCall) -> CallInputs:
    params = list(inspect.signature(call.function).parameters.values())
    count = len(params)
    statics = {n % count for n in call.static_argnums} if count else set()
    bound = target.binding == METHOD and params
    positional: list[Arg] = []
    keyword: dict[str, Arg] = {}
    words: list[str] = []
    instance = None
    for index, value in enumerate(call.args):
        name = params[index].name if index < count else f"arg{index}"
        if index == 0 and bound:
            instance = LiveSpec(value, f"{name}: a {type(value).__name__}")
            words.append(instance.text)
            continue
        static = index in statics or name in call.static_argnames
        positional.append(Arg(_spec(jax, name, value, static, words), not static))
    for name, value in call.kwargs.items():
        static = name in call.static_argnames
        keyword[name] = Arg(_spec(jax, name, value, static, words), not static)
    where = f" at line {call.line}" if call.line else ""
    text = f"the call the module's top-level code made{where}: " + (", ".join(words) or "no arguments")
    return CallInputs(positional, keyword, {}, text, real=True, instance=instance, function=call.function)


def _spec(jax: Any, name: str, value: Any, static: bool, words: list[str]) -> LiveSpec:
    if static:
        shown = repr(value)
        text = f"{name}={shown if len(shown) <= 40 else type(value).__name__}"
    else:
        text = f"{name}: {describe_value(jax, value)}"
    words.append(text)
    return LiveSpec(value, text)
