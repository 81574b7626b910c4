"""Decide whether one attempt's outcome shows the rule's pitfall at the flagged line."""

from __future__ import annotations

import dataclasses
import os
import traceback
from typing import Any

from .evidence import TRACER_TEXT
from .expectations import (
    DEBUG_PRINT_TRACER,
    DISCARDED_UPDATE,
    EXCEPTION,
    LEAK,
    LEAK_RAISED_IN,
    PRINTED_TRACER,
    RUNS_ONCE,
    SELF_NOT_ARRAY,
    SELF_REJECTED_IN,
    UNHASHABLE_STATIC_IN,
    Expectation,
    raising_function,
)
from .leaks import place_text
from .short_text import clip

CONFIRMED, CLEAN, ERROR = "confirmed", "clean", "error"


@dataclasses.dataclass(frozen=True)
class Judgement:
    status: str  # CONFIRMED, CLEAN (traced without the pitfall) or ERROR (another error stopped it)
    detail: str


def user_frames(error: BaseException, path: str) -> list[traceback.FrameSummary]:
    """Frames in the module's file, innermost last, from the whole exception chain: JAX keeps the user's
    frames of a trace-time error (key reuse, for one) in the `__cause__` it attaches."""
    path = os.path.realpath(path)
    frames: list[traceback.FrameSummary] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames += [
            f for f in traceback.extract_tb(current.__traceback__) if os.path.realpath(f.filename) == path
        ]
        current = current.__cause__ or current.__context__
    return frames


def frame_covers(frame: traceback.FrameSummary, span: tuple[int, int]) -> bool:
    """The frame's position (its own line range) overlaps the flagged statement's lines."""
    if frame.lineno is None:
        return False
    end = getattr(frame, "end_lineno", None) or frame.lineno
    return frame.lineno <= span[1] and span[0] <= end


def error_line(error: BaseException) -> str:
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {clip(first, 100)}" if first else type(error).__name__


def describe_error(error: BaseException, path: str) -> str:
    if isinstance(error, SystemExit):
        text = f"the code called sys.exit({error.code!r})"
    else:
        text = error_line(error)
    frames = user_frames(error, path)
    return f"{text} (line {frames[-1].lineno})" if frames else text


def _class_matches(error: BaseException, expectation: Expectation, path: str) -> bool:
    names = {cls.__name__ for cls in type(error).__mro__}
    return expectation.matches(names, raising_function(error, path))


def _holds_instance(error: BaseException, class_name: str) -> bool:
    """The raising frame (JAX's, rejecting an argument) holds an instance of `class_name`: the argument
    it could not take, whatever its message says."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or not class_name:
        return False
    values = list(tb.tb_frame.f_locals.values())
    values += [v for value in values if isinstance(value, (tuple, list)) for v in value]
    return any(type(value).__name__ == class_name for value in values)


def judge(
    expectation: Expectation,
    outcome: Any,
    line: int,
    path: str,
    self_type: tuple[str, str] = ("", ""),
    stores: set[str] | None = None,
    span: tuple[int, int] | None = None,
) -> Judgement:
    """`span` is the flagged statement's lines (default: the line alone). `self_type` is (parameter name, class name) of a method, for SELF_NOT_ARRAY; `stores` the places
    the flagged statement stores into (`global:STORE`, `self:cache`), for LEAK."""
    error = outcome.error
    kind = expectation.kind
    span = span or (line, line)
    if kind == PRINTED_TRACER:
        return _printed(outcome.writes, line, span, "printed", error, path)
    if kind == DEBUG_PRINT_TRACER:
        return _printed(
            outcome.debug_formats, line, span, "passed to jax.debug.print the format", error, path
        )
    if kind == EXCEPTION and error is not None and _class_matches(error, expectation, path):
        if any(frame_covers(f, span) for f in user_frames(error, path)):
            return Judgement(CONFIRMED, f"{type(error).__name__} at line {line}")
    leaked_there = sorted((stores or set()) & getattr(outcome, "leaked_into", set()))
    leak_error = error is not None and raising_function(error, path) in LEAK_RAISED_IN
    if kind == LEAK and leaked_there and (error is None or leak_error):
        where = ", ".join(place_text(p) for p in leaked_there)
        return Judgement(
            CONFIRMED, f"a tracer leaked into {where} at line {line}, still there after the trace"
        )
    if kind == LEAK and leak_error:
        if stores is None:
            return Judgement(CONFIRMED, "jax.checking_leaks() reported a leaked tracer (line not checked)")
        through = sorted(stores & outcome.leaked_into)
        if through:
            where = ", ".join(
                p.replace("global:", "global '").replace("self:", "'self.") + "'" for p in through
            )
            return Judgement(CONFIRMED, f"a tracer leaked into {where} at line {line} (jax.checking_leaks())")
        return Judgement(CLEAN, "")  # a leak elsewhere in the function, not through this line
    if kind == SELF_NOT_ARRAY and error is not None and isinstance(error, TypeError):
        class_name = self_type[1]
        if raising_function(error, path) in SELF_REJECTED_IN and _holds_instance(error, class_name):
            rejected = f"the {class_name} instance" if class_name else "the instance"
            return Judgement(CONFIRMED, f"jax.jit at line {line} rejected {rejected} passed as `self`")
    # Unhashable by its class, not by an attribute value verify made up (an array in a value-hashed class).
    unhashable = getattr(outcome, "unhashable", False)
    if (
        kind == SELF_NOT_ARRAY
        and unhashable
        and isinstance(error, ValueError)
        and raising_function(error, path) in UNHASHABLE_STATIC_IN
    ):
        return Judgement(
            CONFIRMED, f"jax.jit at line {line} could not hash the static `self`: {error_line(error)}"
        )
    if kind == SELF_NOT_ARRAY and getattr(outcome, "stale", None):
        return Judgement(
            CONFIRMED,
            f"a stale value of self.{outcome.stale} was used: after it changed, the jitted method at line {line} "
            "returned what it returned before (JAX reused the compile it cached for this instance)",
        )
    if error is not None:
        return Judgement(ERROR, describe_error(error, path))
    if kind == RUNS_ONCE and outcome.calls_lines is not None:
        tracing, cached = outcome.calls_lines
        during = any(span[0] <= n <= span[1] for n in tracing)
        again = any(span[0] <= n <= span[1] for n in cached)
        if during and not again:
            return Judgement(
                CONFIRMED,
                f"line {line} ran while JAX traced the first call and not on a second call with the same "
                "input: it runs once per compile, not per call",
            )
    if kind == DISCARDED_UPDATE:
        try:
            primitive = discarded_update(outcome.jaxpr, path, span)
        except ImportError as missing:
            return Judgement(ERROR, f"this JAX does not map jaxpr equations to source lines ({missing})")
        if primitive:
            return Judgement(CONFIRMED, f"the result of `{primitive}` at line {line} is never used")
    return Judgement(CLEAN, "")


def _printed(
    records: list[tuple[int, str]], line: int, span: tuple[int, int], verb: str, error: Any, path: str
) -> Judgement:
    text = "".join(t for at, t in records if span[0] <= at <= span[1])
    match = TRACER_TEXT.search(text)
    if match:
        shown = clip(text.strip().splitlines()[0], 120) if text.strip() else match.group(0)
        return Judgement(CONFIRMED, f"line {line} {verb} {shown!r} during tracing")
    if error is not None:
        return Judgement(ERROR, describe_error(error, path))
    return Judgement(CLEAN, "")


# --- discarded functional updates: an update equation at the line whose outputs nothing reads -------------


def _sub_jaxprs(value: Any) -> list[Any]:
    """The open `Jaxpr`s in a value: a `ClosedJaxpr` (which lacks `.outvars` before JAX 0.7) is unwrapped."""
    if hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
        return [value.jaxpr]
    if hasattr(value, "eqns"):
        return [value]
    if isinstance(value, (tuple, list)):
        return [j for v in value for j in _sub_jaxprs(v)]
    return []


def _all_jaxprs(root: Any) -> list[Any]:
    pending = _sub_jaxprs(root)
    found = []
    while pending:
        jaxpr = pending.pop()
        found.append(jaxpr)
        for eqn in jaxpr.eqns:
            for value in eqn.params.values():
                pending += _sub_jaxprs(value)
    return found


def _eqn_line(eqn: Any, path: str) -> int | None:
    from jax._src import source_info_util  # private but stable for years; an ImportError is reported

    try:
        frames = list(source_info_util.user_frames(eqn.source_info.traceback))
    except AttributeError:  # JAX before 0.5 takes the SourceInfo itself
        try:
            frames = list(source_info_util.user_frames(eqn.source_info))
        except Exception:
            return None
    except Exception:
        return None
    for frame in frames:  # innermost first
        if os.path.realpath(frame.file_name) == path:
            return frame.start_line
    return None


def discarded_update(root: Any, path: str, span: tuple[int, int]) -> str | None:
    if root is None:
        return None
    path = os.path.realpath(path)
    for jaxpr in _all_jaxprs(root):
        read = {id(v) for eqn in jaxpr.eqns for v in eqn.invars} | {id(v) for v in jaxpr.outvars}
        for eqn in jaxpr.eqns:
            name = str(eqn.primitive)
            if name in ("pjit", "jit"):  # a jnp function staged as a nested jit (jax 0.10.2: `sort`)
                name = str(eqn.params.get("name", name))
            if "scatter" not in name and "update_slice" not in name and name != "sort":
                continue  # `.at[...]` updates; `x.sort()` (a sorted copy, JAX106 too)
            unused = all(type(v).__name__ == "DropVar" or id(v) not in read for v in eqn.outvars)
            at = _eqn_line(eqn, path)
            if eqn.outvars and unused and at is not None and span[0] <= at <= span[1]:
                return name
    return None
