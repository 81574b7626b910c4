"""x64 enabled by what a module imports (class R of the fresh code, chronax): a project module that runs
`jax.config.update("jax_enable_x64", True)` at import time enables x64 for every module importing it, directly
or through other project modules (a package's `__init__.py` re-exporting it, as `from pkg.models import ETS`
does), before the importer's own code runs. JAX501/JAX503 then leave the importer alone.

Read from the files, as `project.packages_enable_x64` reads the enclosing packages' `__init__.py`, so that a
file linted alone knows it too: the module-level imports (statements at the start of a line; one inside a
function, a `try` or an `if` is not followed, so an x64 it enables stays unknown and the findings stay) that
resolve to files next to the importer, and in them the top-level statements outside a `def`, a `class` and an
`if __name__ == "__main__"` block (which do not run on import). At most `_LIMIT` files are followed.
"""

from __future__ import annotations

import os
import re

from ..bounded_read import read_regular_file
from .project import _init_mentions_x64, import_root, packages_enable_x64

_READ_LIMIT = 1 << 20  # a module larger than this is not read
_LIMIT = 64  # project modules followed from one importer
_ROOTS_UP = 2  # folders above the importer's root where an absolute import's package may lie

_IMPORT = re.compile(
    r"^(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([^\n#)]*)|import[ \t]+([^\n#;]*))", re.M
)

# file -> ((mtime, size), enables x64 at import, imports: (dots, module, names))
_MEMO: dict[str, tuple[tuple[int, int], bool, tuple[tuple[int, str, tuple[str, ...]], ...]]] = {}


def x64_on_import(path: str) -> bool:
    """Whether importing the module at `path` enables x64 before its own code runs: an enclosing package's
    `__init__.py` does (`packages_enable_x64`), or a project module it imports at module level does, through
    any chain of such imports (the imported modules' packages' `__init__.py` included)."""
    if not path.endswith(".py"):
        return False
    if packages_enable_x64(path):
        return True
    own = os.path.abspath(path)
    facts = _facts(own)
    if facts is None or not facts[2]:
        return False
    seen = {own}
    queue = [f for f in _targets(own, facts[2]) if f not in seen]
    while queue and len(seen) <= _LIMIT:
        file = queue.pop(0)
        if file in seen:
            continue
        seen.add(file)
        found = _facts(file)
        if found is None:
            continue
        if found[1]:
            return True
        queue.extend(f for f in _targets(file, found[2]) if f not in seen)
    return False


def _facts(file: str) -> tuple[tuple[int, int], bool, tuple[tuple[int, str, tuple[str, ...]], ...]] | None:
    try:
        info = os.stat(file)
    except OSError:
        return None
    stamp = (info.st_mtime_ns, info.st_size)
    memo = _MEMO.get(file)
    if memo is not None and memo[0] == stamp:
        return memo
    data = read_regular_file(file, _READ_LIMIT)
    text = data.decode("utf-8", "replace") if data is not None else ""
    if os.path.basename(file) == "__init__.py":
        enables = _init_mentions_x64(file)
    else:
        enables = "enable_x64" in text.lower() and _enables_at_import(text)
    imports: list[tuple[int, str, tuple[str, ...]]] = []
    for match in _IMPORT.finditer(text):
        dots, module, names, plain = match.groups()
        if plain is not None:  # `import a.b as c, d`
            for part in plain.split(","):
                name = part.split()[0] if part.split() else ""
                imports.append((0, name, ()))
        else:
            listed = tuple(p.split()[0] for p in names.split(",") if p.split())
            imports.append((len(dots), module, listed))
    facts = (stamp, enables, tuple((d, m, n) for d, m, n in imports if m or d))
    _MEMO[file] = facts
    return facts


def _enables_at_import(text: str) -> bool:
    """Whether a top-level statement that runs on import mentions enabling x64."""
    import libcst as cst

    from .values.x64 import is_main_guard, mentions_x64

    try:
        module = cst.parse_module(text)
    except Exception:  # bad input never crashes: a module that does not parse says nothing
        return False
    for statement in module.body:
        if type(statement) in (cst.FunctionDef, cst.ClassDef) or is_main_guard(statement):
            continue
        if mentions_x64(statement):
            return True
    return False


def _targets(importer: str, imports: tuple[tuple[int, str, tuple[str, ...]], ...]) -> list[str]:
    """The project files that importing these modules runs: each dotted prefix's `__init__.py` or module, and
    for `from m import n` the submodule `m.n` when there is one."""
    out: list[str] = []
    for dots, module, names in imports:
        base: str | None
        if dots:
            base = os.path.dirname(importer)
            for _ in range(dots - 1):
                base = os.path.dirname(base)
            parts = [p for p in module.split(".") if p]
        else:
            parts = module.split(".")
            base = _root_holding(importer, parts[0]) if parts and parts[0].isidentifier() else None
            if base is None:
                continue
        folder = _walk(base, parts, out)
        if folder is None or not os.path.isdir(folder):
            continue
        for name in names:
            file = _module_file(folder, name) if name.isidentifier() else None
            if file is not None:
                out.append(file)
    return out


def _walk(folder: str, parts: list[str], out: list[str]) -> str | None:
    """Each dotted prefix's file into `out`; the folder of the last part, None when one is missing."""
    for part in parts:
        file = _module_file(folder, part)
        if file is None:
            return None
        out.append(file)
        folder = os.path.join(folder, part)
    return folder


def _module_file(folder: str, name: str) -> str | None:
    init = os.path.join(folder, name, "__init__.py")
    if os.path.isfile(init):
        return init
    module = os.path.join(folder, name + ".py")
    return module if os.path.isfile(module) else None


def _root_holding(importer: str, head: str) -> str | None:
    """The folder an absolute import's first name resolves from: the importer's import root, or one of the
    `_ROOTS_UP` folders above it (a `tests/` folder importing the package next to it), where `head` is a
    package or a module."""
    folder = import_root(importer)
    for _ in range(_ROOTS_UP + 1):
        if _module_file(folder, head) is not None:
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None
