"""The index pass: one walk that finds imports, functions (units), local names and transform sites."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, NamedTuple

import libcst as cst
from libcst.metadata import CodeRange

from ...syntax import (
    CHILDREN_REVERSED,
    LEAF,
    argument,
    attribute_root,
    bound_names,
    dotted_name,
    import_binding,
    own_nodes,
    parameter_names,
    walk,
)
from ..kinds import GRAD, HOST, NONE, STRICT
from ..semantics.library import (
    CONTROL_FLOW,
    MODEL_ARGUMENT_TRACING,
    PARAMS_CONCRETE,
    PARAMS_TRACED,
    PARTIAL,
    TRANSFORMATIONS,
)
from .definitions import direct_statements, named_defs
from .loops import in_while_test, loop_map, loop_targets
from .names import ImportTable
from .transforms import (
    HOST_CALLBACKS,
    TRACING_APIS,
    Application,
    StaticSpec,
    library_application,
    static_spec,
    traced_parameters,
)

FunctionNode = cst.FunctionDef | cst.Lambda
# The node types whose bindings the index pass notes (`_note`); calls are recorded as sites by the walk itself.
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
        cst.Global,
        cst.Nonlocal,
    }
)


# What the index pass does at a node, by its type (`_STEP`): skip it (a leaf), walk through it, record a call
# site or note a binding and walk through it, open a unit (def, lambda), open a class, or go back to an outer
# context (`_Context`).
_SKIP, _WALK, _CALL, _NOTE, _FUNCTION, _CLASS, _RESTORE = range(7)


class _Steps(dict):
    def __missing__(self, kind: type) -> int:
        if kind is _Context:
            step = _RESTORE
        elif kind is cst.FunctionDef or kind is cst.Lambda:
            step = _FUNCTION
        elif kind is cst.ClassDef:
            step = _CLASS
        elif kind is cst.Call:  # the commonest noted node: recorded in the loop itself
            step = _CALL
        elif kind in _NOTED:
            step = _NOTE
        else:
            step = _SKIP if LEAF[kind] else _WALK  # no noted type is a leaf
        self[kind] = step
        return step


_STEP: dict[type, int] = _Steps()


class _Context:
    """Where the index pass is: pushed on its stack where the unit or class context changes."""

    __slots__ = ("unit", "class_node", "in_class")

    def __init__(self, unit: Unit, class_node: cst.ClassDef | None, in_class: bool) -> None:
        self.unit, self.class_node, self.in_class = unit, class_node, in_class


class Binding(NamedTuple):
    """One binding of a name by a unit's own statements (not those of nested functions or class bodies). A named
    tuple, immutable like the frozen dataclass it was, and three times cheaper to make (one per binding)."""

    name: str
    node: cst.CSTNode  # what binds it: Assign, AugAssign, AnnAssign, For, WithItem, Import(From), NamedExpr,
    # FunctionDef or ClassDef
    value: cst.BaseExpression | None = None  # the value, for a plain name target of `=` or `: T =`
    order: int = 0  # where it is in source order, in the sequence `Unit.order` counts in

    @property
    def plain(self) -> bool:
        """`name = value` with one target: the name holds exactly `value`."""
        node = self.node
        return type(node) is cst.Assign and len(node.targets) == 1  # identity: ABCs make isinstance() slow


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
    # Traced parameters known to hold arrays, not pytrees: a call site passes a Python scalar to the jitted
    # function, or an array to the helper (`step(x, True)`, `dropout(x, deterministic)` from traced code).
    array_params: set[str] = dataclasses.field(default_factory=set)
    passed_params: set[str] = dataclasses.field(default_factory=set)  # parameters some traced caller passes
    # Untraced parameters that an eager caller of this module passes a JAX array (`update(jnp.zeros(3))`).
    eager_arrays: set[str] = dataclasses.field(default_factory=set)
    # Its place in source order: the index pass counts units, calls and noted bindings as it meets them (the
    # third item of a site counts in the same sequence), so which binding a later statement sees is known.
    order: int = 0
    applications: list[Application] = dataclasses.field(default_factory=list)
    is_target: bool = False  # some transformation (or lax body) applies to it directly
    # A method that traced code calls on a traced instance (`layer(h)` with `layer` a slice of Modules that
    # `lax.scan` hands its body, `model(x)` with `model` a jitted function's argument): `self` is traced.
    traced_receiver: bool = False
    # A method that traced code calls on an object built from tracers (`op = Exp(coeff=jnp.cos(t));
    # op.decomposition()`): the fields of `self` that hold them (`objects.records.constructor`).
    traced_fields: dict[str, int] = dataclasses.field(default_factory=dict)  # field -> its value's flags
    # What the unit's own statements bind, in no particular order (class bodies and nested functions excluded).
    bindings: dict[str, list[Binding]] = dataclasses.field(default_factory=dict)
    declared_globals: set[str] = dataclasses.field(default_factory=set)  # `global` statements of the body
    declared_nonlocals: set[str] = dataclasses.field(default_factory=set)
    # Parameters the body hands to a transformation with no options, and the transformations, outermost first
    # (`def compiled(fn, x): return jax.jit(fn)(x)`: "fn" -> ("jax.jit",)): exported to other modules' callers.
    hands_on: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    # Facts other analysis modules compute on first use, by their name ("jit_bindings"); per file like the unit.
    memo: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    _loops: dict[int, tuple[cst.CSTNode, ...]] | None = dataclasses.field(default=None, repr=False)
    _varying: dict[int, set[str]] | None = dataclasses.field(default=None, repr=False)

    @property
    def name(self) -> str:
        if type(self.node) is cst.FunctionDef:
            return self.node.name.value
        if type(self.node) is cst.Lambda:
            return "<lambda>"
        return "<module>"

    @property
    def params(self) -> cst.Parameters:
        """The parameters of a function or lambda unit (the module has none: never asked of the root)."""
        node = self.node
        assert type(node) is cst.FunctionDef or type(node) is cst.Lambda
        return node.params

    @property
    def is_method(self) -> bool:
        if self.class_node is None or type(self.node) is not cst.FunctionDef:
            return False
        return not any(
            type(d.decorator) is cst.Name and d.decorator.value == "staticmethod"
            for d in self.node.decorators
        )

    def bind(
        self, name: str, node: cst.CSTNode, value: cst.BaseExpression | None = None, order: int = 0
    ) -> None:
        self.bindings.setdefault(name, []).append(Binding(name, node, value, order))

    def single_assignment(self, name: str) -> cst.BaseExpression | None:
        """The value of the only binding of `name` here, when it is a plain `name = value`."""
        bindings = self.bindings.get(name)
        if not bindings:
            return None
        if len(bindings) == 1:  # the common case (a plain binding is an Assign, never a NamedExpr)
            node = bindings[0].node  # `Binding.plain`, inlined: this is asked about every call's names
            return bindings[0].value if type(node) is cst.Assign and len(node.targets) == 1 else None
        found = [b for b in bindings if type(b.node) is not cst.NamedExpr]
        return found[0].value if len(found) == 1 and found[0].plain else None

    def assigned_names(self) -> set[str]:
        """Names the unit's statements rebind by `=`, augmented or annotated assignment, or a `for` target."""
        return {b.name for bs in self.bindings.values() for b in bs if type(b.node) in _REASSIGNING}

    def loops_of(self, node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
        """The loops of this unit (For, While, comprehensions; not those of nested functions) that run `node`
        repeatedly, outermost first. Computed once per unit, on first use."""
        if self._loops is None:
            self._loops = loop_map(self.node)
        return self._loops.get(id(node), ())

    def varying(self, loop: cst.CSTNode) -> set[str]:
        """Names that take a new value on each iteration of one of this unit's loops: its targets, and for a
        `for`/`while` what its body binds (assignments, loop targets, walrus, nested defs and classes)."""
        if self._varying is None:
            table: dict[int, set[str]] = {}
            for bindings in self.bindings.values():
                for binding in bindings:
                    if type(binding.node) in _VARYING:
                        for outer in self.loops_of(binding.node):
                            if type(outer) is not cst.While or not in_while_test(binding.node, outer):
                                table.setdefault(id(outer), set()).add(binding.name)
            self._varying = table
        names = loop_targets(loop)
        if type(loop) in (cst.For, cst.While):
            names |= self._varying.get(id(loop), set())
        return names

    def apply(self, app: Application, label_name: str | None = None) -> None:
        self.is_target = True
        self.applications.append(app)
        if app.kind > self.kind or (app.kind == HOST):
            self.kind = app.kind
            self.context = f"{app.label} '{label_name or self.name}'" if app.kind != HOST else "host callback"
        if app.kind > NONE and (type(self.node) is cst.FunctionDef or type(self.node) is cst.Lambda):
            self.traced_params |= traced_parameters(self.node.params, app, self.is_method)


class ModuleIndex:
    def __init__(
        self, module: cst.Module, jit_decorators: frozenset[str] = frozenset(), package: str | None = None
    ) -> None:
        self.module = module
        self.imports = ImportTable(package)
        self.jit_decorators = jit_decorators
        self.root = Unit(module, None, "")
        self._positions: Mapping[cst.CSTNode, CodeRange] | None = None
        self.statement_positions: Any = (
            None  # the server's per-document memo (`binding.positions.StatementPositions`)
        )
        self.units: dict[int, Unit] = {}  # id(function node) -> Unit
        self.class_methods: dict[int, dict[str, list[Unit]]] = {}  # id(ClassDef) -> name -> units
        self._sites: list[tuple[cst.Call, Unit, int]] = []  # (call, unit, its place in source order)
        self.with_calls: list[cst.Call] = []  # `with f(...):` items that are calls (project facts read them)
        self._seq = 0  # the place in source order of the last unit, call or binding the index pass met
        self._decorated: list[Unit] = []
        # Imports inside functions, (unit, local name, what the import table made of it): they bind in that
        # function only (`_scope_local_imports`).
        self._local_imports: list[tuple[Unit, str, str | None]] = []
        # Bodies of control flow that runs them traced only under an enclosing trace (the table's `eager`):
        # (the body, its application, the unit of the call), applied once that unit is traced.
        self.eager_bodies: list[tuple[Unit, Application, Unit]] = []
        # `jax.jit(obj.m)` with `obj` not `self`: what `obj` is needs the receivers' analysis
        # (`objects.instances.transformed_applies` resolves these sites).
        self.method_transforms: list[tuple[cst.Call, Unit]] = []
        # Sites whose function is a parameter of the unit they are in (`_forward_parameters`): (the site, the
        # parameter's Name, its unit, the substitutions it was met under); the site being resolved; and the
        # callers' arguments standing for parameters while a site is resolved again.
        self._parameter_leaves: list[tuple[tuple[cst.Call, Unit, int, str], cst.Name, Unit, dict, tuple]] = []
        self._resolving: tuple[cst.Call, Unit, int, str] | None = None
        self._substitutes: dict[int, tuple[cst.BaseExpression, Unit, int | None]] = {}
        # Notebook magics by line of the linted text (`%timeit f(x)`, `%%time`, `!pip`); empty for .py files.
        # Set by the engine from jaxlint.notebook; `jaxlint.notebook.magic_for(index, statement)` looks one up.
        self.magics: Mapping[int, Any] = {}
        self.notebook = False  # a notebook's joined cells (set by the engine): a program, never imported
        # Project mode: the `analysis.project.ModuleFacts` other modules give this one (set by the engine).
        self.project: Any = None
        # qualname() answers by (node, unit), kept once the index pass has read every import and binding
        # (nothing changes them after it): several rules ask for the same call's name. The node is kept in
        # the entry, so its id cannot be reused by another node while the entry lives. Keyed by the node
        # alone, with the unit in the entry: a node is asked about from one scope but for a few (a decorator),
        # and those answers are kept by (node, unit) in `_scoped` (no tuple key built on the hot path).
        self._qualnames: dict[int, tuple[cst.CSTNode, Unit | None, str | None]] | None = None
        self._scoped: dict[tuple[int, int, str], tuple[cst.CSTNode, Any]] = {}
        # resolve_function() answers by (node, unit, point), kept likewise: what it reads (defs, bindings, class
        # methods, the order numbers) is complete after the index pass, and rules, the flow walk, the key
        # dataflow and the summary ask for the same call's function in turn. Keyed by the node likewise, the
        # unit and point in the entry (another scope's or point's answers in `_other_points`).
        self._functions: dict[int, tuple[cst.CSTNode, Unit, int | None, list[tuple[Unit, bool]]]] = {}
        self._other_points: dict[
            tuple[int, int, int | None], tuple[cst.CSTNode, list[tuple[Unit, bool]]]
        ] = {}
        self._transforms: dict[int, tuple[cst.CSTNode, Unit, tuple[str, list[cst.Arg]] | None]] = {}
        # What the imports make of the function of every call the index pass saw (the whole module but a
        # class's PEP 695 type parameters), whatever the scope (`imports.qualname`, no local names): a name
        # resolved in a scope is either this or None, so a callee missing here is called nowhere.
        self.callee_names: frozenset[str] = frozenset()
        # Each site's callee as `qualname` names it in the site's unit, in the order of `_sites`.
        self.site_callees: list[str | None] = []
        self._index(module)
        self._scope_local_imports()
        self._qualnames = {}
        self._resolve_decorators()
        self._resolve_sites()

    def _scope_local_imports(self) -> None:
        """A function-local import binds in that function only: `import numpy as np` in a helper does not make
        the module's `np` (`import jax.numpy as np`) NumPy. The import table is one for the module, so a name
        some function imports differently from what the module (or another function) binds it to is given
        back its module-level meaning, and is a local name in the functions importing it, which their own
        table resolves (`ImportTable.scoped`)."""
        if not self._local_imports:
            return
        meanings: dict[str, set[str | None]] = {}
        for _, local, qualname in self._local_imports:
            meanings.setdefault(local, set()).add(qualname)
        module_level: dict[str, str | None] = {}
        for local in meanings:
            bindings = self.root.bindings.get(local)
            if bindings:
                # What the module binds it to: an import's meaning (read again from the import), else nothing.
                module_level[local] = self._module_meaning(local, bindings)
        for local, qualnames in meanings.items():
            if local not in module_level and len(qualnames) == 1:
                continue  # the name's one meaning: the table may keep it
            if module_level.get(local) is None:
                self.imports.names.pop(local, None)
            else:
                self.imports.names[local] = module_level[local]  # type: ignore[assignment]
        for unit, local, qualname in self._local_imports:
            if local in module_level or len(meanings[local]) > 1:
                unit.local_names.add(local)
                if qualname is not None:
                    self.imports.scoped.setdefault(id(unit.local_names), {})[local] = qualname

    def _module_meaning(self, local: str, bindings: list[Binding]) -> str | None:
        """The qualified name the module-level imports binding `local` give it (None when they disagree, or
        none is an import)."""
        table = ImportTable(self.imports.package)
        found: set[str | None] = set()
        for binding in bindings:
            node = binding.node
            if type(node) is cst.Import:
                table.add_import(node)
            elif type(node) is cst.ImportFrom:
                table.add_import_from(node)
            else:
                continue
            found.add(table.names.pop(local, None))
        return found.pop() if len(found) == 1 else None

    # -- the walk -------------------------------------------------------------------------------------

    def _index(self, module: cst.Module) -> None:
        # `class_node` is set only for statements directly in a class body: their defs are methods.
        # `in_class`: inside a class body (at any depth): what is bound there is a class attribute.
        # The stack holds nodes, and a `_Context` wherever the context changes: entering a def, a lambda, a
        # class or a class-body statement pushes the context to go back to after it (LIFO keeps it in order),
        # so the hot loop builds no tuple per node. The order is the one depth-first walk `order` counts in.
        # Nodes are `Any`: this hot loop tests `type(node) is X`, which the checker does not narrow on.
        stack: list[Any] = [module]
        unit: Unit = self.root
        class_node: cst.ClassDef | None = None
        in_class = False
        step, read, sites = _STEP, CHILDREN_REVERSED, self._sites
        seq = 0
        while stack:
            node = stack.pop()
            kind = type(node)
            what = step[kind]
            if what <= _NOTE:  # most nodes: one table lookup decides
                if what == _SKIP:  # a Name, a literal: nothing to note, nothing under it
                    continue
                seq += 1
                if what == _CALL:
                    sites.append((node, unit, seq))
                elif what == _NOTE:
                    self._seq = seq
                    self._note(node, unit, in_class)
                below = read[kind](node)
                if below:
                    if class_node is not None:  # a class-body statement: what is under it is not a method
                        stack.append(_Context(unit, class_node, in_class))
                        class_node = None
                    stack += below
                continue
            if what == _RESTORE:
                unit, class_node, in_class = node.unit, node.class_node, node.in_class
                continue
            seq += 1
            self._seq = seq
            if what == _FUNCTION:
                child = self._new_unit(node, unit, class_node)
                if kind is cst.FunctionDef and not in_class:
                    unit.bind(node.name.value, node, None, seq)
                stack.append(_Context(unit, class_node, in_class))
                unit, class_node, in_class = child, None, False
                stack += read[kind](node)
                continue
            # a class
            unit.local_names.add(node.name.value)
            if not in_class:
                unit.bind(node.name.value, node, None, seq)
            self.class_methods.setdefault(id(node), {})
            stack.append(_Context(unit, class_node, in_class))  # after the class
            stack.extend(reversed(node.body.body))
            stack.append(_Context(unit, node, True))  # its body, after the parts outside it:
            class_node = None
            stack.extend(reversed([*node.decorators, *node.bases, *node.keywords]))

    def _new_unit(self, node: FunctionNode, parent: Unit, class_node: cst.ClassDef | None) -> Unit:
        if type(node) is cst.FunctionDef:
            name = node.name.value
            if class_node is not None:
                prefix = (parent.qualname + ".<locals>." if parent.qualname else "") + class_node.name.value
                qualname = f"{prefix}.{name}"
            else:
                qualname = f"{parent.qualname}.<locals>.{name}" if parent.qualname else name
        else:
            name = "<lambda>"
            qualname = f"{parent.qualname}.<locals>.<lambda>" if parent.qualname else "<lambda>"
        unit = Unit(node, parent, qualname, class_node=class_node, order=self._seq)
        self.units[id(node)] = unit
        params = node.params
        for p in [*params.posonly_params, *params.params, *params.kwonly_params]:
            unit.local_names.add(p.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                unit.local_names.add(star.name.value)
        if type(node) is cst.FunctionDef:
            if class_node is not None:
                self.class_methods.setdefault(id(class_node), {}).setdefault(name, []).append(unit)
            else:
                parent.defs.setdefault(name, []).append(unit)
                parent.local_names.add(name)
            if node.decorators:
                self._decorated.append(unit)
        return unit

    def _note(self, node: cst.CSTNode, unit: Unit, in_class: bool) -> None:
        """Record what a node binds (bindings in class bodies are attributes, not the unit's); calls are recorded
        by the walk itself."""
        if type(node) is cst.Import or type(node) is cst.ImportFrom:
            if type(node) is cst.Import:
                self.imports.add_import(node)
            elif type(node) is cst.ImportFrom:
                self.imports.add_import_from(node)
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    local = import_binding(alias)
                    if unit is not self.root:
                        self._local_imports.append((unit, local, self.imports.names.get(local)))
                    if not in_class:
                        unit.bind(local, node, None, self._seq)
                    if type(node) is cst.Import and unit is not self.root:
                        unit.local_names.discard(
                            (alias.evaluated_alias or alias.evaluated_name).split(".")[0]
                        )
        elif type(node) is cst.Assign:
            for target in node.targets:
                names = bound_names(target.target)
                unit.local_names.update(names)
                if not in_class:
                    value = node.value if type(target.target) is cst.Name else None
                    for name in names:
                        unit.bind(name, node, value, self._seq)
                if unit is self.root and type(target.target) is cst.Name:
                    self.imports.add_module_assignment(target.target.value, node.value)
        elif (
            type(node) is cst.AugAssign
            or type(node) is cst.AnnAssign
            or type(node) is cst.For
            or type(node) is cst.NamedExpr
        ):
            names = bound_names(node.target)
            unit.local_names.update(names)
            if not in_class:
                value = node.value if type(node) is cst.AnnAssign and type(node.target) is cst.Name else None
                for name in names:
                    unit.bind(name, node, value, self._seq)
        elif type(node) is cst.WithItem:
            if type(node.item) is cst.Call:
                self.with_calls.append(node.item)
            if node.asname is not None:
                names = bound_names(node.asname.name)
                unit.local_names.update(names)
                if not in_class:
                    for name in names:
                        unit.bind(name, node, None, self._seq)
        elif (type(node) is cst.Global or type(node) is cst.Nonlocal) and not in_class:
            declared = unit.declared_globals if type(node) is cst.Global else unit.declared_nonlocals
            declared.update(n.name.value for n in node.names)

    @functools.cached_property
    def classes(self) -> dict[str, cst.ClassDef | None]:
        """The module's top-level classes by name (None for a name defined by two class statements)."""
        classes: dict[str, cst.ClassDef | None] = {}
        for statement in self.module.body:
            if type(statement) is cst.ClassDef:
                name = statement.name.value
                classes[name] = None if name in classes else statement
        return classes

    def release(self) -> None:
        """Break the index's reference cycles (a unit and its parent's `defs` point at each other) once nothing
        will read it again, so that reference counting frees the index and the tree it holds as soon as the
        last outside reference goes: the cyclic collector would otherwise traverse every node of the file
        (5% of a run's time; `tests/test_speed_equivalence.py` checks that a lint leaves no cycles)."""
        for unit in self.units.values():
            unit.parent = None
            unit.memo.clear()  # facts computed on first use may hold other units (a parameter's callers)
        self.root.memo.clear()
        self._functions.clear()
        self._other_points.clear()
        self._transforms.clear()
        self._scoped.clear()
        self.project = None  # project mode: the module's facts point back at the index

    # -- positions -------------------------------------------------------------------------------------

    def positions(self):
        """Line/column of nodes, computed only for the nodes asked about (`Positions`), shared by the module's users."""
        if self._positions is None:
            from .positions import Positions

            self._positions = Positions(self.module, self.statement_positions)
        return self._positions

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions()[node].start.line

    # -- resolution ------------------------------------------------------------------------------------

    def qualname(self, node: cst.BaseExpression, unit: Unit | None = None) -> str | None:
        own = unit if unit is not None and unit is not self.root else None
        memo = self._qualnames
        if memo is None:  # during the index pass: imports and bindings are still being read
            return self.imports.qualname(node, own.local_names if own is not None else frozenset())
        entry = memo.get(id(node))
        if entry is not None and entry[1] is own:
            return entry[2]
        if entry is not None:  # asked from another scope too
            return self._scoped_answer(node, own, "qualname")
        name = self.imports.qualname(node, own.local_names if own is not None else frozenset())
        memo[id(node)] = (node, own, name)
        return name

    def _scoped_answer(self, node: cst.BaseExpression, unit: Unit | None, what: str) -> Any:
        """`qualname` (unit None for the module) or `transform_of` of a node asked from a second scope."""
        key = (id(node), id(unit), what)
        entry = self._scoped.get(key)
        if entry is None:
            if what == "qualname":
                local: set[str] | frozenset[str] = unit.local_names if unit is not None else frozenset()
                entry = self._scoped[key] = (node, self.imports.qualname(node, local))
            else:
                assert unit is not None
                entry = self._scoped[key] = (node, self._transform_of(node, unit))
        return entry[1]

    def transform_of(self, node: cst.BaseExpression, unit: Unit) -> tuple[str, list[cst.Arg]] | None:
        """If `node` names a transformation (possibly through partial or an alias), its name and keywords. The
        answer is shared by every caller asking the same (kept as `resolve_function`'s): read it, never change it.
        """
        if self._qualnames is None:  # during the index pass
            return self._transform_of(node, unit)
        entry = self._transforms.get(id(node))
        if entry is not None and entry[1] is unit:
            return entry[2]
        if entry is not None:  # asked from another scope too
            return self._scoped_answer(node, unit, "transform_of")
        found = self._transform_of(node, unit)
        self._transforms[id(node)] = (node, unit, found)
        return found

    def _transform_of(self, node: cst.BaseExpression, unit: Unit) -> tuple[str, list[cst.Arg]] | None:
        # Type identity, not isinstance(): libcst's ABCs make a failed isinstance() slow (none is subclassed).
        if type(node) is cst.Call:
            inner = self.qualname(node.func, unit)
            if inner == PARTIAL and node.args and node.args[0].keyword is None:
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
        if type(node) is cst.Name and node.value in self.imports.partial_aliases:
            if node.value not in unit.local_names or unit is self.root:
                return self.transform_of(self.imports.partial_aliases[node.value], self.root)
        name = self.qualname(node, unit)
        if name is not None and self._is_transform_name(name):
            return self._canonical_transform(name), []
        if self.jit_decorators and dotted_name(node) in self.jit_decorators:
            return "jax.jit", []
        return None

    def _is_transform_name(self, name: str) -> bool:
        return name in TRANSFORMATIONS or name in self.jit_decorators

    @staticmethod
    def _canonical_transform(name: str) -> str:
        return name if name in TRANSFORMATIONS else "jax.jit"

    def resolve_function(
        self, node: cst.BaseExpression, unit: Unit, before: int | None = None
    ) -> list[tuple[Unit, bool]]:
        """Same-module functions that an expression names: [(unit, bound_self)]. The list is shared by every
        caller asking the same: read it, never change it.

        A name means the defs live at the point of the expression (`binding.definitions.named_defs`); `before` (the
        `order` of a statement of `unit`) gives that point, else a call's function or argument has its own.
        """
        if self._qualnames is None:  # during the index pass: the defs and bindings are still being read
            return self._resolve_function(node, unit, before)
        entry = self._functions.get(id(node))
        if entry is not None and entry[1] is unit and entry[2] == before:
            return entry[3]
        if entry is not None:  # asked from another scope or point too
            key = (id(node), id(unit), before)
            other = self._other_points.get(key)
            if other is None:
                other = self._other_points[key] = (node, self._resolve_function(node, unit, before))
            return other[1]
        found = self._resolve_function(node, unit, before)
        self._functions[id(node)] = (node, unit, before, found)
        return found

    def _resolve_function(
        self, node: cst.BaseExpression, unit: Unit, before: int | None
    ) -> list[tuple[Unit, bool]]:
        if type(node) is cst.Lambda:  # type identity: see transform_of
            found = self.units.get(id(node))
            return [(found, False)] if found else []
        if type(node) is cst.Name:
            found_defs = named_defs(self, node, unit, before)
            if not found_defs:
                found_defs = self._named_lambda(node.value, unit)
            return [(u, False) for u in found_defs]
        if (
            type(node) is cst.Attribute
            and type(node.value) is cst.Name
            and node.value.value in ("self", "cls")
        ):
            method_owner: Unit | None = unit
            while method_owner is not None and method_owner.class_node is None:
                method_owner = method_owner.parent
            if method_owner is None:
                return []
            methods = self.class_methods.get(id(method_owner.class_node), {}).get(node.attr.value, [])
            return [(m, True) for m in methods]
        return []

    def _named_lambda(self, name: str, unit: Unit) -> list[Unit]:
        """`g = lambda v: ...` (the name's only binding in the scope that binds it): calling `g` runs the
        lambda, as it would a def."""
        scope: Unit | None = unit
        while scope is not None:
            if name in scope.bindings:
                value = scope.single_assignment(name)
                found = self.units.get(id(value)) if type(value) is cst.Lambda else None
                return [found] if found is not None else []
            if name in scope.local_names and scope is not self.root:
                return []
            scope = scope.parent
        return []

    def sites_calling(self, name: str) -> list[tuple[cst.Call, Unit, int]]:
        """The calls `name(...)` of the module, in any scope, with their unit and place (built on first use)."""
        table = self.root.memo.get("sites_calling")
        if table is None:
            table = self.root.memo["sites_calling"] = {}
            for site in self._sites:
                func = site[0].func
                if type(func) is cst.Name:
                    table.setdefault(func.value, []).append(site)
        return table.get(name, [])

    def call_order(self, call: cst.Call) -> int | None:
        """The `order` of a call: how many units were defined before it in source order."""
        return self.node_order(call)

    def def_names(self) -> frozenset[str]:
        """The names of every def of the module, in any scope: a call of any other name runs no def of it
        (`resolve_function` finds only defs and lambdas). Built on first use."""
        found = self.root.memo.get("def_names")
        if found is None:
            found = self.root.memo["def_names"] = frozenset(
                unit.node.name.value for unit in self.units.values() if type(unit.node) is cst.FunctionDef
            )
        return found

    def node_order(self, node: cst.CSTNode) -> int | None:
        """The place in source order (a site's `order`) of a call, of its function or of one of its
        arguments; None for other nodes. One table, built on first use."""
        table = self.root.memo.get("node_order")
        if table is None:
            table = self.root.memo["node_order"] = {}
            for call, _, order in self._sites:
                table[id(call.func)] = order
                for arg in call.args:
                    table[id(arg.value)] = order
            for call, _, order in self._sites:  # a call passed as an argument keeps its own place
                table[id(call)] = order
        return table.get(id(node))

    def applications(self, node: cst.BaseExpression, unit: Unit) -> list[tuple[Unit, Application]]:
        """The same-module functions a transformation expression (`jax.jit(partial(f, a), ...)`) applies to."""
        return self._applications(node, unit, [], self.call_order(node) if type(node) is cst.Call else None)

    def _applications(
        self,
        node: cst.BaseExpression,
        unit: Unit,
        outer: list[tuple[str, list[cst.Arg]]],
        before: int | None = None,
    ) -> list[tuple[Unit, Application]]:
        """Unwrap `transform(transform(partial(f, a)))` down to the functions, with the combined effect."""
        if type(node) is cst.Call:
            callee = self.qualname(node.func, unit)
            if callee == PARTIAL and node.args and node.args[0].keyword is None:
                results = []
                if any(a.star for a in node.args[1:]):
                    return []  # `partial(f, *args, **kwargs)`: which parameters are bound is unknown
                positional = sum(1 for a in node.args[1:] if a.keyword is None)
                names = frozenset(a.keyword.value for a in node.args[1:] if a.keyword is not None)
                for target, app in self._applications(node.args[0].value, unit, outer, before):
                    app.bound_positional += positional
                    app.bound_names |= names
                    app.bound_keywords += tuple(
                        (a.keyword.value, a.value) for a in node.args[1:] if a.keyword
                    )
                    results.append((target, app))
                return results
            found = self.transform_of(node.func, unit)
            if found is not None and node.args and node.args[0].keyword is None:
                name, keywords = found
                return self._applications(
                    node.args[0].value, unit, [*outer, (name, [*keywords, *node.args[1:]])], before
                )
            return [
                (target, self._combine(outer, False)) for target in self._made_functions(node, unit, before)
            ]
        if type(node) is cst.Name and id(node) in self._substitutes:  # a parameter: what a caller passes
            node, unit, before = self._substitutes[id(node)]
            return self._applications(node, unit, outer, before)
        bound = self._bound_partial(node, unit, before) if type(node) is cst.Name else None
        if bound is not None:  # `f = partial(f, k=v)` before `lax.cond(p, f, ...)`
            return self._applications(bound[0], unit, outer, bound[1])
        results = []
        for target, bound_self in self.resolve_function(node, unit, before):
            results.append((target, self._combine(outer, bound_self)))
        if (
            not results
            and self._resolving is not None
            and type(node) is cst.Name
            and _passed_on(unit, node)
            and not _options_from_caller(unit, outer)
        ):
            self._parameter_leaves.append((self._resolving, node, unit, self._substitutes, tuple(outer)))
        return results

    def _made_functions(self, call: cst.Call, unit: Unit, before: int | None) -> list[Unit]:
        """`optax.sgd(make_schedule(0.1))`, `jax.jit(make_step(cfg))`: the functions a same-module factory
        returns, when its every `return` names a def (or lambda) nested in it; none otherwise."""
        made: list[Unit] = []
        for factory, bound in self.resolve_function(call.func, unit, before):
            if bound or type(factory.node) is not cst.FunctionDef:
                return []
            returns = [n for n in own_nodes(factory.node) if type(n) is cst.Return]
            if not returns or any(r.value is None for r in returns):
                return []
            for returned in returns:
                assert returned.value is not None
                targets = self.resolve_function(returned.value, factory)
                if not targets or any(t.parent is not factory or b for t, b in targets):
                    return []
                made.extend(t for t, _ in targets)
        return made

    def _bound_partial(self, node: cst.Name, unit: Unit, before: int | None) -> tuple[cst.Call, int] | None:
        """The `partial(...)` call that `node` holds at `before`, and the place of that binding: the last binding
        of the name in `unit` before that point is `name = partial(name, ...)` on a statement the body always
        runs. The partial's function is read at the binding: the def bound before it. (Another name bound to a
        partial, `g = partial(f, ...)`, is not followed yet: on the bench corpora it makes pmap/vmap reach
        methods whose other-module calls misalign an explicit `self`, see the fc-values note.)"""
        bindings = unit.bindings.get(node.value)
        if before is None or not bindings:
            return None
        earlier = [b for b in bindings if b.order < before]
        if not earlier:
            return None
        last = max(earlier, key=lambda b: b.order)
        value = last.value
        if (
            not last.plain
            or type(value) is not cst.Call
            or not value.args
            or not (type(value.args[0].value) is cst.Name and value.args[0].value.value == node.value)
            or self.qualname(value.func, unit) != PARTIAL
            or id(last.node) not in direct_statements(unit)
        ):
            return None
        return value, last.order

    @staticmethod
    def _combine(chain: list[tuple[str, list[cst.Arg]]], bound_self: bool) -> Application:
        """Transformations applied outermost first: the strictest decides the kind, and names the context."""
        kind = max((TRANSFORMATIONS[name].kind for name, _ in chain), default=NONE)
        label = next(
            (TRANSFORMATIONS[name].label for name, _ in chain if TRANSFORMATIONS[name].kind == kind), ""
        )
        spec = StaticSpec()
        for index, (name, keywords) in enumerate(chain):
            this = static_spec(keywords, name)
            spec = this if index == 0 else spec.merged(this)
        return Application(kind, label, spec, bound_self=bound_self)

    def _resolve_decorators(self) -> None:
        for unit in self._decorated:
            node = unit.node
            assert type(node) is cst.FunctionDef
            chain = []
            for decorator in node.decorators:  # outermost first, like a nested call
                found = self.transform_of(decorator.decorator, unit.parent or self.root)
                if found is not None:
                    chain.append(found)
            if chain:
                unit.apply(self._combine(chain, False))

    def _callees(self) -> list[str | None]:
        """Each site's callee as `qualname` names it in the site's unit, and `callee_names` (every name the
        imports make of a site's function in any scope): one import-table lookup per call serves both, since a
        scoped answer is the unscoped one unless a local name shadows its head (or a function-local import
        gives it its own meaning: `ImportTable.scoped`)."""
        anywhere, memo, root = self.imports.qualname, self._qualnames, self.root
        assert memo is not None  # the index pass is over
        names: set[str] = set()
        callees: list[str | None] = []
        scoped = self.imports.scoped
        for call, unit, _ in self._sites:
            func = call.func
            name = anywhere(func)
            if name is not None:
                names.add(name)
                if unit is not root and attribute_root(func) in unit.local_names:
                    name = None
            if scoped and unit is not root and id(unit.local_names) in scoped:
                name = anywhere(func, unit.local_names)  # a function-local import's meaning
                if name is not None:
                    names.add(name)
            memo.setdefault(id(func), (func, unit if unit is not root else None, name))
            callees.append(name)
        self.callee_names = frozenset(names)
        return callees

    def _resolve_sites(self) -> None:
        self.site_callees = self._callees()
        for (call, unit, order), callee in zip(self._sites, self.site_callees, strict=True):
            if callee is not None:
                self._resolving = (call, unit, order, callee)
                self._resolve_site(call, unit, order, callee)
        self._forward_parameters()
        self.promote_nested_transforms()

    def _resolve_site(self, call: cst.Call, unit: Unit, order: int, callee: str) -> None:
        """Apply what one call of a transformation, of control flow or of a tracing library does to the
        functions it is given."""
        if callee in CONTROL_FLOW:
            flow = CONTROL_FLOW[callee]
            for position, keyword in flow.bodies:
                found = argument(call, position, keyword)
                arg = found.value if found is not None else None
                if arg is None:
                    continue
                values = (
                    [e.value for e in arg.elements]
                    if (type(arg) is cst.List or type(arg) is cst.Tuple)
                    else [arg]
                )
                for value in values:
                    for target, app in self._applications(value, unit, [], order):
                        app.kind, app.label = STRICT, flow.label
                        if flow.eager:
                            self.eager_bodies.append((target, app, unit))
                        else:
                            target.apply(app)
        elif callee in TRACING_APIS:  # a library calling the user's function under its trace (library.py)
            api = TRACING_APIS[callee]
            if api.eager_keyword and written_false(argument(call, None, api.eager_keyword)):
                return  # `BFGS(fun, jit=False)`: the objective runs eagerly
            for position, keyword in api.traces:
                found = argument(call, position, keyword)
                if found is None:
                    continue
                options = [a for a in call.args if a is not found]
                for target, app in self._applications(found.value, unit, [], order):
                    target.apply(library_application(api, app, options))
                cls = self.classes.get(found.value.value) if type(found.value) is cst.Name else None
                for method in self.class_methods.get(id(cls), {}).get(api.method, []) if cls else []:
                    app = Application(STRICT, api.label, StaticSpec(), bound_self=not api.self_counted)
                    method.apply(library_application(api, app, options))
        elif callee in MODEL_ARGUMENT_TRACING:
            self._traced_model_arguments(call, unit, order, MODEL_ARGUMENT_TRACING[callee])
        elif callee in HOST_CALLBACKS:
            found = argument(call, 0, "callback")
            arg = found.value if found is not None else None
            while (  # `jax.debug.callback(partial(show, tag), x)`: the host function is inside
                type(arg) is cst.Call
                and self.qualname(arg.func, unit) == PARTIAL
                and arg.args
                and arg.args[0].keyword is None
            ):
                arg = arg.args[0].value
            if arg is not None:
                for target, _ in self.resolve_function(arg, unit):
                    target.apply(Application(HOST, "host callback", StaticSpec()))
        elif self.transform_of(call.func, unit) is not None or callee == PARTIAL:
            if callee == PARTIAL:
                return  # handled when the partial is the argument of a transformation
            applied = self._applications(call, unit, [], order)
            for target, app in applied:
                target.apply(app)
            first = call.args[0].value if not applied and call.args and call.args[0].keyword is None else None
            if (
                type(first) is cst.Attribute
                and (type(first.value) is cst.Call or type(first.value) is cst.Name)
                and not (type(first.value) is cst.Name and first.value.value in ("self", "cls"))
            ) or type(first) is cst.Name:
                # `jax.jit(model.step)`, `jax.jit(Model(...).step)`, `jax.vmap(fitness)` of a callable
                # instance: which class's method runs is `objects.instances._transformed_methods`' question.
                self.method_transforms.append((call, unit))

    def _traced_model_arguments(
        self, call: cst.Call, unit: Unit, order: int, driver: tuple[int, str, str]
    ) -> None:
        """`MCMC(NUTS(model), jit_model_args=True)` (library.py's MODEL_ARGUMENT_TRACING; the kernel built there
        or bound once to a name): the model's own parameters are tracers too."""
        position, keyword, option = driver
        flag = argument(call, None, option)
        kernel = argument(call, position, keyword)
        if (
            flag is None
            or kernel is None
            or not (type(flag.value) is cst.Name and flag.value.value == "True")
        ):
            return
        node = kernel.value
        if type(node) is cst.Name:
            owner = unit if node.value in unit.local_names else self.root
            node = owner.single_assignment(node.value) or node
        api = TRACING_APIS.get(self.qualname(node.func, unit) or "") if type(node) is cst.Call else None
        if api is None or api.params != PARAMS_CONCRETE:
            return
        assert type(node) is cst.Call
        traced = dataclasses.replace(api, params=PARAMS_TRACED)
        for at, name in api.traces:
            found = argument(node, at, name)
            if found is not None:
                for target, app in self._applications(found.value, unit, [], order):
                    target.apply(library_application(traced, app))

    def _forward_parameters(self) -> None:
        """`def run(f, x): return jax.jit(f)(x)`: a transformation (or control flow, or a tracing library)
        given a parameter applies to the functions the module's calls of `run` pass there, through any number
        of such helpers (`_applications` notes each parameter it meets; the site is resolved again with the
        caller's argument in its place)."""
        seen: set[tuple[int, int, int]] = set()
        rounds = 0
        while self._parameter_leaves and rounds < _FORWARD_DEPTH:
            rounds += 1
            leaves, self._parameter_leaves = self._parameter_leaves, []
            for (call, site_unit, order, callee), leaf, unit, substitutes, chain in leaves:
                if chain and unit.parent is self.root and not any(_options(*link) for link in chain):
                    unit.hands_on[leaf.value] = tuple(name for name, _ in chain)
                position, keyword = _parameter_slot(unit, leaf.value)
                for caller, caller_unit, caller_order in self.sites_calling(unit.name):
                    if (unit, False) not in self.resolve_function(caller.func, caller_unit, caller_order):
                        continue
                    found = argument(caller, position, keyword)
                    if found is None or found.star or (id(leaf), id(caller), id(call)) in seen:
                        continue
                    seen.add((id(leaf), id(caller), id(call)))
                    self._substitutes = {**substitutes, id(leaf): (found.value, caller_unit, caller_order)}
                    self._resolving = (call, site_unit, order, callee)
                    self._resolve_site(call, site_unit, order, callee)
        self._substitutes, self._resolving, self._parameter_leaves = {}, None, []

    def forward_imported(self, exports: Mapping[str, Any]) -> None:
        """`compiled(update, x)` with `compiled` another module's function that hands a parameter to a
        transformation (`Export.hands_on`, project mode): the transformation applies to what the call passes."""
        applied = False
        for (call, unit, order), callee in zip(self._sites, self.site_callees, strict=True):
            found = exports.get(callee) if callee is not None else None
            if found is None or not found.hands_on:
                continue
            for name, chain in found.hands_on:
                position = found.positional.index(name) if name in found.positional else None
                arg = argument(call, position, name)
                if arg is None or arg.star:
                    continue
                for target, app in self._applications(arg.value, unit, [(t, []) for t in chain], order):
                    target.apply(app)
                    applied = True
        if applied:
            self.promote_nested_transforms()

    def trace_eager_bodies(self, site: Unit) -> list[Unit]:
        """The flow walk found `site` traced (a helper called from jitted code): the eager control flow it
        calls traces its bodies (applied here, returned to be walked again)."""
        traced = [(body, app) for body, app, at in self.eager_bodies if at is site]
        if traced:
            self.eager_bodies = [entry for entry in self.eager_bodies if entry[2] is not site]
            for body, app in traced:
                body.apply(app)
        return [body for body, _ in traced]

    def promote_nested_transforms(self) -> None:
        """A transformation applied inside traced code runs under the outer trace too. Run again whenever
        units become traced after the index pass (`objects.instances.transformed_applies`: `jax.jit(model.apply)`).
        The body of eager control flow (`lax.associative_scan` outside any jit runs it on concrete arrays) is
        traced once the code calling it is."""
        if self.eager_bodies:
            waiting = []
            for body, app, site in self.eager_bodies:
                enclosing = site
                while enclosing.parent is not None and enclosing.kind == NONE:
                    enclosing = enclosing.parent
                if enclosing.kind == STRICT:
                    body.apply(app)
                else:
                    waiting.append((body, app, site))
            self.eager_bodies = waiting
        for unit in self.units.values():
            parent = unit.parent
            if unit.is_target and unit.kind in (GRAD,) and parent is not None:
                while parent is not None and parent.kind == NONE:
                    parent = parent.parent
                if parent is not None and parent.kind == STRICT:
                    # Under the outer trace the body is staged out; its undifferentiated arguments are
                    # tracers only where a caller passes tracers (the flow walk's call-site propagation).
                    unit.kind = STRICT


_FORWARD_DEPTH = 4  # helpers handing a function on to the transformation: `run` -> `fit` -> `jax.jit(f)`


def _passed_on(unit: Unit, name: cst.Name) -> bool:
    """Whether `name` is a plain parameter of the function `unit` (not `self`, not `*args`), never rebound by
    its body: what a call gives there is what the body hands on."""
    if type(unit.node) is not cst.FunctionDef or unit.is_method or name.value in unit.bindings:
        return False
    return _parameter_slot(unit, name.value) != (None, None)


def _options_from_caller(unit: Unit, chain: list[tuple[str, list[cst.Arg]]]) -> bool:
    """Whether a transformation's options come from the helper's caller (`jit(fn, *args, **kwargs)`,
    `jit(fn, static_argnums=static)`): what the caller passes may make any parameter static, so the helper's
    function is not handed on (numpyro's `maybe_jit(f, static_argnums=(0, 1))`). What a transformation that
    runs the function at once is given positionally (`jax.jvp(fn, (x,), (t,))`) is its input, not options."""
    names = parameter_names(unit.params) if chain else set()
    for link in chain:
        for arg in _options(*link):
            if arg.star or any(type(n) is cst.Name and n.value in names for n in walk(arg.value)):
                return True
    return False


def _options(transformation: str, args: list[cst.Arg]) -> list[cst.Arg]:
    """The options among what a transformation is given after its function: all of it, but the inputs of one
    that runs the function at once (`jax.jvp(fn, (x,), (t,))`: only its keywords)."""
    found = TRANSFORMATIONS.get(transformation)
    if found is not None and found.runs_at_once:
        return [a for a in args if a.keyword is not None]
    return args


def _parameter_slot(unit: Unit, name: str) -> tuple[int | None, str | None]:
    """Where a call passes parameter `name` of `unit`: (position or None, keyword or None)."""
    params = unit.params
    for position, param in enumerate([*params.posonly_params, *params.params]):
        if param.name.value == name:
            return position, (name if position >= len(params.posonly_params) else None)
    if any(param.name.value == name for param in params.kwonly_params):
        return None, name
    return None, None


def written_false(found: cst.Arg | None) -> bool:
    """An argument written as the literal False."""
    return found is not None and type(found.value) is cst.Name and found.value.value == "False"


_REASSIGNING = frozenset({cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For})
_VARYING = _REASSIGNING | {cst.NamedExpr, cst.FunctionDef, cst.ClassDef}
