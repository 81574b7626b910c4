"""lax control flow called outside jit on a function made anew for each call, across modules (JAX401); also a
jitted inner def made and called on every call (`@jax.jit def loop_fn(): ...` closing over the parameters).

Called eagerly, `lax.scan`/`fori_loop`/`while_loop`/`cond`/`switch` compile what they trace, cached by the
identity of their functions (the library table's `ControlFlow.compiles`): a body defined inside the calling
function (an inner def, a lambda, a `partial`) is a new function on every call, so every call compiles again.
That costs a compile per call only where the function is called repeatedly: JAX401 flags it where a loop runs
it, in code that surely runs eagerly (`surely_eager`: a script's top-level code, `main`), since a library's
function is mostly run under its users' jit, where the loop unrolls into one trace. The loop may be another module's (`for _ in range(n): proposal.sample(key, x0, 50)`): the callee's summary
says the function compiles per call (`compiles_per_call`, exported), the caller records its looped calls of
such functions (`looped_calls`: `CallFact.looped`), and the callee's module receives them (`incoming_loop`).
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from ...syntax import argument, own_nodes
from ..binding.index import ModuleIndex, Unit
from ..binding.usage import called_outside_loops_only
from ..kinds import NONE
from ..objects.instances import method_call
from ..project import CallFact, Export
from ..semantics.library import CONTROL_FLOW
from .call_targets import call_targets, loops_reaching
from .function_values import PARTIAL
from .jit import COMPILING, decorator_transforms

_COMPILING_FLOW = frozenset(name for name, flow in CONTROL_FLOW.items() if flow.compiles)


def compiles_per_call(unit: Unit, index: ModuleIndex) -> bool:
    """Whether `unit`, run eagerly, hands lax control flow that compiles a function it makes anew on each call:
    a lambda, a def nested in it, a `partial(...)`."""
    if unit.kind != NONE or type(unit.node) is not cst.FunctionDef:
        return False
    for node in own_nodes(unit.node):
        if type(node) is cst.FunctionDef and _compiled_here(node, unit, index):
            return True
        if type(node) is not cst.Call or index.qualname(node.func, unit) not in _COMPILING_FLOW:
            continue
        flow = CONTROL_FLOW[index.qualname(node.func, unit)]  # type: ignore[index]
        for position, keyword in flow.bodies:
            given = argument(node, position, keyword)
            if given is None or given.star:
                continue
            value = given.value
            functions = [e.value for e in value.elements] if type(value) in (cst.List, cst.Tuple) else [value]  # type: ignore[attr-defined]
            if any(_made_here(f, unit, index) for f in functions):
                return True
    return False


def _compiled_here(node: cst.FunctionDef, unit: Unit, index: ModuleIndex) -> bool:
    """`@jax.jit def loop_fn(): ...` defined in `unit` and called there, outside loops: a new jitted function,
    compiled again, on every call of `unit`."""
    inner = index.units.get(id(node))
    chain = decorator_transforms(node, inner, index) if inner is not None else []
    if not chain or chain[0][2] is not node.decorators[0] or chain[0][0] not in COMPILING:
        return False
    return called_outside_loops_only(unit, node.name.value, {id(node.name)})


def _made_here(function: cst.BaseExpression, unit: Unit, index: ModuleIndex) -> bool:
    if type(function) is cst.Lambda:
        return True
    if type(function) is cst.Call:
        return index.qualname(function.func, unit) == PARTIAL
    if type(function) is cst.Name and function.value in unit.local_names:
        targets = index.resolve_function(function, unit)
        return len(targets) == 1 and targets[0][0].parent is unit
    return False


def surely_eager(index: ModuleIndex, unit: Unit) -> bool:
    """Code that runs eagerly for sure, not only because nothing known traces it (library functions are mostly
    run under their users' jit): the module's top-level code (a script, a notebook), a function named `main` or
    one defined in it, or a top-level function that the module's top-level code calls."""
    if unit.kind != NONE:
        return False
    if unit is index.root:
        return True
    scope: Unit | None = unit
    while scope is not None and scope is not index.root:
        if scope.name == "main" and scope.class_node is None:
            return True
        scope = scope.parent
    if unit.parent is not index.root or type(unit.node) is not cst.FunctionDef:
        return False
    memo = index.root.memo
    if "called at top level" not in memo:
        memo["called at top level"] = {
            id(target)
            for call, caller, _ in index._sites
            if caller is index.root
            for target, _ in call_targets(index, call, caller)[0]
        }
    return id(unit) in memo["called at top level"]


def eager_loop(index: ModuleIndex, unit: Unit) -> tuple[cst.Call, Unit] | None:
    """A call on every iteration of a loop that surely runs eagerly (the call, the function it is written in)
    and runs `unit`, directly or through the module's untransformed functions (never through a jitted or
    otherwise transformed one, which traces what it calls); None when none. Computed once per module."""
    table = index.root.memo.get("eager loops")
    if table is None:
        table = index.root.memo["eager loops"] = _eager_loops(index)
    return table.get(id(unit))


def _eager_loops(index: ModuleIndex) -> dict[int, tuple[cst.Call, Unit]]:
    # never through a transformed function: it traces what it calls
    return loops_reaching(
        index, lambda caller: surely_eager(index, caller), lambda target: not target.applications
    )


def looped_calls(index: ModuleIndex, exports: Mapping[str, Export]) -> set[CallFact]:
    """This module's eager calls, on every iteration of a loop, of other modules' functions and methods that
    compile per call (their `Export.compiles_per_call`)."""
    found: set[CallFact] = set()
    if not any(e.compiles_per_call for e in exports.values()):
        return found
    for call, unit, _ in index._sites:
        target = _target(index, call, unit)
        export = exports.get(target) if target is not None else None
        if export is None or not export.compiles_per_call or unit.kind != NONE:
            continue
        if (unit.loops_of(call) and surely_eager(index, unit)) or eager_loop(index, unit) is not None:
            found.add(CallFact(target, NONE, "", (), looped=True))  # type: ignore[arg-type]
    return found


def _target(index: ModuleIndex, call: cst.Call, unit: Unit) -> str | None:
    func = call.func
    if type(func) is cst.Attribute and not (
        type(func.value) is cst.Name and func.value.value in ("self", "cls")
    ):
        method = method_call(index, func, unit)
        if method is not None and method.target is not None:
            return method.target
    return index.qualname(func, unit)


def incoming_loop(index: ModuleIndex, unit: Unit) -> str | None:
    """Where another module calls `unit` (a top-level function or a method of a top-level class) on every
    iteration of a loop ("a loop in train"), by the facts this module received; None when none does."""
    project = index.project
    if project is None or not project.incoming:
        return None
    name = unit.name
    if unit.is_method and unit.class_node is not None:
        name = f"{unit.class_node.name.value}.{name}"
    elif unit.parent is not index.root:
        return None
    facts: tuple[CallFact, ...] = project.incoming.get(name, ())
    where = next((f.context.strip() for f in facts if f.looped), None)
    return f"a loop {where}".rstrip() if where is not None else None
