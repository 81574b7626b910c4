"""The small constants the model's facts are made of, apart from the code that computes them (and from libcst):
a module summary read back from the findings cache decodes without importing the analysis.

- value flags (`values/flags.py`): what an expression holds, or-ed together;
- transformation kinds (`binding/transforms.py`): how a function's values are treated, ordered by strictness;
- class kinds (`objects/instances.py`): what `init`/`apply` on an instance of a project class do;
- `LITERAL` (`project.py`): a per-argument fact of a call into another module.
"""

from __future__ import annotations

TRACED = 1  # an abstract tracer (its value is unknown at trace time)
ARRAY = 2  # a JAX array (concrete or traced): immutable, has .at
BOOL = 4  # a boolean array (a mask)
LIST = 8  # a Python list
HOLDS_TRACED = 16  # a Python container (tuple, list, dict) with tracers inside

# The argument is a Python bool/int/float literal (or a name bound to one). Above every value flag.
LITERAL = 1 << 12
# With a call fact's `rest` (`project.CallFact`): only the parameters annotated as arrays receive it (equinox's
# filtering, `eqx.filter_jit(model.apply)`: its other arguments are static unless arrays, as `binding/transforms.py` reads).
ARRAYS_ONLY = 1 << 13

HOST = -1  # explicitly untraced: the target of jax.debug.callback / pure_callback / io_callback
NONE = 0  # plain Python
GRAD = 1  # grad and friends alone: primals are concrete, Python control flow on values is legal
STRICT = 2  # jit, vmap, pmap, checkpoint, lax bodies: values are abstract tracers

LINEN = "linen"  # a flax.linen Module class: `init` draws its parameters from a key, `apply` runs a method
NNX = "nnx"  # a flax.nnx class (Module, Object, ...): plain `jax.jit` traces a copy of its instances
HAIKU = "haiku"  # a haiku transformation bound at module level: the same for `init` and `apply`
# A pytree class, as "pytree:<static fields>:<data fields>" (comma-separated): its static fields stay Python values
# under a transformation in the modules that import it.
PYTREE = "pytree"
# A module-level function (or alias) that makes a static dataclass field (`def frozen_field(**kw): return
# field(..., pytree_node=False)`): the modules importing it declare static fields with it.
STATIC_FIELD = "static-field"
