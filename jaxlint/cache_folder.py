"""The cache folder (`.jaxlint_cache` by default) is git-ignored whichever command makes it.

Every writer (the findings cache, `--run`'s recorded calls) makes it through `make_cache_dir`, which puts a
`.gitignore` of `*` in a folder it creates, as ruff does, so that neither `git status` nor `git add -A` sees
what it holds (absolute paths, recorded argument values). A folder found without one (made by an older
jaxlint) gets it too, but only when it holds nothing other than what jaxlint writes there: a `cache-dir`
naming an existing folder of the user's (the project root, say) must not become ignored.
"""

from __future__ import annotations

import os
import re

GITIGNORE = ".gitignore"
_CONTENT = "# Automatically created by jaxlint.\n*\n"
# What jaxlint writes in the cache folder: the findings cache's version folders and prune stamp, and the
# recorded calls of `--run`.
_OURS = re.compile(r"\d+\.\d+[\w.+-]*|signatures|\.last-prune|\.gitignore")


def make_cache_dir(folder: str | os.PathLike[str]) -> None:
    """Create the cache folder (and its parents) if needed, and make sure git ignores it. Raises OSError
    when it cannot be created; a `.gitignore` that cannot be written is left out."""
    folder = os.fspath(folder)
    os.makedirs(os.path.dirname(os.path.abspath(folder)), exist_ok=True)
    try:
        os.mkdir(folder)  # of concurrent writers, exactly one creates it
    except FileExistsError:
        mark_ignored(folder)
        return
    _write_gitignore(folder)


def mark_ignored(folder: str | os.PathLike[str]) -> None:
    """Add the `.gitignore` to an existing cache folder that lacks it and holds only jaxlint's own files."""
    folder = os.fspath(folder)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    if GITIGNORE in names or not all(_OURS.fullmatch(name) for name in names):
        return
    _write_gitignore(folder)


def _write_gitignore(folder: str) -> None:
    try:
        # O_EXCL: never through a link planted in its place, and never over one another run just wrote.
        fd = os.open(os.path.join(folder, GITIGNORE), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(_CONTENT)
