"""The rule registry: every rule's code, name and module. Codes are stable and never reused.

`REGISTRY` is plain data, so that choosing rules, naming codes and answering a run from the findings cache
import neither libcst nor any rule module (that import is half of an unchanged re-run). The rule classes,
`ALL_RULES` and `RULES_BY_CODE`, are imported on first use; each class carries its code and name too, and
`tests/rules/test_registry.py` checks that the two agree.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

from ..finding import PARSE_ERROR_CODE, PARSE_ERROR_NAME, RUNTIME_ERROR_CODE, RUNTIME_ERROR_NAME
from .base import Rule


class RuleEntry(NamedTuple):
    code: str
    name: str
    module: str  # the module under jaxlint.rules that defines the class
    cls: str
    default_enabled: bool = True

    def load(self) -> type[Rule]:
        """The rule class (its module is imported now if it was not)."""
        return getattr(importlib.import_module(f"{__name__}.{self.module}"), self.cls)


# In `--list-rules` order.
REGISTRY: tuple[RuleEntry, ...] = (
    RuleEntry("JAX101", "traced-control-flow", "traced_control_flow", "TracedControlFlow"),
    RuleEntry("JAX102", "traced-concretization", "traced_concretization", "TracedConcretization"),
    RuleEntry("JAX103", "inplace-array-update", "inplace_array_update", "InplaceArrayUpdate"),
    RuleEntry("JAX104", "dynamic-shape", "dynamic_shape", "DynamicShape"),
    RuleEntry("JAX105", "leaked-tracer", "leaked_tracer", "LeakedTracer"),
    RuleEntry(
        "JAX106", "discarded-functional-update", "discarded_functional_update", "DiscardedFunctionalUpdate"
    ),
    RuleEntry("JAX201", "print-in-transform", "print_in_transform", "PrintInTransform"),
    RuleEntry("JAX202", "side-effect-in-transform", "side_effect_in_transform", "SideEffectInTransform"),
    RuleEntry("JAX203", "debug-print-fstring", "debug_print_fstring", "DebugPrintFstring"),
    RuleEntry("JAX301", "prng-key-reuse", "prng_key_reuse", "PrngKeyReuse"),
    RuleEntry("JAX302", "legacy-prng-key", "legacy_prng_key", "LegacyPrngKey", default_enabled=False),
    RuleEntry("JAX401", "jit-in-loop", "jit_in_loop", "JitInLoop"),
    RuleEntry("JAX402", "unhashable-static-arg", "unhashable_static_arg", "UnhashableStaticArg"),
    RuleEntry("JAX403", "unblocked-timing", "unblocked_timing", "UnblockedTiming"),
    RuleEntry("JAX404", "python-batch-loop", "python_batch_loop", "PythonBatchLoop"),
    RuleEntry("JAX405", "jit-method-self", "jit_method_self", "JitMethodSelf"),
    RuleEntry("JAX501", "float64-without-x64", "float64_without_x64", "Float64WithoutX64"),
    RuleEntry("JAX502", "python-sequence-input", "python_sequence_input", "PythonSequenceInput"),
    RuleEntry("JAX503", "int32-overflow", "int32_overflow", "Int32Overflow"),
)

ENTRIES_BY_CODE: dict[str, RuleEntry] = {entry.code: entry for entry in REGISTRY}

# Every code's name, JAX000 included (which is not a rule: the engine reports files it cannot read or parse).
NAMES: dict[str, str] = {
    PARSE_ERROR_CODE: PARSE_ERROR_NAME,
    **{e.code: e.name for e in REGISTRY},
    RUNTIME_ERROR_CODE: RUNTIME_ERROR_NAME,
}

# Imported on first use (`__getattr__`); declared here for the type checker.
ALL_RULES: tuple[type[Rule], ...]
RULES_BY_CODE: dict[str, type[Rule]]


_LOADED: dict[str, type[Rule]] = {}


def rule_class(code: str) -> type[Rule]:
    """One rule's class: only its own module is imported, so that a lint imports the rules it runs (a rule
    off by default, or not selected, costs nothing at start-up)."""
    loaded = _LOADED.get(code)
    if loaded is None:
        loaded = _LOADED[code] = ENTRIES_BY_CODE[code].load()
    return loaded


def __getattr__(name: str) -> object:
    if name not in ("ALL_RULES", "RULES_BY_CODE"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    classes = tuple(rule_class(entry.code) for entry in REGISTRY)
    globals().update(ALL_RULES=classes, RULES_BY_CODE={rule.code: rule for rule in classes})
    return globals()[name]


__all__ = [
    "ALL_RULES",
    "ENTRIES_BY_CODE",
    "NAMES",
    "REGISTRY",
    "RULES_BY_CODE",
    "Rule",
    "RuleEntry",
    "rule_class",
]
