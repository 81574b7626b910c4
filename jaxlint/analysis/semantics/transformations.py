"""The library table's transformations (library.py re-exports them): jax's own, equinox's `filter_*` and
flax.nnx's, and the control flow that traces the functions it is given (lax's and nnx's). Data only: what
each does to the function it is given, as run on the versions named; every entry is run by
tests/analysis/test_library_transformations.py. `binding/transforms.py`, `binding/index.py`, `summaries/jit.py`, the flow walk and the
key model read it.
"""

from __future__ import annotations

import dataclasses

from ..kinds import GRAD, STRICT

_JAX = "jax 0.10.2"
_EQUINOX = "equinox 0.13.8"
_FLAX = "flax 0.12.8"


@dataclasses.dataclass(frozen=True)
class Transformation:
    """A function transformation, `T(f, options...)`. `kind`: STRICT where `f`'s parameters are tracers and its
    body is staged out (jit, vmap, pmap, checkpoint, ...), GRAD where differentiation alone makes tracers of
    the differentiated arguments and stages nothing out; `label` names it in messages."""

    checked: str
    kind: int
    label: str
    # Called eagerly it stages nothing out: only values computed from the mapped arguments are tracers
    # (`jnp.zeros(3)` or `split(closed_key)` inside a bare vmap are concrete arrays).
    eager: bool = False
    # Only array arguments are traced: plain (non-array) arguments stay static (equinox's filter_*). flax.nnx.jit
    # is here for its graph-node arguments (a Module's plain attributes stay static), but see `scalars`.
    filtering: bool = False
    # A Python scalar a call passes, not marked static, is a tracer inside (`step(x, True)`): jax.jit, and
    # nnx.jit although it filters (flax 0.12.8), unlike equinox's filter_jit.
    scalars: bool = False
    # Differentiation limits the tracers to the differentiated arguments: the default `argnums` (0), with
    # `argnums=` honoured where `argnums` is True (equinox's filter_grad always differentiates argument 0).
    # None: every parameter is a tracer (jit, vmap; jvp/vjp/linearize take all primals).
    differentiates: int | None = None
    argnums: bool = False
    # Options it takes positionally after the function, in order (`vmap(f, in_axes)`, `grad(f, argnums)`).
    positional_options: tuple[str, ...] = ()
    # It compiles, so it caches by the function's identity: the same wrapped function called twice with like
    # arguments traces once (a new function each time, a lambda or a `partial` made per call, traces again).
    compiling: bool = False
    # Its cache compares the function by equality, not identity: a bound method made anew on every call
    # (`T(self.m)(x)`) equals the last one, so it compiles once (jax.pmap, equinox's filter_jit and filter_pmap;
    # jax.jit keys on the new method object and retraces every call).
    equal_bound_methods: bool = False
    # A filtering compiling transformation flattens the function it is given as a pytree and compares its static
    # structure by equality: the result of this one (an equinox Module holding the function) made anew from an
    # equal function (a bound method) is an equal function to it.
    equal_results: bool = False
    # The key model follows a key given to the wrapped call into the function (`jax.jit(f)(key)` consumes what
    # `f(key)` consumes).
    calls_through: bool = False
    # It refuses a call with nothing to map (no array in the mapped arguments) unless given `axis_size`: where a
    # literal `in_axes` maps one argument alone, that argument is never None (`if u is None:` on it is dead).
    needs_mapped_leaf: bool = False
    # The key model judges a key the function closes over as drawn alike for every element it maps over.
    per_element: bool = False
    # What the call gives is a Python object built while tracing, never a tracer, whatever the arguments:
    # `make_jaxpr(f)(x)` a ClosedJaxpr (its jaxpr, equations and params), `eval_shape(f, x)` ShapeDtypeStructs.
    python_result: bool = False
    # Every leaf of an argument it traces (the differentiated ones under grad, the mapped ones under vmap) must
    # be a JAX type: a Python function leaf (an equinox Module's activation) raises TypeError. equinox's
    # filter_* keep non-array leaves static instead.
    array_leaves: bool = False
    # It runs the function at once on what follows it positionally (`jvp(f, primals, tangents)`,
    # `vjp(f, *primals)`, `eval_shape(f, *args)`): those are the function's inputs, not options.
    runs_at_once: bool = False


# The keyword options that make a parameter static or unbatched, or say which are differentiated (read by
# `binding.transforms.static_spec` on whichever transformation is given them).
STATIC_ARGNUMS = ("static_argnums", "static_broadcasted_argnums")  # positions of static arguments
STATIC_ARGNAMES = "static_argnames"  # names of static arguments
IN_AXES = "in_axes"  # `None` at a position: that argument is not mapped (not a tracer under an eager vmap)
ARGNUMS = "argnums"  # the differentiated positions
# Every keyword that names static parameters (`binding.transforms.static_spec` reads no other: none by position).
STATIC_KEYWORDS = frozenset({*STATIC_ARGNUMS, STATIC_ARGNAMES})
JIT = "jax.jit"  # the plain one, which the checks of jitted callables default to


def _grad_family(label: str) -> Transformation:
    """jax.grad and its kin: argument 0 differentiated unless `argnums` (given by keyword or after `f`) says."""
    # It calls the function once, with the arguments it is given (the forward pass): a key given to the
    # differentiated call, or closed over by the function, is consumed as the function consumes it.
    return Transformation(
        _JAX,
        GRAD,
        label,
        differentiates=0,
        argnums=True,
        positional_options=(ARGNUMS,),
        calls_through=True,
        array_leaves=True,
    )


TRANSFORMATIONS: dict[str, Transformation] = {
    "jax.jit": Transformation(
        _JAX, STRICT, "jax.jit-compiled", compiling=True, calls_through=True, scalars=True, array_leaves=True
    ),
    "jax.pmap": Transformation(
        _JAX,
        STRICT,
        "jax.pmap-mapped",
        compiling=True,
        calls_through=True,
        equal_bound_methods=True,
        needs_mapped_leaf=True,
        array_leaves=True,
    ),
    "jax.vmap": Transformation(
        _JAX,
        STRICT,
        "jax.vmap-mapped",
        eager=True,
        positional_options=(IN_AXES,),
        calls_through=True,
        per_element=True,
        needs_mapped_leaf=True,
        array_leaves=True,
    ),
    "jax.checkpoint": Transformation(
        _JAX, STRICT, "jax.checkpoint-ed", calls_through=True, array_leaves=True
    ),
    "jax.shard_map": Transformation(_JAX, STRICT, "shard_map-ped"),
    "jax.make_jaxpr": Transformation(
        _JAX, STRICT, "jax.make_jaxpr-traced", positional_options=(STATIC_ARGNUMS[0],), python_result=True
    ),
    "jax.eval_shape": Transformation(
        _JAX, STRICT, "jax.eval_shape-traced", python_result=True, runs_at_once=True
    ),
    "equinox.filter_jit": Transformation(
        _EQUINOX,
        STRICT,
        "equinox.filter_jit-compiled",
        filtering=True,
        compiling=True,
        calls_through=True,
        equal_bound_methods=True,
    ),
    "equinox.filter_vmap": Transformation(  # (its `in_axes` is keyword-only)
        _EQUINOX,
        STRICT,
        "equinox.filter_vmap-mapped",
        eager=True,
        filtering=True,
        calls_through=True,
        per_element=True,
        equal_results=True,
        needs_mapped_leaf=True,
    ),
    "equinox.filter_pmap": Transformation(
        _EQUINOX,
        STRICT,
        "equinox.filter_pmap-mapped",
        filtering=True,
        compiling=True,
        equal_bound_methods=True,
    ),
    "equinox.filter_checkpoint": Transformation(_EQUINOX, STRICT, "equinox.filter_checkpoint-ed"),
    # flax.nnx's lifted transformations of a function: each traces the array arguments it is given; nnx.vmap,
    # like jax.vmap, stages nothing out.
    "flax.nnx.jit": Transformation(
        _FLAX, STRICT, "nnx.jit-compiled", filtering=True, compiling=True, scalars=True
    ),
    "flax.nnx.vmap": Transformation(_FLAX, STRICT, "nnx.vmap-mapped", eager=True, needs_mapped_leaf=True),
    "flax.nnx.pmap": Transformation(_FLAX, STRICT, "nnx.pmap-mapped"),
    "flax.nnx.remat": Transformation(_FLAX, STRICT, "nnx.remat-ed"),
    "flax.nnx.scan": Transformation(_FLAX, STRICT, "nnx.scan body"),
    "jax.grad": _grad_family("jax.grad-differentiated"),
    "jax.value_and_grad": _grad_family("jax.value_and_grad-differentiated"),
    "jax.jacfwd": _grad_family("jax.jacfwd-differentiated"),
    "jax.jacrev": _grad_family("jax.jacrev-differentiated"),
    "jax.hessian": _grad_family("jax.hessian-differentiated"),
    "jax.jvp": Transformation(_JAX, GRAD, "jax.jvp-differentiated", runs_at_once=True),
    "jax.vjp": Transformation(_JAX, GRAD, "jax.vjp-differentiated", runs_at_once=True),
    "jax.linearize": Transformation(_JAX, GRAD, "jax.linearize-differentiated", runs_at_once=True),
    # (like jax.grad, each runs the function once with the arguments it is given: the keys it consumes are)
    "equinox.filter_grad": Transformation(
        _EQUINOX, GRAD, "equinox.filter_grad-differentiated", differentiates=0, calls_through=True
    ),
    "equinox.filter_value_and_grad": Transformation(
        _EQUINOX,
        GRAD,
        "equinox.filter_value_and_grad-differentiated",
        differentiates=0,
        calls_through=True,
    ),
    "flax.nnx.grad": Transformation(
        _FLAX, GRAD, "nnx.grad-differentiated", differentiates=0, argnums=True, calls_through=True
    ),
    "flax.nnx.value_and_grad": Transformation(
        _FLAX, GRAD, "nnx.value_and_grad-differentiated", differentiates=0, argnums=True, calls_through=True
    ),
}


@dataclasses.dataclass(frozen=True)
class ControlFlow:
    """A control-flow call that traces the functions it is given (`lax.scan(f, init, xs)`): `bodies`, the
    (position, keyword) of each function argument (a list or tuple of functions for `switch`), runs under
    `label` with every parameter a tracer."""

    checked: str
    bodies: tuple[tuple[int, str], ...]
    label: str
    # For the key model: a LOOP runs its body on the carry (`init`, given at position/keyword), handed in as
    # the body's parameter `carry_param` (`init` None: no carry, lax.map's body gets the elements of xs);
    # BRANCHES run one of their functions on the operands; "": not followed.
    keys: str = ""
    init: tuple[int, str] | None = None
    carry_param: int | None = None
    carry_in_tuple: bool = False  # the body returns (carry, output): lax.scan's
    # For the receiver classes (`objects/receivers.py`): for each parameter of the body (the last of `bodies`), the
    # (position, keyword) of the call's argument whose class it receives (the carry, or a slice of `xs`;
    # position -1: none of the call's, the loop index); None: not followed.
    parameters: tuple[tuple[int, str], ...] | None = None
    # ... and for branches, the position of the first operand: each branch receives the operands in order.
    operands: int | None = None
    # Called outside any trace it runs its functions eagerly, on concrete arrays: they are traced only when
    # the call is (under an enclosing jit). The others trace their functions even when called eagerly (jax
    # 0.10.2: scan, map, fori_loop with Python bounds, while_loop, cond with a Python bool, switch with a
    # Python int).
    eager: bool = False
    # Its function runs once per iteration of a loop at run time (messages say "iteration", not "call").
    # (flax.nnx's fori_loop and while_loop iterate too but are not marked: their messages still say "call".)
    iterates: bool = False
    # Every leaf of its carry (`init`) must be a JAX type: a Python function leaf raises TypeError (lax's
    # loops, jax 0.10.2).
    array_carry: bool = False
    # Called outside any trace it compiles what it traces, cached by the identity of its functions: a function
    # made anew for each call (an inner def, a lambda) compiles again on every call (jax 0.10.2 and 0.4.33).
    # Not lax.map, nor flax.nnx's: they wrap the function anew themselves, so every call compiles anyway.
    compiles: bool = False


# Compiling transformations whose result, called, returns before its work is done (JAX403's timed regions).
# Not equinox's filter_jit: 0.13.8 waits for a marker computed with the result (to raise its runtime errors), so a
# timed call measures the work.
DISPATCHING = frozenset({"jax.jit", "jax.pmap", "equinox.filter_pmap", "flax.nnx.jit"})

LOOP = "loop"
BRANCHES = "branches"

CONTROL_FLOW: dict[str, ControlFlow] = {
    "jax.lax.scan": ControlFlow(
        _JAX,
        ((0, "f"),),
        "lax.scan body",
        LOOP,
        (1, "init"),
        0,
        carry_in_tuple=True,
        iterates=True,
        parameters=((1, "init"), (2, "xs")),
        array_carry=True,
        compiles=True,
    ),
    "jax.lax.fori_loop": ControlFlow(
        _JAX,
        ((2, "body_fun"),),
        "lax.fori_loop body",
        LOOP,
        (3, "init_val"),
        1,
        iterates=True,
        parameters=((-1, ""), (3, "init_val")),
        array_carry=True,
        compiles=True,
    ),
    "jax.lax.while_loop": ControlFlow(
        _JAX,
        ((0, "cond_fun"), (1, "body_fun")),
        "lax.while_loop body",
        LOOP,
        (2, "init_val"),
        0,
        iterates=True,
        parameters=((2, "init_val"),),
        array_carry=True,
        compiles=True,
    ),
    "jax.lax.cond": ControlFlow(
        _JAX, ((1, "true_fun"), (2, "false_fun")), "lax.cond body", BRANCHES, operands=3, compiles=True
    ),
    "jax.lax.switch": ControlFlow(_JAX, ((1, "branches"),), "lax.switch body", BRANCHES, compiles=True),
    "jax.lax.map": ControlFlow(_JAX, ((0, "f"),), "lax.map body", LOOP, iterates=True),
    "jax.lax.associative_scan": ControlFlow(
        _JAX, ((0, "fn"),), "lax.associative_scan body", eager=True, iterates=True
    ),
    # flax.nnx's control flow takes its functions where lax's does
    "flax.nnx.fori_loop": ControlFlow(
        _FLAX, ((2, "body_fun"),), "nnx.fori_loop body", parameters=((-1, ""), (3, "init_val"))
    ),
    "flax.nnx.while_loop": ControlFlow(
        _FLAX, ((0, "cond_fun"), (1, "body_fun")), "nnx.while_loop body", parameters=((2, "init_val"),)
    ),
    "flax.nnx.cond": ControlFlow(_FLAX, ((1, "true_fun"), (2, "false_fun")), "nnx.cond body"),
    "flax.nnx.switch": ControlFlow(_FLAX, ((1, "branches"),), "nnx.switch body"),
}

# Parameter annotations: ones that mark a parameter as an array (traced under any transformation, the only
# parameters a filtering one traces: jax's and jaxtyping's names) ...
ARRAY_ANNOTATIONS = (
    "Array",
    "ndarray",
    "ArrayLike",
    "Float",
    "Int",
    "Bool",
    "Complex",
    "Num",
    "Shaped",
    "Real",
)
# ... and ones that cannot be a JAX type, so the parameter must be static (or the call fails anyway).
STATIC_ANNOTATIONS = frozenset({"str", "Callable", "type", "Module", "Sequence", "Mapping", "dict", "list"})

# Calls that run their function once per leaf of a pytree: name -> the position of the leaf among the
# function's parameters (`map_with_path` passes the leaf's key path first).
TREE_MAPS: dict[str, int] = {
    "jax.tree.map": 0,
    "jax.tree_util.tree_map": 0,
    "jax.tree.map_with_path": 1,
    "jax.tree_util.tree_map_with_path": 1,
}
# Decorators (besides the transformations) whose result calls the function with the arguments it is given.
TRANSPARENT_DECORATORS = frozenset({"jax.custom_jvp", "jax.custom_vjp", "jax.named_call"})
# Functions with custom derivatives: called from code JAX stages out (jit, lax bodies), the function is traced
# again with every argument not listed in the option as a tracer, a Python int given by a static jit argument
# included; so is its forward rule (`defvjp(fwd, bwd)`), and its jvp rule (`defjvp`) gets tuples of tracers.
# Called eagerly or under grad alone, they see the values given (jax 0.10.2). Name -> the option's keyword.
CUSTOM_DERIVATIVES: dict[str, str] = {
    "jax.custom_vjp": "nondiff_argnums",
    "jax.custom_jvp": "nondiff_argnums",
}
# The methods of such a function that register its rules: method -> whether the rule takes the primal's
# arguments (`fwd`) rather than (primals, tangents) tuples (`jvp`).
CUSTOM_RULE_METHODS: dict[str, bool] = {"defvjp": True, "defjvp": False}
