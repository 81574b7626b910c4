"""What each runtime-confirmable rule looks like when it really happens. Pure data: no jax import here,
because the linter's process reads ``CONFIRMABLE_CODES`` too."""

from __future__ import annotations

import dataclasses

# How an attempt is traced: "plain" (jit trace with print capture), "leaks" (under jax.checking_leaks()),
# "key-reuse" (jax_debug_key_reuse with custom PRNG so legacy PRNGKey keys are tracked too).
# "run-twice" (call under jit twice with the same inputs, recording the module's lines that ran).
PLAIN, LEAKS, KEY_REUSE, RUN_TWICE = "plain", "leaks", "key-reuse", "run-twice"

# What counts as the pitfall happening.
EXCEPTION = "exception"  # a given exception class raised at the flagged line
LEAK = "leak"  # "Leaked trace" raised at the end of the trace
DISCARDED_UPDATE = "discarded-update"  # an array update at the flagged line whose result nothing uses
PRINTED_TRACER = "printed-tracer"  # stdout/stderr written at the flagged line shows a tracer
DEBUG_PRINT_TRACER = (
    "debug-print-tracer"  # jax.debug.print called at the flagged line with a tracer in its format
)
SELF_NOT_ARRAY = "self-not-array"  # a jitted method rejects its own instance as a traced argument
RUNS_ONCE = "runs-once"  # the flagged line ran while tracing (first call), not on a cached second call


@dataclasses.dataclass(frozen=True)
class Expectation:
    code: str
    kind: str
    mode: str = PLAIN
    exception_names: tuple[str, ...] = ()  # any class in the exception's MRO with one of these names
    message_patterns: tuple[str, ...] = ()  # and, when given, one of these substrings in its message
    looks_for: str = ""  # said in NOT_REPRODUCED reasons
    # Broad classes that count only when raised by one of JAX's functions that reject a tracer there (a
    # traced shape raises a plain TypeError in `canonicalize_shape`): the raising frame's function name,
    # not the message, whose wording changes between JAX versions.
    guarded: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def matches(self, class_names: set[str], message: str, raised_in: str = "") -> bool:
        """Whether an exception (the names of its MRO, its message, the function of its innermost frame)
        is this rule's pitfall happening."""
        if class_names & set(self.exception_names):
            return not self.message_patterns or any(p in message for p in self.message_patterns)
        return any(name in class_names and raised_in in functions for name, functions in self.guarded)


def raising_function(error: BaseException) -> str:
    """The function of the frame that raised `error` (JAX's own, when its traceback is not filtered)."""
    tb = error.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_name


def _exception(code: str, names: tuple[str, ...], *patterns: str, mode: str = PLAIN) -> Expectation:
    return Expectation(code, EXCEPTION, mode, names, patterns, " or ".join(names))


EXPECTATIONS: dict[str, Expectation] = {
    e.code: e
    for e in (
        _exception("JAX101", ("TracerBoolConversionError", "ConcretizationTypeError")),
        dataclasses.replace(
            _exception(
                "JAX102",
                ("ConcretizationTypeError", "TracerIntegerConversionError", "TracerArrayConversionError"),
            ),
            # A traced shape or size; a traced slice bound (the raising function of each, measured on JAX
            # 0.4.33, 0.6.2, 0.10.2, 0.11.2 and 0.12.0.1; a too-short array raises IndexError elsewhere).
            guarded=(
                ("TypeError", ("canonicalize_shape",)),
                ("IndexError", ("_index_to_gather", "index_to_gather", "validate_slices")),
            ),
        ),
        # `x[i] = v` raises TypeError (immutable); `del x[i]` on a tracer raises AttributeError: __delitem__.
        _exception(
            "JAX103",
            ("TypeError", "AttributeError"),
            "immutable",
            "__delitem__",
            "support item deletion",
            "support item assignment",
        ),
        _exception("JAX104", ("NonConcreteBooleanIndexError", "ConcretizationTypeError")),
        Expectation("JAX105", LEAK, LEAKS, looks_for="leaked tracer under jax.checking_leaks()"),
        Expectation("JAX106", DISCARDED_UPDATE, looks_for="array update whose result is never used"),
        Expectation("JAX201", PRINTED_TRACER, looks_for="tracer printed during tracing"),
        Expectation(
            "JAX202", RUNS_ONCE, RUN_TWICE, looks_for="line that runs on the first call only (while tracing)"
        ),
        Expectation("JAX203", DEBUG_PRINT_TRACER, looks_for="tracer formatted into jax.debug.print's string"),
        _exception("JAX301", ("KeyReuseError",), mode=KEY_REUSE),
        Expectation(
            "JAX405", SELF_NOT_ARRAY, looks_for="rejection of `self` by jax.jit, nor a stale `self` attribute"
        ),
        _exception("JAX502", ("TypeError",), "requires ndarray or scalar arguments"),
    )
}

CONFIRMABLE_CODES: frozenset[str] = frozenset(EXPECTATIONS)
