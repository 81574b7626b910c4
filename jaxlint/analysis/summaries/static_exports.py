"""Static parameters of jitted functions across modules (project mode).

A module's summary says, per top-level function, which parameters are static (by name) when calling it runs it
jitted (`@partial(jax.jit, static_argnums=(0, 1))`), and for a factory that returns a jitted nested function
(`def make(step): @partial(jax.jit, static_argnums=...) def run(...): ...; return run`), that function's
positional parameters and static ones (`project.FunctionFacts.static`, `made_positional`, `made_static`). A
module calling the function, or what it returns (`run = make(step); run(x0, p0, 0.1, 100)`), gets them as an
`Export` and checks what it passes there as a call of its own jitted function (JAX402).
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from ...syntax import own_nodes
from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params
from ..context import RuleContext
from .jit import COMPILING, Jitted, jitted_def

_JITS = (
    frozenset({"jax.jit", "jax.pmap"}) & COMPILING
)  # the transformations whose static positions JAX402 reads


def static_exports(
    unit: Unit, index: ModuleIndex
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(its static parameters when jitted, the positional and the static parameters of the jitted function it
    returns) for a top-level def; empty where none."""
    own = jitted_def(unit, index, _JITS)
    static = _static_names(own) if own is not None else ()
    made = _returned_jit(unit, index)
    if made is None:
        return static, (), ()
    names = tuple(p.name.value for p in positional_params(made.params))
    return static, names, _static_names(made)


def _static_names(jitted: Jitted) -> tuple[str, ...]:
    indices, names = jitted.static_parameters()
    positional = [p.name.value for p in positional_params(jitted.params)]
    return tuple(sorted(set(names) | {positional[i] for i in indices}))


def _returned_jit(unit: Unit, index: ModuleIndex) -> Jitted | None:
    """The jitted nested def that every `return` of `unit` gives (`return run`), when it has static parameters."""
    found: Jitted | None = None
    for node in own_nodes(unit.node):
        if type(node) is not cst.Return:
            continue
        value = node.value
        if type(value) is not cst.Name:
            return None
        targets = index.resolve_function(value, unit)
        if len(targets) != 1 or targets[0][0].parent is not unit:
            return None
        jitted = jitted_def(targets[0][0], index, _JITS)
        if jitted is None or (found is not None and found.unit is not jitted.unit):
            return None
        found = jitted
    return found if found is not None and _static_names(found) else None


@dataclasses.dataclass(frozen=True)
class ImportedJit:
    """A jitted function of another project module, or one it returns: how a call's arguments map to its
    parameters, as far as its summary says."""

    label: str
    positional: tuple[str, ...]
    static: frozenset[str]

    def arguments(self, call: cst.Call) -> list[tuple[cst.Arg, str, bool]]:
        """(argument, parameter name, whether static) up to the first `*`/`**`, as `Jitted.arguments`."""
        out = []
        position = 0
        for arg in call.args:
            if arg.star:
                break
            if arg.keyword is None:
                if position >= len(self.positional):
                    break
                name = self.positional[position]
                position += 1
            else:
                name = arg.keyword.value
            out.append((arg, name, name in self.static))
        return out


def imported_jit(func: cst.BaseExpression, ctx: RuleContext) -> ImportedJit | None:
    """The jitted function with static parameters that calling `func` runs, from another module's summary:
    the function itself (`steps.run(x, [1, 2])`) or what calling one returns, bound once to a name here
    (`run = make(step)`). None outside project mode or when not known."""
    project = ctx.index.project
    if project is None or not project.exports:
        return None
    memo = ctx.index.root.memo
    if "imports static" not in memo:
        memo["imports static"] = any(e.static or e.made_static for e in project.exports.values())
    if not memo["imports static"]:
        return None
    name = ctx.qualname(func)
    export = project.exports.get(name) if name is not None else None
    if export is not None and export.static:
        return ImportedJit(name.rpartition(".")[2], export.positional, frozenset(export.static))  # type: ignore[union-attr]
    if type(func) is not cst.Name:
        return None
    unit = ctx.unit
    owner = unit if unit is not ctx.index.root and func.value in unit.local_names else None
    if owner is None and ctx.is_module_global(func.value):
        owner = ctx.index.root
    value = owner.single_assignment(func.value) if owner is not None else None
    if type(value) is not cst.Call:
        return None
    made = ctx.index.qualname(value.func, owner)
    export = project.exports.get(made) if made is not None else None
    if export is None or not export.made_static:
        return None
    return ImportedJit(func.value, export.made_positional, frozenset(export.made_static))
