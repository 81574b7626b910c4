"""jaxlint: finds the mistakes that JAX's transformations punish, and proves them by tracing.

Python API:
    lint_source(text, path="<string>", ...) -> list[Finding]
    lint_paths(paths, ...) -> list[Finding]
"""

from __future__ import annotations

from .start_path import drop_working_directory_of_dash_m

drop_working_directory_of_dash_m()  # first: `python -m jaxlint` put the user's project ahead of the stdlib

from .interrupts import keep_interrupts_if_the_program  # noqa: E402

keep_interrupts_if_the_program()  # a Ctrl-C while jaxlint still imports must stop it, not vanish

from collections.abc import Iterable, Sequence  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

from ._version import __version__  # noqa: E402

if TYPE_CHECKING:
    from .config import Config
    from .finding import Finding

__all__ = ["Finding", "__version__", "lint_paths", "lint_source"]


def _config(config: Config | None, select: Sequence[str] | None, ignore: Sequence[str] | None) -> Config:
    """`select`/`ignore` over `config`, as the CLI's flags over the file's settings; raises ConfigError."""
    from .config import Config, with_overrides
    from .selection import validate

    resolved = with_overrides(
        config or Config(),
        select=tuple(select) if select is not None else None,
        ignore=tuple(ignore) if ignore is not None else None,
    )
    validate(resolved)
    return resolved


def lint_source(
    text: str,
    path: str = "<string>",
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    config: Config | None = None,
) -> list[Finding]:
    """Lint one source text (a .py file's contents, or a notebook's JSON when `path` ends in .ipynb).

    Without `config` the defaults apply (no pyproject.toml is searched: the text may not be a file)."""
    from .lint import lint_source_for

    return lint_source_for(text, path, _config(config, select, ignore))


def lint_paths(
    paths: Iterable[str],
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    config: Config | None = None,
    jobs: int | None = 1,
    cache_dir: str | None = None,
) -> list[Finding]:
    """Lint files and folders (searched recursively, honouring excludes and .gitignore), each file with the
    facts of its whole project: a helper in one module called from jitted code in another is traced, whether
    the caller's module is among `paths` or not (the project is the folder of the pyproject.toml, else the
    nearest folder with a pyproject.toml, setup.py, setup.cfg or .git). Only the files `paths` name are
    reported. `lint_source` (one text) cannot know another module.

    With `cache_dir` the findings cache there answers for unchanged files (the other modules' summaries
    included); without it the modules linked to the named files by imports are linted on each call.

    Without `config`, the `[tool.jaxlint]` table of the nearest pyproject.toml above the first path applies
    (per-file-ignores included), as it does for the `jaxlint` command."""
    from pathlib import Path

    from .config import find_pyproject, load
    from .files import discover
    from .lint import lint_named

    paths = list(paths)
    if config is None:
        config = load(find_pyproject(Path(paths[0]) if paths else Path.cwd()))
    resolved = _config(config, select, ignore)
    return lint_named(discover(paths, resolved), resolved, jobs=jobs, cache_dir=cache_dir, given=paths)


def __getattr__(name: str):
    if name == "Finding":
        from .finding import Finding

        return Finding
    raise AttributeError(name)
