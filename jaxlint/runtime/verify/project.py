"""How the child imports a file: its dotted module name and the sys.path entries that make it importable
the way the project itself imports it (package-relative imports included)."""

from __future__ import annotations

import dataclasses
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class ModuleLocation:
    path: Path  # resolved file
    name: str  # dotted module name, e.g. "pkg.sub.mod"
    search_path: tuple[str, ...]  # put first on the child's sys.path, in this order


def locate_module(path: Path, root: Path) -> ModuleLocation:
    """Walk up from the file while folders are packages (have __init__.py): the first folder that is not
    is the import root. The project root (and its src/) come after it, for absolute imports of the
    project's other packages."""
    path = path.resolve()
    parts = [path.stem] if path.name != "__init__.py" else []
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    search = [str(folder)]
    root = root.resolve()
    for extra in (root, root / "src"):
        if extra.is_dir() and str(extra) not in search:
            search.append(str(extra))
    return ModuleLocation(path, ".".join(parts) or path.parent.name, tuple(search))


def example_keys(location: ModuleLocation, root: Path) -> tuple[str, ...]:
    """Prefixes under which the user may declare examples for this module: `pkg.mod:` or `path/to/mod.py:`."""
    keys = [location.name]
    try:
        keys.append(location.path.relative_to(root.resolve()).as_posix())
    except ValueError:
        pass
    return tuple(keys)
