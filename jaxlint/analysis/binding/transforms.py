"""Which functions run under a JAX transformation, and which of their parameters are traced.

The index pass (`binding/index.py`) finds every function and lambda (a `Unit`) and every place a transformation is
applied to one: decorators (`@jax.jit`, `@partial(jax.jit, static_argnums=...)`, `@my_jit` aliases, wrappers
named in config), call sites (`jax.jit(f)`, `jax.vmap(jax.grad(f))`, `jax.jit(partial(f, n=3))`) and bodies
handed to `lax.scan`/`fori_loop`/`while_loop`/`cond`/`switch`/`map`/`associative_scan`. This module reads
what each transformation does to its function's parameters from the library table
(`semantics/transformations.py`) and applies it to a function's parameters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import libcst as cst

from ..kinds import STRICT
from ..semantics.library import (
    ARGNUMS,
    IN_AXES,
    PARAMS_CONCRETE,
    STATIC_ARGNAMES,
    STATIC_ARGNUMS,
    TRANSFORMATIONS,
    Api,
)
from ..semantics.library import (
    ARRAY_ANNOTATIONS as ARRAY_ANNOTATIONS,  # re-exported: the value model reads it from here
)
from ..semantics.library import HOST_CALLBACKS as HOST_CALLBACKS  # re-exported: the index reads it from here
from ..semantics.library import (
    STATIC_ANNOTATIONS as STATIC_ANNOTATIONS,  # re-exported: the flow walk reads it from here
)
from ..semantics.library import TRACING_APIS as TRACING_APIS  # re-exported: the index reads it from here

# The table's transformations by what they do, looked up per transformation applied (built once).
_FILTERING = frozenset(name for name, t in TRANSFORMATIONS.items() if t.filtering)
_EAGER_MAPS = frozenset(name for name, t in TRANSFORMATIONS.items() if t.eager)
_NEEDS_LEAF = {name: t.needs_mapped_leaf for name, t in TRANSFORMATIONS.items()}
_EAGER_LABELS = frozenset(TRANSFORMATIONS[name].label for name in _EAGER_MAPS)
# name -> (default argnum, whether `argnums=` is read)
_DIFFERENTIATING = {
    name: (argnum, t.argnums)
    for name, t in TRANSFORMATIONS.items()
    if (argnum := t.differentiates) is not None
}
_POSITIONAL_OPTIONS = {
    name: t.positional_options for name, t in TRANSFORMATIONS.items() if t.positional_options
}


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
    eager_map: bool = (
        False  # only eager maps (the table's `eager`) in the chain: nothing is staged out by the chain itself
    )
    # The position a literal `in_axes` maps alone, under a map that refuses a call with nothing to map (the
    # table's `needs_mapped_leaf`, no `axis_size`): its argument holds an array, never None.
    never_none: frozenset[int] = frozenset()

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
            self.never_none | other.never_none,
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
    # What `partial(f, k=v)` binds by keyword: (name, the expression), read by `flow.guards.constant_guard`.
    bound_keywords: tuple[tuple[str, cst.BaseExpression], ...] = ()


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


def static_spec(args: list[cst.Arg], qualname: str) -> StaticSpec:
    """Read static_argnums / static_argnames / in_axes from a transformation's keyword arguments."""
    argnums: set[int] = set()
    argnames: set[str] = set()
    unbatched: frozenset[int] = frozenset()
    never_none: frozenset[int] = frozenset()
    unknown = False
    differentiated: frozenset[int] | None = None
    differentiating = _DIFFERENTIATING.get(qualname)
    if differentiating is not None:
        differentiated = frozenset({differentiating[0]})
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
        if key in STATIC_ARGNUMS:
            nums = _literals(arg.value, _int_leaf)
            if nums is None:
                unknown = True
            else:
                argnums |= nums
        elif key == STATIC_ARGNAMES:
            names = _literals(arg.value, _str_leaf)
            if names is None:
                unknown = True
            else:
                argnames |= names
        elif key == IN_AXES:
            unbatched, understood = _in_axes_none(arg.value)
            unknown = unknown or not understood
            if isinstance(arg.value, (cst.Tuple, cst.List)) and _NEEDS_LEAF.get(qualname):
                mapped = set(range(len(arg.value.elements))) - unbatched
                if len(mapped) == 1 and not any(a.keyword and a.keyword.value == "axis_size" for a in args):
                    never_none = frozenset(mapped)
        elif key == ARGNUMS and differentiating is not None and differentiating[1]:
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
        filtering=qualname in _FILTERING,
        differentiated=differentiated,
        eager_map=qualname in _EAGER_MAPS,
        never_none=never_none,
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
