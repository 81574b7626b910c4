"""Is this expression traced? Abstract values as bit flags, and the rules for computing them.

Inside a traced function, parameters that the transformation traces are tracers; so is anything computed
from a tracer, and (under jit, pmap and lax bodies) every `jnp`/`lax`/`jax.random` result, because JAX
stages those calls out even on constants. Shapes, dtypes, `len()`, `is None` and `isinstance` are concrete.
When in doubt the answer is "not traced": rules only speak about values known to be tracers.
"""

from __future__ import annotations

from typing import Any, Protocol

import libcst as cst

from ...syntax import argument, int_literal, string_value
from ..binding.names import dotted_name
from ..binding.transforms import ARRAY_ANNOTATIONS
from ..kinds import ARRAY, BOOL, GRAD, HOLDS_TRACED, LIST, STRICT, TRACED
from ..objects.linen import apply_flags, layer_flags, param_flags
from ..objects.pytrees import PytreeClass, PytreeModel, pytree_model
from ..objects.records import constructor, record_fields
from ..semantics.array_api import JAX_NAMESPACE, NAMESPACE_METHOD
from ..semantics.arrays import CONCRETE_ATTRIBUTES as CONCRETE_ATTRIBUTES
from ..semantics.library import (
    ALL_DATA,
    ARITHMETIC_BUILTINS,
    ARRAY_ATTRIBUTES,
    ARRAY_FUNCTIONS,
    BOOL_FUNCTIONS,
    CALL_RESULTS,
    CONCRETE,
    CONCRETE_BUILTINS,
    CONCRETE_JAX_FUNCTIONS,
    CONCRETE_JAX_PREFIXES,
    CONCRETE_METHODS,
    CONSTRUCTORS,
    DTYPE_CONSTRUCTORS,
    DTYPE_WORDS,
    FIELDS,
    FLATTEN,
    FLOAT_RESULTS,
    KEY_RESULTS,
    LIBRARY_ONE_ARRAY,
    LINEN_PARAM_METHODS,
    LIST_RESULTS,
    OBSERVED_KEYWORD,
    ONE_ARGUMENT_ARRAY,
    PYTHON_IF_OPERAND_IS,
    PYTHON_ONLY_METHODS,
    RESULT_DTYPES,
    RETURNED_ARRAY_NAMESPACES,
    SCALAR_FIELD_TYPES,
    SEVERAL_ARRAYS_WORDS,
    STRUCTURE_KEEPING,
    TRACED_FROM_ARGUMENTS,
    TRACED_RESULT,
    TRACING_APIS,
    TRANSFORMATIONS,
    TUPLE_RESULTS,
    WIDE_DTYPES,
)
from ..semantics.namespaces import ARRAY_NAMESPACES, NUMPY_ARRAYS, NUMPY_DELEGATING
from ..summaries.namespaces import chooses_namespace, is_namespace_getter
from ..summaries.returns import imported_returns_array, method_returns_mapping, returns_array
from .abstract import MUTABLE, NOTHING, Value, array, mapping, plain, scalar, sequence
from .wide_dtypes import dtype_value, requested_width, wider

NON_BOOL_OPERATORS = frozenset({cst.Is, cst.IsNot})  # tested by type identity (libcst subclasses neither)


class Scope(Protocol):
    """What evaluation needs from the walker."""

    kind: int
    staged: bool  # JAX stages the code out (jit, lax bodies), unlike an eager vmap: constants become tracers

    @property
    def index(self) -> Any: ...  # the ModuleIndex: its pytree classes say which fields are static

    @property
    def unit(self) -> Any: ...  # the Unit being walked: its parameters' annotations name their classes

    def lookup(self, name: str) -> int: ...

    def lookup_value(
        self, name: str
    ) -> Value: ...  # the name's value with its structure (`values/abstract.py`)

    def qualname(self, node: cst.BaseExpression) -> str | None: ...

    def comprehension(self, node: cst.BaseExpression) -> Scope: ...


# Every type the chain in `evaluate` answers for (all concrete: libcst has no subclasses of them).
_EVALUATED = frozenset(
    {cst.Name, cst.Attribute, cst.Subscript, cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation}
    | {cst.Comparison, cst.Call, cst.IfExp, cst.Tuple, cst.List, cst.Set, cst.Dict, cst.ListComp}
    | {cst.GeneratorExp, cst.SetComp, cst.DictComp, cst.NamedExpr}
)


def evaluate(node: Any, scope: Scope) -> int:
    """The flags of an expression's value (`node`: an expression, `Any` as the checker does not narrow on the
    `kind is X` tests below)."""
    # Type identity first: isinstance() against libcst's abstract bases is slow, and this is hot: read once.
    kind = type(node)
    if kind is cst.Name:
        return scope.lookup(node.value)
    if kind not in _EVALUATED:
        return 0  # literals and the like: what the chain below would answer
    if kind is cst.Attribute:
        if node.attr.value in CONCRETE_ATTRIBUTES:
            return 0
        if type(node.value) is cst.Name:
            named = scope.lookup_value(node.value.value)  # one lookup: its flags are the name's `evaluate`
            field = named.field(node.attr.value) if named.keys is not None else None
            if field is not None:
                return field.flags  # `p.n` of `p = Params(w=..., n=3)`: what the constructor was given
            base = named.flags
        else:
            base = evaluate(node.value, scope)
        if not base & TRACED and type(node.value) is cst.Name and scope.unit.kind == STRICT:
            base = traced_self_field(node, scope) or built_array_field(node, scope)
            if base:
                return base
        if node.attr.value not in ARRAY_ATTRIBUTES:
            if base & TRACED and static_field(node, scope):
                return 0  # `state.config`: a static field of a pytree is a Python value under any transform
            return base & TRACED  # `state.info`: a field of a pytree, not known to be an array
        return base & (TRACED | ARRAY | HOLDS_TRACED)
    if kind is cst.Subscript:
        return _subscript(node, scope)
    if kind is cst.BinaryOperation:
        left, right = evaluate(node.left, scope), evaluate(node.right, scope)
        both = left | right
        if both & LIST and (type(node.operator) is cst.Add or type(node.operator) is cst.Multiply):
            return LIST | (both & HOLDS_TRACED)  # `[a] * n`, `xs + ys`: still a list
        out = both & (TRACED | ARRAY)
        if out & TRACED:
            out |= ARRAY
        elif out and _staged(scope):
            out |= TRACED  # arithmetic on a concrete JAX array (a module constant) is staged out too
        if (
            type(node.operator) is cst.BitAnd
            or type(node.operator) is cst.BitOr
            or type(node.operator) is cst.BitXor
        ) and both & BOOL:
            out |= BOOL
        return out
    if kind is cst.UnaryOperation:
        if type(node.operator) is cst.Not:
            return 0
        inner = evaluate(node.expression, scope)
        return inner if type(node.operator) is cst.BitInvert else inner & ~BOOL
    if kind is cst.BooleanOperation:
        if type(node.operator) is cst.And:
            return _and_chain(node, scope)
        return evaluate(node.left, scope) | evaluate(node.right, scope)
    if kind is cst.Comparison:
        if any(type(c.operator) in NON_BOOL_OPERATORS for c in node.comparisons):
            return 0
        flags = 0
        left_node, left = node.left, evaluate(node.left, scope)
        for comparison in node.comparisons:
            right_node, right = comparison.comparator, evaluate(comparison.comparator, scope)
            if not _python_comparison(comparison.operator, left_node, right_node, right):
                flags |= left | right
            left_node, left = right_node, right
        if flags & TRACED or (flags & ARRAY and _staged(scope)):
            return TRACED | ARRAY | BOOL
        return ARRAY | BOOL if flags & ARRAY else 0
    if kind is cst.Call:
        return _call(node, scope)
    if kind is cst.IfExp:
        return evaluate(node.body, scope) | evaluate(node.orelse, scope)
    if kind is cst.Tuple or kind is cst.List or kind is cst.Set:
        held = 0
        for element in node.elements:
            held |= evaluate(element.value, scope)
        out = HOLDS_TRACED if held & (TRACED | HOLDS_TRACED) else 0
        return out | LIST if kind is cst.List else out
    if kind is cst.Dict:
        held = 0
        for item in node.elements:
            held |= evaluate(item.value, scope)
        return HOLDS_TRACED if held & (TRACED | HOLDS_TRACED) else 0
    if kind is cst.ListComp or kind is cst.GeneratorExp or kind is cst.SetComp:
        inner = evaluate(node.elt, scope.comprehension(node))
        out = HOLDS_TRACED if inner & (TRACED | HOLDS_TRACED) else 0
        return out | LIST if kind is cst.ListComp else out
    if kind is cst.DictComp:
        inner = evaluate(node.value, scope.comprehension(node))
        return HOLDS_TRACED if inner & (TRACED | HOLDS_TRACED) else 0
    if kind is cst.NamedExpr:
        return evaluate(node.value, scope)
    return 0


_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _python_comparison(
    operator: cst.BaseCompOp, left: cst.BaseExpression, right: cst.BaseExpression, right_flags: int
) -> bool:
    """Comparisons that give a Python bool whatever the operands are."""
    if type(operator) is cst.Equal or type(operator) is cst.NotEqual:
        # An array never equals a string: `tracer == "w"` is Python's identity fallback, a plain False.
        return isinstance(left, _STRINGS) or isinstance(right, _STRINGS)
    if type(operator) is cst.In or type(operator) is cst.NotIn:
        # `"w" in params`: membership in a dict or a pytree's keys (keys are never traced: tracers are
        # unhashable). A traced array on the right, or a sequence compared item by item with `==`
        # (`step in (0, 10)`), still gives a traced answer.
        return (
            right_flags & (TRACED | ARRAY) != TRACED | ARRAY
            and not right_flags & LIST
            and not (type(right) is cst.Tuple or type(right) is cst.List or type(right) is cst.Set)
        )
    return False


def element_flags(flags: int) -> int:
    """Flags of the items produced by iterating (or indexing) a value with `flags`."""
    if flags & TRACED:
        return TRACED | (flags & ARRAY)  # rows of an array are arrays; parts of a pytree are unknown
    if flags & HOLDS_TRACED:
        return TRACED
    return flags & ARRAY


def _subscript(node: cst.Subscript, scope: Scope) -> int:
    if type(node.value) in STRUCTURED:
        found = structure(node, scope)
        if found is not None:
            return found.flags  # `pair[1]` of `pair = (x, 3)`: the element's own value
    base = evaluate(node.value, scope)
    if base & (TRACED | HOLDS_TRACED):
        if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Slice and not base & ARRAY:
            return base  # a slice of a container is a container
        if any(type(e.slice) is cst.Index and type(e.slice.value) is cst.SimpleString for e in node.slice):
            return TRACED  # `params["w"]`: a pytree entry, not known to be an array
        if base & TRACED:
            return base & (TRACED | ARRAY) | TRACED
        return TRACED
    if base & ARRAY:
        if any(type(e.slice) is cst.Index and type(e.slice.value) is cst.SimpleString for e in node.slice):
            return 0
        index_flags = 0
        for element in node.slice:
            if type(element.slice) is cst.Index:
                index_flags |= evaluate(element.slice.value, scope)
        return ARRAY | (TRACED if index_flags & TRACED or _staged(scope) else 0)
    return 0


def _staged(scope: Scope) -> bool:
    """Code that JAX stages out (jit, lax bodies): there an operation on a concrete JAX array closed over (a
    module-level `jnp` constant) gives a tracer too."""
    return scope.kind >= STRICT and scope.staged


_CONCRETE_CALLS: dict[str, bool] = {}  # qualified name -> whether `_concrete_call`; few names per run


def _concrete_call(name: str) -> bool:
    """A call of `name` gives a concrete Python value whatever its arguments: a static question, a private
    helper whose result we cannot know, or what the library table says is concrete (answered once per name)."""
    found = _CONCRETE_CALLS.get(name)
    if found is None:
        found = _CONCRETE_CALLS[name] = (
            name in CONCRETE_BUILTINS
            or name in CONCRETE_JAX_FUNCTIONS
            or name.startswith(CONCRETE_JAX_PREFIXES)
            or name.rsplit(".", 1)[-1].startswith("_")
            or CALL_RESULTS.get(name) == CONCRETE
        )
    return found


def _call(node: cst.Call, scope: Scope) -> int:
    func = node.func
    name = scope.qualname(func)
    if name is not None:
        if _concrete_call(name):
            return 0
        semantics = CALL_RESULTS.get(name)
        if semantics == TRACED_RESULT:
            observed = argument(node, None, OBSERVED_KEYWORD[name]) if name in OBSERVED_KEYWORD else None
            if observed is not None:  # an observed numpyro site returns its `obs=` value as given
                return evaluate(observed.value, scope)
            return TRACED | ARRAY
        if semantics == PYTHON_IF_OPERAND_IS and _python_operand(node, scope):
            return 0  # `lax.psum(1, axis)`: the axis size, a Python int
        # The arguments' flags are read only where the answer depends on them (most calls in eager code do
        # not): evaluation is pure, so leaving them unread changes no answer.
        if name in ARITHMETIC_BUILTINS:
            return TRACED | ARRAY if _arguments(node, scope) & (TRACED | HOLDS_TRACED) else 0
        if name in STRUCTURE_KEEPING and node.args and node.args[0].keyword is None:
            first = evaluate(node.args[0].value, scope)
            if not first & ARRAY:  # a pytree keeps its structure: a tuple stays a tuple, a dict a dict
                return first or (TRACED if scope.kind >= STRICT and scope.staged else 0)
        if name.startswith(ARRAY_NAMESPACES) or name in ARRAY_FUNCTIONS:
            traced = (scope.kind >= STRICT and scope.staged) or (
                scope.kind >= GRAD and _arguments(node, scope) & (TRACED | HOLDS_TRACED)
            )
            if _sequence_result(name, node):  # `jnp.split(x, 2)`: a list (or tuple) of arrays, not one array
                return (HOLDS_TRACED if traced else 0) | (LIST if name in LIST_RESULTS else 0)
            return ARRAY | (BOOL if name in BOOL_FUNCTIONS else 0) | (TRACED if traced else 0)
        library = _library_result(name)
        if library and scope.kind >= GRAD and _arguments(node, scope) & (TRACED | HOLDS_TRACED):
            return library  # `diffrax.diffeqsolve(..., args=beta)` on a traced `beta`
        if name in NUMPY_DELEGATING and node.args and node.args[0].keyword is None:
            # `np.all(c < 0)` on a JAX array: `(c < 0).all()`, a JAX array (a tracer where the argument is one)
            first = evaluate(node.args[0].value, scope)
            if first & ARRAY:
                return first & (TRACED | ARRAY) | (BOOL if name in ("numpy.any", "numpy.all") else 0)
        if name in ("builtins.list", "builtins.tuple", "builtins.dict"):  # `dict(sample)` of a traced pytree
            held = HOLDS_TRACED if _arguments(node, scope) & (TRACED | HOLDS_TRACED) else 0
            return held | (LIST if name == "builtins.list" else 0)
        if imported_returns_array(getattr(scope, "index", None), name):
            # another project module's helper returning a jnp result (project mode): as a same-module one
            if scope.kind < STRICT:
                return ARRAY
            if scope.staged or _arguments(node, scope) & (TRACED | HOLDS_TRACED):
                return TRACED | ARRAY
        return 0
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in ("self", "cls"):
        found = _helper_result(func, node, scope)  # `self._per_event(x)`: the method's own returns
        if found:
            return found
    if type(func) is cst.Attribute:
        method = func.attr.value
        receiver = evaluate(func.value, scope)
        if method in CONCRETE_METHODS or method in PYTHON_ONLY_METHODS or method == NAMESPACE_METHOD:
            return 0
        if not receiver and method in LINEN_PARAM_METHODS:
            return param_flags(func, scope)
        if not receiver and method == "apply":  # `model.apply(params, x)` of a linen Module
            return apply_flags(node, _arguments(node, scope), scope)
        if receiver & TRACED and not receiver & ARRAY and method == "copy":
            return (
                receiver  # a traced parameter may be a pytree: `params.copy()` of a list or dict is one too
            )
        if receiver & TRACED:
            if method_returns_mapping(scope.index, func.value, method, scope.unit):
                return HOLDS_TRACED  # `recorder.update(...)` declared `-> dict[str, Array]`: a dict
            bool_result = method in ("any", "all") or (
                method == "astype" and node.args and _is_bool_dtype(node.args[0].value)
            )
            return TRACED | ARRAY | (BOOL if bool_result else 0)
        return ARRAY if receiver & ARRAY else 0
    if type(func) is cst.Call:
        # `jax.jit(f)(x)` and friends: arrays in, arrays out.
        inner = scope.qualname(func.func)
        if inner in TRANSFORMATIONS and TRANSFORMATIONS[inner].python_result:
            return 0  # `jax.make_jaxpr(f)(x)`: a ClosedJaxpr, built while tracing
        if inner is not None and inner.startswith("jax."):
            return TRACED | ARRAY if _arguments(node, scope) & (TRACED | HOLDS_TRACED) else 0
        if scope.kind < STRICT:
            return 0  # what `layer_flags` answers in eager code, whatever the arguments
        return layer_flags(func, _arguments(node, scope), scope)  # `nn.Dense(3)(x)`: a linen layer on tracers
    if type(func) is cst.Name:
        built = _instance(node, scope)
        if built is not None:
            return built.flags  # `Outputs(loss=loss)`: an object holding the tracers it is built from
        return _helper_result(func, node, scope)
    return 0


def _helper_result(func: cst.Name | cst.Attribute, node: cst.Call, scope: Scope) -> int:
    """A same-module helper (or jitted function, or method on `self`) whose every return is a jnp result: a
    JAX array, and a tracer in traced code that stages it out or passes it tracers; one whose every return is
    a tuple of jnp results: in such traced code, a tuple holding tracers (what `a, b = f(x)` unpacks)."""
    unit, index = scope.unit, scope.index
    one = returns_array(func, unit, index, returns_one_array)
    if not one and (scope.kind < STRICT or not returns_array(func, unit, index, returns_one_array, True)):
        return 0
    if scope.kind < STRICT:
        # under grad alone, as a `jnp` call there: a tracer when it computes on the differentiated tracers
        if (
            one
            and scope.kind >= GRAD
            and any(evaluate(a.value, scope) & (TRACED | HOLDS_TRACED) for a in node.args)
        ):
            return TRACED | ARRAY
        return ARRAY
    if scope.staged or any(evaluate(a.value, scope) & (TRACED | HOLDS_TRACED) for a in node.args):
        return TRACED | ARRAY if one else HOLDS_TRACED
    return 0


_LIBRARY_RESULTS: dict[str, int] = {}  # qualified name -> `_library_result`; few names per run


def _library_result(name: str) -> int:
    """What a call of a JAX-based library's `name` gives when its arguments hold tracers (library.py's
    TRACED_FROM_ARGUMENTS): TRACED for a function, HOLDS_TRACED for a class's instance; 0 when not known."""
    found = _LIBRARY_RESULTS.get(name)
    if found is None:
        found = 0
        prefix = next((p for p in TRACED_FROM_ARGUMENTS if name.startswith(p)), None)
        last = name.rsplit(".", 1)[-1]
        if prefix is not None and name not in TRANSFORMATIONS and name not in TRACING_APIS:
            if last[:1].islower():
                found = TRACED | (ARRAY if name in LIBRARY_ONE_ARRAY else 0)
            elif last[:1].isupper() and TRACED_FROM_ARGUMENTS[prefix][1]:
                found = HOLDS_TRACED
        _LIBRARY_RESULTS[name] = found
    return found


def _sequence_result(name: str, node: cst.Call) -> bool:
    """Whether the call gives a list or tuple of arrays (library_arrays' LIST_RESULTS, TUPLE_RESULTS)."""
    if name in TUPLE_RESULTS:
        return True
    if name not in LIST_RESULTS:
        return False
    return name not in ONE_ARGUMENT_ARRAY or sum(1 for a in node.args if a.keyword is None) > 1


def _arguments(node: cst.Call, scope: Scope) -> int:
    """The flags of a call's arguments, together."""
    args = 0
    for arg in node.args:
        args |= evaluate(arg.value, scope)
    return args


_ONE_ARRAY: dict[str | None, bool] = {}  # name -> `returns_one_array`; few names per run


def returns_one_array(name: str | None) -> bool:
    """Whether a call of `name` surely gives one JAX array (for what helpers return; answered once per name)."""
    found = _ONE_ARRAY.get(name)
    if found is None:
        found = _ONE_ARRAY[name] = _returns_one_array(name)
    return found


def _returns_one_array(name: str | None) -> bool:
    return (
        name is not None
        and name.startswith(RETURNED_ARRAY_NAMESPACES)
        and name not in CONCRETE_JAX_FUNCTIONS
        and name not in CALL_RESULTS
        and not name.startswith(CONCRETE_JAX_PREFIXES)
        and not name.rsplit(".", 1)[-1].startswith("_")
        and name.rsplit(".", 1)[-1] not in SEVERAL_ARRAYS_WORDS
    )


def _is_bool_dtype(node: cst.BaseExpression) -> bool:
    if type(node) is cst.Name:
        return node.value == "bool"
    if type(node) is cst.Attribute:
        return node.attr.value in ("bool_", "bool")
    return False


def _and_chain(node: cst.BooleanOperation, scope: Scope) -> int:
    """The flags of `a and b and …` (libcst nests it as `(a and b) and …`): its operands' up to the first
    that tests for tracers (`not_tracer(i) and i in …`: what follows never sees a tracer). One pass over the
    operands, not a guard test of the whole left side per `and` (quadratic in a chain's length)."""
    operands = []
    current: cst.BaseExpression = node
    while type(current) is cst.BooleanOperation and type(current.operator) is cst.And:
        operands.append(current.right)
        current = current.left
    operands.append(current)
    flags = 0
    for operand in reversed(operands):
        flags |= evaluate(operand, scope)
        if _is_tracer_guard(operand):
            break
    return flags


def _is_tracer_guard(node: cst.BaseExpression) -> bool:
    """A condition that tests for tracers or concreteness (`not_jax_tracer(x)`, `is_concrete(x)`)."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name and (
            "tracer" in current.value.lower() or "concrete" in current.value.lower()
        ):
            return True
        if type(current) is cst.Attribute:
            stack.extend([current.value, current.attr])
        elif type(current) is cst.Call:
            stack.append(current.func)
            stack.extend(a.value for a in current.args)
        elif type(current) is cst.UnaryOperation:
            stack.append(current.expression)
        elif type(current) is cst.BooleanOperation:
            stack.extend([current.left, current.right])
    return False


def _python_operand(call: cst.Call, scope: Scope) -> bool:
    """Whether a collective's operand (first argument, or `x=`) is a Python value: no array, no tracer."""
    operand = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "x"), None)
    if operand is None or any(a.star for a in call.args):
        return False
    return not evaluate(operand, scope) & (TRACED | ARRAY | HOLDS_TRACED)


# -- static fields of pytrees ---------------------------------------------------------------------------


def static_field(node: cst.Attribute, scope: Scope) -> bool:
    """Whether `node` reads a static field of a pytree: by the class of its owner when the annotations say
    it, else because the module declares that field name static in some pytree class and a child in none."""
    index = getattr(scope, "index", None)
    if index is None:
        return False
    model = pytree_model(index)
    return model.field_is_static(node.attr.value, _class_of(node.value, scope, model))


def traced_self_field(node: cst.Attribute, scope: Scope) -> int:
    """`self.w` in a jitted method of a pytree class: jit traces `self` like any pytree argument, so its
    children are tracers (under equinox's filter_jit only the array-annotated ones); its static fields and
    anything else read from `self` stay Python values (0)."""
    unit = scope.unit
    if not (unit.is_target or unit.traced_receiver) or not unit.is_method:
        return 0
    function = unit.node
    positional = [*function.params.posonly_params, *function.params.params]
    if not positional or positional[0].name.value != node.value.value:  # type: ignore[attr-defined]
        return 0
    if any(dotted_name(d.decorator) == "classmethod" for d in function.decorators):
        return 0
    apps = [a for a in unit.applications if a.kind == STRICT]
    if unit.traced_receiver:
        apps = []  # called on a traced instance (a jitted function's argument, a scanned Module): all leaves
    elif not apps or any(
        a.bound_self
        or a.spec.unknown
        or 0 in a.spec.argnums
        or -len(positional) in a.spec.argnums
        or 0 in a.spec.unbatched
        or positional[0].name.value in a.spec.argnames
        for a in apps
    ):
        return 0  # `self` bound, static or unbatched somewhere: not known to be traced
    model = pytree_model(scope.index)
    cls = model.by_node.get(id(unit.class_node))
    if cls is None or cls.how not in (FIELDS, FLATTEN, ALL_DATA):
        return 0  # not a pytree (or wholly static): jit of such a method is JAX405's business
    field = node.attr.value
    if cls.is_static(field) is not False:
        return 0
    annotation = cls.field_types.get(field)
    array = annotation in ARRAY_ANNOTATIONS
    if any(a.spec.filtering for a in apps) and not array:
        return 0  # filter_jit: only arrays are traced
    # A Python scalar leaf (`flag: bool`) is traced as a 0-d array (equinox 0.13.8 under jax.jit and as a
    # lax.scan carry; tests/analysis/test_library_semantics.py).
    return TRACED | ARRAY if array or annotation in SCALAR_FIELD_TYPES else TRACED


def built_array_field(node: cst.Attribute, scope: Scope) -> int:
    """`self.position` in a method of a class whose constructor sets `self.position = jnp.zeros(2)`: a concrete
    JAX array held by the instance (ARRAY); staged code (`jax.jit(sim.step)`) computes tracers from it."""
    unit = scope.unit
    index = getattr(scope, "index", None)
    if index is None or not unit.is_method:
        return 0
    function = unit.node
    positional = [*function.params.posonly_params, *function.params.params]
    if not positional or positional[0].name.value != node.value.value:  # type: ignore[attr-defined]
        return 0
    class_node = unit.class_node
    assert class_node is not None  # a method
    key = f"built_arrays {id(class_node)}"
    found = index.root.memo.get(key)
    if found is None:
        found = index.root.memo[key] = _built_arrays(index, class_node)
    return ARRAY if node.attr.value in found else 0


def _built_arrays(index: Any, class_node: cst.ClassDef) -> frozenset[str]:
    """The attributes the class's constructors bind to one `jnp`/`jax.random` call's array (`self.w = ...`)."""
    found: set[str] = set()
    for statement in class_node.body.body:
        if type(statement) is not cst.FunctionDef or statement.name.value not in CONSTRUCTORS:
            continue
        unit = index.units.get(id(statement))
        params = statement.params.params
        if unit is None or not params:
            continue
        own = params[0].name.value
        for line in statement.body.body if type(statement.body) is cst.IndentedBlock else ():
            if type(line) is not cst.SimpleStatementLine:
                continue
            for small in line.body:
                if type(small) is not cst.Assign or len(small.targets) != 1:
                    continue
                target, value = small.targets[0].target, small.value
                if (
                    type(target) is cst.Attribute
                    and type(target.value) is cst.Name
                    and target.value.value == own
                    and type(value) is cst.Call
                    and returns_one_array(index.qualname(value.func, unit))
                ):
                    found.add(target.attr.value)
    return frozenset(found)


def pytree_data_field(node: cst.BaseExpression, scope: Any) -> bool:
    """`self.flag` / `state.flag` naming a data field (a leaf, traced with the pytree) of a pytree class that
    `self` or the annotations name: a flag there is static only if the class declares the field static."""
    if type(node) is not cst.Attribute:
        return False
    model = pytree_model(scope.index)
    owner = _class_of(node.value, scope, model)
    return (
        owner is not None
        and owner.how in (FIELDS, FLATTEN, ALL_DATA)
        and owner.is_static(node.attr.value) is False
    )


def _class_of(node: cst.BaseExpression, scope: Scope, model: PytreeModel) -> PytreeClass | None:
    """The pytree class of a parameter (by its annotation, or `self`), or of a field of one. A class defined
    twice in the module is the definition that precedes the function's top-level statement."""
    if type(node) is cst.Attribute:
        owner = _class_of(node.value, scope, model)
        return model.field_class(owner, node.attr.value, _ordinal(getattr(scope, "unit", None), model))
    if type(node) is not cst.Name:
        return None
    unit = getattr(scope, "unit", None)
    # A closure reads the parameter of the function that binds the name.
    while unit is not None and unit.parent is not None and node.value not in unit.local_names:
        unit = unit.parent
    function = getattr(unit, "node", None)
    if unit is None or not (type(function) is cst.FunctionDef or type(function) is cst.Lambda):
        return None
    params = function.params
    positional = [*params.posonly_params, *params.params]
    for param in [*positional, *params.kwonly_params]:
        if param.name.value != node.value:
            continue
        # `self` is the first positional parameter; a def of keyword-only parameters has none.
        is_first = bool(positional) and param is positional[0]
        if is_first and unit.is_method and param.annotation is None and unit.class_node:
            return model.by_node.get(id(unit.class_node))  # `self`
        if param.annotation is None:
            return None
        return model.class_of_annotation(param.annotation.annotation, _ordinal(unit, model))
    return None


def _ordinal(unit: Any, model: PytreeModel) -> int | None:
    """The ordinal of the top-level statement (def or class) that holds a unit, for `class_named`."""
    while unit is not None and unit.parent is not None and unit.parent.parent is not None:
        unit = unit.parent
    if unit is None or unit.parent is None:
        return None
    return model.ordinal(unit.class_node) if unit.class_node is not None else model.ordinal(unit.node)


def key_value_flags(iterable: cst.BaseExpression, scope: Scope) -> tuple[int, int] | None:
    """`d.items()`: the flags of each key and each value; None for any other iterable.

    Keys are never tracers (tracers are unhashable); values are the entries of the pytree."""
    if (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Attribute
        and iterable.func.attr.value == "items"
        and not iterable.args
    ):
        return 0, element_flags(evaluate(iterable.func.value, scope))
    return None


# -- values with structure (`values/abstract.py`) ----------------------------------------------------------------

# Expressions whose value may have structure: names (bound to one), tuple, list and dict displays, literals,
# calls (record constructors, arrays, keys), subscripts and attributes of them, and arithmetic on NumPy arrays.
STRUCTURED: frozenset[type] = frozenset(
    {cst.Name, cst.Subscript, cst.Attribute, cst.Tuple, cst.List, cst.Dict, cst.Call, cst.BinaryOperation}
    | {cst.Integer, cst.Float, cst.SimpleString}
)
# Operators that give a NumPy array from NumPy arrays and Python numbers (comparisons and bit operators aside).
_NUMPY_ARITHMETIC = frozenset(
    {
        cst.Add,
        cst.Subtract,
        cst.Multiply,
        cst.Divide,
        cst.FloorDivide,
        cst.Modulo,
        cst.Power,
        cst.MatrixMultiply,
    }
)
_NUMBERS = frozenset({"int", "float"})
_CONSTANT_NAMES = {"True": scalar("bool", True), "False": scalar("bool", False), "None": scalar("none", None)}


def value_of(node: cst.BaseExpression, scope: Scope) -> Value:
    """The value of an expression with its structure where known; else the value its flags describe."""
    found = structure(node, scope) if type(node) in STRUCTURED else None
    return found if found is not None else plain(evaluate(node, scope))


def structure(expression: cst.BaseExpression, scope: Scope, flags: int | None = None) -> Value | None:
    """The structured value of a name, a literal, a display, a call, or an entry of one by a literal index
    or key; None where no structure is known (the flags say all). Its flags are those `evaluate` gives
    (`flags`, when the caller has them already)."""
    node: Any = expression  # the checker does not narrow on `type(node) is X`
    kind = type(node)
    if kind is cst.Name:
        constant = _CONSTANT_NAMES.get(node.value)
        if constant is not None:
            return constant
        found = scope.lookup_value(node.value)
        return found if found.kind != "unknown" or found.items is not None else None
    if kind is cst.Integer:
        return scalar("int", int_literal(node))
    if kind is cst.Float:
        return scalar("float")
    if kind is cst.SimpleString:
        text = string_value(node)
        return scalar("str", text) if isinstance(text, str) else None
    if kind is cst.Tuple or kind is cst.List:
        elements = node.elements
        if any(type(e) is cst.StarredElement for e in elements):
            return None
        items = tuple(_held(value_of(e.value, scope)) for e in elements)
        if kind is cst.List and not _telling(items):
            return None
        return sequence("tuple" if kind is cst.Tuple else "list", items)
    if kind is cst.Dict:
        return _dict(node, scope, flags)
    if kind is cst.Attribute:
        if node.attr.value in _WIDE_WORDS:
            return dtype_value(node, scope)  # `np.float64`
        base = structure(node.value, scope) if type(node.value) in STRUCTURED else None
        return base.field(node.attr.value) if base is not None else None
    if kind is cst.Call:
        return _call_structure(node, scope, flags)
    if kind is cst.BinaryOperation:
        return _numpy_arithmetic(node, scope, flags)
    if kind is cst.Subscript:
        if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
            return None
        key = node.slice[0].slice.value
        if type(node.value) not in STRUCTURED:
            return None
        if type(key) is cst.SimpleString:
            text = string_value(key)
            base = structure(node.value, scope) if isinstance(text, str) else None
            return base.entry(text) if base is not None else None  # type: ignore[arg-type]
        index = int_literal(key)
        if index is None:
            return None
        base = structure(node.value, scope)
        return base.item(index) if base is not None else None
    return None


def _numpy_arithmetic(node: cst.BinaryOperation, scope: Scope, flags: int | None) -> Value | None:
    """`3.0 * xs + 0.5` of a NumPy array `xs`: a NumPy array, when every operand is one or a Python number (a JAX
    array or anything unknown on either side: None)."""
    if type(node.operator) not in _NUMPY_ARITHMETIC:
        return None
    sides, widths = [], []
    for side in (node.left, node.right):
        if type(side) is cst.Integer or type(side) is cst.Float:
            sides.append("number")
            continue
        value = structure(side, scope) if type(side) in STRUCTURED else None
        if value is None or (value.kind != "numpy_array" and value.kind not in _NUMBERS):
            return None
        sides.append(value.kind)
        widths.append(value.dtype)
    if "numpy_array" not in sides or (evaluate(node, scope) if flags is None else flags) != 0:
        return None
    return array("numpy_array", 0, wider(widths))  # float64 asked for by name stays so


def _held(value: Value) -> Value:
    """What a container keeps of a value put in it: a list or dict inside another loses its entries (it
    can be changed through the outer one without naming it)."""
    return plain(value.flags) if value.kind in MUTABLE else value


def _telling(items: tuple[Value, ...]) -> bool:
    """Whether a list's or dict's entries say more than its flags: some entry is an array or holds tracers.
    Others (`__all__ = [...]`, a dict of options) keep no entries, and need no scan of their uses."""
    return any(item.flags & (TRACED | ARRAY | HOLDS_TRACED) or item.kind == "numpy_array" for item in items)


def _dict(node: cst.Dict, scope: Scope, flags: int | None) -> Value | None:
    """`{"w": jnp.sin(x), "n": 3}`: a dict of string keys, each entry with its value."""
    keys: list[str] = []
    items: list[Value] = []
    for element in node.elements:
        if type(element) is not cst.DictElement or type(element.key) is not cst.SimpleString:
            return None
        key = string_value(element.key)
        if not isinstance(key, str) or key in keys:
            return None
        keys.append(key)
        items.append(_held(value_of(element.value, scope)))
    if not _telling(tuple(items)):
        return None
    return mapping(tuple(keys), tuple(items), evaluate(node, scope) if flags is None else flags)


_KEY_MAKERS = KEY_RESULTS  # calls that make PRNG keys: their kind (library table)
_NUMPY_CONSTRUCTORS = NUMPY_ARRAYS - {"numpy.meshgrid"}  # meshgrid gives a list of arrays
_FLOAT_RESULTS = FLOAT_RESULTS  # a float array unless a dtype says (library table: position of `dtype`)
_RESULT_DTYPES = RESULT_DTYPES  # this dtype kind whatever the arguments (library table)


def _call_structure(call: cst.Call, scope: Scope, flags: int | None) -> Value | None:
    """A record constructor's instance, a JAX or NumPy array, a PRNG key, a list or tuple of JAX arrays; None
    for any other call."""
    name = scope.qualname(call.func)
    if name is None:
        namespace = _namespace(call, None, scope) or _numpy_astype(call, scope)
        if namespace is not None:
            return namespace
        return _instance(call, scope) if type(call.func) is cst.Name else None
    if name in DTYPE_CONSTRUCTORS:
        return dtype_value(call, scope)  # `np.dtype("float64")`
    if name in _KEY_MAKERS:
        dtype = _KEY_MAKERS[name]
        if dtype is None and call.args:
            given = value_of(call.args[0].value, scope)
            dtype = given.dtype if given.kind == "key" else None
        return array("key", evaluate(call, scope) if flags is None else flags, dtype)
    if name in _NUMPY_CONSTRUCTORS:
        if (evaluate(call, scope) if flags is None else flags) != 0:
            return None  # the flags see something else (never for these today): unknown
        return array("numpy_array", 0, requested_width(call, scope) or _dtype(call, name, scope))
    if returns_one_array(name):
        flags = evaluate(call, scope) if flags is None else flags
        return array("jax_array", flags, _dtype(call, name, scope)) if flags & ARRAY else None
    if _sequence_result(name, call):  # `jnp.split(x, 2)`: a list of JAX arrays (tracers where it holds them)
        flags = evaluate(call, scope) if flags is None else flags
        element = array("jax_array", ARRAY | (TRACED if flags & HOLDS_TRACED else 0))
        return Value(flags, "list" if name in LIST_RESULTS else "tuple", each=element)
    return _namespace(call, name, scope)


_JAX_NAMESPACE = Value(0, "module", JAX_NAMESPACE)
_WIDE_WORDS = frozenset(name.rpartition(".")[2] for name in WIDE_DTYPES)


def _numpy_astype(call: cst.Call, scope: Scope) -> Value | None:
    """`xs.astype(np.float64)` of a NumPy array: a NumPy array asked for as 64-bit by name."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "astype" or type(func.value) not in STRUCTURED:
        return None
    width = requested_width(call, scope, 0)
    held = structure(func.value, scope) if width is not None else None
    return array("numpy_array", 0, width) if held is not None and held.kind == "numpy_array" else None


def _namespace(call: cst.Call, name: str | None, scope: Scope) -> Value | None:
    """`array_namespace(x)` (`summaries/namespaces.py`) or `x.__array_namespace__()` of JAX arrays: the
    `jax.numpy` module; None otherwise (NumPy arrays, or arguments not known to be JAX arrays)."""
    func = call.func
    if name is None:
        if type(func) is cst.Attribute and func.attr.value == NAMESPACE_METHOD:
            given = evaluate(func.value, scope)
        elif type(func) is cst.Name and call.args:
            defined = scope.lookup_value(func.value)
            unit = defined.definition  # None where two paths bind different functions
            if defined.kind != "function" or unit is None or not chooses_namespace(unit, scope.index):
                return None
            given = _arguments(call, scope)
        else:
            return None
    elif call.args and is_namespace_getter(name, scope.index):
        given = _arguments(call, scope)
    else:
        return None
    return _JAX_NAMESPACE if given & (TRACED | ARRAY) else None


def _dtype(call: cst.Call, name: str, scope: Scope) -> str | None:
    """The dtype kind of an array a call makes: its `dtype=` when written as a literal, else the function's."""
    given = argument(call, None, "dtype")
    if given is not None:
        node = given.value
        word = None
        if type(node) is cst.SimpleString:
            text = string_value(node)
            word = text if isinstance(text, str) else None
        elif type(node) is cst.Attribute:
            word = node.attr.value
        elif type(node) is cst.Name and node.value in ("bool", "int", "float", "complex"):
            word = node.value
        if word is None:
            return None
        return next((kind for prefix, kind in DTYPE_WORDS if word.startswith(prefix)), None)
    if name in BOOL_FUNCTIONS:
        return "bool"
    if name in _RESULT_DTYPES:
        return _RESULT_DTYPES[name]
    position = _FLOAT_RESULTS.get(name)
    if position is None or len(call.args) > position or any(a.star for a in call.args):
        return None
    return "float"


def element_values(value: Value, count: int) -> tuple[Value, ...] | None:
    """What unpacking `value` into `count` targets gives each, when its structure says; else None."""
    if value.kind not in ("tuple", "list"):
        return None
    if value.items is None:
        return (value.each,) * count if value.each is not None else None
    return value.items if len(value.items) == count else None


def _instance(call: cst.Call, scope: Scope) -> Value | None:
    """`Params(w=jnp.sin(x), n=3)` of a class of the module whose constructor stores its arguments
    (`objects.records.constructor`: a record, a dataclass, a plain `__init__` setting `self.w = w`): an instance
    holding what it is given in those fields (a field left to its default is not traced; fields set from
    anything else are unknown). Built from tracers, it holds them (HOLDS_TRACED), as a tuple of them does."""
    func = call.func
    if type(func) is not cst.Name:
        return None
    cls = scope.lookup_value(func.value)
    if cls.kind != "class" or type(cls.definition) is not cst.ClassDef:
        return None
    made = constructor(scope.index, cls.definition)
    if made is None or any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) > len(made.positional):
        return None
    given = {name: value_of(a.value, scope) for name, a in zip(made.positional, positional, strict=False)}
    for arg in call.args:
        if arg.keyword is not None:
            name = arg.keyword.value
            if name in given or (name not in made.positional and name not in made.keyword_only):
                return None
            given[name] = value_of(arg.value, scope)
    keys = tuple(field for field, _ in made.fields)
    items = tuple(_held(given.get(param, NOTHING)) for _, param in made.fields)
    held = any(item.flags & (TRACED | HOLDS_TRACED) for item in items)
    kind = "instance" if record_fields(scope.index, cls.definition) is not None else "object"
    return Value(HOLDS_TRACED if held else 0, kind, items=items, keys=keys, definition=cls.definition)
