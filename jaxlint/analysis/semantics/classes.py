"""The library table's class rows (library.py re-exports them): the protocol methods Python and JAX call on a
class (construction, pytree flattening), the bases and decorators that make a class a record, and the bases that
leave its methods plain functions. Which classes are pytrees (decorators, bases, field functions) are the rows of
library.py itself (PYTREE_DECORATORS, PYTREE_BASES). Data only, run on the versions named by
tests/analysis/test_library_classes.py; `objects/classes.py`, `objects/records.py`, `objects/storage.py`, `objects/outer_objects.py` and the
rules read it.
"""

from __future__ import annotations

CLASSES_CHECKED = "jax 0.10.2, flax 0.12.8, equinox 0.13.8, python 3.11.7"

# -- Methods Python, dataclasses, flax and equinox call on an object -------------------------------------------

# Methods that build the object: an object built inside the trace does not outlive it (flax.linen's `setup`
# runs when the module is bound, inside `init`/`apply`; `__setstate__` when a copy or an unpickled one is built).
CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__", "setup", "__setstate__"})
# Methods that set up state before any jitted call can see it: the constructors and `__set_name__` (run when the
# owning class is created).
SETUP_METHODS = CONSTRUCTORS | {"__set_name__"}
# Methods a record class's constructor call runs (equinox runs `__check_init__` after `__init__`).
RUNS_ON_CONSTRUCTION = frozenset({"__init__", "__new__", "__post_init__", "__check_init__"})
# Methods that make a class a pytree (or let its subclasses register themselves).
PYTREE_METHODS = frozenset({"tree_flatten", "tree_unflatten", "tree_flatten_with_keys", "__init_subclass__"})

# -- Pytree classes whose state a transformation tracks ---------------------------------------------------------

# Bases (qualified-name prefixes) of flax.nnx objects: nnx's transformations carry their attribute updates out of
# the trace (the pytree bases proper are library.PYTREE_BASES; library.PYTREE_CLASS_PREFIXES joins both).
NNX_BASES = ("flax.nnx.", "flax.experimental.nnx.")

# -- Records: a constructor call's arguments are the instance's fields, which cannot be reassigned -------------

RECORD_BASES = frozenset({"typing.NamedTuple", "flax.struct.PyTreeNode", "equinox.Module"})
RECORD_DECORATORS = frozenset({"flax.struct.dataclass"})
DATACLASS = "dataclasses.dataclass"  # a record with `frozen=True`
# Annotations (by their last word) of a class attribute that is no field: a dataclass and a NamedTuple skip it ...
CLASS_VAR = "ClassVar"
# ... and of pseudo-fields that change what the constructor takes: its parameters are not the fields in order.
CONSTRUCTOR_ANNOTATIONS = frozenset({"KW_ONLY", "InitVar"})

# -- Bases that leave a class's methods plain functions (`obj.m` is a new bound method each time) ---------------

PLAIN_OBJECT = "builtins.object"  # a class with no other base
PLAIN_BASES = frozenset({PLAIN_OBJECT, "abc.ABC"})
# ... and for hashing and pytree registration (JAX402, JAX406: a class JAX cannot treat as a pytree), the
# typing bases, which add no `__hash__`, `__eq__` or flattening either.
TYPING_PLAIN_BASES = PLAIN_BASES | {"typing.Generic", "typing.Protocol"}
