"""What a piece of code does with JAX work, as function summaries that hold at every call (through every hop
`call_targets` follows, and across modules through the `Export`s):

- `DispatchJudge`: whether statements only dispatch JAX work and never wait for it (JAX403's timed regions);
  `dispatches_only(index, unit)`: a def (or lambda) whose body does only that and returns: calling it
  returns before the work is done;
- `runs_jax(index, unit)`: a function that calls JAX (`jnp`/`lax`, a jitted function, a function that does,
  to any depth) and nothing that needs concrete values (`float()`, `.item()`, NumPy), so it could run under
  `vmap` as it is (JAX404's per-row functions).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ...syntax import children, walk
from ..binding.index import ModuleIndex, Unit
from ..semantics.library import (
    ACCUMULATING_METHODS,
    CONCRETE_JAX_FUNCTIONS,
    CONCRETE_JAX_PREFIXES,
    CONCRETIZING_BUILTINS,
    HARMLESS_BUILTINS,
)
from ..semantics.namespaces import ARRAY_NAMESPACES, DISPATCHING_NAMESPACES, NUMPY
from .call_targets import call_targets
from .jit import decorator_transforms, jax_callable_in


class DispatchJudge:
    """Whether code only dispatches JAX work (and never waits), collecting the JAX calls it makes.

    `unit` is where the code is read; `qualname` and `is_global` answer for it (a rule's context gives its
    own, else the index's)."""

    def __init__(
        self,
        index: ModuleIndex,
        unit: Unit,
        qualname: Callable[[cst.BaseExpression], str | None] | None = None,
        is_global: Callable[[str], bool] | None = None,
        asking: frozenset[int] = frozenset(),
    ) -> None:
        self.index = index
        self.unit = unit
        self.qualname = qualname or (lambda node: index.qualname(node, unit))
        self.is_global = is_global
        self.asking = asking  # the defs being judged further up (a recursive call waits: not known)
        self.jax_calls: list[cst.Call] = []

    def statement(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.SimpleStatementLine):
            return all(self.small(s) for s in node.body)
        if isinstance(node, cst.For):
            if node.orelse is not None or node.asynchronous is not None:
                return False
            return self.expression(node.iter) and all(self.statement(s) for s in node.body.body)
        if isinstance(node, cst.FunctionDef):
            return not node.decorators  # defining a function runs none of its body
        if isinstance(node, cst.EmptyLine):
            return True
        return False

    def small(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Pass):
            return True
        if isinstance(node, cst.Expr):
            return self.expression(node.value)
        if isinstance(node, cst.Assign):
            return self.expression(node.value) and all(self.target(t.target) for t in node.targets)
        if isinstance(node, cst.AugAssign):
            return self.expression(node.value) and self.target(node.target)
        if isinstance(node, cst.AnnAssign):
            return node.value is not None and self.expression(node.value) and self.target(node.target)
        return False

    def target(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            return True
        if isinstance(node, (cst.Tuple, cst.List)):
            return all(self.target(e.value) for e in node.elements if not isinstance(e, cst.StarredElement))
        if isinstance(node, cst.Subscript):
            return self.expression(node)
        return False

    def expression(self, node: cst.CSTNode) -> bool:
        stack: list[cst.CSTNode] = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, (cst.FormattedString, cst.Await, cst.Yield)):
                return False
            if isinstance(current, cst.Lambda):
                continue  # a function made, not run
            if isinstance(current, cst.Call):
                verdict = self.call(current)
                if verdict is None:
                    return False
                stack.extend(a.value for a in current.args)
                if verdict == "method" and isinstance(current.func, cst.Attribute):
                    stack.append(current.func.value)
                continue
            stack.extend(children(current))
        return True

    def call(self, node: cst.Call) -> str | None:
        """'jax' (dispatches JAX work), 'harmless', 'method' (list accumulation), or None (may block)."""
        index, unit = self.index, self.unit
        name = self.qualname(node.func)
        if name is not None:
            if name in HARMLESS_BUILTINS:
                return "harmless"
            if (
                name.startswith(DISPATCHING_NAMESPACES)
                and name not in CONCRETE_JAX_FUNCTIONS
                and not name.startswith(CONCRETE_JAX_PREFIXES)
            ):
                self.jax_calls.append(node)
                return "jax"
            export = _export(index, name)
            if export is not None and (export.jitted or export.dispatches):
                self.jax_calls.append(node)
                return "jax"
            if not self._own(node):
                return None
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in ACCUMULATING_METHODS:
            if isinstance(node.func.value, cst.Name):
                return "method"
            return None
        if jax_callable_in(node.func, index, unit, self.is_global) or self._dispatching_defs(node):
            self.jax_calls.append(node)
            return "jax"
        return None

    def _own(self, node: cst.Call) -> bool:
        """A call of something this module defines (`OBJ.m(x)`, a name of its own): judged by its defs."""
        return bool(call_targets(self.index, node, self.unit)[0])

    def _dispatching_defs(self, node: cst.Call) -> bool:
        """`helper(x)` where every def the call may run only dispatches JAX work and returns (to any depth)."""
        targets = call_targets(self.index, node, self.unit)[0]
        return bool(targets) and all(_dispatches(self.index, target, self.asking) for target, _ in targets)


def dispatches_only(index: ModuleIndex, unit: Unit) -> bool:
    """Calling the def (or lambda) only dispatches JAX work and returns: it returns before the work is done.
    Kept with the unit."""
    return _dispatches(index, unit, frozenset())


def _dispatches(index: ModuleIndex, unit: Unit, asking: frozenset[int]) -> bool:
    found = unit.memo.get("dispatches_only")
    if found is not None:
        return found
    if id(unit) in asking:
        return False  # a recursive call: it may wait
    node = unit.node
    inner = DispatchJudge(index, unit, asking=asking | {id(unit)})
    if type(node) is cst.FunctionDef and decorator_transforms(node, unit, index):
        found = True  # a jitted (or otherwise transformed) def: calling it dispatches its work
    elif type(node) is cst.Lambda:
        found = inner.expression(node.body) and bool(inner.jax_calls)
    elif type(node) is cst.FunctionDef and isinstance(node.body, cst.IndentedBlock) and node.body.body:
        statements = list(node.body.body)
        last = statements[-1]
        returned = None
        if (
            isinstance(last, cst.SimpleStatementLine)
            and len(last.body) == 1
            and isinstance(last.body[0], cst.Return)
        ):
            returned = last.body[0].value
        found = (
            returned is not None
            and inner.expression(returned)
            and all(inner.statement(s) for s in statements[:-1])
            and bool(inner.jax_calls)
        )
    else:
        found = False
    if not asking:  # an answer given while a caller is being judged may depend on that caller: not kept
        unit.memo["dispatches_only"] = found
    return found


def runs_jax(index: ModuleIndex, unit: Unit) -> bool:
    """The function calls JAX (jnp/lax, a jitted function, a function of the project that does, to any depth)
    and nothing that needs concrete values (`float()`, `.item()`, NumPy), so it could run under vmap as it is.
    Kept with the unit."""
    found = unit.memo.get("runs_jax")
    if found is None:
        unit.memo["runs_jax"] = False  # a recursive call asks again: no answer yet
        found = unit.memo["runs_jax"] = _runs_jax(index, unit)
    return found


def _runs_jax(index: ModuleIndex, unit: Unit) -> bool:
    assert type(unit.node) is cst.FunctionDef or type(unit.node) is cst.Lambda
    uses = False
    for node in walk(unit.node.body):
        if type(node) is not cst.Call:
            continue
        name = index.qualname(node.func, unit)
        if name is not None and name.startswith(ARRAY_NAMESPACES):
            uses = True
        elif name in CONCRETIZING_BUILTINS or (name or "").startswith(NUMPY):
            return False
        elif type(node.func) is cst.Attribute and node.func.attr.value in ("item", "tolist"):
            return False
        elif not uses:
            export = _export(index, name) if name is not None else None
            if export is not None:
                uses = export.runs_jax or export.jitted or export.dispatches
            elif jax_callable_in(node.func, index, unit):
                uses = True
            else:
                targets = call_targets(index, node, unit)[0]
                uses = bool(targets) and all(runs_jax(index, t) for t, _ in targets)
    return uses


def _export(index: ModuleIndex, name: str):  # -> project.Export | None
    """Another project module's function as its summary exports it (project mode)."""
    project = index.project
    return project.exports.get(name) if project is not None else None
