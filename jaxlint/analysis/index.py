"""The index pass: one walk that finds imports, functions (units), local names and transform sites."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from itertools import repeat
from typing import Any

import libcst as cst

from .names import ImportTable, dotted_name
from .transforms import (
    GRAD,
    HOST,
    HOST_CALLBACKS,
    LAX_BODIES,
    NONE,
    STRICT,
    TRANSFORMS,
    Application,
    StaticSpec,
    static_spec,
    traced_parameters,
)
from .walk import children

FunctionNode = cst.FunctionDef | cst.Lambda
# The node types the index pass records something for; every other node is only walked through.
_NOTED = frozenset(
    {
        cst.Import,
        cst.ImportFrom,
        cst.Assign,
        cst.AugAssign,
        cst.AnnAssign,
        cst.For,
        cst.WithItem,
        cst.NamedExpr,
        cst.Call,
    }
)


@dataclasses.dataclass(eq=False)
class Unit:
    """A function or lambda (or the module itself, with `node` the Module) and what runs it."""

    node: cst.CSTNode
    parent: Unit | None
    qualname: str
    class_node: cst.ClassDef | None = None  # set when the function is defined directly in a class body
    defs: dict[str, list[Unit]] = dataclasses.field(default_factory=dict)
    local_names: set[str] = dataclasses.field(default_factory=set)
    kind: int = NONE
    context: str = ""
    traced_params: set[str] = dataclasses.field(default_factory=set)
    container_params: set[str] = dataclasses.field(default_factory=set)  # receive tuples/lists of tracers
    applications: list[Application] = dataclasses.field(default_factory=list)
    is_target: bool = False  # some transformation (or lax body) applies to it directly

    @property
    def name(self) -> str:
        if isinstance(self.node, cst.FunctionDef):
            return self.node.name.value
        if isinstance(self.node, cst.Lambda):
            return "<lambda>"
        return "<module>"

    @property
    def is_method(self) -> bool:
        if self.class_node is None or not isinstance(self.node, cst.FunctionDef):
            return False
        return not any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in self.node.decorators
        )

    def apply(self, app: Application, label_name: str | None = None) -> None:
        self.is_target = True
        self.applications.append(app)
        if app.kind > self.kind or (app.kind == HOST):
            self.kind = app.kind
            self.context = f"{app.label} '{label_name or self.name}'" if app.kind != HOST else "host callback"
        if app.kind > NONE and isinstance(self.node, (cst.FunctionDef, cst.Lambda)):
            self.traced_params |= traced_parameters(self.node.params, app, self.is_method)


def bound_names(target: cst.CSTNode) -> list[str]:
    """Names bound by an assignment target (`a`, `a, (b, *c)`)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return bound_names(target.value)
    return []


class ModuleIndex:
    def __init__(self, module: cst.Module, jit_decorators: frozenset[str] = frozenset()) -> None:
        self.module = module
        self.imports = ImportTable()
        self.jit_decorators = jit_decorators
        self.root = Unit(module, None, "")
        self._positions = None
        self.units: dict[int, Unit] = {}  # id(function node) -> Unit
        self.class_methods: dict[int, dict[str, list[Unit]]] = {}  # id(ClassDef) -> name -> units
        self._sites: list[tuple[cst.Call, Unit]] = []
        self._decorated: list[Unit] = []
        # Notebook magics by line of the linted text (`%timeit f(x)`, `%%time`, `!pip`); empty for .py files.
        # Set by the engine from jaxlint.notebook; `jaxlint.notebook.magic_for(index, statement)` looks one up.
        self.magics: Mapping[int, Any] = {}
        self._index(module, self.root, None)
        self._resolve_decorators()
        self._resolve_sites()

    # -- the walk -------------------------------------------------------------------------------------

    def _index(self, node: cst.CSTNode, unit: Unit, class_node: cst.ClassDef | None) -> None:
        # `class_node` is set only for statements directly in a class body: their defs are methods.
        stack: list[tuple[cst.CSTNode, Unit, cst.ClassDef | None]] = [(node, unit, class_node)]
        while stack:
            node, unit, class_node = stack.pop()
            kind = type(node)
            if (kind is cst.FunctionDef or kind is cst.Lambda) and node is not unit.node:
                child = self._new_unit(node, unit, class_node)
                stack.extend((sub, child, None) for sub in reversed(children(node)))
                continue
            if kind is cst.ClassDef:
                unit.local_names.add(node.name.value)
                self.class_methods.setdefault(id(node), {})
                body = node.body.body
                stack.extend((stmt, unit, node) for stmt in reversed(body))
                outer = [*node.decorators, *node.bases, *node.keywords]
                stack.extend((sub, unit, None) for sub in reversed(outer))
                continue
            if kind in _NOTED:
                self._note(node, unit)
            # zip/repeat build the entries in C (a generator expression here cost a tenth of the index pass).
            stack.extend(zip(reversed(children(node)), repeat(unit), repeat(None)))

    def _new_unit(self, node: FunctionNode, parent: Unit, class_node: cst.ClassDef | None) -> Unit:
        if isinstance(node, cst.FunctionDef):
            name = node.name.value
            if class_node is not None:
                prefix = (parent.qualname + ".<locals>." if parent.qualname else "") + class_node.name.value
                qualname = f"{prefix}.{name}"
            else:
                qualname = f"{parent.qualname}.<locals>.{name}" if parent.qualname else name
        else:
            name = "<lambda>"
            qualname = f"{parent.qualname}.<locals>.<lambda>" if parent.qualname else "<lambda>"
        unit = Unit(node, parent, qualname, class_node=class_node)
        self.units[id(node)] = unit
        params = node.params
        for p in [*params.posonly_params, *params.params, *params.kwonly_params]:
            unit.local_names.add(p.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                unit.local_names.add(star.name.value)
        if isinstance(node, cst.FunctionDef):
            if class_node is not None:
                self.class_methods.setdefault(id(class_node), {}).setdefault(name, []).append(unit)
            else:
                parent.defs.setdefault(name, []).append(unit)
                parent.local_names.add(name)
            if node.decorators:
                self._decorated.append(unit)
        return unit

    def _note(self, node: cst.CSTNode, unit: Unit) -> None:
        """Record what a node binds or applies."""
        if type(node) not in _NOTED:
            return
        if type(node) is cst.Call:  # the commonest noted node: no isinstance() chain (slow on libcst's ABCs)
            self._sites.append((node, unit))  # type: ignore[arg-type]
            return
        if isinstance(node, cst.Import):
            self.imports.add_import(node)
            if unit is not self.root and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    unit.local_names.discard((alias.evaluated_alias or alias.evaluated_name).split(".")[0])
        elif isinstance(node, cst.ImportFrom):
            self.imports.add_import_from(node)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                names = bound_names(target.target)
                unit.local_names.update(names)
                if unit is self.root and isinstance(target.target, cst.Name):
                    self.imports.add_module_assignment(target.target.value, node.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            unit.local_names.update(bound_names(node.target))
        elif isinstance(node, (cst.For, cst.CompFor)):
            if isinstance(node, cst.For):
                unit.local_names.update(bound_names(node.target))
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            unit.local_names.update(bound_names(node.asname.name))
        elif isinstance(node, cst.NamedExpr):
            unit.local_names.update(bound_names(node.target))
        elif isinstance(node, cst.Call):
            self._sites.append((node, unit))

    # -- positions -------------------------------------------------------------------------------------

    def positions(self):
        """Line/column of nodes, computed only for the nodes asked about (`Positions`), shared by the module's users."""
        if self._positions is None:
            from .positions import Positions

            self._positions = Positions(self.module)
        return self._positions

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions()[node].start.line

    # -- resolution ------------------------------------------------------------------------------------

    def qualname(self, node: cst.BaseExpression, unit: Unit | None = None) -> str | None:
        return self.imports.qualname(
            node, unit.local_names if unit is not None and unit is not self.root else ()
        )

    def transform_of(self, node: cst.BaseExpression, unit: Unit) -> tuple[str, list[cst.Arg]] | None:
        """If `node` names a transformation (possibly through partial or an alias), its name and keywords."""
        if isinstance(node, cst.Call):
            inner = self.qualname(node.func, unit)
            if inner == "functools.partial" and node.args and node.args[0].keyword is None:
                found = self.transform_of(node.args[0].value, unit)
                if found is not None:
                    return found[0], [*found[1], *node.args[1:]]
                return None
            # `@jax.jit(static_argnums=...)`: newer JAX lets jit act as a decorator factory.
            if (
                inner is not None
                and self._is_transform_name(inner)
                and all(a.keyword is not None for a in node.args)
            ):
                return self._canonical_transform(inner), list(node.args)
            return None
        if isinstance(node, cst.Name) and node.value in self.imports.partial_aliases:
            if node.value not in unit.local_names or unit is self.root:
                return self.transform_of(self.imports.partial_aliases[node.value], self.root)
        name = self.qualname(node, unit)
        if name is not None and self._is_transform_name(name):
            return self._canonical_transform(name), []
        if self.jit_decorators and dotted_name(node) in self.jit_decorators:
            return "jax.jit", []
        return None

    def _is_transform_name(self, name: str) -> bool:
        return name in TRANSFORMS or name in self.jit_decorators

    @staticmethod
    def _canonical_transform(name: str) -> str:
        return name if name in TRANSFORMS else "jax.jit"

    def resolve_function(self, node: cst.BaseExpression, unit: Unit) -> list[tuple[Unit, bool]]:
        """Same-module functions that an expression names: [(unit, bound_self)]."""
        if isinstance(node, cst.Lambda):
            found = self.units.get(id(node))
            return [(found, False)] if found else []
        if isinstance(node, cst.Name):
            scope: Unit | None = unit
            while scope is not None:
                if node.value in scope.defs:
                    return [(u, False) for u in scope.defs[node.value]]
                if node.value in scope.local_names and scope is not self.root:
                    return []
                scope = scope.parent
            return []
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value in ("self", "cls")
        ):
            method_owner = unit
            while method_owner is not None and method_owner.class_node is None:
                method_owner = method_owner.parent
            if method_owner is None:
                return []
            methods = self.class_methods.get(id(method_owner.class_node), {}).get(node.attr.value, [])
            return [(m, True) for m in methods]
        return []

    def applications(self, node: cst.BaseExpression, unit: Unit) -> list[tuple[Unit, Application]]:
        """The same-module functions a transformation expression (`jax.jit(partial(f, a), ...)`) applies to."""
        return self._applications(node, unit, [])

    def _applications(
        self, node: cst.BaseExpression, unit: Unit, outer: list[tuple[str, list[cst.Arg]]]
    ) -> list[tuple[Unit, Application]]:
        """Unwrap `transform(transform(partial(f, a)))` down to the functions, with the combined effect."""
        if isinstance(node, cst.Call):
            callee = self.qualname(node.func, unit)
            if callee == "functools.partial" and node.args and node.args[0].keyword is None:
                results = []
                if any(a.star for a in node.args[1:]):
                    return []  # `partial(f, *args, **kwargs)`: which parameters are bound is unknown
                positional = sum(1 for a in node.args[1:] if a.keyword is None)
                names = frozenset(a.keyword.value for a in node.args[1:] if a.keyword is not None)
                for target, app in self._applications(node.args[0].value, unit, outer):
                    app.bound_positional += positional
                    app.bound_names |= names
                    results.append((target, app))
                return results
            found = self.transform_of(node.func, unit)
            if found is not None and node.args and node.args[0].keyword is None:
                name, keywords = found
                return self._applications(
                    node.args[0].value, unit, [*outer, (name, [*keywords, *node.args[1:]])]
                )
            return []
        results = []
        for target, bound_self in self.resolve_function(node, unit):
            results.append((target, self._combine(outer, bound_self)))
        return results

    @staticmethod
    def _combine(chain: list[tuple[str, list[cst.Arg]]], bound_self: bool) -> Application:
        """Transformations applied outermost first: the strictest decides the kind, and names the context."""
        kind = max((TRANSFORMS[name][0] for name, _ in chain), default=NONE)
        label = next((TRANSFORMS[name][1] for name, _ in chain if TRANSFORMS[name][0] == kind), "")
        spec = StaticSpec()
        for name, keywords in chain:
            this = static_spec(keywords, name)
            spec = StaticSpec(
                spec.argnums | this.argnums,
                spec.argnames | this.argnames,
                spec.unbatched | this.unbatched,
                spec.unknown or this.unknown,
                spec.filtering or this.filtering,
            )
        return Application(kind, label, spec, bound_self=bound_self)

    def _resolve_decorators(self) -> None:
        for unit in self._decorated:
            node = unit.node
            assert isinstance(node, cst.FunctionDef)
            chain = []
            for decorator in node.decorators:  # outermost first, like a nested call
                found = self.transform_of(decorator.decorator, unit.parent or self.root)
                if found is not None:
                    chain.append(found)
            if chain:
                unit.apply(self._combine(chain, False))

    def calls(self) -> list[cst.Call]:
        """Every call the index pass saw (the whole module but a class's PEP 695 type parameters)."""
        return [call for call, _unit in self._sites]

    def _resolve_sites(self) -> None:
        for call, unit in self._sites:
            callee = self.qualname(call.func, unit)
            if callee is None:
                continue
            if callee in LAX_BODIES:
                for position, keyword in LAX_BODIES[callee]:
                    arg = _argument(call, position, keyword)
                    if arg is None:
                        continue
                    values = (
                        [e.value for e in arg.elements] if isinstance(arg, (cst.List, cst.Tuple)) else [arg]
                    )
                    label = "lax." + callee.rsplit(".", 1)[1] + " body"
                    for value in values:
                        for target, app in self._applications(value, unit, []):
                            app.kind, app.label = STRICT, label
                            target.apply(app)
            elif callee in HOST_CALLBACKS:
                arg = _argument(call, 0, "callback")
                while (  # `jax.debug.callback(partial(show, tag), x)`: the host function is inside
                    isinstance(arg, cst.Call)
                    and self.qualname(arg.func, unit) == "functools.partial"
                    and arg.args
                    and arg.args[0].keyword is None
                ):
                    arg = arg.args[0].value
                if arg is not None:
                    for target, _ in self.resolve_function(arg, unit):
                        target.apply(Application(HOST, "host callback", StaticSpec()))
            elif self.transform_of(call.func, unit) is not None or callee == "functools.partial":
                if callee == "functools.partial":
                    continue  # handled when the partial is the argument of a transformation
                for target, app in self._applications(call, unit, []):
                    target.apply(app)
        # A transformation applied inside traced code runs under the outer trace too.
        for unit in self.units.values():
            parent = unit.parent
            if unit.is_target and unit.kind in (GRAD,) and parent is not None:
                while parent is not None and parent.kind == NONE:
                    parent = parent.parent
                if parent is not None and parent.kind == STRICT:
                    unit.kind = STRICT


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: position + 1]):
        return None
    return positional[position].value if position < len(positional) else None
