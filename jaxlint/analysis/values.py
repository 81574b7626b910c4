"""Is this expression traced? Abstract values as bit flags, and the rules for computing them.

Inside a traced function, parameters that the transformation traces are tracers; so is anything computed
from a tracer, and (under jit, vmap and lax bodies) every `jnp`/`lax`/`jax.random` result, because JAX
stages those calls out even on constants. Shapes, dtypes, `len()`, `is None` and `isinstance` are concrete.
When in doubt the answer is "not traced": rules only speak about values known to be tracers.
"""

from __future__ import annotations

from typing import Protocol

import libcst as cst

from .transforms import GRAD, STRICT

TRACED = 1  # an abstract tracer (its value is unknown at trace time)
ARRAY = 2  # a JAX array (concrete or traced): immutable, has .at
BOOL = 4  # a boolean array (a mask)
LIST = 8  # a Python list
HOLDS_TRACED = 16  # a Python container (tuple, list, dict) with tracers inside

# Attributes of an array that are static Python data even on a tracer.
CONCRETE_ATTRIBUTES = frozenset(
    {
        "shape",
        "ndim",
        "dtype",
        "size",
        "weak_type",
        "sharding",
        "itemsize",
        "nbytes",
        "aval",
        "device",
        "devices",
    }
)
# Attributes of an array that are arrays again.
ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "at"})
# Methods of a tracer that return Python values (and fail under jit: JAX102's business, not a tracer).
CONCRETE_METHODS = frozenset({"item", "tolist", "__bool__", "__int__", "__float__", "__index__"})

# Builtins whose result is a concrete Python value whatever their argument.
CONCRETE_BUILTINS = frozenset(
    "builtins." + name
    for name in (
        "len isinstance issubclass type hasattr callable id str repr hash bool int float complex "
        "print format sorted dir vars getattr object super range enumerate zip iter next reversed"
    ).split()
)
# Builtins that compute on their argument (`abs(x)` of a tracer is a tracer).
ARITHMETIC_BUILTINS = frozenset("builtins." + n for n in "abs round pow divmod sum max min".split())

# JAX namespaces whose functions return arrays ...
ARRAY_NAMESPACES = (
    "jax.numpy.",
    "jax.lax.",
    "jax.random.",
    "jax.nn.",
    "jax.scipy.",
    "jax.image.",
    "jax.ops.",
)
# ... except these, which answer static questions about shapes and dtypes.
CONCRETE_JAX_FUNCTIONS = frozenset(
    "jax.numpy." + name
    for name in (
        "shape ndim size result_type promote_types dtype issubdtype isdtype can_cast iscomplexobj isrealobj "
        "isscalar finfo iinfo broadcast_shapes"
    ).split()
) | frozenset({"jax.lax.broadcast_shapes", "jax.lax.axis_size", "jax.random.key_impl"})
# Functions whose array result is boolean: a mask.
BOOL_FUNCTIONS = frozenset(
    "jax.numpy." + name
    for name in (
        "isnan isinf isfinite isneginf isposinf isclose signbit iscomplex isreal isin "
        "logical_and logical_or logical_not logical_xor greater greater_equal less less_equal equal not_equal"
    ).split()
) | frozenset({"jax.lax.lt", "jax.lax.le", "jax.lax.gt", "jax.lax.ge", "jax.lax.eq", "jax.lax.ne"})
# Other `jax.*` functions that return arrays built from their arguments.
ARRAY_FUNCTIONS = frozenset({"jax.device_put", "jax.block_until_ready"})
CONCRETE_JAX_PREFIXES = ("jax.tree.structure", "jax.tree_util.tree_structure", "jax.dtypes.", "jax.device")
NON_BOOL_OPERATORS = (cst.Is, cst.IsNot)


class Scope(Protocol):
    """What evaluation needs from the walker."""

    kind: int

    def lookup(self, name: str) -> int: ...

    def qualname(self, node: cst.BaseExpression) -> str | None: ...

    def comprehension(self, node: cst.BaseExpression) -> Scope: ...


# Every type the chain in `evaluate` answers for (all concrete: libcst has no subclasses of them).
_EVALUATED = frozenset(
    {cst.Name, cst.Attribute, cst.Subscript, cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation}
    | {cst.Comparison, cst.Call, cst.IfExp, cst.Tuple, cst.List, cst.Set, cst.Dict, cst.ListComp}
    | {cst.GeneratorExp, cst.SetComp, cst.DictComp, cst.NamedExpr}
)


def evaluate(node: cst.BaseExpression, scope: Scope) -> int:
    """The flags of an expression's value."""
    # Type identity first: isinstance() against libcst's abstract bases is slow, and this is hot.
    kind = type(node)
    if kind is cst.Name:
        return scope.lookup(node.value)  # type: ignore[attr-defined]
    if kind not in _EVALUATED:
        return 0  # literals and the like: what the chain below would answer
    if isinstance(node, cst.Attribute):
        if node.attr.value in CONCRETE_ATTRIBUTES:
            return 0
        base = evaluate(node.value, scope)
        if node.attr.value not in ARRAY_ATTRIBUTES:
            return base & TRACED  # `state.info`: a field of a pytree, not known to be an array
        return base & (TRACED | ARRAY | HOLDS_TRACED)
    if isinstance(node, cst.Subscript):
        return _subscript(node, scope)
    if isinstance(node, cst.BinaryOperation):
        left, right = evaluate(node.left, scope), evaluate(node.right, scope)
        both = left | right
        if both & LIST and isinstance(node.operator, (cst.Add, cst.Multiply)):
            return LIST | (both & HOLDS_TRACED)  # `[a] * n`, `xs + ys`: still a list
        out = both & (TRACED | ARRAY)
        if out & TRACED:
            out |= ARRAY
        if isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and both & BOOL:
            out |= BOOL
        return out
    if isinstance(node, cst.UnaryOperation):
        if isinstance(node.operator, cst.Not):
            return 0
        inner = evaluate(node.expression, scope)
        return inner if isinstance(node.operator, cst.BitInvert) else inner & ~BOOL
    if isinstance(node, cst.BooleanOperation):
        if isinstance(node.operator, cst.And) and _is_tracer_guard(node.left):
            return evaluate(
                node.left, scope
            )  # `not_tracer(i) and i in ...`: the right side never sees a tracer
        return evaluate(node.left, scope) | evaluate(node.right, scope)
    if isinstance(node, cst.Comparison):
        if any(isinstance(c.operator, NON_BOOL_OPERATORS) for c in node.comparisons):
            return 0
        flags = evaluate(node.left, scope)
        for comparison in node.comparisons:
            flags |= evaluate(comparison.comparator, scope)
        if flags & TRACED:
            return TRACED | ARRAY | BOOL
        return ARRAY | BOOL if flags & ARRAY else 0
    if isinstance(node, cst.Call):
        return _call(node, scope)
    if isinstance(node, cst.IfExp):
        return evaluate(node.body, scope) | evaluate(node.orelse, scope)
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        held = 0
        for element in node.elements:
            held |= evaluate(element.value, scope)
        out = HOLDS_TRACED if held & (TRACED | HOLDS_TRACED) else 0
        return out | LIST if isinstance(node, cst.List) else out
    if isinstance(node, cst.Dict):
        held = 0
        for element in node.elements:
            held |= evaluate(element.value, scope)
        return HOLDS_TRACED if held & (TRACED | HOLDS_TRACED) else 0
    if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        inner = evaluate(node.elt, scope.comprehension(node))
        out = HOLDS_TRACED if inner & (TRACED | HOLDS_TRACED) else 0
        return out | LIST if isinstance(node, cst.ListComp) else out
    if isinstance(node, cst.DictComp):
        inner = evaluate(node.value, scope.comprehension(node))
        return HOLDS_TRACED if inner & (TRACED | HOLDS_TRACED) else 0
    if isinstance(node, cst.NamedExpr):
        return evaluate(node.value, scope)
    return 0


def element_flags(flags: int) -> int:
    """Flags of the items produced by iterating (or indexing) a value with `flags`."""
    if flags & TRACED:
        return TRACED | (flags & ARRAY)  # rows of an array are arrays; parts of a pytree are unknown
    if flags & HOLDS_TRACED:
        return TRACED
    return flags & ARRAY


def _subscript(node: cst.Subscript, scope: Scope) -> int:
    base = evaluate(node.value, scope)
    if base & (TRACED | HOLDS_TRACED):
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice) and not base & ARRAY:
            return base  # a slice of a container is a container
        if any(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) for e in node.slice
        ):
            return TRACED  # `params["w"]`: a pytree entry, not known to be an array
        if base & TRACED:
            return base & (TRACED | ARRAY) | TRACED
        return TRACED
    if base & ARRAY:
        if any(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) for e in node.slice
        ):
            return 0
        index_flags = 0
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                index_flags |= evaluate(element.slice.value, scope)
        return ARRAY | (TRACED if index_flags & TRACED else 0)
    return 0


def _call(node: cst.Call, scope: Scope) -> int:
    func = node.func
    name = scope.qualname(func)
    if name is not None:
        if name in CONCRETE_BUILTINS or name in CONCRETE_JAX_FUNCTIONS:
            return 0
        if name.startswith(CONCRETE_JAX_PREFIXES) or name.rsplit(".", 1)[-1].startswith("_"):
            return 0  # static questions, and private helpers whose results we cannot know
        args = 0
        for arg in node.args:
            args |= evaluate(arg.value, scope)
        if name in ARITHMETIC_BUILTINS:
            return TRACED | ARRAY if args & (TRACED | HOLDS_TRACED) else 0
        if name.startswith(ARRAY_NAMESPACES) or name in ARRAY_FUNCTIONS:
            out = ARRAY | (BOOL if name in BOOL_FUNCTIONS else 0)
            if scope.kind >= STRICT or (scope.kind == GRAD and args & (TRACED | HOLDS_TRACED)):
                out |= TRACED
            return out
        if name in ("builtins.list", "builtins.tuple"):
            held = HOLDS_TRACED if args & (TRACED | HOLDS_TRACED) else 0
            return held | (LIST if name == "builtins.list" else 0)
        return 0
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        receiver = evaluate(func.value, scope)
        if method in CONCRETE_METHODS:
            return 0
        if receiver & TRACED:
            bool_result = method in ("any", "all") or (
                method == "astype" and node.args and _is_bool_dtype(node.args[0].value)
            )
            return TRACED | ARRAY | (BOOL if bool_result else 0)
        return ARRAY if receiver & ARRAY else 0
    if isinstance(func, cst.Call):
        # `jax.jit(f)(x)` and friends: arrays in, arrays out.
        inner = scope.qualname(func.func)
        if inner is not None and inner.startswith("jax."):
            args = 0
            for arg in node.args:
                args |= evaluate(arg.value, scope)
            return TRACED | ARRAY if args & (TRACED | HOLDS_TRACED) else 0
    return 0


def _is_bool_dtype(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value == "bool"
    if isinstance(node, cst.Attribute):
        return node.attr.value in ("bool_", "bool")
    return False


def _is_tracer_guard(node: cst.BaseExpression) -> bool:
    """A condition that tests for tracers or concreteness (`not_jax_tracer(x)`, `is_concrete(x)`)."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and (
            "tracer" in current.value.lower() or "concrete" in current.value.lower()
        ):
            return True
        if isinstance(current, cst.Attribute):
            stack.extend([current.value, current.attr])
        elif isinstance(current, cst.Call):
            stack.append(current.func)
            stack.extend(a.value for a in current.args)
        elif isinstance(current, cst.UnaryOperation):
            stack.append(current.expression)
        elif isinstance(current, cst.BooleanOperation):
            stack.extend([current.left, current.right])
    return False
