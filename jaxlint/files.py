"""Which files to lint: paths given, folders searched recursively, excludes and .gitignore honoured."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
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
            if fnmatch.fnmatchcase(target, pattern) or (
                anchored and fnmatch.fnmatchcase(relative, pattern + "/**")
            ):
                verdict = not negate
        return verdict


def _read_gitignore(folder: Path) -> _GitIgnore | None:
    file = folder / ".gitignore"
    try:
        return _GitIgnore(folder, file.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return None


def _excluded(path: Path, patterns: tuple[str, ...]) -> bool:
    posix = path.as_posix()
    return any(fnmatch.fnmatchcase(path.name, p) or fnmatch.fnmatchcase(posix, p) for p in patterns)


def discover(paths: list[str], config: Config, force_exclude: bool = False) -> Iterator[str]:
    """Files to lint, in a stable order. Paths named explicitly are linted even if excluded (unless forced)."""
    patterns = (*config.exclude, *config.extend_exclude)
    seen: set[str] = set()
    for given in paths:
        path = Path(given)
        if path.is_file() or not path.exists():
            if force_exclude and _excluded(path, patterns):
                continue
            if given not in seen:
                seen.add(given)
                yield given
            continue
        for found in _walk(path, patterns, config.respect_gitignore):
            if found not in seen:
                seen.add(found)
                yield found


def _walk(top: Path, patterns: tuple[str, ...], respect_gitignore: bool) -> Iterator[str]:
    ignores: list[_GitIgnore] = []
    if respect_gitignore:
        for parent in reversed([top.resolve(), *top.resolve().parents]):
            found = _read_gitignore(parent)
            if found is not None:
                ignores.append(found)

    def ignored(path: Path, is_dir: bool) -> bool:
        if _excluded(path, patterns):
            return True
        verdict = None
        absolute = path.resolve()
        for gitignore in ignores:
            try:
                result = gitignore.ignores(absolute, is_dir)
            except ValueError:
                continue
            if result is not None:
                verdict = result
        return bool(verdict)

    def visit(folder: Path) -> Iterator[str]:
        local = _read_gitignore(folder.resolve()) if respect_gitignore and folder != top else None
        if local is not None:
            ignores.append(local)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            entries = []
        for entry in entries:
            path = folder / entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if ignored(path, is_dir):
                continue
            if is_dir:
                yield from visit(path)
            elif entry.name.endswith(SOURCE_SUFFIXES) and entry.is_file():
                yield str(path)
        if local is not None:
            ignores.remove(local)

    yield from visit(top)
