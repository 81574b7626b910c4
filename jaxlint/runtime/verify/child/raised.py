"""What a trace raised, as a finding of its own: the JAX error's class (or, for the immutable-array
TypeError, the JAX function that raised it) gives the rule; the innermost frame in the user's code gives
the place. Matched by class and frame, never by the message's wording."""

from __future__ import annotations

import os
import sys
import sysconfig
import traceback
from typing import Any

from .judge import error_line

RUNTIME_ERROR_CODE = "JAX900"  # any other error JAX raised while tracing the user's code

# By class name, anywhere in the error's MRO: a class this JAX lacks (KeyReuseError before 0.4.27) is
# simply never seen. Order matters: the first that matches wins.
_BY_CLASS = (
    ("TracerBoolConversionError", "JAX101"),
    ("TracerIntegerConversionError", "JAX102"),
    ("TracerArrayConversionError", "JAX102"),
    ("NonConcreteBooleanIndexError", "JAX104"),
    ("ConcretizationTypeError", "JAX102"),
    ("UnexpectedTracerError", "JAX105"),
    ("KeyReuseError", "JAX301"),
)
# `x[i] = v` on a JAX array: a TypeError raised by the array class's item assignment.
_SETITEM_RAISERS = frozenset({"_unimplemented_setitem", "__setitem__"})


def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {paths.get("purelib"), paths.get("platlib"), paths.get("stdlib"), sys.prefix, sys.base_prefix}
    return tuple(sorted(os.path.realpath(f) + os.sep for f in folders if f))


class UserCode:
    """Which files are the user's: under the project's folders, not an installed library's."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = tuple(os.path.realpath(r) + os.sep for r in roots if r and os.path.isdir(r))
        self.libraries = _library_folders()
        self.own = os.path.realpath(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))) + os.sep

    def __contains__(self, filename: str) -> bool:
        path = os.path.realpath(filename)
        if path.startswith(self.own) or any(path.startswith(lib) for lib in self.libraries):
            return False
        return any(path.startswith(root) for root in self.roots)


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not e for e in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _innermost_function(error: BaseException) -> tuple[str, str]:
    tb = error.__traceback__
    if tb is None:
        return "", ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return code.co_name, code.co_filename


def _is_jax_file(filename: str) -> bool:
    parts = os.path.realpath(filename).split(os.sep)
    return "jax" in parts or "jaxlib" in parts


def rule_of(error: BaseException) -> str | None:
    """The rule an error JAX raised stands for; JAX900 for another error of JAX's; None for the rest (the
    user's own exceptions, Python's, ours)."""
    function, filename = _innermost_function(error)
    names = {cls.__name__ for cls in type(error).__mro__}
    return rule_of_class(names, type(error).__module__, function if _is_jax_file(filename) else "")


def rule_of_class(names: set[str], module: str, jax_function: str) -> str | None:
    """rule_of from what a record keeps of an error (`--run`'s call_records.encode_error): its MRO's class
    names, its class's module, and the JAX function it was raised in ("" when not raised in JAX's code)."""
    for name, code in _BY_CLASS:
        if name in names:
            return code
    if "TypeError" in names and jax_function in _SETITEM_RAISERS:
        return "JAX103"
    if module.split(".")[0] in ("jax", "jaxlib"):
        return RUNTIME_ERROR_CODE
    return None


def _user_frame(error: BaseException, user: UserCode) -> traceback.FrameSummary | None:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename in user]
    return frames[-1] if frames else None


def found_by_running(error: BaseException | None, user: UserCode) -> dict[str, Any] | None:
    """`{path, line, column, code, error}` of a JAX error raised in the user's code, from the first error
    of the chain that JAX raised (the innermost user frame of that error, not a caller's line); None
    when no such error is there."""
    if error is None:
        return None
    for raised in _chain(error):
        code = rule_of(raised)
        frame = _user_frame(raised, user) if code else None
        if code and frame is not None and frame.lineno:
            column = getattr(frame, "colno", None)
            return {
                "path": os.path.realpath(frame.filename),
                "line": frame.lineno,
                "column": (column or 0) + 1,
                "end_line": getattr(frame, "end_lineno", None) or frame.lineno,
                "code": code,
                "error": type(raised).__name__,
                "text": error_line(raised),
            }
    return None


def blocked_verdict(
    result: dict[str, Any],
    finding: dict[str, Any],
    span: tuple[int, int],
    path: str,
    raised: list[dict[str, Any]],
) -> dict[str, Any]:
    """A NOT_RUN whose traces stopped at a bug found by running elsewhere says so, in one line: that bug
    is what the user fixes first. The finding's own error (its rule, inside its statement) is not one."""
    own = os.path.realpath(path)
    others = [
        r
        for r in raised
        if not (r["path"] == own and r["code"] == finding["code"] and span[0] <= r["line"] <= span[1])
    ]
    if not others:
        return result
    # The parent names the first of them that the user's selection reports, or gives the reason back
    # (verify/found.py): a bug the user ignores is not what they fix first.
    blockers = [[r["path"], r["line"], r["code"]] for r in others]
    return {
        **result,
        "reason": blocked_text(*blockers[0]),
        "blocked_by": blockers,
        "unblocked": result["reason"],
    }


def blocked_text(path: str, line: int, code: str) -> str:
    return f"blocked by the {code} found at {os.path.basename(path)}:{line}"
