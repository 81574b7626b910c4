"""`jaxlint --verify`: confirm static findings by tracing the flagged code with the user's own JAX.

The linter's process never imports jax or user code. Each module with confirmable findings (JAX101-JAX106,
JAX201, JAX203, JAX301, JAX405, JAX502) is handed to a child process run by the user's interpreter: it
imports the module by its dotted name (so its `__main__` block does not run), reaches each flagged function,
and traces it with `jax.jit(entry).trace(...)`, which costs no device time. Verdicts:

- CONFIRMED: the rule's exception was raised at the flagged file and line (from the traceback, including
  the cause JAX chains on trace-time errors), or its behaviour was seen: a tracer printed at the line
  (JAX201), a tracer formatted into jax.debug.print's string (JAX203), a tracer still held after the
  trace by the global or `self.attr` the flagged statement stores into (JAX105; jax.checking_leaks() only
  where the statement stores nowhere nameable: it scans the heap at the end of every nested trace), an
  update at the line whose result the jaxpr never reads (JAX106), jax.jit rejecting `self` (JAX405). A line
  the flagged function's own inputs do not reach may be reached from another function with real inputs
  (examples, recorded or live calls; of this module, or of another module of the project: child/callers.py):
  the same error at the same line confirms it.
- NOT_REPRODUCED: traced cleanly with the inputs tried (listed in `inputs`).
- NOT_RUN: with the reason: import failed, timeout, crash, memory, no inputs, closure variables, ...
- NOT_CHECKED: a rule that tracing cannot show ("not checked by tracing (use --run)" for JAX401/JAX402).

Inputs, cheapest first; declared examples are used alone, the other sources in order:

1. Examples the user declares in pyproject.toml::

       [tool.jaxlint.verify.examples]
       "pkg.model:step" = "jnp.ones((4, 3)), 0.1"          # module:qualname -> call arguments
       "pkg.model:Model.apply" = ["jnp.ones(3)", "x=jnp.ones((2, 3))"]   # several, tried in order
       "scripts/train.py:make_step.<locals>.step" = "sds((8,), jnp.float32)"

   The key is the module's dotted name (or its path relative to the project root), a colon, and the
   function's qualname (`Class.method`, `outer.<locals>.inner`). The value is the text between the
   parentheses of a call, evaluated in the child in the module's namespace plus `jax`, `jnp`, `np`, `lax`
   and `sds` (= jax.ShapeDtypeStruct). Arguments holding arrays or ShapeDtypeStructs are traced; other
   values are passed as they are (static), except under the user's own jax.jit, where every non-static
   argument is traced as a real call would. A method's example may pass `self=Model(...)`; without it,
   `self` is the class's instance made without __init__, with the attributes the method reads set to
   arrays. Examples are evaluated afresh for each attempt, so keys they make are checked for reuse. The
   CLI passes this table (or the whole `[tool.jaxlint.verify]` table) as `examples`.
2. Calls recorded by `jaxlint --verify --run CMD` (recompiles/call_records.py, stored by
   recompiles/signature_store.py under `<cache>/signatures/`, handed to the child in the request as plain
   JSON and rebuilt by child/recorded.py: pytree structure through JAX's node data, ShapeDtypeStruct
   leaves, static values; or, for a call holding closures such as a flax `TrainState`, a cloudpickle the
   store's HMAC vouches for: recompiles/pickled_calls.py), tried before the annotations and the search,
   which still follow them. The verdict names them ("a call recorded by `jaxlint --verify --run`: ...").
3. Annotations: `jax.Array`/`ArrayLike` (shape searched), jaxtyping `Float[Array, "b n"]` (named dims get
   2, 3, 4, ... shared across parameters), `float`/`int`/`bool` scalars, typed PRNG keys. Static
   parameters (static_argnums/argnames) take their default, else a value from their annotation. A
   registered dataclass (by annotation, or the module's one dataclass whose fields cover the attributes
   read on the parameter) is built from its fields' annotations (child/structs.py).
4. A small search: float32 scalar, then (3,), then (2, 3) (a vector would turn `if x > 0` into a plain
   ValueError); int32 first for parameters named or used like counts and indices; `jax.random.key(0)`
   then a legacy `PRNGKey(0)` for parameters named like keys. Parameters with defaults keep them.

A method of a flax linen Module takes its inputs through `Module().init(key, *args, method=name)`
(child/module_methods.py; a haiku Module's through hk.transform); resolve follows `__wrapped__` from flax's method wrapper to the user's function.

When none fits, NOT_RUN says how to give inputs: `--verify --run` the tests or the script, or declare an
example (with the key to use).

Isolation: a fresh session per child (killed as a group on timeout and after exit, with whatever it
started: see children.py), stdin closed, stdout/stderr captured and never shown, results through an
events pipe (read up to a cap), a watchdog on the resident memory of the child's whole tree
(`memory-limit-mb`; not the address space, which XLA's thread pools inflate on many-core machines),
modules run in parallel up to `jobs`, forked from a single-threaded fork server where that is safe.
"""

from __future__ import annotations

from .api import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT, parse_examples, unmatched_examples, verify_findings
from .child.expectations import CONFIRMABLE_CODES
from .results import (
    CONFIRMED,
    NOT_CHECKED,
    NOT_REPRODUCED,
    NOT_RUN,
    Environment,
    FindingVerdict,
    ModuleRun,
    VerifyReport,
)
from .supervise import Terminated, ending_children_on_signals

__all__ = [
    "CONFIRMABLE_CODES",
    "CONFIRMED",
    "DEFAULT_MEMORY_LIMIT_MB",
    "DEFAULT_TIMEOUT",
    "NOT_CHECKED",
    "NOT_REPRODUCED",
    "NOT_RUN",
    "Environment",
    "FindingVerdict",
    "ModuleRun",
    "Terminated",
    "VerifyReport",
    "ending_children_on_signals",
    "parse_examples",
    "unmatched_examples",
    "verify_findings",
]
