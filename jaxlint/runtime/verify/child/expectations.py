"""What each runtime-confirmable rule looks like when it really happens. Pure data: no jax import here,
because the linter's process reads ``CONFIRMABLE_CODES`` too."""

from __future__ import annotations

import dataclasses
import os

# What counts as the pitfall happening, shared with `--run`'s observations (`runtime/shared/`); here LEAK is
# jax.checking_leaks() raising at the end of the trace (LEAK_RAISED_IN).
from .evidence import (
    DEBUG_PRINT_TRACER,
    DISCARDED_UPDATE,
    EXCEPTION,
    LEAK,
    PRINTED_TRACER,
    RUNS_ONCE,
    SELF_NOT_ARRAY,
)

# How an attempt is traced: "plain" (jit trace with print capture), "leaks" (under jax.checking_leaks()),
# "key-reuse" (jax_debug_key_reuse with custom PRNG so legacy PRNGKey keys are tracked too).
# "run-twice" (call under jit twice with the same inputs, recording the module's lines that ran).
PLAIN, LEAKS, KEY_REUSE, RUN_TWICE = "plain", "leaks", "key-reuse", "run-twice"


@dataclasses.dataclass(frozen=True)
class Expectation:
    code: str
    kind: str
    mode: str = PLAIN
    exception_names: tuple[str, ...] = ()  # any class in the exception's MRO with one of these names
    # and, when given, raised by one of these functions (the innermost frame: JAX's own function that
    # rejects the value, or USER_CODE for the flagged statement itself). Never the message: its wording
    # changes between JAX versions.
    raised_in: tuple[str, ...] = ()
    looks_for: str = ""  # said in NOT_REPRODUCED reasons
    # Broad classes that count only when raised by one of JAX's functions that reject a tracer there (a
    # traced shape raises a plain TypeError in `canonicalize_shape`).
    guarded: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def matches(self, class_names: set[str], raised_in: str) -> bool:
        """Whether an exception (the names of its MRO, the function of its innermost frame, see
        `raising_function`) is this rule's pitfall happening."""
        if class_names & set(self.exception_names):
            return not self.raised_in or raised_in in self.raised_in
        return any(name in class_names and raised_in in functions for name, functions in self.guarded)


USER_CODE = "<user code>"  # `raised_in` of an error raised by the user's own code, not by JAX or Python


def raising_function(error: BaseException, own_file: str) -> str:
    """The function of the frame that raised `error` (JAX's own: the verify child turns JAX's traceback
    filtering off), or USER_CODE when that frame is in the module's file `own_file`."""
    tb = error.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if own_file and os.path.realpath(code.co_filename) == os.path.realpath(own_file):
        return USER_CODE
    return code.co_name


def _exception(code: str, names: tuple[str, ...], *raised_in: str, mode: str = PLAIN) -> Expectation:
    return Expectation(code, EXCEPTION, mode, names, raised_in, " or ".join(names))


# Where JAX raises what the rules below look for (measured on JAX 0.4.33, 0.6.2, 0.10.2, 0.11.2, 0.12.0.1).
LEAK_RAISED_IN = ("new_main", "ensure_no_leaks")  # jax.checking_leaks(): a plain Exception at the trace's end
SELF_REJECTED_IN = ("_shaped_abstractify_slow", "_infer_input_type")  # TypeError: not a valid JAX type
# ValueError: a static argument has no hash. Called (not traced), jit's C++ dispatch raises it: the
# innermost Python frame is then attempt.py's call.
UNHASHABLE_STATIC_IN = ("_infer_params", "_infer_params_internal", "run_self_jit_attempt")


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
        # `x[i] = v` raises TypeError in JAX's `_unimplemented_setitem` (traced or not); `del x[i]` raises
        # AttributeError from the tracer's `__getattr__`, or from the statement itself on a concrete array.
        dataclasses.replace(
            _exception("JAX103", ("TypeError",), "_unimplemented_setitem"),
            guarded=(("AttributeError", ("__getattr__", USER_CODE)),),
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
        _exception("JAX502", ("TypeError",), "check_arraylike"),  # jnp's check of its arguments
    )
}

CONFIRMABLE_CODES: frozenset[str] = frozenset(EXPECTATIONS)
