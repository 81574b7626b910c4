"""The library table's part for Haiku's implicit state (library.py re-exports it): a haiku transformation runs
its function in a frame that keeps its parameters, its state and its rng sequence, and the calls below store
into that frame from wherever they run. Run inside a function that a raw JAX transformation or lax control flow
stages out (lax.scan, jax.jit, lax.cond, odeint, ...; haiku's own hk.scan, hk.jit, ... thread the frame),
what they store is a tracer of that trace: UnexpectedTracerError when init's parameters or the frame are used
again, and the same rng key in every iteration. Data only, run by tests/analysis/test_library_haiku_state.py.
"""

from __future__ import annotations

HAIKU_STATE_CHECKED = "dm-haiku 0.0.17"

# The transformations that run their function in a new frame (its calls store there, whatever traces it).
HAIKU_FRAMES = frozenset(
    {
        "haiku.transform",
        "haiku.transform_with_state",
        "haiku.multi_transform",
        "haiku.multi_transform_with_state",
    }
)
# Calls that store into the frame: name -> what they store, for messages. get_parameter and get_state create
# their value in `init` (reading an existing one stores nothing).
HAIKU_STATE_CALLS: dict[str, str] = {
    "haiku.get_parameter": "creates a parameter",
    "haiku.get_state": "creates a state value",
    "haiku.set_state": "stores a state value",
    "haiku.next_rng_key": "advances haiku's rng sequence",
    "haiku.next_rng_keys": "advances haiku's rng sequence",
    "haiku.maybe_next_rng_key": "advances haiku's rng sequence",
}
# The base class of haiku modules: a subclass whose methods make such calls (or call such modules) stores
# into the frame when called.
HAIKU_MODULE = "haiku.Module"
# Library modules that create parameters (or state) the first time they are called.
HAIKU_PARAMETER_MODULES = frozenset(
    "haiku." + name
    for name in (
        "Linear Bias Conv1D Conv2D Conv2DTranspose DepthwiseConv2D Embed LayerNorm RMSNorm BatchNorm GroupNorm "
        "LSTM GRU VanillaRNN MultiHeadAttention nets.MLP"
    ).split()
)
