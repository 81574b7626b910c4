"""JAX404 python-batch-loop."""

from __future__ import annotations

import libcst as cst

from ..analysis import (
    ARRAY,
    ARRAY_ANNOTATIONS,
    ARRAY_NAMESPACES,
    CONCRETE_JAX_FUNCTIONS,
    CONCRETE_JAX_PREFIXES,
    CONVERSIONS,
    LIST_RESULTS,
    NUMPY_ARRAYS,
    NUMPY_RANDOM,
    STACKERS,
    STRICT,
    TRACED,
    Binding,
    NameUsage,
    RuleContext,
    Unit,
    call_targets,
    is_jax_callable,
    reads_carried,
    runs_jax,
)
from ..syntax import own_nodes, source_of, walk
from .base import Rule

# The library table's functions that stack rows into one array, that only convert, and that give a list.
_STACKERS, _CONVERSIONS, _LIST_RESULTS = STACKERS, CONVERSIONS, LIST_RESULTS


class PythonBatchLoop(Rule):
    code = "JAX404"
    name = "python-batch-loop"
    summary = (
        "A Python loop or comprehension over an array's rows calling JAX per row, then stacked (or summed in "
        "traced code): use jax.vmap"
    )
    severity = "warning"
    doc = """
## What it does
Flags a list comprehension, generator or `for` loop with `.append` that iterates over the rows of a JAX array
(`for x in xs`, `for i in range(len(xs))` with `xs[i]`, `enumerate`/`zip` of arrays, the keys of
`jax.random.split(key, n)`), calls JAX code on each row — a `jnp`/`lax` function, a jitted or transformed
function, or a function of the project whose body uses `jnp`/`lax` (to any depth, through helpers, methods,
`partial`, lookups, functions passed as arguments, or a nested def reading the row) — and then stacks the results with
`jnp.stack`, `jnp.array` or `jnp.asarray`. In traced code (`jit`, `vmap`, `lax.scan` bodies, ...) it also flags
Python's `sum` over such a loop (`sum(jnp.dot(a[i], w) for i in range(n))`), where `range(n)` may count to
any `n` that is not a literal as long as the loop indexes a known array with it. A traced parameter counts as
an array when the function uses it as one (`xs.shape`, `xs * 2`): it may otherwise be any pytree (a list of
layers). A `for` loop whose call reads what an earlier iteration made (`state = step(state, x)`, the last row
appended, an attribute the body reassigns) is sequential, not a batch: it is not flagged.

## Why is this bad
Outside `jit`, each row is a separate dispatch of small operations (or a separate call into the compiled
function): the batch runs at Python speed and the accelerator sits mostly idle. Inside `jit`, the loop is
unrolled, so trace and compile time grow with the batch size and the batch size is baked into the program.
A Python `sum` under a trace unrolls the same way, adding one result at a time. `jax.vmap` runs the same
function over the leading axis as one vectorized computation (then `.sum(axis=0)` for a sum).

## Example
```python
def per_example_loss(params, xs: jax.Array, ys: jax.Array):
    return jnp.stack([loss(params, x, y) for x, y in zip(xs, ys)])
```

## Use instead
```python
def per_example_loss(params, xs: jax.Array, ys: jax.Array):
    return jax.vmap(loss, in_axes=(None, 0, 0))(params, xs, ys)
```

## Fix safety
No automatic fix: `vmap` needs the function to work on one row without Python branching on its values.

## References
- https://docs.jax.dev/en/latest/automatic-vectorization.html
- https://docs.jax.dev/en/latest/_autosummary/jax.vmap.html
"""

    def __init__(self) -> None:
        self._usage: dict[int, NameUsage] = {}  # id of a unit's node -> how its body uses names

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualname(node.func)
        if name not in _STACKERS and name != "builtins.sum":
            return
        if not node.args or node.args[0].keyword is not None:
            return
        summed = name == "builtins.sum"
        if summed and ctx.kind < STRICT:
            return  # eager sums of a few per-item results are everyday Python; under a trace each is unrolled
        arg = node.args[0].value
        if type(arg) is cst.ListComp or type(arg) is cst.GeneratorExp:
            self._comprehension(arg, ctx, summed)
        elif type(arg) is cst.Name:
            built = _built_by(ctx.unit, arg.value)
            if type(built) is cst.ListComp or type(built) is cst.GeneratorExp:
                self._comprehension(built, ctx, summed)
            elif isinstance(built, tuple):
                loop, append = built
                self._append_loop(loop, append, ctx, summed)

    # -- the two shapes of a batch loop ------------------------------------------------------------------

    def _comprehension(self, comp: cst.ListComp | cst.GeneratorExp, ctx: RuleContext, summed: bool) -> None:
        """`[f(x) for x in xs]`; and all pairs, `[f(a, b) for a in xs for b in ys]` or a list of lists stacked
        at once, `[[f(a, b) for b in ys] for a in xs]`: every `for` walks the rows of an array that no other
        `for` of the comprehension binds."""
        names: set[str] = set()  # the rows
        bound: set[str] = set()  # every name the comprehension's `for`s bind
        indexed: dict[str, str] = {}
        iterables: list[cst.BaseExpression] = []
        node: cst.ListComp | cst.GeneratorExp = comp
        while True:
            for_in: cst.CompFor | None = node.for_in
            while for_in is not None:
                if for_in.ifs or for_in.asynchronous is not None:
                    return
                if any(type(n) is cst.Name and n.value in bound for n in walk(for_in.iter)):
                    return  # `for b in a`: the elements of a row, not the rows of a known array
                rows = self._rows(for_in.target, for_in.iter, ctx, summed)
                if rows is None:
                    return
                names |= rows[0]
                bound |= {n.value for n in walk(for_in.target) if type(n) is cst.Name}
                indexed.update(rows[1])
                iterables.append(for_in.iter)
                for_in = for_in.inner_for_in
            elt = node.elt
            if summed or type(elt) is not cst.ListComp:
                break
            node = elt  # a list of lists, stacked by the one call
        call = _outer_call(node.elt)
        if call is not None:
            label = "` and `".join(source_of(i) for i in iterables)
            self._judge(comp, call, (names, indexed), iterables[0], ctx, summed, label)

    def _append_loop(self, loop: cst.For, append: cst.Call, ctx: RuleContext, summed: bool) -> None:
        if loop.orelse is not None or loop.asynchronous is not None:
            return
        rows = self._rows(loop.target, loop.iter, ctx, summed)
        if rows is None:
            return
        value: cst.BaseExpression | None = append.args[0].value
        if type(value) is cst.Name:
            value = _assigned_in_body(loop, value.value)
        call = _outer_call(value) if value is not None else None
        if call is not None and not reads_carried(loop, call):  # `x = step(x, row)`: sequential, no batch
            self._judge(loop, call, rows, loop.iter, ctx, summed)

    def _judge(
        self,
        where: cst.CSTNode,
        call: cst.Call,
        rows,
        iterable: cst.BaseExpression,
        ctx: RuleContext,
        summed: bool,
        label: str | None = None,
    ) -> None:
        row_names, indexed = rows
        label = label or source_of(iterable)
        is_array = self._array_test(ctx)
        if not any(_is_row(a.value, row_names, indexed, is_array) for a in call.args if not a.star):
            if not _closes_over_row(call, where, row_names, ctx):
                return
        callee = self._jax_callee(call, ctx)
        if callee is None:
            return
        if summed:
            ctx.report(
                self,
                where,
                f"Python loop over `{label}` calls {callee} once per row of an array and adds the "
                f"results with Python's sum: under {ctx.context} the loop is unrolled into one computation per "
                "row; use jax.vmap over the leading axis and sum the result (.sum(axis=0))",
            )
            return
        ctx.report(
            self,
            where,
            f"Python loop over the rows of `{label}` calls {callee} once per row and stacks the "
            "results: one dispatch per row (or an unrolled trace under jit); use jax.vmap over the leading axis",
        )

    # -- facts -------------------------------------------------------------------------------------------

    def _rows(self, target: cst.BaseExpression, iterable: cst.BaseExpression, ctx: RuleContext, summed: bool):
        """(names bound to one row each, {index name: array name}) when the loop walks an array's rows. A sum
        in traced code may count to any `n` (not a literal): `{index: ANY_ARRAY}`, any known array indexed
        by it is a row."""
        if type(iterable) is cst.Call:
            name = ctx.qualname(iterable.func)
            positional = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if name == "builtins.range" and len(positional) == 1 and type(target) is cst.Name:
                array = _length_of(positional[0], ctx)
                if array is not None and self._is_array(array, ctx):
                    return set(), {target.value: array.value}
                if summed and type(positional[0]) is not cst.Integer:
                    return set(), {target.value: ANY_ARRAY}
                return None
            if name in ("builtins.enumerate", "builtins.zip") and positional:
                if type(target) is not cst.Tuple:
                    return None
                names = [e.value for e in target.elements]
                if name == "builtins.enumerate":
                    if len(positional) != 1 or len(names) != 2 or not self._is_array(positional[0], ctx):
                        return None
                    return ({names[1].value} if isinstance(names[1], cst.Name) else set()), {}
                if len(names) != len(positional) or not all(self._is_array(p, ctx) for p in positional):
                    return None
                return {n.value for n in names if type(n) is cst.Name}, {}
        if type(target) is cst.Name and self._is_array(iterable, ctx):
            return {target.value}, {}
        return None

    def _array_test(self, ctx: RuleContext):
        return lambda node: self._is_array(node, ctx)

    def _is_array(self, node: cst.BaseExpression, ctx: RuleContext) -> bool:
        if type(node) is cst.Call and ctx.qualname(node.func) in _LIST_RESULTS:
            return False
        if type(node) is cst.Name and _split_last(node, ctx):
            return False  # `heads = jnp.split(logits, n)`: a few arrays, not the rows of one
        flags = ctx.flags(node)
        if flags & ARRAY:
            return True
        if flags & TRACED and type(node) is cst.Name and node.value not in ctx.unit.assigned_names():
            # A traced parameter may be any pytree (a list of layers): an array only if used as one.
            usage = self._usage.get(id(ctx.unit.node))
            if usage is None:
                usage = self._usage[id(ctx.unit.node)] = NameUsage(ctx.unit.node)
            if usage.is_array(node.value):
                return True
        if _numpy_array(node, ctx):
            return True
        if type(node) is cst.Name and node.value in ctx.unit.local_names:
            value = ctx.unit.single_assignment(node.value)
            if value is not None and _numpy_array(value, ctx):
                return True
        if type(node) is cst.Name and type(ctx.unit.node) is cst.FunctionDef:
            params = ctx.unit.node.params
            for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
                if param.name.value == node.value and param.annotation is not None:
                    annotation = param.annotation.annotation
                    if type(annotation) is cst.Subscript:
                        annotation = annotation.value
                    label = annotation.attr.value if type(annotation) is cst.Attribute else None
                    label = annotation.value if type(annotation) is cst.Name else label
                    return label in ARRAY_ANNOTATIONS and node.value not in ctx.unit.assigned_names()
        return False

    def _jax_callee(self, call: cst.Call, ctx: RuleContext) -> str | None:
        """How to name the per-row function in a message, when it is JAX code; else None."""
        name = ctx.qualname(call.func)
        if name is not None:
            if (
                name.startswith(ARRAY_NAMESPACES)
                and name not in _CONVERSIONS
                and name not in CONCRETE_JAX_FUNCTIONS
                and not name.startswith(CONCRETE_JAX_PREFIXES)
            ):
                return f"`{source_of(call.func)}`"
            project = ctx.index.project
            export = project.exports.get(name) if project is not None else None
            if export is not None and (export.runs_jax or export.jitted):
                return f"`{source_of(call.func)}` (which runs JAX code)"
            return None
        if is_jax_callable(call.func, ctx):
            return f"jax-transformed `{source_of(call.func)}`"
        targets = call_targets(ctx.index, call, ctx.unit)[0]
        if targets and all(runs_jax(ctx.index, t) for t, _ in targets):
            return f"`{source_of(call.func)}` (which runs JAX code)"
        return None


def _closes_over_row(call: cst.Call, where: cst.CSTNode, row_names: set[str], ctx: RuleContext) -> bool:
    """`row_copy = row` then `def inner(): ... row_copy ...` in the loop's body, and `inner()` called: each
    function the call runs is defined in the loop's function and reads the row through its closure."""
    if type(where) is not cst.For or not row_names:
        return False
    aliases = set(row_names)
    for statement in where.body.body:
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if (
                    type(small) is cst.Assign
                    and type(small.value) is cst.Name
                    and small.value.value in aliases
                ):
                    aliases |= {t.target.value for t in small.targets if type(t.target) is cst.Name}
    targets = call_targets(ctx.index, call, ctx.unit)[0]
    return bool(targets) and all(
        target.parent is ctx.unit
        and isinstance(target.node, (cst.FunctionDef, cst.Lambda))
        and any(type(n) is cst.Name and n.value in aliases for n in walk(target.node.body))
        for target, _ in targets
    )


def _outer_call(node: cst.BaseExpression) -> cst.Call | None:
    """The call an element expression makes: `f(x)`, `f(x)[0]`, `f(x).sum()` (the innermost call of a chain)."""
    while True:
        if type(node) is cst.Subscript:
            node = node.value
        elif (
            type(node) is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Call
        ):
            node = node.func.value
        else:
            break
    return node if type(node) is cst.Call else None


# `for i in range(n)`: the rows of whichever known array the loop indexes with `i`.
ANY_ARRAY = "*"


def _is_row(value: cst.BaseExpression, names: set[str], indexed: dict[str, str], is_array) -> bool:
    if type(value) is cst.Name:
        return value.value in names
    if type(value) is cst.Subscript and type(value.value) is cst.Name and len(value.slice) == 1:
        index = value.slice[0].slice
        if type(index) is cst.Index and type(index.value) is cst.Name:
            array = indexed.get(index.value.value)
            if array == ANY_ARRAY:
                return bool(is_array(value.value))
            return array == value.value.value
    return False


def _length_of(node: cst.BaseExpression, ctx: RuleContext) -> cst.Name | None:
    """`len(xs)` or `xs.shape[0]`: the array `xs`."""
    if type(node) is cst.Call and ctx.qualname(node.func) == "builtins.len" and len(node.args) == 1:
        value = node.args[0].value
        return value if type(value) is cst.Name else None
    if type(node) is cst.Subscript and type(node.value) is cst.Attribute and node.value.attr.value == "shape":
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if type(index) is cst.Index and type(index.value) is cst.Integer and index.value.value == "0":
            base = node.value.value
            return base if type(base) is cst.Name else None
    return None


def _built_by(unit: Unit, name: str):
    """How local list `name` is built: its comprehension, or (for loop, append call) for `[]` plus appends."""
    table = unit.memo.get("list_builders")
    if table is None:  # one walk per function answers every name
        table = unit.memo["list_builders"] = _list_builders(unit)
    assigned_by, appends_by, spoiled, loops = table
    if name in spoiled:
        return None
    assigned = assigned_by.get(name, [])
    appends = appends_by.get(name, [])
    if len(assigned) != 1:
        return None
    value = assigned[0]
    if (type(value) is cst.ListComp or type(value) is cst.GeneratorExp) and not appends:
        return value
    if type(value) is cst.List and not value.elements and len(appends) == 1 and id(appends[0]) in loops:
        return loops[id(appends[0])], appends[0]
    return None


def _list_builders(
    unit: Unit,
) -> tuple[dict[str, list[cst.BaseExpression]], dict[str, list[cst.Call]], set[str], dict[int, cst.For]]:
    """For every local name: the values `name = ...` assigns, its `name.append(x)` calls, whether anything else
    changes it (`+=`, an annotated assignment, another method call: then it is not a plain list built by
    appends); and the for loop of every call that is a statement directly in a loop's body."""
    assigned: dict[str, list[cst.BaseExpression]] = {}
    appends: dict[str, list[cst.Call]] = {}
    spoiled: set[str] = set()
    loops: dict[int, cst.For] = {}
    for node in own_nodes(unit.node):
        if type(node) is cst.Assign:
            for target in node.targets:
                if type(target.target) is cst.Name:
                    assigned.setdefault(target.target.value, []).append(node.value)
        elif (type(node) is cst.AugAssign or type(node) is cst.AnnAssign) and type(node.target) is cst.Name:
            spoiled.add(node.target.value)
        elif type(node) is cst.For:
            for statement in node.body.body:
                if type(statement) is cst.SimpleStatementLine:
                    for small in statement.body:
                        if type(small) is cst.Expr and type(small.value) is cst.Call:
                            loops[id(small.value)] = node
        elif (
            type(node) is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Name
        ):
            owner = node.func.value.value
            if node.func.attr.value != "append" or len(node.args) != 1 or node.args[0].keyword is not None:
                spoiled.add(owner)
            else:
                appends.setdefault(owner, []).append(node)
    return assigned, appends, spoiled, loops


def _split_last(name: cst.Name, ctx: RuleContext) -> bool:
    """Whether the name's last assignment above its use (`x = jnp.split(x, n)` after `x = dense(h)`) builds a
    list of arrays."""
    bindings = ctx.unit.bindings.get(name.value, ())
    if not any(_builds_list(b, ctx) for b in bindings):
        return False  # whichever binding is the last above the use, it builds no list: no lines needed
    ctx.index.positions().resolve([name, *(b.node for b in bindings)])  # one pass for all their lines
    line = ctx.index.line_of(name)
    above = [b for b in bindings if ctx.index.line_of(b.node) <= line]
    if not above:
        return False
    last = max(above, key=lambda b: ctx.index.line_of(b.node))
    return _builds_list(last, ctx)


def _builds_list(binding: Binding, ctx: RuleContext) -> bool:
    """`x = jnp.split(...)`: a plain assignment of a call that gives a list of arrays."""
    value = binding.value if binding.plain else None
    return type(value) is cst.Call and ctx.qualname(value.func) in _LIST_RESULTS


def _assigned_in_body(loop: cst.For, name: str) -> cst.BaseExpression | None:
    found = []
    for statement in loop.body.body:
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assign and len(small.targets) == 1:
                    target = small.targets[0].target
                    if type(target) is cst.Name and target.value == name:
                        found.append(small.value)
    return found[0] if len(found) == 1 else None


def _numpy_array(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A NumPy array built right here: `np.zeros(...)`, `np.random.normal(...)`, `rng.normal(...)` is unknown."""
    if type(node) is not cst.Call:
        return False
    name = ctx.qualname(node.func)
    return name is not None and (name in NUMPY_ARRAYS or name.startswith(NUMPY_RANDOM))
