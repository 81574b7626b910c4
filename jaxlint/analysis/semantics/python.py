"""The library table's Python rows (library.py re-exports them): what Python's builtins and the methods of its
str and dict give when handed a JAX value. Data only, run on the versions named by
tests/analysis/test_library_python.py; the value model (`values/flags.py`) reads it.
"""

from __future__ import annotations

PYTHON_CHECKED = "jax 0.10.2, python 3.11.7"

# Methods that JAX arrays lack: the receiver is a str or a dict, and so is what they return (`.keys()` of a
# pytree: keys are never traced). `.items()`/`.values()` are not here: their values may be tracers.
PYTHON_ONLY_METHODS = frozenset(
    (
        "keys startswith endswith split rsplit splitlines lower upper casefold title capitalize strip lstrip "
        "rstrip join format isdigit isalpha isalnum isnumeric isidentifier islower isupper partition "
        "rpartition encode removeprefix removesuffix zfill ljust rjust center"
    ).split()
)

# Builtins whose result the value model takes for a concrete Python value whatever their argument (those that
# convert a tracer raise instead: JAX102's business; `next` and `getattr` give what they are handed).
CONCRETE_BUILTINS = frozenset(
    "builtins." + name
    for name in (
        "len isinstance issubclass type hasattr callable id str repr hash bool int float complex "
        "print format sorted dir vars getattr object super range enumerate zip iter next reversed"
    ).split()
)
# Builtins that neither wait for a JAX result (they read no values: a length is a shape) nor run unknown code ...
HARMLESS_BUILTINS = frozenset(
    {"builtins.range", "builtins.len", "builtins.enumerate", "builtins.zip", "builtins.iter"}
)
# ... and builtins that wait for a JAX result: they convert it to a Python value (or print its values).
CONCRETIZING_BUILTINS = frozenset(
    {"builtins.float", "builtins.int", "builtins.bool", "builtins.complex", "builtins.print"}
)
# List methods that keep what they are given (a JAX result appended is not waited for).
ACCUMULATING_METHODS = frozenset({"append", "extend"})
# Decorators that make a context manager of a generator: the code before its `yield` runs on entering.
CONTEXT_MANAGERS = frozenset({"contextlib.contextmanager"})
# `functools.partial(f, ...)`: calls `f` with the arguments bound first; `functools.wraps(f)`: a decorator's
# wrapper that calls `f` (its name and docstring are f's).
PARTIAL = "functools.partial"
WRAPS = frozenset({"functools.wraps"})
# Decorators that keep what a function (or a property) returned, per arguments: its body runs once for them.
CACHING_DECORATORS = frozenset({"functools.lru_cache", "functools.cache", "functools.cached_property"})
# Decorators that make a method a property: read as `obj.name`, it runs the method.
PROPERTIES = frozenset({"builtins.property", "functools.cached_property"})
# Builtins that make a str of their argument, with the f-string conversion each is (`f"{x!r}"`) ...
STR_CONVERSIONS: dict[str, str | None] = {"builtins.str": None, "builtins.repr": "r", "builtins.ascii": "a"}
# ... and with `format`, those that format it (as `str.format` does).
STR_BUILTINS = frozenset({*STR_CONVERSIONS, "builtins.format"})
# Builtins whose instances are unhashable (`hash([])`: TypeError), so no static argument.
UNHASHABLE_BUILTINS = frozenset({"builtins.list", "builtins.dict", "builtins.set", "builtins.bytearray"})
# Builtins (and `operator.index`) that convert a tracer to a Python value: name -> (how messages write the call,
# the error JAX raises, what to write instead, whether it raises under grad alone too: a float of a JVP tracer
# does, an int does not).
CONVERTING_BUILTINS: dict[str, tuple[str, str, str, bool]] = {
    "builtins.float": (
        "float()",
        "ConcretizationTypeError",
        "use x.astype(jnp.float32) and keep it an array",
        True,
    ),
    "builtins.complex": ("complex()", "ConcretizationTypeError", "use x.astype(jnp.complex64)", True),
    "builtins.int": ("int()", "ConcretizationTypeError", "use x.astype(jnp.int32), or make it static", False),
    "builtins.range": (
        "range()",
        "TracerIntegerConversionError",
        "use lax.fori_loop, or make the bound static",
        False,
    ),
    "operator.index": ("operator.index()", "TracerIntegerConversionError", "make the value static", False),
}
# Builtins that compare or test the truth of their arguments (a tracer's: TracerBoolConversionError), with the
# jnp function that computes the same on arrays: (given several arguments, given one iterable).
COMPARING_BUILTINS: dict[str, tuple[str | None, str]] = {
    "builtins.max": ("use jnp.maximum", "use jnp.max"),
    "builtins.min": ("use jnp.minimum", "use jnp.min"),
    "builtins.sorted": (None, "use jnp.sort"),
    "builtins.any": (None, "use jnp.any"),
    "builtins.all": (None, "use jnp.all"),
}
# Builtins that compute on their argument (`abs(x)` of a tracer is a tracer; `max`/`min` compare, and raise).
ARITHMETIC_BUILTINS = frozenset("builtins." + n for n in "abs round pow divmod sum max min".split())
