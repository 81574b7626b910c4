"""What counts as a rule's pitfall happening: the kinds of evidence the verify child judges (`expectations`)
and a `--run` command's processes observe (`recompiles/observations.py`, `line_watch.py`), and how a tracer
looks when printed."""

from __future__ import annotations

import re

EXCEPTION = "exception"  # a given exception class raised at the flagged line
LEAK = "leak"  # a tracer left after the trace (jax.checking_leaks() raised, or found where the line stores)
DISCARDED_UPDATE = "discarded-update"  # an array update at the flagged line whose result nothing uses
PRINTED_TRACER = "printed-tracer"  # stdout/stderr written at the flagged line shows a tracer
DEBUG_PRINT_TRACER = (
    "debug-print-tracer"  # jax.debug.print called at the flagged line with a tracer in its format
)
SELF_NOT_ARRAY = "self-not-array"  # a jitted method rejects its own instance as a traced argument
RUNS_ONCE = "runs-once"  # the flagged line ran while tracing (first call), not on a cached second call
KEY_REUSE = "key-reuse"  # the same key bits consumed by two calls (`--run`: recompiles/key_fingerprints.py)

# A tracer's repr or str, as JAX prints it (`Traced<ShapedArray(...)>`, `JVPTracer(...)`, an object repr).
TRACER_TEXT = re.compile(r"\w*Tracer\(|\w*Tracer<|Traced<|\w+Tracer object at")
