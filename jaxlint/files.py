"""Which files to lint: paths given, folders searched recursively, excludes and .gitignore honoured."""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from .config import Config

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


class _GitIgnore:
    """Enough of .gitignore: globs, `dir/`, `/anchored`, `!negation`, one file per folder."""

    def __init__(self, folder: Path, lines: list[str]) -> None:
        self.folder = folder
        self.patterns: list[tuple[str, bool, bool, bool]] = []  # pattern, negate, dir_only, anchored
        for raw in lines:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            line = line.lstrip("!")
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            self.patterns.append((line.lstrip("/"), negate, dir_only, anchored))

    def ignores(self, path: Path, is_dir: bool) -> bool | None:
        relative = path.relative_to(self.folder).as_posix()
        verdict = None
        for pattern, negate, dir_only, anchored in self.patterns:
            if dir_only and not is_dir:
                continue
            target = relative if anchored else path.name
            if _fnmatch(target, pattern) or (anchored and fnmatch.fnmatchcase(relative, pattern + "/**")):
                verdict = not negate
        return verdict


def _read_gitignore(folder: Path) -> _GitIgnore | None:
    file = folder / ".gitignore"
    try:
        return _GitIgnore(folder, file.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return None


def _parts_from_root(path: Path, root: Path) -> list[str]:
    """The path's folders and name relative to the project root; outside it, the relative path as given (an
    absolute one: its name only, so that a project kept under `~/build/` is not excluded by `build`)."""
    absolute = Path(os.path.abspath(path))  # no resolve(): a symlinked folder is excluded by its own name
    try:
        return list(absolute.relative_to(root).parts)
    except ValueError:
        if path.is_absolute():
            return [absolute.name] if absolute.name else []
        return [part for part in path.parts if part not in (".", "..")]


def _matches(name: str, relative: str, patterns: tuple[str, ...]) -> bool:
    return any(_fnmatch(name, p) or _fnmatch(relative, p.strip("/")) for p in patterns)


def _fnmatch(text: str, pattern: str) -> bool:
    """`fnmatch.fnmatchcase`, without compiling a regular expression for a pattern with no wildcard: the 24
    default excludes would cost ~3 ms of regex compiling at every start."""
    if "*" in pattern or "?" in pattern or "[" in pattern:
        return fnmatch.fnmatchcase(text, pattern)
    return text == pattern


def _excluded(path: Path, patterns: tuple[str, ...], root: Path) -> bool:
    """ruff's semantics: a pattern matches the name of the path or of any parent folder, or the path (or a
    parent) relative to the project root; `vendor` excludes `vendor/m.py` and `/abs/project/vendor/x/m.py`."""
    parts = _parts_from_root(path, root)
    return any(_matches(parts[end - 1], "/".join(parts[:end]), patterns) for end in range(len(parts), 0, -1))


Problem = Callable[[str, str], None]


def discover(
    paths: list[str], config: Config, force_exclude: bool = False, on_problem: Problem | None = None
) -> Iterator[str]:
    """Files to lint, in a stable order. Paths named explicitly are linted even if excluded (unless forced).

    `on_problem(path, reason)` hears about what is skipped for a reason other than the settings: unreadable
    folders, symlink loops, and `.py` names that are not regular files (FIFOs, sockets, devices).
    """
    patterns = (*config.exclude, *config.extend_exclude)
    root = Path(os.path.abspath(config.root)) if config.root is not None else Path.cwd()
    report = on_problem or (lambda path, reason: None)
    seen: set[str] = set()
    for given in paths:
        path = Path(given)
        if force_exclude and _excluded(path, patterns, root):
            continue
        if not path.is_dir():
            problem = _not_a_file(path)
            if problem is not None:
                report(given, problem)
            elif given not in seen:
                seen.add(given)
                yield given
            continue
        for found in _walk(path, patterns, config.respect_gitignore, root, report):
            if found not in seen:
                seen.add(found)
                yield found


def _resolve(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        return None


def _walk(
    top: Path, patterns: tuple[str, ...], respect_gitignore: bool, root: Path, report: Problem
) -> Iterator[str]:
    ignores: list[_GitIgnore] = []
    resolved_top = _resolve(top)
    if respect_gitignore and resolved_top is not None:
        for parent in reversed([resolved_top, *resolved_top.parents]):
            found = _read_gitignore(parent)
            if found is not None:
                ignores.append(found)

    def ignored(path: Path, relative: str, is_dir: bool) -> bool:
        if _matches(path.name, relative, patterns):  # the parents were matched on the way down
            return True
        verdict = None
        absolute = _resolve(path)
        if absolute is None:
            return False
        for gitignore in ignores:
            try:
                result = gitignore.ignores(absolute, is_dir)
            except ValueError:
                continue
            if result is not None:
                verdict = result
        return bool(verdict)

    def visit(folder: Path, relative: str) -> Iterator[str]:
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as error:
            report(str(folder), f"cannot read folder: {error.strerror or error}")
            return
        resolved = _resolve(folder)
        local = _read_gitignore(resolved) if respect_gitignore and folder != top and resolved else None
        if local is not None:
            ignores.append(local)
        for entry in entries:
            path = folder / entry.name
            below = f"{relative}/{entry.name}" if relative else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)  # symlinked folders are not followed: no cycles
            if ignored(path, below, is_dir):
                continue
            if is_dir:
                yield from visit(path, below)
            elif entry.name.endswith(SOURCE_SUFFIXES):
                problem = _not_a_file(entry)
                if problem is None:
                    yield str(path)
                else:
                    report(str(path), problem)
        if local is not None:
            ignores.remove(local)

    yield from visit(top, "/".join(_parts_from_root(top, root)))


def _not_a_file(entry: os.DirEntry | Path) -> str | None:
    """Why a source-named entry cannot be linted (None: it can). A FIFO is never opened: reading blocks."""
    import errno

    try:
        mode = entry.stat().st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "skipped: symlink loop"
        if error.errno == errno.ENOENT and not entry.is_symlink():
            return None  # a path named but missing: linting it says "no such file"
        if entry.is_symlink():
            return "skipped: broken symlink"
        return f"skipped: {error.strerror or error}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "skipped: a FIFO (named pipe), not a file"
    return "skipped: not a regular file"
