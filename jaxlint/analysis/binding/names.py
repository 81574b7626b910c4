"""What does this name mean? Imports and aliases resolved to qualified names, in one pass.

`import jax.numpy as jnp` makes `jnp.zeros` mean `jax.numpy.zeros`; `from jax import random as jr` makes
`jr.split` mean `jax.random.split`; builtins resolve to `builtins.print` unless the module rebinds the name.
Module-level aliases (`jit = jax.jit`, `my_jit = partial(jax.jit, static_argnums=0)`) are recorded too: the
second is kept as the call node so transform detection can unwrap it.
"""

from __future__ import annotations

import builtins
import functools

import libcst as cst

from ...syntax import dotted_name
from ..semantics.library import PARTIAL
from ..semantics.spellings import CANONICAL_PREFIXES

_BUILTINS = frozenset(dir(builtins))

# Names that are the same thing under two spellings (the library table's).
_CANONICAL_PREFIXES = CANONICAL_PREFIXES


@functools.lru_cache(maxsize=4096)  # asked for every resolved name; few distinct names per run
def canonical(qualname: str) -> str:
    for prefix, replacement in _CANONICAL_PREFIXES:
        if qualname == prefix or qualname.startswith(prefix + "."):
            return replacement + qualname[len(prefix) :]
    return qualname


class ImportTable:
    """Local names bound by imports (anywhere in the module) and module-level aliases."""

    def __init__(self, package: str | None = None) -> None:
        # The dotted package the module belongs to (project mode: `analysis.project.package_name`); relative
        # imports resolve against it, and stay unresolved without it (one file, the flake8 plugin).
        self.package = package
        self.names: dict[str, str] = {}
        self.rebound: set[str] = set()  # module-level names that shadow builtins
        self.partial_aliases: dict[str, cst.Call] = {}  # `my_jit = partial(jax.jit, ...)`
        # Imports inside a function that give a name another meaning than the module's (`import numpy as np`
        # in a helper of a module whose `np` is jax.numpy): by the id of the function's local names (the set
        # `qualname` is given), name -> qualified name. The name is local there (`ModuleIndex`).
        self.scoped: dict[int, dict[str, str]] = {}
        self.mentions_jax = False

    def add_import(self, node: cst.Import) -> None:
        if type(node.names) is cst.ImportStar:
            return
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                self._bind(alias.asname.name.value, full)
            else:
                # `import jax.numpy` binds `jax`, and `jax.numpy.x` then resolves through it.
                top = full.split(".")[0]
                self._bind(top, top)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module) if node.module is not None else None
        if node.relative:
            module = self.relative_module(len(node.relative), module)
            relative = True
        else:
            relative = False
        if module is None:
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                local = alias.asname.name.value
            if relative:
                # A project's own module: not canonicalised, and no sign by itself that the module uses JAX.
                self.names[local] = f"{module}.{name}"
            else:
                self._bind(local, f"{module}.{name}")

    def relative_module(self, level: int, module: str | None) -> str | None:
        """`from ..x import y` (level 2, "x") in package "pkg.sub" -> "pkg.x"; None without a package, past
        the top package, or into a package named `jax` (a project's `jax` folder is not the library)."""
        if not self.package or level < 1:
            return None
        parts = self.package.split(".")
        if level - 1 >= len(parts):
            return None
        base = parts[: len(parts) - (level - 1)]
        if module:
            base.append(module)
        if base[0] == "jax":
            return None
        return ".".join(base)

    def _bind(self, local: str, qualname: str) -> None:
        qualname = canonical(qualname)
        self.names[local] = qualname
        if qualname.split(".")[0] in ("jax", "equinox", "flax", "optax", "chex", "jaxtyping"):
            self.mentions_jax = True

    def add_module_assignment(self, target: str, value: cst.BaseExpression) -> None:
        """`jit = jax.jit` or `my_jit = partial(jax.jit, ...)` at module level."""
        if type(value) is cst.Name or type(value) is cst.Attribute:
            resolved = self.qualname(value)
            if resolved is not None and resolved.split(".")[0] in ("jax", "equinox", "flax"):
                self.names[target] = resolved
                return
        if type(value) is cst.Call and self.qualname(value.func) == PARTIAL:
            first = value.args[0].value if value.args else None
            if not (type(first) is cst.Name and first.value == target):  # `f = partial(f, ...)`: no loop
                self.partial_aliases[target] = value
            return
        if target in _BUILTINS:
            self.rebound.add(target)

    def qualname(
        self, node: cst.BaseExpression, local_names: frozenset[str] | set[str] = frozenset()
    ) -> str | None:
        """The qualified name `node` refers to, or None when it is not an imported or builtin name.

        `local_names` are names bound in the enclosing function: they shadow imports and builtins.
        """
        # The chain's head decides most answers (`self.x`, a local): the dotted text is built only for an import.
        root = node
        while type(root) is cst.Attribute:  # type identity: libcst's ABCs make isinstance() slow
            root = root.value
        if type(root) is not cst.Name:
            return None
        head = root.value
        if head in local_names:
            scoped = self.scoped.get(id(local_names)) if self.scoped else None
            base = scoped.get(head) if scoped is not None else None
            if base is None:
                return None
        else:
            base = self.names.get(head)
        if root is node:
            if base is None and head in _BUILTINS and head not in self.rebound:
                return "builtins." + head
            return base
        if base is None:
            return None
        dotted = dotted_name(node)
        assert dotted is not None
        return canonical(f"{base}.{dotted.partition('.')[2]}")
