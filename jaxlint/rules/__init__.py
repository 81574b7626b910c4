"""The rule registry: every rule, by code. Codes are stable and never reused."""

from __future__ import annotations

from .base import Rule
from .debug_print_fstring import DebugPrintFstring
from .discarded_functional_update import DiscardedFunctionalUpdate
from .dynamic_shape import DynamicShape
from .float64_without_x64 import Float64WithoutX64
from .inplace_array_update import InplaceArrayUpdate
from .jit_in_loop import JitInLoop
from .jit_method_self import JitMethodSelf
from .leaked_tracer import LeakedTracer
from .legacy_prng_key import LegacyPrngKey
from .print_in_transform import PrintInTransform
from .prng_key_reuse import PrngKeyReuse
from .python_batch_loop import PythonBatchLoop
from .python_sequence_input import PythonSequenceInput
from .side_effect_in_transform import SideEffectInTransform
from .traced_concretization import TracedConcretization
from .traced_control_flow import TracedControlFlow
from .unblocked_timing import UnblockedTiming
from .unhashable_static_arg import UnhashableStaticArg

ALL_RULES: tuple[type[Rule], ...] = (
    TracedControlFlow,
    TracedConcretization,
    InplaceArrayUpdate,
    DynamicShape,
    LeakedTracer,
    DiscardedFunctionalUpdate,
    PrintInTransform,
    SideEffectInTransform,
    DebugPrintFstring,
    PrngKeyReuse,
    LegacyPrngKey,
    JitInLoop,
    UnhashableStaticArg,
    UnblockedTiming,
    PythonBatchLoop,
    JitMethodSelf,
    Float64WithoutX64,
    PythonSequenceInput,
)

RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}

# JAX000 is not a rule: the engine reports files it cannot read or parse under this code.
PARSE_ERROR_CODE = "JAX000"
PARSE_ERROR_NAME = "parse-error"

__all__ = ["ALL_RULES", "PARSE_ERROR_CODE", "PARSE_ERROR_NAME", "RULES_BY_CODE", "Rule"]
