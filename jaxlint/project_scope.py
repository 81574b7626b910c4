"""Which files give the named ones their facts: their project, narrowed to the modules linked to them by
imports, so that `jaxlint model.py` (pre-commit's one changed file) reads its neighbours, not a whole
monorepo, and finds exactly what `jaxlint .` finds for it.

- The project (`project_root`): the folder of the pyproject.toml the settings come from, when the file is
  inside it; else the nearest folder up holding a pyproject.toml, setup.py, setup.cfg or .git; else the
  folder a loose script sits in, of which only the modules importable beside it are read (its own source
  files and its packages), never every folder below a download folder or /tmp.
- The narrowing (`_linked`): facts cross from one module to another only along a qualified name that one
  module's imports give the other (`analysis.project`: calls, exports, classes, re-exports). Each file's
  import statements are read with a regular expression, never parsed, and resolved as the summaries
  resolve them, generously: `import a.b` links every module under `a` (attribute access reaches them), a
  string or comment that looks like an import links too. A file with no JAX word links by its imports too
  (a package's re-exports; a module importing an analysed one is analysed: `silent_importers`); one with
  neither carries no facts and links nothing. The named files and everything linked to them,
  in either direction and transitively, are linted; every file of the project still names the modules
  (`ProjectIndex`: ambiguous names, the project's top-level names), so the facts are the whole project's.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping, Sequence

from .analysis.project import module_name
from .config import Config
from .files import SOURCE_SUFFIXES, discover
from .selection import PREFILTER_WORDS

# What marks a project's top folder when no [tool.jaxlint] says where it is.
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_FROM = re.compile(r"\bfrom\s+(\.*[\w.]*)\s+import\s+(\([^)]*\)|[^\n#;]*)")
_IMPORT = re.compile(r"(?<![\w.])import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)")
_NAME = re.compile(r"\w+")
_PREFIX = "\0package:"  # a graph node standing for every module under a dotted prefix (no path starts so)


@dataclasses.dataclass(frozen=True)
class Scope:
    """`lint`: the files to lint (the named ones first, then those linked to them); `index`: every module of
    their projects, which names the modules as a whole-project run names them."""

    lint: list[str]
    index: list[str]


def project_root(path: str, config: Config) -> str:
    """The folder whose modules give `path` its facts (see the module's doc)."""
    return project_of(path, config)[0]


def project_of(path: str, config: Config) -> tuple[str, bool]:
    """`project_root`, and whether it is a project's (searched whole) or a loose script's folder."""
    absolute = os.path.abspath(path)
    if config.root is not None:
        root = os.path.abspath(config.root)
        if absolute.startswith(root.rstrip(os.sep) + os.sep):
            return root, True
    folder = os.path.dirname(absolute)
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in _PROJECT_MARKERS):
            return folder, True
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    folder = os.path.dirname(absolute)
    while os.path.isfile(os.path.join(folder, "__init__.py")) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder, False


def _importable_beside(folder: str) -> list[str]:
    """A loose script's neighbours: the folder's own source files and its packages (folders holding an
    `__init__.py`), which `import name` reaches from a script run there."""
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            if entry.is_file() and entry.name.endswith(SOURCE_SUFFIXES):
                found.append(entry.path)
            elif entry.is_dir(follow_symlinks=False) and os.path.isfile(
                os.path.join(entry.path, "__init__.py")
            ):
                found.append(entry.path)
        except OSError:
            continue
    return found


def project_files(named: Sequence[str], config: Config, given: Sequence[str] = ()) -> list[str]:
    """The named files and every other file of their projects, each once, named ones as named. `given`
    (the paths a face was given) spares the search when a given folder holds a whole project."""
    absolute = {os.path.abspath(path): path for path in named}
    by_folder: dict[str, tuple[str, bool]] = {}  # a file list names many files of few folders
    for path in named:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in by_folder:
            by_folder[folder] = project_of(path, config)
    covering = [os.path.abspath(path) for path in given if os.path.isdir(path)]
    files = list(named)
    for root, whole in sorted(set(by_folder.values())):
        if any(root == folder or root.startswith(folder.rstrip(os.sep) + os.sep) for folder in covering):
            continue  # a given folder holds this project: its files are all named already
        search = [root] if whole else _importable_beside(root)
        for found in discover(search, config, force_exclude=True):
            if os.path.abspath(found) not in absolute:
                absolute[os.path.abspath(found)] = found
                files.append(found)
    return files


def project_scope(
    named: Sequence[str], config: Config, given: Sequence[str] = (), texts: Mapping[str, str] | None = None
) -> Scope:
    """The files that give `named` their facts (see the module's doc); `texts` (absolute path -> text) stand
    for those files' contents on disk (an editor's unsaved buffers)."""
    files = project_files(named, config, given)
    if len(files) == len(named):
        return Scope(files, files)
    return Scope(linked(named, links(files, config, texts)), files)


def links(files: list[str], config: Config, texts: Mapping[str, str] | None = None) -> dict[str, set[str]]:
    """path -> the project files its imports name or that name it (both ways: facts flow both ways)."""
    words = (*PREFILTER_WORDS, *(name.rsplit(".", 1)[-1] for name in config.jit_decorators))
    names: dict[str, str] = {}  # dotted module name -> path
    under: dict[str, list[str]] = {}  # _PREFIX + dotted prefix -> paths of the modules below it
    own: dict[str, str | None] = {path: module_name(path) for path in files}
    for path in files:
        name = own[path]
        if name is not None:
            _name(names, under, name, path)
            parts = name.split(".")
            for end in range(1, len(parts)):
                under.setdefault(_PREFIX + ".".join(parts[:end]), []).append(path)
    found: dict[str, set[str]] = {path: set() for path in files}
    for path in files:
        text = texts.get(os.path.abspath(path)) if texts else None
        text = _read(path) if text is None else text
        if text is None:
            continue
        if "import" not in text and not any(word in text for word in words):
            continue  # never linted: no summary, no facts either way
        # A file with no JAX word is linked by its imports: a package's re-exports, and a module importing an
        # analysed one is analysed too (`silent_importers`).
        for target in _imported(text, path, own[path], names, under):
            if target == path:
                continue
            if target not in found:  # a package prefix: one node linked to every module below it
                found[target] = set(under[target])
                for below in under[target]:
                    found[below].add(target)
            found[path].add(target)
            found[target].add(path)
    return found


def silent_importers(
    candidates: Iterable[str],
    analysed: Iterable[str],
    modules: Iterable[str],
    config: Config,
    texts: Mapping[str, str] | None = None,
) -> list[str]:
    """The `candidates` the engine's prefilter skips (no JAX word) whose import statements name an `analysed`
    module (of the project's `modules`): what they call there with (`step(x, True)` of a jitted `step`, an
    instance of a project class) can change its findings, and what they time or log with its functions theirs,
    so they are analysed after all (issue 26: the prefilter skips only files nothing analysed depends on)."""
    words = (*PREFILTER_WORDS, *(name.rsplit(".", 1)[-1] for name in config.jit_decorators))
    targets = set(analysed)
    if not targets:
        return []
    names: dict[str, str] = {}
    under: dict[str, list[str]] = {}
    own: dict[str, str | None] = {}
    for path in modules:
        name = own[path] = module_name(path)
        if name is not None:
            _name(names, under, name, path)
            parts = name.split(".")
            for end in range(1, len(parts)):
                under.setdefault(_PREFIX + ".".join(parts[:end]), []).append(path)
    found = []
    for path in candidates:
        text = texts.get(os.path.abspath(path)) if texts else None
        text = _read(path) if text is None else text
        if text is None or "import" not in text or any(word in text for word in words):
            continue  # analysed already (or names nothing)
        package = own[path] if path in own else module_name(path)
        for target in _imported(text, path, package, names, under):
            if target in targets or any(p in targets for p in under.get(target, ())):
                found.append(path)
                break
    return found


def _name(names: dict[str, str], under: dict[str, list[str]], name: str, path: str) -> None:
    """Record the module `name` at `path`; a name two roots give (`a/data/x.py`, `b/data/x.py`) becomes one
    node linked to each (the summaries resolve it by the importer's root: `ProjectIndex`)."""
    known = names.get(name)
    if known is None:
        names[name] = path
        return
    node = _PREFIX + "=" + name  # no dotted prefix starts with "="
    if known != node:
        under[node] = [known]
        names[name] = node
    under[node].append(path)


def linked(named: Sequence[str], graph: dict[str, set[str]]) -> list[str]:
    """The named files and every file `graph` links to them, transitively (a closed set: each file in it
    gets the facts a whole-project run gives it), named ones first."""
    seen = dict.fromkeys(named)
    todo = list(named)
    while todo:
        for other in graph.get(todo.pop(), ()):
            if other not in seen:
                seen[other] = None
                todo.append(other)
    return [path for path in seen if not path.startswith(_PREFIX)]


def _read(path: str) -> str | None:
    """The file's text; a notebook's code, its cells' sources joined (its JSON escapes the line ends that
    the import patterns need)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    if path.endswith(".ipynb"):
        import json

        try:
            document = json.loads(text)
            cells = document.get("cells") or [  # nbformat 3 keeps them in worksheets, as "input"
                c
                for w in document.get("worksheets") or []
                if isinstance(w, dict)
                for c in w.get("cells") or []
            ]
            sources = [cell.get("source", cell.get("input", "")) for cell in cells if isinstance(cell, dict)]
            return "\n".join("".join(s) if isinstance(s, list) else str(s) for s in sources)
        except (ValueError, AttributeError, TypeError, RecursionError):
            return text
    return text


def _package(path: str, name: str | None) -> str:
    """`analysis.project.package_name` from the module's name, already known."""
    if name is None:
        return ""
    return name if os.path.basename(path) == "__init__.py" else name.rpartition(".")[0]


def _imported(
    text: str, path: str, own: str | None, names: dict[str, str], under: dict[str, list[str]]
) -> Iterable[str]:
    """The project files (or `_PREFIX` nodes) `text`'s import statements can name, generously."""
    package = _package(path, own)
    for statement in _import_lines(text):
        for match in _FROM.finditer(statement):
            origin = _absolute(match.group(1), package)
            if origin is None:
                continue
            if origin in names:
                yield names[origin]
            for imported in _NAME.findall(match.group(2)):
                full = f"{origin}.{imported}" if origin else imported
                if full in names:
                    yield names[full]
                if _PREFIX + full in under:
                    yield _PREFIX + full
        for match in _IMPORT.finditer(statement):
            for item in match.group(1).split(","):
                head = item.split()[0].split(".")[0] if item.split() else ""
                if head in names:
                    yield names[head]
                if _PREFIX + head in under:  # `import a.b` binds `a`: any module under it can be reached
                    yield _PREFIX + head


def _import_lines(text: str) -> Iterable[str]:
    """Each line holding the word `import`, run on to the closing parenthesis of `from x import (...)`:
    the regular expressions then read a few lines, not the whole text."""
    at = text.find("import")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        opened = text.find("(", at, end)
        if opened != -1 and text.find(")", opened, end) == -1:
            closed = text.find(")", opened)
            end = len(text) if closed == -1 else closed + 1
        yield text[start:end]
        at = text.find("import", end)


def _absolute(origin: str, package: str) -> str | None:
    """`from .m import x` in package `p.q` -> "p.q.m"; None when the dots climb above the top."""
    dots = len(origin) - len(origin.lstrip("."))
    if not dots:
        return origin
    parts = package.split(".") if package else []
    if dots - 1 > len(parts):
        return None
    base = parts[: len(parts) - (dots - 1)]
    rest = origin[dots:]
    return ".".join([*base, rest] if rest else base)
