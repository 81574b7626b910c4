"""Which classes of a module are pytrees, and which of their fields are static (aux data, never traced).

A transformation traces the leaves of a pytree argument but hands its static fields through as the Python
values they are: `if state.config.use_dropout:` on a `field(pytree_node=False)` is ordinary Python. Every
library spells "static" its own way; `semantics/library.py` lists them and this module reads a module's classes with
that table:

- dataclass-style pytrees (`flax.struct.dataclass`/`PyTreeNode`, `equinox.Module`, the decorator form of
  `jax.tree_util.register_dataclass`): a field is static when its default is a static field constructor
  (`flax.struct.field(pytree_node=False)`, `eqx.field(static=True)`, `dataclasses.field(metadata=...)` with
  `pytree_node=False` or `static=True`) or a project helper that returns one (`def static_field(**kw):
  return field(pytree_node=False, **kw)`, `static_field = partial(field, pytree_node=False)`);
- `register_dataclass(Cls, data_fields=[...], meta_fields=[...])`: the lists say it;
- `register_pytree_node_class` / `register_pytree_node(Cls, flatten, unflatten)` /
  `register_pytree_with_keys(Cls, flatten_with_keys, ...)`: attributes read into the second element that the
  flatten function (a def, a lambda or `Cls.method`) returns are static, those in the first are children;
- `register_static`: the whole instance is static; `NamedTuple`, `chex.dataclass`: every field is a child;
- `flax.linen.Module`: dataclass fields are hyperparameters, static under `apply`.

Classes are found at module level (and in top-level `if`/`try` blocks), computed once per module on first use,
and kept by definition: a class defined twice is two classes, and a function's annotation names the one defined
before it. In project mode a module's summary gives its pytree classes' fields (`pytree_kind`), and the modules
importing them read them as their own (`ProjectIndex.classes`).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import libcst as cst

from ..binding.names import ImportTable, dotted_name
from ..kinds import PYTREE, STATIC_FIELD
from ..semantics.library import (
    ALL_DATA,
    ALL_STATIC,
    ARRAY_ANNOTATIONS,
    CLASS_VAR,
    CONCRETE_ATTRIBUTES,
    DATACLASS,
    FIELD_CALLBACKS,
    FIELD_FUNCTIONS,
    FIELD_LIST_KEYWORDS,
    FIELDS,
    FLATTEN,
    FUNCTION_LEAF_CLASSES,
    LIBRARY_PYTREES,
    LINEN_MODULE_BASES,
    PARTIAL,
    PROPERTIES,
    PYTREE_BASES,
    PYTREE_DECORATORS,
    PYTREE_FLATTEN_REGISTRATIONS,
    REGISTER_DATACLASS,
    STATIC_FIELD_ANNOTATIONS,
    STATIC_FIELD_WORDS,
    STATIC_METADATA,
)

_CALLABLE = frozenset({"typing.Callable", "collections.abc.Callable"})
# Annotations of array fields (`ArrayLike` admits Python scalars, which compare fine).
_ARRAY_TYPES = frozenset(ARRAY_ANNOTATIONS) - {"ArrayLike"}
# Annotations of unhashable containers -> what they hold.
_UNHASHABLE_TYPES = {
    "dict": "a dict",
    "Dict": "a dict",
    "list": "a list",
    "List": "a list",
    "set": "a set",
    "Set": "a set",
}
# Namespaces whose attributes a field is given as functions (`activation: Callable = jax.nn.relu`).
_FUNCTION_NAMESPACES = ("jax.nn.", "jax.numpy.", "jax.lax.", "jax.scipy.")
# A class that is no pytree, known for its class attributes only (an abstract base declaring `ClassVar`s).
PLAIN = "plain"


@dataclasses.dataclass
class PytreeClass:
    """A class whose instances are pytrees (or flax.linen modules), with what is known of its fields."""

    name: str
    how: str  # library.FIELDS / FLATTEN / ALL_STATIC / ALL_DATA, or "linen"
    static: set[str] = dataclasses.field(default_factory=set)
    data: set[str] = dataclasses.field(default_factory=set)
    field_types: dict[str, str] = dataclasses.field(default_factory=dict)  # field -> annotated class name
    # Data fields (leaves, not static) that hold a Python function, directly or in a pytree they hold:
    # field -> what holds it ("a function", "'MaxPool2d'"). A transformation reading every leaf as an array
    # (jax.jit, grad, a lax carry) raises TypeError on an instance.
    function_fields: dict[str, str] = dataclasses.field(default_factory=dict)
    # Static fields annotated as arrays (`data: jax.Array = eqx.field(static=True)`): aux data a compiled
    # function's cache compares by `==` with another instance's, which raises ValueError for arrays.
    array_static: set[str] = dataclasses.field(default_factory=set)
    # Fields annotated as a dict, list or set: the dataclass hash of a `FIELDS` class (an eqx.Module, a
    # flax.struct dataclass: frozen, hashed by their fields) raises TypeError on an instance.
    unhashable_fields: dict[str, str] = dataclasses.field(default_factory=dict)
    array_fields: set[str] = dataclasses.field(default_factory=set)  # ... and those annotated as arrays

    def is_static(self, field: str) -> bool | None:
        """True (static), False (a child: traced with the pytree), None (not a field we know)."""
        if self.how == ALL_STATIC or self.how == "linen":
            return True
        if field in self.static:
            return True
        if field in self.data:
            return False
        return None


class PytreeModel:
    """The pytree classes of one module, by definition: a class defined twice is two classes, and a use sees
    the definition that precedes its top-level statement (`class_named(name, at)`)."""

    def __init__(
        self, module: cst.Module, imports: ImportTable, project_classes: Mapping[str, str] | None = None
    ) -> None:
        self.imports = imports
        # Project mode: the other modules' pytree classes this one imports, by local name (`pytree_kind`).
        self._imported: dict[str, PytreeClass] = {}
        for local, qualname in imports.names.items():
            imported = from_kind(local, (project_classes or {}).get(qualname, ""))
            if imported is not None:
                self._imported[local] = imported
        # ... and those of the project modules it imports whole, by the dotted name it reads (`jaxlie.SO2`).
        self._imported_dotted: dict[str, PytreeClass] = {}
        modules = {qualname: local for local, qualname in imports.names.items()}
        for qualname, kind in (project_classes or {}).items():
            owner, _, name = qualname.rpartition(".")
            imported = from_kind(name, kind) if owner in modules else None
            if imported is not None:
                self._imported_dotted[f"{modules[owner]}.{name}"] = imported
        self.classes: dict[str, PytreeClass] = {}  # by name: the last definition read so far
        self.by_node: dict[int, PytreeClass] = {}  # by the id of the ClassDef
        self._defined: dict[str, list[tuple[int, PytreeClass]]] = {}  # name -> (ordinal, class), in order
        self._order: dict[int, int] = {}  # id of a top-level statement -> its ordinal
        self._static_makers: set[str] = set()  # local functions/aliases that return a static field
        self._functions: set[str] = set()  # module-level defs
        # ... and the other project modules' ones, by qualified name (project mode: `STATIC_FIELD` kinds).
        self._project_makers = frozenset(
            q for q, kind in (project_classes or {}).items() if kind == STATIC_FIELD
        )
        self._read(module)
        static: set[str] = set()
        data: set[str] = set()
        for cls in [*self.by_node.values(), *self._imported.values(), *self._imported_dotted.values()]:
            if cls.how in (FIELDS, FLATTEN, ALL_DATA):
                static |= cls.static
                data |= cls.data
        # Static in some class of the module and a child in none: static wherever it is read.
        self.static_names = frozenset(static - data)

    # -- queries ---------------------------------------------------------------------------------------

    @property
    def static_makers(self) -> frozenset[str]:
        """The module-level functions and aliases that make a static field (`def static_field(): ...`)."""
        return frozenset(self._static_makers)

    def class_named(self, name: str | None, at: int | None = None) -> PytreeClass | None:
        """The class a name gives (a local definition, else a library's pytree); with `at`, the ordinal of the
        top-level statement that reads the name (`ordinal`), the local definition that precedes it."""
        if name is None:
            return None
        defined = self._defined.get(name)
        if defined:
            if at is not None:
                before = [cls for ordinal, cls in defined if ordinal < at]
                if before:
                    return before[-1]
            return defined[-1][1]
        if name in self._imported:
            return self._imported[name]
        qualname = self.imports.names.get(name)
        if qualname in LIBRARY_PYTREES:
            static, data = LIBRARY_PYTREES[qualname]
            return PytreeClass(name, FIELDS, set(static), set(data))
        return None

    def class_of_annotation(
        self, annotation: cst.BaseExpression, at: int | None = None
    ) -> PytreeClass | None:
        """The class an annotation names: `mod.State` of a project module imported whole, else by its head."""
        if isinstance(annotation, cst.Attribute):
            found = self._imported_dotted.get(dotted_name(annotation) or "")
            if found is not None:
                return found
        return self.class_named(annotation_head(annotation), at)

    def field_is_static(self, field: str, owner: PytreeClass | None) -> bool:
        """Whether reading `field` from a pytree (of class `owner`, when known) gives a Python value."""
        if owner is not None:
            known = owner.is_static(field)
            if known is not None:
                return known
        return field in self.static_names

    def field_class(self, owner: PytreeClass | None, field: str, at: int | None = None) -> PytreeClass | None:
        if owner is None:
            return None
        return self.class_named(owner.field_types.get(field), at)

    def ordinal(self, node: cst.CSTNode | None) -> int | None:
        """The ordinal of a top-level def or class statement (None for any other node)."""
        return None if node is None else self._order.get(id(node))

    # -- reading the module ----------------------------------------------------------------------------

    def _read(self, module: cst.Module) -> None:
        statements = list(_top_level(module.body))
        self._order = {id(statement): ordinal for ordinal, statement in enumerate(statements)}
        for statement in statements:
            if isinstance(statement, cst.FunctionDef):
                self._functions.add(statement.name.value)
                self._note_helper(statement)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if (
                        isinstance(small, cst.Assign)
                        and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)
                        and self._makes_static_field(small.value)
                    ):
                        self._static_makers.add(small.targets[0].target.value)
        # Helpers calling helpers: a few rounds reach the fixed point.
        for _ in range(3):
            before = len(self._static_makers)
            for statement in statements:
                if isinstance(statement, cst.FunctionDef):
                    self._note_helper(statement)
            if len(self._static_makers) == before:
                break
        for statement in statements:
            if isinstance(statement, cst.ClassDef):
                self._read_class(statement)
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    call = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
                    if isinstance(call, cst.Call):
                        self._read_registration(call, statements, self._order[id(statement)])

    def _qualname(self, node: cst.BaseExpression) -> str | None:
        return self.imports.qualname(node)

    def _note_helper(self, function: cst.FunctionDef) -> None:
        """`def static_field(**kw): return field(pytree_node=False, **kw)`: a static field maker."""
        returns = [s for s in _own_statements(function.body) if isinstance(s, cst.Return) and s.value]
        if returns and all(self._makes_static_field(r.value) for r in returns):  # type: ignore[arg-type]
            self._static_makers.add(function.name.value)

    def _makes_static_field(self, value: cst.BaseExpression) -> bool:
        """A call that makes a static dataclass field (`partial(field, pytree_node=False)` counts)."""
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Name) and func.value in self._static_makers:
            return True
        name = self._qualname(func)
        if name in self._project_makers:
            return True
        if name in FIELD_CALLBACKS:
            keyword, callback = FIELD_CALLBACKS[name]
            return any(
                arg.keyword is not None
                and arg.keyword.value == keyword
                and isinstance(arg.value, (cst.List, cst.Tuple))
                and any(self._qualname(e.value) == callback for e in arg.value.elements)
                for arg in value.args
            )
        if name == PARTIAL and value.args and value.args[0].keyword is None:
            inner = cst.Call(func=value.args[0].value, args=value.args[1:])
            return self._makes_static_field(inner)
        if name in FIELD_FUNCTIONS:
            keyword, static_value = FIELD_FUNCTIONS[name]
            if not keyword:
                return True
            for arg in value.args:
                if arg.keyword is None or arg.keyword.value != keyword:
                    continue
                if keyword == "metadata":
                    return _static_metadata(arg.value)
                return _bool_literal(arg.value) is static_value
            return False
        # An imported helper we cannot read, named for what it makes.
        # (Relative imports do not resolve, so the spelling decides.)
        dotted = dotted_name(func) or ""
        return dotted.rsplit(".", 1)[-1] in STATIC_FIELD_WORDS

    def _read_class(self, node: cst.ClassDef, how: str | None = None) -> PytreeClass | None:
        """Read a pytree class; `how` is given when a registration call after the class makes it one."""
        decorator_call: cst.Call | None = None
        for decorator in node.decorators:
            expression = decorator.decorator
            func = expression.func if isinstance(expression, cst.Call) else expression
            name = self._qualname(func)
            if name == PARTIAL and isinstance(expression, cst.Call) and expression.args:
                name = self._qualname(expression.args[0].value)
            if name in PYTREE_DECORATORS:
                how = how or PYTREE_DECORATORS[name]
                if isinstance(expression, cst.Call):
                    decorator_call = expression
        parent: PytreeClass | None = None
        for base in node.bases:
            name = self._qualname(base.value)
            if name in PYTREE_BASES:
                how = how or PYTREE_BASES[name]
            elif name in LINEN_MODULE_BASES:
                how = how or "linen"
            elif (known := self._base_class(base.value)) is not None:
                parent = known
                if parent.how != PLAIN:
                    how = how or parent.how
        if (
            how is None
            and (
                self._own_decorator(node)
                or any(b.keyword is None and self._base_class(b.value) is None for b in node.bases)
            )
            and _declares_static_field(node, self._makes_static_field)
        ):
            # A project's own dataclass decorator (`from jax_md import dataclasses`) or pytree base class, seen
            # through the static fields it declares: nobody declares static fields except in a pytree.
            how = FIELDS
        if how is None and (_class_variables(node) or parent is not None):
            # Not a pytree, but its class attributes are Python values on every instance (a pytree subclass's
            # too): `g.dim` with `g: Group` and `dim: ClassVar[int]` declared on the abstract base.
            how = PLAIN
        if how is None:
            return None
        cls = PytreeClass(node.name.value, how)
        if parent is not None:
            cls.static |= parent.static
            cls.data |= parent.data
            cls.field_types.update(parent.field_types)
            cls.function_fields.update(parent.function_fields)
            cls.array_static |= parent.array_static
            cls.unhashable_fields.update(parent.unhashable_fields)
            cls.array_fields |= parent.array_fields
        self.classes[cls.name] = cls
        self.by_node[id(node)] = cls
        self._defined.setdefault(cls.name, []).append((self._order.get(id(node), -1), cls))
        self._defined[cls.name].sort(key=lambda pair: pair[0])
        if how == FLATTEN:
            for statement in node.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value in (
                    "tree_flatten",
                    "tree_flatten_with_keys",
                ):
                    self._read_flatten(statement, cls)
            return cls
        for field in _class_variables(node):
            # A class attribute (`dim: ClassVar[int] = 2`, or `dim = 2` in the body) is no dataclass field and
            # no leaf: the class holds it, and every instance reads the same Python value.
            cls.static.add(field)
            cls.data.discard(field)
        for statement in node.body.body:
            if not isinstance(statement, cst.SimpleStatementLine) or how == PLAIN:
                continue
            for small in statement.body:
                if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                    continue
                annotation = small.annotation.annotation
                if annotation_head(annotation) == CLASS_VAR:
                    continue
                field = small.target.value
                wrapped = self._static_annotation(annotation)
                type_name = annotation_head(wrapped if wrapped is not None else annotation)
                if type_name is not None:
                    cls.field_types[field] = type_name
                static = how == "linen" or (
                    how == FIELDS
                    and (
                        wrapped is not None
                        or small.value is not None
                        and self._makes_static_field(small.value)
                    )
                )
                (cls.static if static else cls.data).add(field)
                (cls.data if static else cls.static).discard(field)
                if static and how != "linen" and type_name in _ARRAY_TYPES:
                    cls.array_static.add(field)
                else:
                    cls.array_static.discard(field)
                if how == FIELDS and type_name in _ARRAY_TYPES:
                    cls.array_fields.add(field)
                else:
                    cls.array_fields.discard(field)
                if how == FIELDS and type_name in _UNHASHABLE_TYPES:
                    cls.unhashable_fields[field] = _UNHASHABLE_TYPES[type_name]
                else:
                    cls.unhashable_fields.pop(field, None)
        if decorator_call is not None:
            self._read_field_lists(decorator_call.args, cls)
        self._read_properties(node, cls)
        if how in (FIELDS, ALL_DATA):
            self._read_function_fields(node, cls)
        return cls

    def _read_function_fields(self, node: cst.ClassDef, cls: PytreeClass) -> None:
        """The data fields that hold a Python function: annotated with a library class holding one
        (`pool: eqx.nn.MaxPool2d`) or with a class of this module holding one, or annotated `Callable` and
        given a function (a default, or `self.act = jax.nn.relu` in `__init__`)."""
        assigned = _init_assignments(node)
        for statement in node.body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                    continue
                field = small.target.value
                if field not in cls.data:
                    cls.function_fields.pop(field, None)  # static here: no leaf
                    continue
                annotation = small.annotation.annotation
                head = annotation.value if isinstance(annotation, cst.Subscript) else annotation
                qualname = self._qualname(head)
                if qualname in FUNCTION_LEAF_CLASSES:
                    cls.function_fields[field] = f"a '{qualname.rsplit('.', 1)[-1]}'"
                    continue
                held = (
                    self.classes.get(head.value) if isinstance(head, cst.Name) and qualname is None else None
                )
                if held is not None and held is not cls and held.function_fields:
                    cls.function_fields[field] = f"a '{held.name}'"
                    continue
                if qualname in _CALLABLE:
                    given = [v for v in (small.value, assigned.get(field)) if v is not None]
                    if given and all(self._function_reference(v) for v in given):
                        cls.function_fields[field] = "a function"

    def _function_reference(self, value: cst.BaseExpression) -> bool:
        """A lambda, a module-level def, or a function of jax's namespaces (`jax.nn.relu`)."""
        if isinstance(value, cst.Lambda):
            return True
        qualname = self._qualname(value)
        if qualname is None:
            return isinstance(value, cst.Name) and value.value in self._functions
        return qualname.startswith(_FUNCTION_NAMESPACES)

    def _static_annotation(self, annotation: cst.BaseExpression) -> cst.BaseExpression | None:
        """The wrapped type of an annotation that marks a field static (`jdc.Static[int]`: `int`), else None."""
        if isinstance(annotation, cst.SimpleString) and isinstance(annotation.evaluated_value, str):
            try:  # a quoted annotation
                annotation = cst.parse_expression(annotation.evaluated_value)
            except cst.ParserSyntaxError:
                return None
        if (
            isinstance(annotation, cst.Subscript)
            and self._qualname(annotation.value) in STATIC_FIELD_ANNOTATIONS
            and annotation.slice
            and isinstance(annotation.slice[0].slice, cst.Index)
        ):
            return annotation.slice[0].slice.value
        return None

    def _base_class(self, base: cst.BaseExpression) -> PytreeClass | None:
        """A base class known here: one of this module's read so far (classes are read in order), or another
        project module's (project mode)."""
        if isinstance(base, cst.Name):
            return self.classes.get(base.value) or self._imported.get(base.value)
        if isinstance(base, cst.Attribute):
            return self._imported_dotted.get(dotted_name(base) or "")
        return None

    def _own_decorator(self, node: cst.ClassDef) -> bool:
        """A decorator other than the standard library's `dataclass` (which makes no pytree by itself)."""
        return any(
            self._qualname(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
            != DATACLASS
            for d in node.decorators
        )

    def _read_properties(self, node: cst.ClassDef, cls: PytreeClass) -> None:
        """`@property def depth(self): return len(self.sizes)` over static fields only is static too."""
        for statement in node.body.body:
            if not isinstance(statement, cst.FunctionDef) or not statement.params.params:
                continue
            if not any(self._qualname(d.decorator) in PROPERTIES for d in statement.decorators):
                continue
            owner = statement.params.params[0].name.value
            returns = [
                s.value for s in _own_statements(statement.body) if isinstance(s, cst.Return) and s.value
            ]
            # `self.params.shape[-1]`: a shape is static even of a leaf.
            reads = set().union(*(_attributes_of(r, owner, CONCRETE_ATTRIBUTES) for r in returns))
            # A JAX call makes an array (a tracer under jit) even from static inputs.
            if returns and reads <= cls.static and not any(self._calls_jax(r) for r in returns):
                cls.static.add(statement.name.value)

    def _calls_jax(self, node: cst.BaseExpression) -> bool:
        stack: list[cst.CSTNode] = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Call) and (self._qualname(current.func) or "").startswith("jax."):
                return True
            stack.extend(current.children)
        return False

    def _read_field_lists(self, args: Sequence[cst.Arg], cls: PytreeClass) -> None:
        """`register_dataclass(..., data_fields=[...], meta_fields=[...])`."""
        for arg in args:
            if arg.keyword is None or arg.keyword.value not in FIELD_LIST_KEYWORDS:
                continue
            names = _string_list(arg.value)
            if names is None:
                continue
            target, other = (
                (cls.data, cls.static)
                if arg.keyword.value == FIELD_LIST_KEYWORDS[0]
                else (cls.static, cls.data)
            )
            target |= names
            other -= names

    def _read_registration(self, call: cst.Call, statements: list[cst.CSTNode], at: int) -> None:
        """Module-level `register_dataclass(Cls, ...)`, `register_pytree_node(Cls, flatten, unflatten)`...:
        of the class defined before the call (`at`: the call's statement ordinal)."""
        name = self._qualname(call.func)
        flattens = PYTREE_FLATTEN_REGISTRATIONS.get(name or "")
        if name not in PYTREE_DECORATORS and flattens is None:
            return
        positional = [a.value for a in call.args if a.keyword is None]
        if not positional or not isinstance(positional[0], cst.Name) or any(a.star for a in call.args):
            return
        class_name = positional[0].value
        node = next(
            (
                s
                for s in reversed(statements[:at])
                if isinstance(s, cst.ClassDef) and s.name.value == class_name
            ),
            None,
        )
        if node is None:
            return
        cls = self.by_node.get(id(node))
        if (
            cls is None or cls.how == PLAIN
        ):  # read as a plain class so far: its class attributes may be leaves
            cls = self._read_class(node, FLATTEN if flattens is not None else PYTREE_DECORATORS[name or ""])
            if cls is None:
                return
        if name == REGISTER_DATACLASS:
            self._read_field_lists(call.args, cls)
        if flattens is None:
            return
        cls.how = FLATTEN
        for position, keyword in flattens:
            value = next((a.value for a in call.args if a.keyword and a.keyword.value == keyword), None)
            if value is None and position < len(positional):
                value = positional[position]
            function = self._flatten_function(value, statements[:at], node)
            if function is not None:
                self._read_flatten(function, cls)

    def _flatten_function(
        self, value: cst.BaseExpression | None, statements: list[cst.CSTNode], owner: cst.ClassDef
    ) -> cst.FunctionDef | cst.Lambda | None:
        """The flatten function a registration names: a lambda, a def before it, or `Cls.method`."""
        if isinstance(value, cst.Lambda):
            return value
        if isinstance(value, cst.Name):
            return next(
                (
                    s
                    for s in reversed(statements)
                    if isinstance(s, cst.FunctionDef) and s.name.value == value.value
                ),
                None,
            )
        if (
            isinstance(value, cst.Attribute)
            and isinstance(value.value, cst.Name)
            and value.value.value == owner.name.value
        ):
            return next(
                (
                    s
                    for s in owner.body.body
                    if isinstance(s, cst.FunctionDef) and s.name.value == value.attr.value
                ),
                None,
            )
        return None

    def _read_flatten(self, function: cst.FunctionDef | cst.Lambda, cls: PytreeClass) -> None:
        """Fields read into the aux data that a flatten function returns are static; the rest are children."""
        params = [*function.params.posonly_params, *function.params.params]
        if not params:
            return
        owner = params[0].name.value
        assigned: dict[str, cst.BaseExpression] = {}
        body = function.body
        returned = [cst.Return(body)] if isinstance(body, cst.BaseExpression) else _own_statements(body)
        for statement in returned:
            if (
                isinstance(statement, cst.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0].target, cst.Name)
            ):
                assigned[statement.targets[0].target.value] = statement.value
            if not isinstance(statement, cst.Return) or statement.value is None:
                continue
            value = statement.value
            if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != 2:
                continue
            children, aux = (assigned.get(_name(e.value), e.value) for e in value.elements)
            cls.data |= _attributes_of(children, owner)
            cls.static |= _attributes_of(aux, owner) - cls.data


# -- across modules (project mode) -------------------------------------------------------------------------


def pytree_kind(cls: PytreeClass) -> str:
    """The kind a module's summary gives its pytree class (`kinds.PYTREE`); "" for a linen Module or a plain
    class with no class attribute. A dataclass-style pytree with no field yet is sent too: the modules deriving
    from it (a project's own `Module(eqx.Module)` base) know their classes are pytrees by it."""
    if cls.how not in (FIELDS, FLATTEN, ALL_DATA, ALL_STATIC, PLAIN) or (cls.how == PLAIN and not cls.static):
        return ""
    static = cls.static if cls.how != ALL_STATIC else {"*"}
    kind = f"{PYTREE}:{','.join(sorted(static))}:{','.join(sorted(cls.data))}"
    return kind + f":{PLAIN}" if cls.how == PLAIN else kind


def from_kind(name: str, kind: str) -> PytreeClass | None:
    """The class another module's summary describes (`pytree_kind`), or None for any other kind."""
    parts = kind.split(":")
    if len(parts) not in (3, 4) or parts[0] != PYTREE or parts[3:] not in ([], [PLAIN]):
        return None
    static, data = ({f for f in part.split(",") if f} for part in parts[1:3])
    if static == {"*"}:
        return PytreeClass(name, ALL_STATIC)
    return PytreeClass(name, PLAIN if parts[3:] else FIELDS, static, data)


# -- helpers ------------------------------------------------------------------------------------------


def _top_level(body: Any) -> Iterator[cst.CSTNode]:
    """Module-level statements, looking into `if`/`try` blocks (version and optional-import guards), in source
    order. A work list, not recursion: an `elif` chain of thousands of branches nests as deep."""
    pending: list[Any] = [iter(body)]
    while pending:
        statement = next(pending[-1], None)
        if statement is None:
            pending.pop()
        elif isinstance(statement, cst.If):
            blocks = [statement.body.body]
            if statement.orelse is not None:
                orelse = statement.orelse
                blocks.append([orelse] if isinstance(orelse, cst.If) else orelse.body.body)
            pending.extend(iter(b) for b in reversed(blocks))
        elif isinstance(statement, cst.Try):
            blocks = [statement.body.body, *(h.body.body for h in statement.handlers)]
            pending.extend(iter(b) for b in reversed(blocks))
        else:
            yield statement


def _own_statements(body: cst.BaseSuite) -> Iterator[cst.BaseSmallStatement | cst.BaseCompoundStatement]:
    """The simple statements of a function body, nested blocks included, nested functions excluded."""
    stack: list[Any] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.SimpleStatementLine):
            yield from node.body
        elif isinstance(node, cst.SimpleStatementSuite):
            yield from node.body
        elif isinstance(node, cst.IndentedBlock):
            stack.extend(reversed(node.body))
        elif isinstance(node, cst.BaseCompoundStatement):
            for attribute in ("body", "orelse", "finalbody"):
                part = getattr(node, attribute, None)
                if isinstance(part, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                    stack.append(part)
                elif part is not None and hasattr(part, "body"):
                    stack.append(part if isinstance(part, cst.BaseCompoundStatement) else part.body)
            for handler in getattr(node, "handlers", ()):
                stack.append(handler.body)


def _class_variables(node: cst.ClassDef) -> set[str]:
    """The class attributes a class body declares: `dim: ClassVar[int]` (with or without a value) and plain
    assignments `dim = 2` (a dataclass makes fields of annotated names only)."""
    found: set[str] = set()
    for statement in node.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                if annotation_head(small.annotation.annotation) == CLASS_VAR:
                    found.add(small.target.value)
            elif isinstance(small, cst.Assign):
                found.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
    return found


def _init_assignments(node: cst.ClassDef) -> dict[str, cst.BaseExpression]:
    """`self.<field> = value` in the class's `__init__` (a field assigned twice: left out)."""
    init = next(
        (s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None
    )
    if init is None or not init.params.params:
        return {}
    owner = init.params.params[0].name.value
    found: dict[str, cst.BaseExpression] = {}
    twice: set[str] = set()
    for statement in _own_statements(init.body):
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0].target
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == owner
        ):
            name = target.attr.value
            if name in found:
                twice.add(name)
            found[name] = statement.value
    return {name: value for name, value in found.items() if name not in twice}


def _declares_static_field(node: cst.ClassDef, makes_static: Any) -> bool:
    """Whether a class body annotates a field with a static-field maker (`x: int = static_field()`)."""
    for statement in node.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.AnnAssign) and small.value is not None and makes_static(small.value):
                    return True
    return False


def _name(node: cst.BaseExpression) -> str:
    return node.value if isinstance(node, cst.Name) else ""


def _attributes_of(node: cst.BaseExpression, owner: str, through: frozenset[str] = frozenset()) -> set[str]:
    """`owner.<attr>` reads anywhere inside `node`, except those read only for one of `through`
    (`owner.params.shape`)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if (
            isinstance(current, cst.Attribute)
            and current.attr.value in through
            and isinstance(current.value, cst.Attribute)
            and isinstance(current.value.value, cst.Name)
            and current.value.value.value == owner
        ):
            continue
        if (
            isinstance(current, cst.Attribute)
            and isinstance(current.value, cst.Name)
            and current.value.value == owner
        ):
            found.add(current.attr.value)
            continue
        stack.extend(current.children)
    return found


def annotation_head(node: cst.BaseExpression) -> str | None:
    """`State` for `State`, `mod.State`, `Optional[State]`, `"State"`; `ClassVar` for `ClassVar[int]`."""
    if isinstance(node, cst.Subscript):
        head = annotation_head(node.value)
        if head == "Optional" and node.slice and isinstance(node.slice[0].slice, cst.Index):
            return annotation_head(node.slice[0].slice.value)
        return head
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        return node.evaluated_value.split("[")[0].split(".")[-1] or None
    return None


def _bool_literal(node: cst.BaseExpression) -> bool | None:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _static_metadata(node: cst.BaseExpression) -> bool:
    """`{"pytree_node": False}` or `dict(static=True)`: metadata that marks a field static."""
    pairs: list[tuple[str, cst.BaseExpression]] = []
    if isinstance(node, cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                key = element.key.evaluated_value
                if isinstance(key, str):
                    pairs.append((key, element.value))
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict":
        pairs = [(a.keyword.value, a.value) for a in node.args if a.keyword is not None]
    return any(
        key in STATIC_METADATA and _bool_literal(value) is STATIC_METADATA[key] for key, value in pairs
    )


def _string_list(node: cst.BaseExpression) -> set[str] | None:
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    out = set()
    for element in node.elements:
        value = element.value
        if not isinstance(value, cst.SimpleString) or not isinstance(value.evaluated_value, str):
            return None
        out.add(value.evaluated_value)
    return out


# -- one model per module, on first use ------------------------------------------------------------------

_MODELS: weakref.WeakKeyDictionary[Any, PytreeModel] = weakref.WeakKeyDictionary()


def pytree_model(index: Any) -> PytreeModel:
    """The pytree model of a ModuleIndex (anything with `.module`, `.imports` and `.project`), computed once."""
    model = _MODELS.get(index)
    if model is None:
        project = getattr(index, "project", None)
        classes = project.classes if project is not None else None
        model = _MODELS[index] = PytreeModel(index.module, index.imports, classes)
    return model
