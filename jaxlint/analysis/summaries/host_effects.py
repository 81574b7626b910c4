"""What a call does on the host, and what a name closed over holds, by the library table (`semantics.library.APIS`,
`HOST_OBJECTS`, `ITERATOR_MAKERS`): `logging.info(...)`, `tqdm(range(n))`, `logger.info(...)` of a
`logger = logging.getLogger(...)`, `pbar.update()` of a `pbar = tqdm(...)`, `next(it)` of an
`it = iter(loader)` or of a generator. Under a transformation each runs once, while JAX traces. Another project
module's module-level host object is known by the kind its module exports (`module_host_objects`, project mode).
"""

from __future__ import annotations

import libcst as cst

from ...syntax import own_nodes, source_of
from ..binding.index import ModuleIndex, Unit
from ..context import RuleContext
from ..objects.storage import StorageResolver
from ..semantics.library import APIS, HOST_OBJECTS, ITERATOR_MAKERS, ITERATOR_METHODS


def call_effect(node: cst.Call, ctx: RuleContext) -> tuple[str, str] | None:
    """(effect, what it is called in messages) of a library call with a host effect, or of a method of a
    host object the table knows (bound by name in this function or an enclosing scope, or made in place)."""
    name = ctx.qualname(node.func)
    if name is not None:
        api = APIS.get(name)
        if api is not None and api.host:
            return api.host, source_of(node.func)
        # `logger.info(...)` of another project module's `logger = logging.getLogger(...)` (project mode)
        holder, _, method = name.rpartition(".")
        project = ctx.index.project
        found = project.exports.get(holder) if project is not None else None
        effect = HOST_OBJECTS.get(found.host, {}).get(method) if found is not None else None
        return (effect, source_of(node.func)) if effect is not None else None
    func = node.func
    if type(func) is not cst.Attribute:
        return None
    kind = object_kind(func.value, ctx)
    effect = HOST_OBJECTS.get(kind, {}).get(func.attr.value) if kind is not None else None
    if effect is None:
        return None
    return effect, source_of(func)


def object_kind(node: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """The kind of host object `node` is ("logger", "progress bar", ...): made by a call the table lists."""
    if type(node) is cst.Name:
        if ctx.qualname(node) is not None:
            return None  # an import or a builtin: what the module holds is not known here
        found = _binding(node.value, ctx.unit)
        if found is None:
            return None
        node = found[0]
    if type(node) is not cst.Call:
        return None
    name = ctx.qualname(node.func)
    api = APIS.get(name) if name is not None else None
    return (api.makes or None) if api is not None else None


def module_host_objects(index: ModuleIndex) -> list[tuple[str, str]]:
    """The module's top-level names bound once to a host object the table knows (name, kind), for the modules
    that import them (`Summary.hosts`)."""
    root = index.root
    found = []
    for name in root.bindings:
        value = root.single_assignment(name)
        qualname = index.qualname(value.func, root) if type(value) is cst.Call else None
        api = APIS.get(qualname) if qualname is not None else None
        if api is not None and api.makes:
            found.append((name, api.makes))
    return sorted(found)


def outer_iterator(node: cst.BaseExpression, ctx: RuleContext, resolver: StorageResolver) -> str | None:
    """How `node`, a name bound outside the current trace, is known to be a Python iterator ("iter(...)",
    "a generator"), or None: a name bound in the traced function, a parameter, or anything the code
    does not show to be an iterator."""
    if type(node) is not cst.Name or ctx.flags(node):
        return None
    located = resolver.locate(node.value, ctx)
    if located is None:
        return None
    value = located[1].single_assignment(node.value)
    if type(value) is cst.GeneratorExp:
        return "a generator expression"
    if type(value) is not cst.Call:
        return None
    func = value.func
    name = ctx.qualname(func)
    if name in ITERATOR_MAKERS:
        return f"{name.removeprefix('builtins.')}(...)"
    if name is None and type(func) is cst.Attribute and func.attr.value in ITERATOR_METHODS:
        return f".{func.attr.value}()"
    if type(func) is cst.Name and name is None and _is_generator_function(func.value, located[1]):
        return f"a generator, {func.value}()"
    return None


def _binding(name: str, unit: Unit | None) -> tuple[cst.BaseExpression, Unit] | None:
    """The value of the one plain assignment of `name` in the innermost scope that binds it."""
    while unit is not None:
        if name in unit.local_names or name in unit.bindings:
            value = unit.single_assignment(name)
            return (value, unit) if value is not None else None
        unit = unit.parent
    return None


def _is_generator_function(name: str, scope: Unit | None) -> bool:
    """Whether `name`, seen from `scope`, is one def (no other binding) whose own body yields."""
    while scope is not None:
        bindings = scope.bindings.get(name)
        if bindings:
            if len(bindings) != 1 or type(bindings[0].node) is not cst.FunctionDef:
                return False
            return any(type(n) is cst.Yield for n in own_nodes(bindings[0].node))
        scope = scope.parent
    return False
