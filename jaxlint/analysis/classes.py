"""Facts about the module's classes: hashability, methods that set up state, pytree registration by name.

The module's class table is `ModuleIndex.classes`. A full pytree model (registrations, flax/equinox bases)
is being built in `analysis/pytrees.py`; the sets here are the ones the rules used so far, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ..syntax import bound_names
from .index import ModuleIndex, Unit
from .library import LINEN_MODULE_BASES

# Methods that build the object: an object built inside the trace does not outlive it.
CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__", "setup", "__setstate__"})
# Methods that set up state before any jitted call can see it.
SETUP_METHODS = frozenset({"__init__", "__post_init__", "__new__", "setup", "__setstate__", "__set_name__"})
# Methods that make a class a pytree (or let its subclasses register themselves).
PYTREE_METHODS = frozenset({"tree_flatten", "tree_unflatten", "tree_flatten_with_keys", "__init_subclass__"})
# Classes whose instances are pytrees (rebuilt from leaves inside a transformation) or whose state
# mutation a transformation tracks itself (flax.nnx).
PYTREE_DECORATORS = frozenset(
    {
        "jax.tree_util.register_pytree_node_class",
        "jax.tree_util.register_dataclass",
        "flax.struct.dataclass",
        "chex.dataclass",
    }
)
PYTREE_BASES = ("equinox.Module", "flax.struct.PyTreeNode", "flax.nnx.", "flax.experimental.nnx.")


def unhashable_class(cls: cst.ClassDef, index: ModuleIndex) -> str | None:
    """Why instances of `cls` are unhashable: a plain `@dataclass` (eq without frozen/unsafe_hash sets
    `__hash__` to None), or `__eq__` defined without `__hash__`; None when they are (or may be) hashable."""
    body_names = set()
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef):
            body_names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        body_names.update(bound_names(target.target))
    if "__hash__" in body_names:
        return None
    if not cls.decorators:
        return "a class that defines __eq__ without __hash__" if "__eq__" in body_names else None
    if len(cls.decorators) != 1:
        return None  # a registration or another decorator may decide hashing
    expr = cls.decorators[0].decorator
    call = expr if isinstance(expr, cst.Call) else None
    if index.qualname(call.func if call is not None else expr) != "dataclasses.dataclass":
        return None  # flax.struct.dataclass, chex.dataclass, ...: not the stdlib's rules
    for arg in call.args if call is not None else ():
        if arg.keyword is None:
            return None
        literal = arg.value.value if isinstance(arg.value, cst.Name) else None
        key = arg.keyword.value
        if key in ("frozen", "unsafe_hash") and literal != "False":
            return None
        if key == "eq" and literal != "True":
            return None
    return "a non-frozen dataclass"


# -- flax.linen Module classes, across modules ------------------------------------------------------------

LINEN = "linen"  # a flax.linen Module class: `init` draws its parameters from a key, `apply` runs a method
# Methods whose calls on an instance depend on what the class is (project mode sends the class facts only to
# modules calling them).
MODULE_METHODS = frozenset({"init", "init_with_output", "apply"})


def top_level_class_facts(
    index: ModuleIndex, project_name: Callable[[str], bool]
) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, kind, imported bases) for the module's top-level classes that are flax.linen Modules, or whose
    bases (directly or through the module's own classes) include classes imported from other project modules
    (`project_name` says which qualified names those are): what another module needs to know their kind."""
    out = []
    for name, node in index.classes.items():
        if node is None:
            continue
        kind, bases = _local_kind(index, node, project_name, 0)
        if kind or bases:
            out.append((name, kind, tuple(sorted(bases))))
    return sorted(out)


def _local_kind(
    index: ModuleIndex, node: cst.ClassDef, project_name: Callable[[str], bool], depth: int
) -> tuple[str, set[str]]:
    imported: set[str] = set()
    for base in node.bases:
        if base.keyword is not None:
            continue
        qualname = index.qualname(base.value)
        if qualname in LINEN_MODULE_BASES:
            return LINEN, set()
        if isinstance(base.value, cst.Name) and qualname is None and depth < _MAX_DEPTH:
            parent = index.classes.get(base.value.value)
            if parent is not None and parent is not node:
                kind, more = _local_kind(index, parent, project_name, depth + 1)
                if kind:
                    return kind, set()
                imported |= more
        elif qualname is not None and project_name(qualname):
            imported.add(qualname)
    return "", imported


def module_class_kind(index: ModuleIndex, func: cst.BaseExpression, unit: Unit | None = None) -> str | None:
    """What class `func` in `func(...)` builds: LINEN for a flax.linen Module class of this module (directly
    or through its own or imported project bases) or one imported from another project module (project mode:
    `index.project` holds the kinds the other modules' summaries give); None when unknown."""
    project = index.project
    known = project.classes if project is not None else {}
    if isinstance(func, cst.Name):
        in_function = unit is not None and unit is not index.root and func.value in unit.local_names
        node = None if in_function else index.classes.get(func.value)
        if node is not None:
            kind, bases = _local_kind(index, node, lambda q: q in known, 0)
            if kind or any(known.get(q) == LINEN for q in bases):
                return LINEN
            return None
    qualname = index.qualname(func, unit)
    return known.get(qualname) if qualname is not None else None


_MAX_DEPTH = 8
