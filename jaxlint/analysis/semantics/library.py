"""What library functions and classes do to values under JAX: one table, data only.

The value model (`values/flags.py`), the transform model (`binding/transforms.py`) and the pytree model (`objects/pytrees.py`)
read these tables; rules never hard-code a library fact themselves. The function transformations (jax's,
equinox's `filter_*`, flax.nnx's) and the control flow that traces functions are `semantics/transformations.py`,
`jax.random`'s samplers and key makers `semantics/random_draws.py`, array dtypes and methods `semantics/arrays.py`, the
calls that change no object `semantics/pure.py`, second spellings of names `semantics/spellings.py`, `jnp`'s
sequence arguments `semantics/sequences.py`, host effects `semantics/host.py`, what Python's builtins and str/dict
methods give `semantics/python.py`, protocol methods, records and plain bases `semantics/classes.py`: all
re-exported here. Every entry
states what is true at run time, checked on JAX 0.10.2 (`lax.psum(1, "i")` under `vmap`, `jit(vmap)` and
`pmap`) where not documented.
"""

from __future__ import annotations

import dataclasses

from .arrays import ARRAY_ATTRIBUTES as ARRAY_ATTRIBUTES
from .arrays import ARRAY_FUNCTIONS as ARRAY_FUNCTIONS
from .arrays import ARRAY_METHODS as ARRAY_METHODS
from .arrays import ARRAY_TYPES as ARRAY_TYPES
from .arrays import ARRAYS_CHECKED as ARRAYS_CHECKED
from .arrays import BOOL_FUNCTIONS as BOOL_FUNCTIONS
from .arrays import COMPUTING as COMPUTING
from .arrays import CONCRETE_ATTRIBUTES as CONCRETE_ATTRIBUTES
from .arrays import CONCRETE_JAX_PREFIXES as CONCRETE_JAX_PREFIXES
from .arrays import CONCRETE_METHODS as CONCRETE_METHODS
from .arrays import CONDITION_SIZED as CONDITION_SIZED
from .arrays import CONVERSIONS as CONVERSIONS
from .arrays import COPYING_INPLACE_METHODS as COPYING_INPLACE_METHODS
from .arrays import DTYPE_CONSTRUCTORS as DTYPE_CONSTRUCTORS
from .arrays import DTYPE_KEYWORDS as DTYPE_KEYWORDS
from .arrays import DTYPE_METHODS as DTYPE_METHODS
from .arrays import DTYPE_POSITIONS as DTYPE_POSITIONS
from .arrays import DTYPE_REQUESTING as DTYPE_REQUESTING
from .arrays import DTYPE_WORDS as DTYPE_WORDS
from .arrays import FLOAT_GRIDS as FLOAT_GRIDS
from .arrays import FLOAT_RESULTS as FLOAT_RESULTS
from .arrays import INT_BOUNDS as INT_BOUNDS
from .arrays import INT_CONSTANTS as INT_CONSTANTS
from .arrays import INT_CONVERSIONS as INT_CONVERSIONS
from .arrays import INT_FILLS as INT_FILLS
from .arrays import INT_OPERANDS as INT_OPERANDS
from .arrays import LIST_RESULTS as LIST_RESULTS
from .arrays import MISSING_INPLACE_METHODS as MISSING_INPLACE_METHODS
from .arrays import NARROW_INT_DTYPES as NARROW_INT_DTYPES
from .arrays import NOT_TRACER_TYPES as NOT_TRACER_TYPES
from .arrays import NUMPY_JNP_NAMESAKES as NUMPY_JNP_NAMESAKES
from .arrays import NUMPY_SHAPE_ONLY as NUMPY_SHAPE_ONLY
from .arrays import ONE_ARGUMENT_ARRAY as ONE_ARGUMENT_ARRAY
from .arrays import ONE_ARGUMENT_VALUE_SIZED as ONE_ARGUMENT_VALUE_SIZED
from .arrays import RESULT_DTYPES as RESULT_DTYPES
from .arrays import RETURNED_ARRAY_NAMESPACES as RETURNED_ARRAY_NAMESPACES
from .arrays import SEVERAL_ARRAYS_WORDS as SEVERAL_ARRAYS_WORDS
from .arrays import STACKERS as STACKERS
from .arrays import STATIC_INT_METHODS as STATIC_INT_METHODS
from .arrays import STATIC_INTS as STATIC_INTS
from .arrays import STATIC_QUERIES as STATIC_QUERIES
from .arrays import STRUCTURE_KEEPING as STRUCTURE_KEEPING
from .arrays import TUPLE_RESULTS as TUPLE_RESULTS
from .arrays import VALUE_SIZED as VALUE_SIZED
from .arrays import WIDE_CONSTRUCTORS as WIDE_CONSTRUCTORS
from .arrays import WIDE_DTYPES as WIDE_DTYPES
from .arrays import WIDE_STRINGS as WIDE_STRINGS
from .classes import CLASS_VAR as CLASS_VAR
from .classes import CLASSES_CHECKED as CLASSES_CHECKED
from .classes import CONSTRUCTOR_ANNOTATIONS as CONSTRUCTOR_ANNOTATIONS
from .classes import CONSTRUCTORS as CONSTRUCTORS
from .classes import DATACLASS as DATACLASS
from .classes import NNX_BASES
from .classes import PLAIN_BASES as PLAIN_BASES
from .classes import PLAIN_OBJECT as PLAIN_OBJECT
from .classes import PYTREE_METHODS as PYTREE_METHODS
from .classes import RECORD_BASES as RECORD_BASES
from .classes import RECORD_DECORATORS as RECORD_DECORATORS
from .classes import RUNS_ON_CONSTRUCTION as RUNS_ON_CONSTRUCTION
from .classes import SETUP_METHODS as SETUP_METHODS
from .classes import TYPING_PLAIN_BASES as TYPING_PLAIN_BASES
from .haiku_state import HAIKU_FRAMES as HAIKU_FRAMES
from .haiku_state import HAIKU_MODULE as HAIKU_MODULE
from .haiku_state import HAIKU_PARAMETER_MODULES as HAIKU_PARAMETER_MODULES
from .haiku_state import HAIKU_STATE_CALLS as HAIKU_STATE_CALLS
from .haiku_state import HAIKU_STATE_CHECKED as HAIKU_STATE_CHECKED
from .host import CLOCKS as CLOCKS
from .host import DEBUG_PRINT as DEBUG_PRINT
from .host import ENVIRON as ENVIRON
from .host import FILE_OPENERS as FILE_OPENERS
from .host import HOST_CHECKED as HOST_CHECKED
from .host import HOST_EFFECTS as HOST_EFFECTS
from .host import HOST_OBJECTS as HOST_OBJECTS
from .host import INPUT as INPUT
from .host import ITERATOR_MAKERS as ITERATOR_MAKERS
from .host import ITERATOR_METHODS as ITERATOR_METHODS
from .host import LOG_METHODS, NO_ABSL
from .host import LOGS as LOGS
from .host import NUMPY_RANDOM as NUMPY_RANDOM
from .host import NUMPY_RANDOM_CONSTRUCTORS as NUMPY_RANDOM_CONSTRUCTORS
from .host import OS_WRITES as OS_WRITES
from .host import PATH_CHANGES as PATH_CHANGES
from .host import PATH_CLASSES as PATH_CLASSES
from .host import PATH_WRITES as PATH_WRITES
from .host import PROGRAM_CALLS as PROGRAM_CALLS
from .host import PROGRESS as PROGRESS
from .host import SAVES as SAVES
from .host import SHELL as SHELL
from .host import STDLIB_RANDOM as STDLIB_RANDOM
from .host import TEST_RUNNERS as TEST_RUNNERS
from .host import TIME_READS as TIME_READS
from .host import TIMEIT_RUNS as TIMEIT_RUNS
from .host import WAITS as WAITS
from .host import WRITES as WRITES
from .pure import FIRST_ORDER_PREFIXES as FIRST_ORDER_PREFIXES
from .pure import HIGHER_ORDER_ARRAY_FUNCTIONS as HIGHER_ORDER_ARRAY_FUNCTIONS
from .pure import IMPURE_CALLS as IMPURE_CALLS
from .pure import PURE_CHECKED as PURE_CHECKED
from .pure import PURE_METHODS as PURE_METHODS
from .pure import PURE_PREFIXES as PURE_PREFIXES
from .python import ACCUMULATING_METHODS as ACCUMULATING_METHODS
from .python import ARITHMETIC_BUILTINS as ARITHMETIC_BUILTINS
from .python import CACHING_DECORATORS as CACHING_DECORATORS
from .python import COMPARING_BUILTINS as COMPARING_BUILTINS
from .python import CONCRETE_BUILTINS as CONCRETE_BUILTINS
from .python import CONCRETIZING_BUILTINS as CONCRETIZING_BUILTINS
from .python import CONTEXT_MANAGERS as CONTEXT_MANAGERS
from .python import CONVERTING_BUILTINS as CONVERTING_BUILTINS
from .python import HARMLESS_BUILTINS as HARMLESS_BUILTINS
from .python import PARTIAL as PARTIAL
from .python import PROPERTIES as PROPERTIES
from .python import PYTHON_CHECKED as PYTHON_CHECKED
from .python import PYTHON_ONLY_METHODS as PYTHON_ONLY_METHODS
from .python import STR_BUILTINS as STR_BUILTINS
from .python import STR_CONVERSIONS as STR_CONVERSIONS
from .python import UNHASHABLE_BUILTINS as UNHASHABLE_BUILTINS
from .python import WRAPS as WRAPS
from .random_draws import ALIGNING as ALIGNING
from .random_draws import FOLD_IN as FOLD_IN
from .random_draws import KEY_MAKERS as KEY_MAKERS
from .random_draws import KEY_RESULTS as KEY_RESULTS
from .random_draws import OLDER_SAMPLERS as OLDER_SAMPLERS
from .random_draws import RANDOM_CHECKED as RANDOM_CHECKED
from .random_draws import SAMPLERS as SAMPLERS
from .random_draws import SEEDED_KEY_MAKERS as SEEDED_KEY_MAKERS
from .random_draws import SPLIT as SPLIT
from .sequences import SEQUENCE_NESTED as SEQUENCE_NESTED
from .sequences import SEQUENCE_REJECTS as SEQUENCE_REJECTS
from .sequences import SEQUENCE_VARIADIC as SEQUENCE_VARIADIC
from .sequences import SEQUENCES_CHECKED as SEQUENCES_CHECKED
from .spellings import CANONICAL_PREFIXES as CANONICAL_PREFIXES
from .spellings import NAMES_CHECKED as NAMES_CHECKED
from .spellings import OLDER_SPELLINGS as OLDER_SPELLINGS
from .transformations import ARGNUMS as ARGNUMS
from .transformations import ARRAY_ANNOTATIONS as ARRAY_ANNOTATIONS
from .transformations import BRANCHES as BRANCHES
from .transformations import CONTROL_FLOW as CONTROL_FLOW
from .transformations import CUSTOM_DERIVATIVES as CUSTOM_DERIVATIVES
from .transformations import CUSTOM_RULE_METHODS as CUSTOM_RULE_METHODS
from .transformations import DISPATCHING as DISPATCHING
from .transformations import IN_AXES as IN_AXES
from .transformations import JIT as JIT
from .transformations import LOOP as LOOP
from .transformations import STATIC_ANNOTATIONS as STATIC_ANNOTATIONS
from .transformations import STATIC_ARGNAMES as STATIC_ARGNAMES
from .transformations import STATIC_ARGNUMS as STATIC_ARGNUMS
from .transformations import STATIC_KEYWORDS as STATIC_KEYWORDS
from .transformations import TRANSFORMATIONS as TRANSFORMATIONS
from .transformations import TRANSPARENT_DECORATORS as TRANSPARENT_DECORATORS
from .transformations import TREE_MAPS as TREE_MAPS
from .transformations import ControlFlow as ControlFlow
from .transformations import Transformation as Transformation

# What a call returns, keyed by qualified name.
PYTHON_IF_OPERAND_IS = "python-if-operand-is-python"  # a Python value when its operand is a Python value
CONCRETE = "concrete"  # a Python value whatever the arguments
TRACED_RESULT = "traced"  # a tracer even on constant arguments

CALL_RESULTS: dict[str, str] = {
    # Collectives reduce Python scalars eagerly: `psum(1, axis)` is the axis size as an `int`, `pmean(1, axis)`
    # is `1.0`. (`pmax`/`pmin` give a TypedInt under vmap but a tracer under pmap: not listed.)
    "jax.lax.psum": PYTHON_IF_OPERAND_IS,
    "jax.lax.pmean": PYTHON_IF_OPERAND_IS,
    # The size of a named axis is known while tracing; the index along it is not.
    "jax.lax.axis_size": CONCRETE,
    "jax.lax.axis_index": TRACED_RESULT,
    # Sample sites are tracers under every numpyro inference (checked on numpyro 0.22.0 under NUTS and SVI) ...
    "numpyro.sample": TRACED_RESULT,
    "numpyro.param": TRACED_RESULT,
    "numpyro.deterministic": TRACED_RESULT,
    # equinox's predicates and printers answer Python values on tracers too (equinox 0.13.8 under jax.jit).
    **{
        f"equinox.{name}": CONCRETE
        for name in "is_array is_array_like is_inexact_array is_inexact_array_like tree_pformat".split()
    },
}

# Libraries built on JAX whose functions compute on the arrays they are given: called in traced code with traced
# data, a function gives traced data (an array or a pytree of them, as a traced parameter is: `diffeqsolve(...)`,
# its `.result`, `diffrax.is_okay(...)`, `optax.apply_updates(...)`) and a class an object holding tracers
# (`dist.Normal(mu, 1.0)`, `diffrax.SaveAt(ts=t)`); on static arguments only, nothing is known (silent).
# Prefix -> (the version run, whether its classes count: flax.linen's are layers, `objects/linen.py`'s).
# Their transformations, tracing APIs and the CALL_RESULTS rows below keep their own answers.
TRACED_FROM_ARGUMENTS: dict[str, tuple[str, bool]] = {
    "diffrax.": ("diffrax 0.7.2", True),
    "optimistix.": ("optimistix 0.1.0", True),
    "optax.": ("optax 0.2.8", True),
    "numpyro.distributions.": ("numpyro 0.22.0", True),
    "equinox.": ("equinox 0.13.8", True),
    "flax.linen.": ("flax 0.12.8", False),
}

# ... and of those functions, the ones that give one array (a mask, a loss, an activation): a traced array there,
# which JAX101/JAX102 test as they test a `jnp` result.
LIBRARY_ONE_ARRAY: frozenset[str] = frozenset(
    [f"diffrax.{n}" for n in ("is_okay", "is_successful", "is_event")]
    + [
        f"optax.{n}"
        for n in (
            "l2_loss squared_error huber_loss log_cosh hinge_loss cosine_similarity cosine_distance "
            "softmax_cross_entropy softmax_cross_entropy_with_integer_labels sigmoid_binary_cross_entropy "
            "kl_divergence global_norm safe_norm smooth_labels"
        ).split()
    ]
    + [
        f"flax.linen.{n}"
        for n in (
            "relu gelu silu swish sigmoid tanh softmax log_softmax one_hot elu leaky_relu softplus standardize "
            "logsumexp make_causal_mask make_attention_mask dot_product_attention"
        ).split()
    ]
)

# Calls that answer static questions (a Python or NumPy value even on tracers): the array rows' and the concrete
# results above.
CONCRETE_JAX_FUNCTIONS = STATIC_QUERIES | frozenset(
    n for n, result in CALL_RESULTS.items() if result == CONCRETE
)

# Host callbacks: the function they are given runs outside the trace, on concrete NumPy values.
HOST_CALLBACKS = frozenset(
    {
        "jax.debug.callback",
        "jax.pure_callback",
        "jax.io_callback",
        "jax.experimental.host_callback.call",
        "jax.experimental.host_callback.id_tap",
    }
)

# Pytree classes that libraries ship: qualified name -> (static fields, data fields).
LIBRARY_PYTREES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "flax.training.train_state.TrainState": (
        frozenset({"apply_fn", "tx"}),
        frozenset({"step", "params", "opt_state"}),
    ),
}

# Library pytree classes that hold a Python function as a leaf (a field not marked static): a transformation
# that reads every leaf of an argument as an array (the table's `array_leaves`: jax.jit, grad, vmap; a lax
# carry) raises TypeError on an instance, while equinox's filter_* keep the function static. Qualified name ->
# those fields (equinox 0.13.8: `dataclasses.fields` without `static` metadata, a function in every instance).
_POOLS = ("MaxPool", "AvgPool", "AdaptiveMaxPool", "AdaptiveAvgPool")
FUNCTION_LEAF_CLASSES: dict[str, frozenset[str]] = {
    "equinox.nn.MLP": frozenset({"activation", "final_activation"}),
    "equinox.nn.Lambda": frozenset({"fn"}),
    "equinox.nn.Pool": frozenset({"operation"}),
    "equinox.nn.AdaptivePool": frozenset({"operation"}),
    **{f"equinox.nn.{pool}{n}d": frozenset({"operation"}) for pool in _POOLS for n in (1, 2, 3)},
}
# Library pytree containers whose leaves are those of the layers they are given: qualified name -> the
# (position, keyword) of the sequence of layers (equinox 0.13.8).
LAYER_CONTAINERS: dict[str, tuple[int, str]] = {"equinox.nn.Sequential": (0, "layers")}
FUNCTION_LEAVES_CHECKED = "equinox 0.13.8, jax 0.10.2"
# Calls that return pytrees of their argument 0's class (the same structure, some leaves replaced by None):
# name -> whether the result is a tuple of such pytrees (equinox 0.13.8: `partition` gives two, `filter` one).
SAME_CLASS_RESULTS: dict[str, bool] = {"equinox.partition": True, "equinox.filter": False}

# How a class becomes a pytree, and where its static fields are declared:
FIELDS = "fields"  # a dataclass: static fields are marked per field (see FIELD_FUNCTIONS, STATIC_METADATA)
FLATTEN = "flatten"  # `tree_flatten` returns (children, aux data): fields read into the aux data are static
ALL_STATIC = "all-static"  # the whole instance is aux data: no leaves at all
ALL_DATA = "all-data"  # every field is a child (NamedTuple, chex.dataclass)

# Class decorators (or registration calls taking the class first) -> how.
PYTREE_DECORATORS: dict[str, str] = {
    "flax.struct.dataclass": FIELDS,
    "chex.dataclass": ALL_DATA,
    "jax.tree_util.register_dataclass": FIELDS,  # or explicit data_fields=/meta_fields=
    "jax.tree_util.register_pytree_node_class": FLATTEN,
    "jax.tree_util.register_pytree_with_keys_class": FLATTEN,
    "jax.tree_util.register_static": ALL_STATIC,
    "jax_dataclasses.pytree_dataclass": FIELDS,  # static: `Static[T]` annotations, `static_field()`
}
# `register_dataclass(Cls, data_fields=[...], meta_fields=[...])`: the keywords of the data and static field lists.
REGISTER_DATACLASS = "jax.tree_util.register_dataclass"
FIELD_LIST_KEYWORDS = ("data_fields", "meta_fields")
# Registration calls taking the class first and flatten functions (they return (children, aux data): what they
# read into the aux data is static): name -> (position, keyword) of each flatten argument.
PYTREE_FLATTEN_REGISTRATIONS: dict[str, tuple[tuple[int, str], ...]] = {
    "jax.tree_util.register_pytree_node": ((1, "flatten_func"), (3, "flatten_with_keys_func")),
    "jax.tree_util.register_pytree_with_keys": ((1, "flatten_with_keys"), (3, "flatten_func")),
}
# Base classes -> how their subclasses are pytrees.
PYTREE_BASES: dict[str, str] = {
    "flax.struct.PyTreeNode": FIELDS,
    "equinox.Module": FIELDS,
    "pytreeclass.TreeClass": FIELDS,  # static: fields frozen on set (FIELD_CALLBACKS)
    "typing.NamedTuple": ALL_DATA,
}
# Prefixes of the bases whose subclasses a transformation rebuilds from leaves (the pytree bases) or whose
# attribute updates it carries out (flax.nnx's objects): what such an object's methods store does not leak.
PYTREE_CLASS_PREFIXES = (*PYTREE_BASES, *NNX_BASES)
# flax.linen modules: dataclass fields are hyperparameters, static under `apply`.
LINEN_MODULE_BASES = frozenset({"flax.linen.Module", "flax.linen.module.Module"})
# Module methods that draw the parameters from the key they are given (argument 0 or `rngs=`), and `apply`'s
# own keywords (the others go to the method it runs).
LINEN_INIT_METHODS = frozenset({"init", "init_with_output"})
LINEN_APPLY_KEYWORDS = frozenset({"method", "rngs", "mutable", "capture_intermediates"})
# Inside a Module method run by a jitted `apply` (jit(model.apply), a TrainState's apply_fn, nn.jit), what
# `self.param(...)` returns is the parameter from the variables, a tracer (flax 0.12.8); so is what a
# `flax.linen` layer (`nn.Dense(3)(x)`) returns when called on tracers.
LINEN_PARAM_METHODS = frozenset({"param"})
# ... except under these lifted transformations (their labels in APIS), which may hand the variables in as
# concrete arrays: nn.scan's `variable_broadcast="params"`, nn.vmap's `variable_axes={"params": None}`.
LINEN_CONCRETE_VARIABLES = ("nn.scan body", "nn.vmap-mapped")
LINEN_LAYERS_PREFIX = "flax.linen."

# Field annotations of Python scalars: a pytree's scalar leaf is traced as a 0-d array wherever its leaves are
# (an equinox Module's `flag: bool` under jax.jit and as a lax.scan carry: `if self.flag:` fails), and static
# under equinox's filter_jit, which keeps every non-array leaf static (equinox 0.13.8, jax 0.10.2).
SCALAR_FIELD_TYPES = frozenset({"bool", "int", "float", "complex"})

# Field constructors and how each marks a field static: (keyword, value meaning static).
FIELD_FUNCTIONS: dict[str, tuple[str, bool]] = {
    "flax.struct.field": ("pytree_node", False),
    "equinox.field": ("static", True),
    "equinox.static_field": ("", True),  # every field it makes is static
    "dataclasses.field": ("metadata", True),
    "jax_dataclasses.static_field": ("", True),  # deprecated for `Static[T]`, still static
}
# The last words of the field functions that make every field static: an imported helper that the pytree model
# cannot read (a relative import) is known by that name.
STATIC_FIELD_WORDS = frozenset(
    n.rsplit(".", 1)[1] for n, (keyword, _) in FIELD_FUNCTIONS.items() if not keyword
)
# Keys of `field(metadata={...})` that mark a field static, with the value that does.
STATIC_METADATA: dict[str, bool] = {
    "pytree_node": False,
    "static": True,
    "__jax_dataclasses_static_field__": True,
}
# Field constructors that mark a field static by a callback they are given: (keyword, callback). pytreeclass
# stores a value frozen by `freeze` (given in `on_setattr`) as a leafless node: its aux data.
FIELD_CALLBACKS: dict[str, tuple[str, str]] = {
    "pytreeclass.field": ("on_setattr", "pytreeclass.freeze"),
    "pytreeclass._src.code_build.field": ("on_setattr", "pytreeclass.freeze"),
}
# Annotations that mark a dataclass field static, wrapping its type: jax_dataclasses' `Static[T]` (an
# `Annotated[T, marker]` that `pytree_dataclass` reads; the wrapped type is the field's class).
STATIC_FIELD_ANNOTATIONS = frozenset({"jax_dataclasses.Static"})
# Where the pytree-class rows of other libraries than jax and flax were run (tests/analysis/test_library_semantics.py):
# a `ClassVar` (a class attribute, never a dataclass field) is no leaf under any of them.
PYTREES_CHECKED: dict[str, str] = {
    "jax_dataclasses": "jax_dataclasses 1.6.3",
    "equinox": "equinox 0.13.8",
    "pytreeclass": "pytreeclass 0.11.1",
}


# -- Library APIs: what they trace, what they consume as keys ----------------------------------------------

# Which parameters of a traced callable hold tracers when the API calls it.
PARAMS_TRACED = "traced"  # every parameter (an optax schedule's step count, a solver's iterate)
PARAMS_CONCRETE = "concrete"  # none: the model's own arguments stay what the caller gave (numpyro under MCMC)
# Where a claim was checked: the library version that ran it (tests/analysis/test_library_semantics.py), or
# DOCUMENTED for a claim taken from the library's documentation, not run yet (its test skips; none today).
DOCUMENTED = "documented, not run"


@dataclasses.dataclass(frozen=True)
class Api:
    """One library API, as JAX sees it. `traces`: the (position, keyword) of each callable it calls under a
    trace, with `params` saying which of that callable's parameters are tracers and `label` naming the trace
    in messages; `keys`: the (position, keyword) of each argument it consumes as a PRNG key; `checked`: the version the claims were run on."""

    checked: str
    traces: tuple[tuple[int, str], ...] = ()
    params: str = PARAMS_TRACED
    label: str = ""
    keys: tuple[tuple[int | None, str], ...] = ()  # position None: keyword-only
    # Only the first `traced_leading` parameters hold tracers (diffrax's `t, y`, optimistix's `y`); the rest are
    # what the caller gave (equinox's filter_jit keeps a Python `args` static, traces an array one). None: all.
    traced_leading: int | None = None
    # Given a class (flax's lifted transforms take a Module class): the method it traces.
    method: str = ""
    # Whose options the call's keywords are (static_argnums, in_axes), counted as JAX's transformation counts
    # them; `self_counted`: argument 0 is the Module itself (nn.jit's static_argnums), else the first argument
    # after it (nn.vmap's in_axes).
    options: str = ""
    self_counted: bool = False
    # Its key draws noise: a vmapped function that closes over the key gives every element the same draws, as
    # for jax.random's samplers (JAX301); without it a shared key may align the elements on purpose.
    noise: bool = False
    # The same key given to this API twice replays one stream on purpose (numpyro seeds a model and its guide
    # alike so their plates subsample alike): only another consumer of the key is a reuse.
    replays: bool = False
    # What calling it does on the host (HOST_EFFECTS): under a transformation that happens once, at trace time.
    host: str = ""
    # The kind of host object it returns (HOST_OBJECTS says what that object's methods do).
    makes: str = ""
    # Given `<eager_keyword>=False` (jaxopt's `jit=False`), it calls the callable eagerly, once per iteration:
    # nothing is traced there that the call itself does not trace.
    eager_keyword: str = ""


_OPTAX = "optax 0.2.8"
_PYTHON = "python 3.11.7"
_ABSL = "absl-py 2.5.1"
_TQDM = "tqdm 4.70.1"
# Not in the dev virtualenv (their checks skip where the library is not installed); run in a side virtualenv
# with jax 0.10.2 (tests/analysis/test_library_semantics.py, ARCHITECTURE.md's "Library checks").
_TENSORBOARDX = "tensorboardX 2.6.5"
_TORCH_TENSORBOARD = "torch 2.13.0+cpu, tensorboard 2.21.0"
_FLAX_TENSORBOARD = "flax 0.12.8, tensorflow-cpu 2.21.0"
_WANDB = "wandb 0.31.0"
_TQDM_NOTEBOOK = "tqdm 4.70.1, ipywidgets 8.1.9"
_NUMPYRO = "numpyro 0.22.0"
_FLAX = "flax 0.12.8"
_JAX = "jax 0.10.2"
_EQUINOX = "equinox 0.13.8"
_HAIKU = "dm-haiku 0.0.17"
_JAXOPT = "jaxopt 0.8.5"
_OPTIMISTIX = "optimistix 0.1.0"
_DIFFRAX = "diffrax 0.7.2"
# jaxopt solvers -> the keyword of the function they trace (argument 0).
_JAXOPT_SOLVERS = {
    "LBFGS": "fun",
    "BFGS": "fun",
    "GradientDescent": "fun",
    "NonlinearCG": "fun",
    "LevenbergMarquardt": "residual_fun",
    "FixedPointIteration": "fixed_point_fun",
}
# equinox layers draw their initial weights from the `key=` they are built with: one key, equal weights.
_EQUINOX_LAYERS = (
    "Linear MLP Conv Conv1d Conv2d Conv3d ConvTranspose ConvTranspose1d ConvTranspose2d ConvTranspose3d "
    "Embedding GRUCell LSTMCell MultiheadAttention"
).split()
# optax optimizers whose learning rate may be a schedule: `update` calls it with the step count, a tracer
# when the update runs under jit (as a train step does); eagerly it is a concrete array.
_OPTAX_SCHEDULED = (
    "adabelief adadelta adafactor adagrad adam adamax adamaxw adamw amsgrad fromage lamb lars lion "
    "nadam nadamw noisy_sgd novograd optimistic_gradient_descent radam rmsprop sgd yogi"
).split()
_SCHEDULE_LABEL = "optax schedule (called with the step count by a jitted update)"
_MCMC_LABEL = "numpyro model (run by a jitted inference)"

APIS: dict[str, Api] = {
    **{
        f"optax.{name}": Api(_OPTAX, ((0, "learning_rate"),), label=_SCHEDULE_LABEL)
        for name in _OPTAX_SCHEDULED
    },
    "optax.scale_by_schedule": Api(_OPTAX, ((0, "step_size_fn"),), label=_SCHEDULE_LABEL),
    # numpyro: the model's own arguments are the concrete values given to `run`; its sample sites are tracers
    # (CALL_RESULTS) unless observed. The guide is run the same way.
    "numpyro.infer.NUTS": Api(_NUMPYRO, ((0, "model"),), PARAMS_CONCRETE, _MCMC_LABEL),
    "numpyro.infer.HMC": Api(_NUMPYRO, ((0, "model"),), PARAMS_CONCRETE, _MCMC_LABEL),
    "numpyro.infer.SA": Api(_NUMPYRO, ((0, "model"),), PARAMS_CONCRETE, _MCMC_LABEL),
    "numpyro.infer.SVI": Api(_NUMPYRO, ((0, "model"), (1, "guide")), PARAMS_CONCRETE, _MCMC_LABEL),
    "numpyro.infer.Predictive": Api(_NUMPYRO, ((0, "model"),), PARAMS_CONCRETE, _MCMC_LABEL),
    "numpyro.handlers.seed": Api(_NUMPYRO, keys=((1, "rng_seed"),), replays=True),
    # `nnx.Rngs(key)` draws `fold_in(key, n)` on its n-th call (== `split(key)[n]`): a fresh key per call, but
    # two Rngs (or two streams of one) built from one key give the same keys, and so does splitting that key.
    "flax.nnx.Rngs": Api(_FLAX, keys=((0, "default"), (None, "params"), (None, "dropout"))),
    **{f"equinox.nn.{name}": Api(_EQUINOX, keys=((None, "key"),)) for name in _EQUINOX_LAYERS},
    # flax.linen lifted transformations of a Module class: `__call__` runs under the transformation (every
    # argument a tracer unless static, or unbatched for nn.vmap's `in_axes=None`).
    "flax.linen.jit": Api(
        _FLAX,
        ((0, "target"),),
        label="nn.jit-compiled",
        method="__call__",
        options="jax.jit",
        self_counted=True,
    ),
    "flax.linen.remat": Api(_FLAX, ((0, "target"),), label="nn.remat-ed", method="__call__"),
    "flax.linen.checkpoint": Api(_FLAX, ((0, "target"),), label="nn.checkpoint-ed", method="__call__"),
    "flax.linen.vmap": Api(
        _FLAX, ((0, "target"),), label="nn.vmap-mapped", method="__call__", options="jax.vmap"
    ),
    "flax.linen.scan": Api(_FLAX, ((0, "target"),), label="nn.scan body", method="__call__"),
    # Solvers: the objective is traced (a while_loop body); its first parameter is the iterate.
    "jax.scipy.optimize.minimize": Api(_JAX, ((0, "fun"),), label="jax.scipy.optimize objective"),
    # odeint jits its solver: the dynamics `func(y, t, *args)` runs with every parameter a tracer.
    "jax.experimental.ode.odeint": Api(_JAX, ((0, "func"),), label="odeint dynamics"),
    # jaxopt jits its steps with the extra arguments of `run(init, *args)` as jit arguments: every parameter
    # of the objective is a tracer, a Python bool given to `run` included; with `jit=False` its loop is Python
    # and the objective runs on every iteration.
    **{
        f"jaxopt.{name}": Api(_JAXOPT, ((0, keyword),), label="jaxopt objective", eager_keyword="jit")
        for name, keyword in _JAXOPT_SOLVERS.items()
    },
    # optimistix: `fn(y, args)` under equinox's filter_jit: `y` is traced, `args` is what the caller gave.
    **{
        f"optimistix.{name}": Api(_OPTIMISTIX, ((0, "fn"),), label="optimistix objective", traced_leading=1)
        for name in ("minimise", "root_find", "least_squares", "fixed_point")
    },
    # diffrax's Brownian motions are drawn from their `key`: one key, one path.
    "diffrax.VirtualBrownianTree": Api(_DIFFRAX, keys=((4, "key"),), noise=True),
    "diffrax.UnsafeBrownianPath": Api(_DIFFRAX, keys=((1, "key"),), noise=True),
    # diffrax: `vector_field(t, y, args)` run by `diffeqsolve` (filter_jit): `t` and `y` are traced.
    "diffrax.ODETerm": Api(_DIFFRAX, ((0, "vector_field"),), label="diffrax vector field", traced_leading=2),
}
# -- Host side effects (their kinds and host objects are library_host.py) -------------------------------------

_TQDMS = tuple(f"tqdm.{where}{name}" for name in ("tqdm", "trange") for where in ("", "auto.", "std."))
_NOTEBOOK_TQDMS = ("tqdm.notebook.tqdm", "tqdm.notebook.trange")  # need ipywidgets
APIS.update(
    {
        **{f"logging.{name}": Api(_PYTHON, host=LOGS) for name in LOG_METHODS[:9]},
        # (absl's `fatal` aborts the process: not a log line, not listed)
        **{f"absl.logging.{name}": Api(_ABSL, host=LOGS) for name in LOG_METHODS if name not in NO_ABSL},
        "logging.getLogger": Api(_PYTHON, makes="logger"),
        "absl.logging.get_absl_logger": Api(_ABSL, makes="logger"),
        **{name: Api(_TQDM, host=PROGRESS, makes="progress bar") for name in _TQDMS},
        **{name: Api(_TQDM_NOTEBOOK, host=PROGRESS, makes="progress bar") for name in _NOTEBOOK_TQDMS},
        "tensorboardX.SummaryWriter": Api(_TENSORBOARDX, makes="summary writer"),
        "torch.utils.tensorboard.SummaryWriter": Api(_TORCH_TENSORBOARD, makes="summary writer"),
        "flax.metrics.tensorboard.SummaryWriter": Api(_FLAX_TENSORBOARD, makes="flax summary writer"),
        # in mode "offline" or "online"; `wandb.init(mode="disabled")` makes `log` a no-op
        "wandb.log": Api(_WANDB, host=WRITES),
    }
)

# Inference drivers that, given `<option>=True`, trace the model's own arguments too: every argument `run` passes
# the model is a tracer there (numpyro 0.22.0 under NUTS and HMC; a defaulted parameter `run` does not pass keeps
# its default). Driver -> (the position and keyword of the kernel built by an API above, the option).
MODEL_ARGUMENT_TRACING: dict[str, tuple[int, str, str]] = {
    "numpyro.infer.MCMC": (0, "sampler", "jit_model_args")
}

# Every key an API traces, derived once for the index pass.
TRACING_APIS: dict[str, Api] = {name: api for name, api in APIS.items() if api.traces}
KEY_CONSUMING_APIS: dict[str, Api] = {name: api for name, api in APIS.items() if api.keys}

# ... except an observed numpyro sample site (CALL_RESULTS), which returns its `obs=` value as given.
OBSERVED_KEYWORD = {"numpyro.sample": "obs"}

# Methods of library objects that consume a key: what made the object (a module prefix ending in ".", else
# the exact factory) -> method -> (position, keyword). `dist.Normal(0, 1).sample(key)` twice with one key
# draws the same value (numpyro 0.22.0, distrax 0.1.9, tfp-nightly 0.26 on JAX); a haiku transformation's
# `apply(params, rng, x)` gives `hk.next_rng_key()` the same keys from the same `rng` (haiku 0.0.17; under
# `hk.without_apply_rng` it takes no rng, and that factory is not listed).
KEY_METHODS: dict[str, dict[str, tuple[int | None, str]]] = {
    "numpyro.distributions.": {"sample": (0, "key"), "sample_with_intermediates": (0, "key")},
    "distrax.": {"sample": (None, "seed"), "sample_and_log_prob": (None, "seed")},
    "tensorflow_probability.substrates.jax.distributions.": {"sample": (1, "seed")},
    "haiku.transform": {"apply": (1, "rng")},
    "haiku.transform_with_state": {"apply": (2, "rng")},
    # `dropout(x, key=k)`: the same key, the same mask (`inference=True` draws nothing).
    "equinox.nn.Dropout": {"__call__": (None, "key")},
}
# Where each KEY_METHODS entry was run (tests/analysis/test_library_semantics.py).
KEY_METHODS_CHECKED: dict[str, str] = {
    "equinox.nn.Dropout": _EQUINOX,
    "numpyro.distributions.": _NUMPYRO,
    "distrax.": "distrax 0.1.9",
    "tensorflow_probability.substrates.jax.distributions.": "tfp-nightly 0.26.0.dev20261027",
    "haiku.transform": _HAIKU,
    "haiku.transform_with_state": _HAIKU,
}
# What a haiku transformation's `apply` takes before the function's own arguments (params, [state,] rng; under
# `hk.without_apply_rng` no rng), dm-haiku 0.0.17.
HAIKU_APPLY_LEADING = {"haiku.transform": 2, "haiku.transform_with_state": 3}
HAIKU_APPLY_KEYWORDS = frozenset({"params", "state", "rng"})
HAIKU_NO_RNG = "haiku.without_apply_rng"
# Factories of objects with a field that calls a Module's `apply`: factory -> (keyword given `model.apply`, the
# field). `TrainState.create(apply_fn=model.apply, ...)`: `state.apply_fn(variables, x)` is `model.apply(...)`.
APPLY_FN_FACTORIES: dict[str, tuple[str, str]] = {
    "flax.training.train_state.TrainState.create": ("apply_fn", "apply_fn"),  # flax 0.12.8
}

# flax.nnx objects (qualified-name prefix): `jax.jit` traces a copy of one given as an argument, so a Variable
# update there (`model.count.value += 1`, `model.w[...] = w`) is dropped when the call returns; `nnx.jit`
# propagates it, and returning the object hands the updated copy back (flax 0.12.8). Methods of library nnx
# classes that update Variables, by class:
NNX_CLASSES = ("flax.nnx.",)
NNX_MUTATING_METHODS: dict[str, frozenset[str]] = {
    "flax.nnx.Optimizer": frozenset({"update"}),  # the parameters it is given and its own step and state
}

# flax.nnx objects that draw from an Rngs stream they hold each time they are called (flax 0.12.8), by class: the
# keyword that gives the stream and the one that turns the drawing off (`deterministic=True`). `nnx.Rngs` itself
# draws when called (`rngs()`, `rngs.dropout()`). Closed over by a plain `jax.jit` function, the stream is
# advanced under the trace: flax raises TraceContextError (earlier flax read it once: one mask for every call).
NNX_STREAM_DRAWERS: dict[str, tuple[str, str]] = {"flax.nnx.Dropout": ("rngs", "deterministic")}
NNX_RNGS = "flax.nnx.Rngs"

# Keywords whose dict-literal values are consumed as keys, by method name: flax's `apply(..., rngs={"dropout":
# k})` draws the dropout mask from `k` (flax 0.12.8: one key, one mask), also through a TrainState's apply_fn.
KEY_DICT_KEYWORDS: dict[str, str] = {"apply": "rngs", "apply_fn": "rngs"}

# -- objects that hash by identity ---------------------------------------------------------------------------

# Library calls whose result hashes and compares by identity: two built alike are different static values (a
# new `jax.jit` cache key each, so a recompile). optax's transformations are NamedTuples of closures made per
# call (`init`, `update`), and tuples compare their functions by identity (optax 0.2.8: every name below is
# annotated to return a GradientTransformation, and `optax.adam(0.1) != optax.adam(0.1)`).
IDENTITY_HASHED = frozenset(
    "optax." + n
    for n in (
        "adabelief adadelta adafactor adagrad adam adamax adamaxw adamw adan adaptive_grad_clip "
        "add_decayed_weights add_noise amsgrad apply_every apply_if_finite centralize chain clip "
        "clip_by_block_rms clip_by_global_norm ema flatten fromage identity inject_hyperparams lamb lars lbfgs "
        "lion lookahead masked multi_transform nadam nadamw named_chain noisy_sgd novograd optimistic_adam "
        "optimistic_gradient_descent polyak_sgd radam rmsprop rprop scale scale_by_adadelta scale_by_adam "
        "scale_by_adamax scale_by_amsgrad scale_by_belief scale_by_lion scale_by_novograd scale_by_radam "
        "scale_by_rms scale_by_rprop scale_by_rss scale_by_schedule scale_by_sign scale_by_sm3 scale_by_stddev "
        "scale_by_trust_ratio scale_by_yogi set_to_zero sgd sign_sgd sm3 trace yogi zero_nans"
    ).split()
)
# Library classes that keep an argument as static state: class -> (position, keyword) of that argument. An
# `nnx.Optimizer` keeps its optax transformation in the graph def that `nnx.jit` keys its cache on, compared by
# equality (flax 0.12.8: a new `optax.sgd(0.1)` per optimizer retraces an `nnx.jit` step given it).
STATIC_STATE_ARGUMENTS: dict[str, tuple[int, str]] = {"flax.nnx.Optimizer": (1, "tx")}

# -- Python scalars given to a compiling transformation ---------------------------------------------------------

# The transformations that trace a Python scalar argument not marked static (the table's `scalars`).
SCALAR_TRACING = frozenset(name for name, t in TRANSFORMATIONS.items() if t.scalars)
