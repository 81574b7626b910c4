"""The library table's array rows (library.py re-exports them): what dtype kind a `jnp`/`jax.random`/NumPy
call's array has when no `dtype=` says, the NumPy array methods a JAX array lacks or runs differently, and how
Python ints become int32 arrays with x64 off (the default). Data only, run on jax 0.10.2 by
tests/analysis/test_library_arrays.py; the value model (`values/flags.py`) and the rules read it.
"""

from __future__ import annotations

ARRAYS_CHECKED = "jax 0.10.2, numpy 2.4.6"

# Attributes of an array that are static Python data even on a tracer.
CONCRETE_ATTRIBUTES = frozenset(
    {
        "shape",
        "ndim",
        "dtype",
        "size",
        "weak_type",
        "sharding",
        "itemsize",
        "nbytes",
        "aval",
        "device",
        "devices",
    }
)

# Attributes of an array that are arrays again (a tracer's are tracers; `at` gives updated arrays).
ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "at"})
# Methods of an array that return an array again.
ARRAY_METHODS = frozenset(
    (
        "sum mean max min prod std var any all argmax argmin cumsum cumprod astype reshape ravel flatten "
        "squeeze transpose clip round dot conj"
    ).split()
)
# Methods of an array that return Python or NumPy values, not JAX arrays (listed from jax.Array's methods on
# jax 0.10.2; under jit the concretizing ones fail: JAX102's business, not a tracer).
CONCRETE_METHODS = frozenset(
    (
        "item tolist __bool__ __int__ __float__ __index__ __array__ __array_namespace__ __dlpack__ tobytes "
        "devices platform is_ready is_deleted delete copy_to_host_async on_device_size_in_bytes "
        "unsafe_buffer_pointer"
    ).split()
)

# -- What a JAX call gives under a transformation (jax 0.10.2) ------------------------------------------------

# Functions of the array namespaces (namespaces.ARRAY_NAMESPACES) that answer static questions about shapes and
# dtypes: a Python or NumPy value even on a tracer (library.CONCRETE_JAX_FUNCTIONS adds CALL_RESULTS' own) ...
STATIC_QUERIES = frozenset(
    "jax.numpy." + name
    for name in (
        "shape ndim size result_type promote_types dtype issubdtype isdtype can_cast iscomplexobj isrealobj "
        "isscalar finfo iinfo broadcast_shapes"
    ).split()
) | frozenset({"jax.lax.broadcast_shapes", "jax.random.key_impl"})
# ... and the `jax.*` names starting with these (a tree's structure, `jax.dtypes`' helpers, the device queries).
CONCRETE_JAX_PREFIXES = ("jax.tree.structure", "jax.tree_util.tree_structure", "jax.dtypes.", "jax.device")
# Functions whose array result is boolean: a mask.
BOOL_FUNCTIONS = frozenset(
    "jax.numpy." + name
    for name in (
        "isnan isinf isfinite isneginf isposinf isclose signbit iscomplex isreal isin "
        "logical_and logical_or logical_not logical_xor greater greater_equal less less_equal equal not_equal"
    ).split()
) | frozenset({"jax.lax.lt", "jax.lax.le", "jax.lax.gt", "jax.lax.ge", "jax.lax.eq", "jax.lax.ne"})
# Other `jax.*` functions that return arrays built from their arguments.
ARRAY_FUNCTIONS = frozenset({"jax.device_put", "jax.block_until_ready"})
# Functions that return their first argument's pytree with its structure: an array for an array, but the
# env step's `(obs, state, reward, done, info)` tuple for that tuple (`lax.stop_gradient(step(...))`).
STRUCTURE_KEEPING = frozenset(
    {"jax.lax.stop_gradient", "jax.lax.optimization_barrier", "jax.device_put", "jax.block_until_ready"}
)
# Namespaces whose functions (less the static questions, the CALL_RESULTS rows and SEVERAL_ARRAYS_WORDS) give
# one array: a helper returning such a call returns an array. Elsewhere a function may give a tuple or a pytree.
RETURNED_ARRAY_NAMESPACES = ("jax.numpy.", "jax.nn.", "jax.random.", "jax.scipy.special.")
# Types no tracer is an instance of (under jit, vmap and grad): `isinstance(x, int)` on a traced `x` is False,
# so the branch it guards does not run under the trace ...
NOT_TRACER_TYPES = frozenset(
    {f"builtins.{n}" for n in ("int", "float", "bool", "complex", "str", "bytes")}
    | {f"numpy.{n}" for n in ("ndarray", "generic", "number", "integer", "floating", "bool_")}
    | {f"numbers.{n}" for n in ("Number", "Complex", "Real", "Rational", "Integral")}
)
# ... and types every tracer of an array is an instance of: in the branch they guard, the value is an array.
ARRAY_TYPES = frozenset({"jax.Array", "jax.numpy.ndarray"})
# How a dtype's name (`jnp.float32`, "int8", `bool`) starts -> its kind, in the order to test them.
DTYPE_WORDS = (
    ("bool", "bool"),
    ("uint", "uint"),
    ("int", "int"),
    ("float", "float"),
    ("complex", "complex"),
)

# -- Dtypes with x64 off (jax 0.10.2) --------------------------------------------------------------------------

# Functions whose result is a float array unless a dtype says otherwise (JAX's and NumPy's defaults), with the
# position of their `dtype` parameter.
FLOAT_RESULTS = {
    f"{ns}.{n}": position
    for ns in ("jax.numpy", "numpy")
    for n, position in (("zeros", 1), ("ones", 1), ("empty", 1), ("identity", 1), ("eye", 3))
} | {
    f"jax.random.{n}": position
    for n, position in (("normal", 2), ("uniform", 2), ("exponential", 2), ("truncated_normal", 4))
}
# Functions whose result has this dtype kind whatever their arguments' (a `dtype=` may still say otherwise).
RESULT_DTYPES = {"jax.random.randint": "int", "jax.random.bernoulli": "bool", "jax.random.key_data": "uint"}

# -- 64-bit dtypes with x64 off (jax 0.10.2) ------------------------------------------------------------------

# 64-bit dtypes that JAX truncates to 32 bits unless x64 is enabled (verified on jax 0.10.2: float64 and
# complex128 come back as float32 / complex64 with a UserWarning).
WIDE_DTYPES = {
    **{f"{ns}.{n}": "float64" for ns in ("jax.numpy", "numpy") for n in ("float64", "double")},
    **{f"{ns}.{n}": "complex128" for ns in ("jax.numpy", "numpy") for n in ("complex128", "cdouble")},
}
WIDE_STRINGS = {
    "float64": "float64",
    "f8": "float64",
    "<f8": "float64",
    "double": "float64",
    "d": "float64",
} | {
    "complex128": "complex128",
    "c16": "complex128",
    "<c16": "complex128",
}
# Scalar types that build an array when called: `jnp.float64(1.5)`.
WIDE_CONSTRUCTORS = {name: width for name, width in WIDE_DTYPES.items() if name.startswith("jax.numpy.")}
# Positional index of `dtype` in array-building functions (from their signatures in jax 0.10.2).
DTYPE_POSITIONS = {
    **{
        f"jax.numpy.{n}": 1
        for n in "array asarray zeros ones empty identity zeros_like ones_like empty_like astype".split()
    },
    **{f"jax.numpy.{n}": 2 for n in "full full_like".split()},
    **{f"jax.numpy.{n}": 3 for n in "arange eye tri".split()},
    "jax.numpy.linspace": 5,
    "jax.numpy.logspace": 5,
    "jax.numpy.geomspace": 4,
    "jax.lax.convert_element_type": 1,
}
DTYPE_KEYWORDS = ("dtype", "new_dtype")
# `np.dtype(np.float64)`: the dtype object of its argument.
DTYPE_CONSTRUCTORS = frozenset({"numpy.dtype", "jax.numpy.dtype"})
# Namespaces whose functions honour (and truncate) a requested dtype (JAX501; `jax.image` and `jax.ops` take
# their dtype from the inputs).
DTYPE_REQUESTING = ("jax.numpy.", "jax.random.", "jax.lax.", "jax.nn.", "jax.scipy.")
# Calls that compute with JAX: a module making one at top level runs JAX code itself (a program, which x64.py
# asks to enable x64 where it wants 64 bits), but for the static questions (STATIC_QUERIES).
COMPUTING = (*DTYPE_REQUESTING, "jax.device_put")


# -- Python ints JAX reads while tracing (jax 0.10.2): a traced value there raises the error named ----------------

_SHAPE = "TypeError"
_CONCRETE = "ConcretizationTypeError"
# Parameters that JAX reads as Python ints when it traces the call (a shape, a size, a count):
# function -> (error raised, ((position, keyword), ...), a keyword that makes the call fine).
# Each fails for any traced value, array or pytree alike, so no evidence beyond "traced" is needed.
STATIC_INTS: dict[str, tuple[str, tuple[tuple[int, str], ...], str | None]] = {
    **{f"jax.numpy.{n}": (_SHAPE, ((0, "shape"),), None) for n in ("zeros", "ones", "empty", "full")},
    "jax.numpy.eye": (_SHAPE, ((0, "N"), (1, "M")), None),
    "jax.numpy.identity": (_SHAPE, ((0, "n"),), None),
    "jax.numpy.arange": (_CONCRETE, ((0, "start"), (1, "stop"), (2, "step")), None),
    **{f"jax.numpy.{n}": (_CONCRETE, ((2, "num"),), None) for n in ("linspace", "logspace", "geomspace")},
    "jax.numpy.reshape": (_SHAPE, ((1, "shape"), (1, "newshape")), None),
    "jax.numpy.broadcast_to": (_SHAPE, ((1, "shape"),), None),
    "jax.numpy.tile": (_SHAPE, ((1, "reps"),), None),
    "jax.numpy.repeat": (_CONCRETE, ((1, "repeats"),), "total_repeat_length"),
    "jax.numpy.split": (_CONCRETE, ((1, "indices_or_sections"),), None),
    "jax.numpy.array_split": (_CONCRETE, ((1, "indices_or_sections"),), None),
    **{
        f"jax.ops.segment_{n}": (_CONCRETE, ((2, "num_segments"),), None)
        for n in ("sum", "prod", "max", "min")
    },
    "jax.nn.one_hot": (_CONCRETE, ((1, "num_classes"),), None),
    "jax.lax.top_k": ("TracerBoolConversionError", ((1, "k"),), None),
    "jax.lax.integer_pow": (_SHAPE, ((1, "y"),), None),  # the exponent is a parameter of the primitive
    # the start may be traced (that is what `dynamic` means), the size never
    "jax.lax.dynamic_slice": (_SHAPE, ((2, "slice_sizes"),), None),
    "jax.lax.dynamic_slice_in_dim": ("TracerIntegerConversionError", ((2, "slice_size"),), None),
}
# Array methods with the same needs: method -> (error, a keyword that makes the call fine).
STATIC_INT_METHODS = {"reshape": (_SHAPE, None), "repeat": (_CONCRETE, "total_repeat_length")}

# NumPy functions that only read `.shape`/`.dtype`, so they accept tracers.
NUMPY_SHAPE_ONLY = frozenset(
    "numpy." + n
    for n in (
        "shape ndim size result_type dtype issubdtype iscomplexobj isrealobj isscalar promote_types can_cast "
        "broadcast_shapes finfo iinfo"
    ).split()
)

# NumPy functions whose `jax.numpy` namesake computes the same values on arrays (jax 0.10.2), with how many
# positional arguments both take alike (NumPy's next one, a ufunc's `out`, jnp refuses; None: any number):
# JAX102 offers `np.exp(x)` -> `jnp.exp(x)`. tests/analysis/test_library_arrays.py runs each on both.
_UNARY = (
    "exp exp2 expm1 log log1p log2 log10 sqrt cbrt square abs absolute sign negative reciprocal sin cos tan "
    "arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh floor ceil trunc rint isnan isinf isfinite "
    "logical_not vstack hstack"
)
_BINARY = (
    "arctan2 hypot maximum minimum fmax fmin power add subtract multiply divide true_divide floor_divide mod "
    "remainder logical_and logical_or dot matmul outer round concatenate stack"
)
NUMPY_JNP_NAMESAKES: dict[str, int | None] = {
    **{"numpy." + n: 1 for n in _UNARY.split()},
    **{"numpy." + n: 2 for n in _BINARY.split()},
    "numpy.einsum": None,
}

# -- Output shapes that depend on values (jax 0.10.2): under jit they need `size=` -----------------------------

# Functions whose output size depends on the values of their input (under jit, on a tracer, without `size=`:
# ConcretizationTypeError); `jnp.where` only with its condition alone (ONE_ARGUMENT_VALUE_SIZED).
VALUE_SIZED = frozenset(
    "jax.numpy." + n
    for n in "nonzero argwhere flatnonzero unique unique_values unique_counts unique_inverse unique_all".split()
)
ONE_ARGUMENT_VALUE_SIZED = frozenset({"jax.numpy.where"})
# Functions that keep the items where a condition (their first argument) holds (on a traced condition, without
# `size=`: TracerBoolConversionError).
CONDITION_SIZED = frozenset({"jax.numpy.compress", "jax.numpy.extract"})

# -- Lists of rows and arrays (jax 0.10.2) -----------------------------------------------------------------------

# Functions that turn a list of per-row results into one array with those rows.
STACKERS = frozenset({"jax.numpy.stack", "jax.numpy.array", "jax.numpy.asarray"})
# Functions that only convert (no per-row work to vectorize): the same values, as a JAX array ...
CONVERSIONS = frozenset({"jax.numpy.array", "jax.numpy.asarray", "jax.numpy.copy", "jax.device_put"})
# ... and ones whose result is a list of arrays, not an array with rows (`atleast_*` only given several arrays:
# given one, an array; ONE_ARGUMENT_ARRAY) ...
LIST_RESULTS = frozenset(
    "jax.numpy." + n
    for n in "split array_split hsplit vsplit dsplit meshgrid broadcast_arrays atleast_1d atleast_2d atleast_3d".split()
)
ONE_ARGUMENT_ARRAY = frozenset("jax.numpy." + n for n in "atleast_1d atleast_2d atleast_3d".split())
# ... and ones whose result is always a tuple of arrays (named tuples among them): assigning to an item of it is
# no array update. (`svd`, `qr` and `where` are not here: `compute_uv=False`, `mode="r"` and `where(c, x, y)`
# give one array.)
TUPLE_RESULTS = frozenset(
    "jax.numpy." + n
    for n in (
        "nonzero unravel_index tril_indices triu_indices diag_indices ix_ divmod frexp modf histogram histogram2d "
        "unique_all unique_counts unique_inverse linalg.eigh linalg.eig linalg.slogdet linalg.lstsq"
    ).split()
)
# Last words of the functions (of jnp, jax.nn, jax.random, jax.scipy.special) that may give several arrays: the
# rows above, and those whose arguments decide (`where(c)`, `unique(x, return_counts=True)`, `svd`, `qr`, ...).
SEVERAL_ARRAYS_WORDS = frozenset(n.rsplit(".", 1)[-1] for n in LIST_RESULTS | TUPLE_RESULTS) | frozenset(
    "histogramdd unique mask_indices where svd qr lu lu_factor schur polar".split()
)
# Grids of floats (`np.linspace(a, b, n)`): iterated, every step gives a new float value, so a loop over one
# handing its element to a static argument compiles anew on every step.
FLOAT_GRIDS = frozenset(
    {"numpy.linspace", "numpy.logspace", "numpy.geomspace", "jax.numpy.linspace", "jax.numpy.logspace"}
)

# -- JAX arrays and NumPy's array methods (jax 0.10.2, on arrays and on tracers under jit alike) -------------

# NumPy methods that change an array in place and that a JAX array does not have: AttributeError.
MISSING_INPLACE_METHODS = frozenset({"fill", "resize", "put", "itemset", "partition"})
# NumPy methods that change the array in place (returning None) where a JAX array's returns a new array and
# leaves it as it was: as a statement, `x.sort()` does nothing.
COPYING_INPLACE_METHODS = frozenset({"sort"})
# Array methods whose `dtype=` JAX honours like the `jnp` function of the same name: a 64-bit dtype is
# truncated to 32 bits unless x64 is enabled (with a UserWarning).
DTYPE_METHODS = frozenset({"astype", "sum", "prod", "mean", "cumsum", "cumprod", "std", "var"})

# -- Integers with x64 off (jax 0.10.2): int32 -----------------------------------------------------------------

# Functions that convert a Python int (or a list of them) to an int32 array when no dtype is given: one outside
# int32 raises OverflowError.
INT_CONVERSIONS = frozenset({"jax.numpy.array", "jax.numpy.asarray", "jax.numpy.int32"})
# Elementwise operations: each operand a Python int is converted to int32 first, so one outside int32 raises
# OverflowError, eagerly and under jit (`lax.neg(1 << 32)`; jax 0.10.2, every operand position).
INT_OPERANDS = frozenset(
    [
        f"jax.lax.{n}"
        for n in (
            "neg abs sign bitwise_not add sub mul div rem max min bitwise_and bitwise_or bitwise_xor shift_left "
            "shift_right_logical shift_right_arithmetic eq ne lt le gt ge"
        ).split()
    ]
    + [
        f"jax.numpy.{n}"
        for n in (
            "negative abs absolute positive sign invert bitwise_not square add subtract multiply floor_divide "
            "remainder mod maximum minimum bitwise_and bitwise_or bitwise_xor left_shift right_shift equal "
            "not_equal less less_equal greater greater_equal"
        ).split()
    ]
)
# Functions that take a Python int as a weakly typed fill value (position of the value): one outside int32
# silently wraps around (`jnp.full(3, 2**40)` is zeros).
INT_FILLS: dict[str, int] = {"jax.numpy.full": 1}
# Functions whose int bounds (position, keyword) are converted to int32 when no dtype is given: a Python int
# outside int32 raises OverflowError, eagerly and under jit (`jax.random.randint(key, shape, 0, 2**31)`).
INT_BOUNDS: dict[str, tuple[tuple[int, str], ...]] = {"jax.random.randint": ((2, "minval"), (3, "maxval"))}
# Python int constants of the standard library, by qualified name, as JAX sees them (64-bit CPython, the only
# platforms JAX runs on): JAX503 proves a bound from them as from a literal (`jnp.asarray(sys.maxsize)` raises).
INT_CONSTANTS: dict[str, int] = {"sys.maxsize": 2**63 - 1}
# Integer dtypes of at most 32 bits, by qualified name and by string: a Python int outside int32 combined with
# such an array (`+ - * // %`) raises OverflowError, and its arithmetic wraps around silently.
NARROW_INT_DTYPES = frozenset(
    f"{ns}.{n}" for ns in ("jax.numpy", "numpy") for n in "int8 int16 int32 uint8 uint16 uint32".split()
) | frozenset({"int8", "int16", "int32", "uint8", "uint16", "uint32", "i4", "<i4"})
