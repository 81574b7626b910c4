"""Which functions run under a JAX transformation, and which of their parameters are traced.

The index pass (`index.py`) finds every function and lambda (a `Unit`) and every place a transformation is
applied to one: decorators (`@jax.jit`, `@partial(jax.jit, static_argnums=...)`, `@my_jit` aliases, wrappers
named in config), call sites (`jax.jit(f)`, `jax.vmap(jax.grad(f))`, `jax.jit(partial(f, n=3))`) and bodies
handed to `lax.scan`/`fori_loop`/`while_loop`/`cond`/`switch`/`map`/`associative_scan`. This module knows
what each transformation does to its function's parameters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import libcst as cst

from .kinds import GRAD, STRICT
from .library import HOST_CALLBACKS as HOST_CALLBACKS  # re-exported: the index reads it from here
from .library import PARAMS_CONCRETE, Api
from .library import TRACING_APIS as TRACING_APIS  # re-exported: the index reads it from here

# qualified name -> (kind, label used in messages)
TRANSFORMS: dict[str, tuple[int, str]] = {
    "jax.jit": (STRICT, "jax.jit-compiled"),
    "jax.pmap": (STRICT, "jax.pmap-mapped"),
    "jax.vmap": (STRICT, "jax.vmap-mapped"),
    "jax.checkpoint": (STRICT, "jax.checkpoint-ed"),
    "jax.shard_map": (STRICT, "shard_map-ped"),
    "jax.make_jaxpr": (STRICT, "jax.make_jaxpr-traced"),
    "jax.eval_shape": (STRICT, "jax.eval_shape-traced"),
    "equinox.filter_jit": (STRICT, "equinox.filter_jit-compiled"),
    "equinox.filter_vmap": (STRICT, "equinox.filter_vmap-mapped"),
    "equinox.filter_pmap": (STRICT, "equinox.filter_pmap-mapped"),
    "equinox.filter_checkpoint": (STRICT, "equinox.filter_checkpoint-ed"),
    # flax.nnx's lifted transformations of a function (flax 0.12.8: each traces the array arguments it is
    # given, tests/analysis/test_library_semantics.py); nnx.vmap, like jax.vmap, stages nothing out.
    "flax.nnx.jit": (STRICT, "nnx.jit-compiled"),
    "flax.nnx.vmap": (STRICT, "nnx.vmap-mapped"),
    "flax.nnx.pmap": (STRICT, "nnx.pmap-mapped"),
    "flax.nnx.remat": (STRICT, "nnx.remat-ed"),
    "flax.nnx.scan": (STRICT, "nnx.scan body"),
    "jax.grad": (GRAD, "jax.grad-differentiated"),
    "jax.value_and_grad": (GRAD, "jax.value_and_grad-differentiated"),
    "jax.jacfwd": (GRAD, "jax.jacfwd-differentiated"),
    "jax.jacrev": (GRAD, "jax.jacrev-differentiated"),
    "jax.hessian": (GRAD, "jax.hessian-differentiated"),
    "jax.jvp": (GRAD, "jax.jvp-differentiated"),
    "jax.vjp": (GRAD, "jax.vjp-differentiated"),
    "jax.linearize": (GRAD, "jax.linearize-differentiated"),
    "equinox.filter_grad": (GRAD, "equinox.filter_grad-differentiated"),
    "equinox.filter_value_and_grad": (GRAD, "equinox.filter_value_and_grad-differentiated"),
    "flax.nnx.grad": (GRAD, "nnx.grad-differentiated"),
    "flax.nnx.value_and_grad": (GRAD, "nnx.value_and_grad-differentiated"),
}

# Transformations whose plain (non-array) arguments are static: only array-annotated parameters are traced.
# flax.nnx.jit is here for its graph-node arguments (a Module's plain attributes stay static), but it traces a
# Python scalar argument (flax 0.12.8: `nnx.jit(f)(model, x, True)` gives `f` a traced bool, unlike
# `eqx.filter_jit`): a scalar a call passes is traced there as for `jax.jit` (`library.SCALAR_TRACING`).
FILTERING = frozenset({"equinox.filter_jit", "equinox.filter_vmap", "equinox.filter_pmap", "flax.nnx.jit"})
# Transformations that stage nothing out: called eagerly, only the values computed from their mapped arguments
# are tracers (`jnp.zeros(3)` or `split(closed_key)` inside a bare vmap are concrete arrays, checked on 0.10).
EAGER_MAPS = frozenset({"jax.vmap", "equinox.filter_vmap", "flax.nnx.vmap"})

# lax control flow: qualified name -> (positional index, keyword) of each function argument.
LAX_BODIES: dict[str, tuple[tuple[int, str], ...]] = {
    "jax.lax.scan": ((0, "f"),),
    "jax.lax.fori_loop": ((2, "body_fun"),),
    "jax.lax.while_loop": ((0, "cond_fun"), (1, "body_fun")),
    "jax.lax.cond": ((1, "true_fun"), (2, "false_fun")),
    "jax.lax.switch": ((1, "branches"),),
    "jax.lax.map": ((0, "f"),),
    "jax.lax.associative_scan": ((0, "fn"),),
    # flax.nnx's control flow takes its functions where lax's does (flax 0.12.8)
    "flax.nnx.fori_loop": ((2, "body_fun"),),
    "flax.nnx.while_loop": ((0, "cond_fun"), (1, "body_fun")),
    "flax.nnx.cond": ((1, "true_fun"), (2, "false_fun")),
    "flax.nnx.switch": ((1, "branches"),),
}

# Differentiation alone makes tracers only of the arguments it differentiates: transform -> default argnums.
# (jvp/vjp/linearize take all primals; equinox's filter_grad differentiates its first argument, always.)
DIFFERENTIATING: dict[str, int | None] = {
    "jax.grad": 0,
    "jax.value_and_grad": 0,
    "jax.jacfwd": 0,
    "jax.jacrev": 0,
    "jax.hessian": 0,
    "flax.nnx.grad": 0,
    "flax.nnx.value_and_grad": 0,
    "equinox.filter_grad": None,
    "equinox.filter_value_and_grad": None,
}

# Annotations that mark a parameter as an array (traced under any transformation) ...
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


@dataclasses.dataclass
class StaticSpec:
    """What a transformation says about its function's parameters."""

    argnums: frozenset[int] = frozenset()
    argnames: frozenset[str] = frozenset()
    unbatched: frozenset[int] = frozenset()  # vmap/pmap in_axes=None positions: not traced under vmap alone
    unknown: bool = False  # static spec not a literal: trust no parameter to be traced
    filtering: bool = False  # equinox-style: only array-annotated parameters are traced
    # grad alone: only these positions are tracers; None when every parameter is (jit, vmap, ...).
    differentiated: frozenset[int] | None = None
    eager_map: bool = False  # only vmaps (EAGER_MAPS) in the chain: nothing is staged out by the chain itself

    def merged(self, other: StaticSpec) -> StaticSpec:
        """Two transformations applied to one function (`jit(grad(f))`): a parameter is traced when either
        traces it, so only the differentiation limit of `grad(grad(f, 0), 1)` survives, as a union."""
        if self.differentiated is None or other.differentiated is None:
            differentiated = None
        else:
            differentiated = self.differentiated | other.differentiated
        return StaticSpec(
            self.argnums | other.argnums,
            self.argnames | other.argnames,
            self.unbatched | other.unbatched,
            self.unknown or other.unknown,
            self.filtering or other.filtering,
            differentiated,
            self.eager_map and other.eager_map,
        )

    def everywhere(self) -> StaticSpec:
        """The spec without its differentiation limit: grad nested in traced code sees traced arguments."""
        return dataclasses.replace(self, differentiated=None)


@dataclasses.dataclass
class Application:
    """One transformation applied to one function."""

    kind: int
    label: str
    spec: StaticSpec
    bound_self: bool = False  # `jax.jit(self.step)`: `self` is bound, argnums count from the next parameter
    bound_positional: int = 0  # `jax.jit(partial(f, a, b))`
    bound_names: frozenset[str] = frozenset()


def _literals(node: cst.BaseExpression, leaf) -> frozenset | None:
    """The values of a literal or a tuple/list of literals; None when anything is not a literal."""
    if isinstance(node, (cst.Tuple, cst.List)):
        out: set = set()
        for element in node.elements:
            inner = _literals(element.value, leaf)
            if inner is None:
                return None
            out |= inner
        return frozenset(out)
    value = leaf(node)
    return None if value is None else frozenset({value})


def _int_leaf(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _int_leaf(node.expression)
        return None if inner is None else -inner
    return None


def _str_leaf(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        return node.evaluated_value
    return None


def _in_axes_none(node: cst.BaseExpression) -> tuple[frozenset[int], bool]:
    """Positions given `None` in a literal `in_axes` tuple; (positions, understood)."""
    if isinstance(node, cst.Integer):
        return frozenset(), True
    if isinstance(node, (cst.Tuple, cst.List)):
        positions = set()
        for i, element in enumerate(node.elements):
            if isinstance(element.value, cst.Name) and element.value.value == "None":
                positions.add(i)
        return frozenset(positions), True
    return frozenset(), False


# Options a transformation accepts positionally after the function, in order.
_POSITIONAL_OPTIONS = {
    "jax.vmap": ("in_axes",),
    "equinox.filter_vmap": ("in_axes",),
    **{
        name: ("argnums",)
        for name in ("jax.grad", "jax.value_and_grad", "jax.jacfwd", "jax.jacrev", "jax.hessian")
    },
}


def static_spec(args: list[cst.Arg], qualname: str) -> StaticSpec:
    """Read static_argnums / static_argnames / in_axes from a transformation's keyword arguments."""
    argnums: set[int] = set()
    argnames: set[str] = set()
    unbatched: frozenset[int] = frozenset()
    unknown = False
    differentiated: frozenset[int] | None = None
    if qualname in DIFFERENTIATING:
        default = DIFFERENTIATING[qualname]
        differentiated = frozenset({0 if default is None else default})
    positional_keys = _POSITIONAL_OPTIONS.get(qualname, ())
    positional = [a for a in args if a.keyword is None]
    for arg in args:
        if arg.keyword is None:
            # vmap(f, in_axes): the options after the function may be given positionally.
            index = positional.index(arg)
            if arg.star or index >= len(positional_keys):
                continue
            key = positional_keys[index]
        else:
            key = arg.keyword.value
        if key in ("static_argnums", "static_broadcasted_argnums"):
            nums = _literals(arg.value, _int_leaf)
            if nums is None:
                unknown = True
            else:
                argnums |= nums
        elif key == "static_argnames":
            names = _literals(arg.value, _str_leaf)
            if names is None:
                unknown = True
            else:
                argnames |= names
        elif key == "in_axes":
            unbatched, understood = _in_axes_none(arg.value)
            unknown = unknown or not understood
        elif key == "argnums" and differentiated is not None and DIFFERENTIATING[qualname] is not None:
            nums = _literals(arg.value, _int_leaf)
            if nums is None:
                unknown = True
            else:
                differentiated = nums
    return StaticSpec(
        frozenset(argnums),
        frozenset(argnames),
        unbatched,
        unknown,
        filtering=qualname in FILTERING,
        differentiated=differentiated,
        eager_map=qualname in EAGER_MAPS,
    )


def library_application(api: Api, app: Application, options: Sequence[cst.Arg] = ()) -> Application:
    """`app` (what `partial`/a bound method left of the callable) as the library API traces it: staged out,
    named by the API, with the parameters the table says it passes tracers to (`options`: the call's other
    arguments, read as the transformation the table names reads them)."""
    if api.params == PARAMS_CONCRETE:
        spec = StaticSpec(unknown=True)
    elif api.traced_leading is not None:  # only the leading parameters: the limit grad's spec states too
        spec = StaticSpec(differentiated=frozenset(range(api.traced_leading)))
    elif api.options:
        spec = static_spec([a for a in options if a.keyword is not None], api.options)  # keywords only
    else:
        spec = StaticSpec()
    return dataclasses.replace(app, kind=STRICT, label=api.label, spec=spec)


def eager(app: Application) -> bool:
    """Whether `app` stages nothing out: only eager vmaps, applied directly (a lax body built from a vmap,
    `lax.scan(jax.vmap(f), ...)`, is relabelled by the index and staged like any lax body)."""
    return app.spec.eager_map and app.label in _EAGER_LABELS


_EAGER_LABELS = frozenset(TRANSFORMS[name][1] for name in EAGER_MAPS)


def annotation_name(param: cst.Param) -> str | None:
    if param.annotation is None:
        return None
    node = param.annotation.annotation
    if isinstance(node, cst.Subscript):
        node = node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.SimpleString):
        return node.value.strip("'\"").split("[")[0].split(".")[-1]
    return None


def positional_params(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params]


def traced_parameters(params: cst.Parameters, app: Application, is_method: bool) -> set[str]:
    """The parameters that hold tracers when `app` calls the function."""
    spec = app.spec
    if spec.unknown:
        return set()
    positional = positional_params(params)
    skip_self = is_method and not app.bound_self and positional
    self_name = positional[0].name.value if skip_self else None
    if app.bound_self and is_method:
        positional = positional[1:]
    positional = positional[app.bound_positional :]
    count = len(positional)
    static_indices = {i + count if i < 0 else i for i in spec.argnums}
    differentiated = None
    if spec.differentiated is not None:
        differentiated = {i + count if i < 0 else i for i in spec.differentiated}
    traced: set[str] = set()
    candidates = [(i, p) for i, p in enumerate(positional)] + [(None, p) for p in params.kwonly_params]
    for index, param in candidates:
        name = param.name.value
        if name == self_name or name in app.bound_names or name in spec.argnames:
            continue
        if index is not None and (index in static_indices or index in spec.unbatched):
            continue
        if differentiated is not None and index not in differentiated:
            continue  # grad alone: an argument it does not differentiate stays the Python value it is
        annotation = annotation_name(param)
        if annotation in STATIC_ANNOTATIONS:
            continue
        if spec.filtering and annotation not in ARRAY_ANNOTATIONS:
            continue
        if param.default is not None and annotation not in ARRAY_ANNOTATIONS:
            # `def f(x, training=False)`: called without it, the default stays a Python value.
            continue
        traced.add(name)
    for star in (params.star_arg, params.star_kwarg):
        if (
            isinstance(star, cst.Param)
            and not spec.filtering
            and not spec.argnums
            and not spec.argnames
            and spec.differentiated is None
        ):
            traced.add(star.name.value)
    return traced
