"""The semantic model every rule queries, and the one door rules use: `from ..analysis import name`.

Facts more than one rule needs live here, once, in subpackages:

- `binding`: what a name means and which definition it is (imports, the index pass, definitions at a point,
  facts across modules: `project`, `module_facts`);
- `values`: what an expression holds (the flags, the structured abstract values, literals and ranges);
- `objects`: classes and instances (pytrees, records, flax/nnx modules, receivers, where a store lands);
- `summaries`: facts about a function computed from its definition and applied at every call (what a call
  runs, jitted callables, what it dispatches and returns, host effects, transformations);
- `flow`: the ordered walk over each function that rules ride on, and the path engine;
- `keys`: the PRNG key dataflow (JAX301);
- `semantics`: what libraries do, as tables (data only);

`context.RuleContext` is what a rule sees at a node. Rules import only this package (`tests/test_layers.py`):
what they may use is `_EXPORTS` below, imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .kinds import ARRAY, BOOL, GRAD, HOLDS_TRACED, HOST, LINEN, LIST, NONE, STRICT, TRACED

if TYPE_CHECKING:
    from .binding.index import Binding, ModuleIndex, Unit
    from .binding.loops import config_sweep, loop_targets, reads_carried
    from .binding.magics import magic_for
    from .binding.names import ImportTable, dotted_name
    from .binding.transforms import ARRAY_ANNOTATIONS, annotation_name, positional_params, static_spec
    from .binding.usage import NameUsage, called_outside_loops_only
    from .context import RuleContext
    from .flow.guards import tracer_check
    from .flow.walk import FlowWalker, Frame
    from .keys.dataflow import KeyAnalysis, KeyReuse, key_analysis
    from .keys.relevance import uses_keys
    from .objects.classes import (
        changes_what_is_read,
        plain_class,
        self_writes,
        sets_instance_attribute,
        unhashable_class,
    )
    from .objects.counters import static_counters
    from .objects.fresh_objects import built_anew, changed_since_use, identity_hashed
    from .objects.haiku_state import haiku_state_in_trace
    from .objects.held import defaulted_key
    from .objects.instances import built_class, linen_possible, local_method_units, module_class_kind
    from .objects.nnx import (
        captured_mutation,
        captured_update,
        closed_stream,
        dropped_object,
        mutating_call,
        updated_variable,
    )
    from .objects.outer_objects import outer_object_container
    from .objects.pytrees import pytree_model
    from .objects.receivers import function_leaf, module_instance, parameter_class
    from .objects.records import shows_fields
    from .objects.storage import StorageResolver, container_storage, storage_of
    from .semantics.library import (
        CACHING_DECORATORS,
        CLOCKS,
        COMPARING_BUILTINS,
        COMPUTING,
        CONCRETE_JAX_FUNCTIONS,
        CONCRETE_JAX_PREFIXES,
        CONDITION_SIZED,
        CONSTRUCTORS,
        CONTROL_FLOW,
        CONVERSIONS,
        CONVERTING_BUILTINS,
        COPYING_INPLACE_METHODS,
        DATACLASS,
        DEBUG_PRINT,
        DTYPE_CONSTRUCTORS,
        DTYPE_KEYWORDS,
        DTYPE_METHODS,
        DTYPE_POSITIONS,
        DTYPE_REQUESTING,
        ENVIRON,
        FILE_OPENERS,
        FLOAT_GRIDS,
        HOST_EFFECTS,
        INPUT,
        INT_BOUNDS,
        INT_CONVERSIONS,
        INT_FILLS,
        INT_OPERANDS,
        KEY_RESULTS,
        LIST_RESULTS,
        LOGS,
        MISSING_INPLACE_METHODS,
        NUMPY_JNP_NAMESAKES,
        NUMPY_RANDOM,
        NUMPY_RANDOM_CONSTRUCTORS,
        NUMPY_SHAPE_ONLY,
        ONE_ARGUMENT_VALUE_SIZED,
        OS_WRITES,
        PARTIAL,
        PATH_CHANGES,
        PATH_CLASSES,
        PATH_WRITES,
        PYTREE_METHODS,
        SAME_CLASS_RESULTS,
        SAVES,
        SEEDED_KEY_MAKERS,
        SEQUENCE_NESTED,
        SEQUENCE_REJECTS,
        SEQUENCE_VARIADIC,
        SETUP_METHODS,
        SHELL,
        STACKERS,
        STATIC_INT_METHODS,
        STATIC_INTS,
        STATIC_STATE_ARGUMENTS,
        STDLIB_RANDOM,
        STR_BUILTINS,
        STR_CONVERSIONS,
        TIME_READS,
        TIMEIT_RUNS,
        TRANSFORMATIONS,
        TYPING_PLAIN_BASES,
        UNHASHABLE_BUILTINS,
        VALUE_SIZED,
        WIDE_CONSTRUCTORS,
        WIDE_DTYPES,
        WIDE_STRINGS,
        WRITES,
    )
    from .semantics.namespaces import (
        ARRAY_BUILDING_NAMESPACES,
        ARRAY_NAMESPACES,
        JAX_NUMPY,
        MATH,
        NUMPY,
        NUMPY_ARRAYS,
        NUMPY_DELEGATING,
        NUMPY_DTYPE,
    )
    from .semantics.spellings import display_name
    from .summaries.argument_stores import lost_argument_store
    from .summaries.call_targets import call_targets, looped_call
    from .summaries.dispatch import DispatchJudge, runs_jax
    from .summaries.eager_flow import eager_loop, incoming_loop, surely_eager
    from .summaries.host_effects import call_effect, outer_iterator
    from .summaries.jit import (
        COMPILING,
        Jitted,
        array_leaf_arguments,
        compiled_function,
        compiling_transform,
        decorator_transforms,
        is_jax_callable,
        jitted_callable,
        rebuilt_for_filtered_call,
        static_arguments_possible,
    )
    from .summaries.stale_closures import stale_closure_reads
    from .summaries.static_exports import ImportedJit, imported_jit
    from .summaries.timers import CLOCK_MODULES, timer_manager
    from .values.abstract import UNKNOWN
    from .values.closures import called_locals, free_locals
    from .values.flags import element_flags, pytree_data_field
    from .values.int_ranges import (
        INT32_MAX,
        INT32_MIN,
        fits_int32,
        int_bounds,
        literal_int,
        literal_ints,
        narrow_int_array,
    )
    from .values.numpy_arrays import is_numpy_array
    from .values.shown_class import shows_project_instance
    from .values.x64 import enables_x64, is_program

# Imported on first use: importing a libcst-free submodule (`binding.project`, `values.kinds`, which a run
# answered from the findings cache reads) runs this file, which must not import libcst; and a rule that is
# not selected costs no import.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "binding.index": (
        "Binding",
        "ModuleIndex",
        "Unit",
    ),
    "binding.loops": (
        "config_sweep",
        "loop_targets",
        "reads_carried",
    ),
    "binding.magics": ("magic_for",),
    "binding.names": (
        "ImportTable",
        "dotted_name",
    ),
    "binding.transforms": (
        "ARRAY_ANNOTATIONS",
        "annotation_name",
        "positional_params",
        "static_spec",
    ),
    "binding.usage": (
        "NameUsage",
        "called_outside_loops_only",
    ),
    "context": ("RuleContext",),
    "flow.guards": ("tracer_check",),
    "flow.walk": (
        "FlowWalker",
        "Frame",
    ),
    "keys.dataflow": (
        "KeyAnalysis",
        "KeyReuse",
        "key_analysis",
    ),
    "keys.relevance": ("uses_keys",),
    "objects.classes": (
        "changes_what_is_read",
        "plain_class",
        "self_writes",
        "sets_instance_attribute",
        "unhashable_class",
    ),
    "objects.counters": ("static_counters",),
    "objects.fresh_objects": (
        "built_anew",
        "changed_since_use",
        "identity_hashed",
    ),
    "objects.haiku_state": ("haiku_state_in_trace",),
    "objects.held": ("defaulted_key",),
    "objects.instances": (
        "built_class",
        "linen_possible",
        "local_method_units",
        "module_class_kind",
    ),
    "objects.nnx": (
        "captured_mutation",
        "captured_update",
        "closed_stream",
        "dropped_object",
        "mutating_call",
        "updated_variable",
    ),
    "objects.outer_objects": ("outer_object_container",),
    "objects.pytrees": ("pytree_model",),
    "objects.receivers": (
        "function_leaf",
        "module_instance",
        "parameter_class",
    ),
    "objects.records": ("shows_fields",),
    "objects.storage": (
        "StorageResolver",
        "container_storage",
        "storage_of",
    ),
    "semantics.library": (
        "CACHING_DECORATORS",
        "CLOCKS",
        "COMPARING_BUILTINS",
        "CONCRETE_JAX_FUNCTIONS",
        "CONCRETE_JAX_PREFIXES",
        "CONDITION_SIZED",
        "CONSTRUCTORS",
        "COMPUTING",
        "CONTROL_FLOW",
        "CONVERSIONS",
        "CONVERTING_BUILTINS",
        "COPYING_INPLACE_METHODS",
        "DATACLASS",
        "DEBUG_PRINT",
        "DTYPE_CONSTRUCTORS",
        "DTYPE_KEYWORDS",
        "DTYPE_METHODS",
        "DTYPE_POSITIONS",
        "DTYPE_REQUESTING",
        "ENVIRON",
        "FILE_OPENERS",
        "FLOAT_GRIDS",
        "HOST_EFFECTS",
        "INPUT",
        "INT_BOUNDS",
        "INT_CONVERSIONS",
        "INT_FILLS",
        "INT_OPERANDS",
        "KEY_RESULTS",
        "LIST_RESULTS",
        "LOGS",
        "MISSING_INPLACE_METHODS",
        "NUMPY_JNP_NAMESAKES",
        "NUMPY_RANDOM",
        "NUMPY_RANDOM_CONSTRUCTORS",
        "NUMPY_SHAPE_ONLY",
        "ONE_ARGUMENT_VALUE_SIZED",
        "OS_WRITES",
        "PARTIAL",
        "PATH_CHANGES",
        "PATH_CLASSES",
        "PATH_WRITES",
        "PYTREE_METHODS",
        "SAME_CLASS_RESULTS",
        "SAVES",
        "SEEDED_KEY_MAKERS",
        "SEQUENCE_NESTED",
        "SEQUENCE_REJECTS",
        "SEQUENCE_VARIADIC",
        "SETUP_METHODS",
        "SHELL",
        "STACKERS",
        "STATIC_INTS",
        "STATIC_INT_METHODS",
        "STATIC_STATE_ARGUMENTS",
        "STDLIB_RANDOM",
        "STR_BUILTINS",
        "STR_CONVERSIONS",
        "TIMEIT_RUNS",
        "TIME_READS",
        "TRANSFORMATIONS",
        "TYPING_PLAIN_BASES",
        "UNHASHABLE_BUILTINS",
        "VALUE_SIZED",
        "WIDE_CONSTRUCTORS",
        "WIDE_DTYPES",
        "WIDE_STRINGS",
        "WRITES",
    ),
    "semantics.namespaces": (
        "ARRAY_BUILDING_NAMESPACES",
        "ARRAY_NAMESPACES",
        "JAX_NUMPY",
        "MATH",
        "NUMPY",
        "NUMPY_ARRAYS",
        "NUMPY_DELEGATING",
        "NUMPY_DTYPE",
    ),
    "semantics.spellings": ("display_name",),
    "summaries.call_targets": (
        "call_targets",
        "looped_call",
    ),
    "summaries.dispatch": (
        "DispatchJudge",
        "runs_jax",
    ),
    "summaries.eager_flow": (
        "eager_loop",
        "incoming_loop",
        "surely_eager",
    ),
    "summaries.host_effects": (
        "call_effect",
        "outer_iterator",
    ),
    "summaries.static_exports": (
        "ImportedJit",
        "imported_jit",
    ),
    "summaries.jit": (
        "COMPILING",
        "Jitted",
        "array_leaf_arguments",
        "compiled_function",
        "compiling_transform",
        "decorator_transforms",
        "is_jax_callable",
        "jitted_callable",
        "rebuilt_for_filtered_call",
        "static_arguments_possible",
    ),
    "summaries.argument_stores": ("lost_argument_store",),
    "summaries.stale_closures": ("stale_closure_reads",),
    "summaries.timers": (
        "CLOCK_MODULES",
        "timer_manager",
    ),
    "values.abstract": ("UNKNOWN",),
    "values.closures": (
        "called_locals",
        "free_locals",
    ),
    "values.flags": (
        "element_flags",
        "pytree_data_field",
    ),
    "values.int_ranges": (
        "INT32_MAX",
        "INT32_MIN",
        "fits_int32",
        "int_bounds",
        "literal_int",
        "literal_ints",
        "narrow_int_array",
    ),
    "values.numpy_arrays": ("is_numpy_array",),
    "values.shown_class": ("shows_project_instance",),
    "values.x64": (
        "enables_x64",
        "is_program",
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    *["ARRAY", "BOOL", "GRAD", "HOLDS_TRACED", "HOST", "LINEN", "LIST", "NONE", "STRICT", "TRACED"],
    *_MODULE_OF,
]
