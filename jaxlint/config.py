"""`[tool.jaxlint]` in pyproject.toml, found by walking up from the linted paths; CLI flags override it."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".env", "env", "__pypackages__", "__pycache__",
    "build", "dist", "_build", ".eggs", "*.egg-info", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".jaxlint_cache", "node_modules", "site-packages", ".ipynb_checkpoints",
)  # fmt: skip


# Larger files are skipped (JAX000): a lint needs ~1,000x the file size in memory (`bench/memory.py`: 0.92 MB
# of ordinary code peaks at 0.9 GB), and a worker's memory bound is 2 GiB for files up to this size
# (`lint.memory_bound`); 1 MB is far above hand-written modules (5 MB allowed ~6 GB a worker, issue 39).
DEFAULT_MAX_FILE_SIZE = 1_000_000


class ConfigError(Exception):
    """A bad configuration value: reported as one line, exit code 2."""


@dataclasses.dataclass(frozen=True)
class VerifySettings:
    """`[tool.jaxlint.verify]`, shape-checked. `examples` maps `"module:qualname"` (or
    `"path/to/file.py:qualname"`) to the argument texts to try, in order."""

    python: str | None = None  # the child's interpreter; a relative path is relative to the project
    jobs: int | None = None
    memory_limit_mb: int | None = None  # None: the runtime's default
    examples: tuple[tuple[str, tuple[str, ...]], ...] = ()


_VERIFY_KEYS = ("python", "jobs", "memory-limit-mb", "examples")


def _example_entries(table: Any, where: str) -> list[tuple[str, tuple[str, ...]]]:
    if not isinstance(table, dict):
        raise ConfigError(f'\'{where}\' must be a table of "module:function" = "arguments", got {table!r}')
    entries = []
    for key, value in table.items():
        module, sep, qualname = str(key).rpartition(":")
        if not sep or not module or not qualname:
            raise ConfigError(f"'{where}' key {key!r} is not 'module:function'")
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise ConfigError(f"'{where}.{key}' must be a string or a list of strings, got {value!r}")
        entries.append((str(key), tuple(values)))
    return entries


def verify_settings(table: Any, root: Path | None = None) -> VerifySettings:
    """Validate `[tool.jaxlint.verify]`; a key with a colon directly in the table is an example too."""
    if not isinstance(table, dict):
        raise ConfigError(f"'verify' must be a table, got {table!r}")
    values: dict[str, Any] = {}
    examples: list[tuple[str, tuple[str, ...]]] = []
    for key, value in table.items():
        if key == "python":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"'verify.python' must be the path of an interpreter, got {value!r}")
            path = Path(value).expanduser()
            if root is not None and os.sep in value and not path.is_absolute():
                path = root / path  # relative to the project, not to wherever jaxlint runs
            values["python"] = str(path) if os.sep in value or path.is_absolute() else value
        elif key == "jobs":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"'verify.jobs' must be a positive integer, got {value!r}")
            values["jobs"] = value
        elif key == "memory-limit-mb":
            if not isinstance(value, int) or isinstance(value, bool) or value < 64:
                raise ConfigError(
                    f"'verify.memory-limit-mb' must be an integer of at least 64, got {value!r}"
                )
            values["memory_limit_mb"] = value
        elif key == "examples":
            examples += _example_entries(value, "verify.examples")
        elif ":" in key:
            examples += _example_entries({key: value}, "verify")
        else:
            raise ConfigError(f"unknown setting 'verify.{key}' (known: {', '.join(_VERIFY_KEYS)})")
    return VerifySettings(**values, examples=tuple(examples))


@dataclasses.dataclass(frozen=True)
class Config:
    root: Path | None = None  # folder of the pyproject.toml the settings came from
    select: tuple[str, ...] = ("JAX",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    jit_decorators: tuple[str, ...] = ()
    cache_dir: str | None = None
    verify: VerifySettings = VerifySettings()  # [tool.jaxlint.verify]
    verify_timeout: float = 60.0
    max_compiles: int | None = None
    max_compiles_per_function: dict[str, int] = dataclasses.field(default_factory=dict)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; larger files get a JAX000 "skipped: too large"
    # `--ignore-noqa` only (as in ruff, no file setting): noqa comments suppress nothing.
    ignore_noqa: bool = False


def _codes(key: str, value: Any) -> tuple[str, ...]:
    """A list of selectors; whether each names a rule is `selection.validate`'s question. A bare string is
    refused, as ruff refuses it: `select = "JAX1"` is almost always a list someone forgot to bracket."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of rule codes or prefixes, got {value!r}")
    return tuple(value)


def _strings(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of strings, got {value!r}")
    return tuple(value)


def _tomllib() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    return tomllib


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.jaxlint] table."""
    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            tomllib = _tomllib()  # imported only when there is a file to read (start-up)
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
                raise ConfigError(f"{pyproject}: {error}") from error
            if "jaxlint" in data.get("tool", {}):
                return pyproject
    return None


def load(pyproject: Path | None) -> Config:
    if pyproject is None:
        return Config()
    data = _tomllib().loads(pyproject.read_text(encoding="utf-8"))
    table = data.get("tool", {}).get("jaxlint", {})
    try:
        return from_table(table, root=pyproject.parent)
    except ConfigError as error:
        raise ConfigError(f"{pyproject}: [tool.jaxlint] {error}") from error


def from_table(table: dict[str, Any], root: Path | None = None) -> Config:
    values: dict[str, Any] = {"root": root}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        if key in ("select", "ignore", "extend-select"):
            values[key.replace("-", "_")] = _codes(key, value)
        elif key in ("exclude", "extend-exclude", "jit-decorators"):
            values[key.replace("-", "_")] = _strings(key, value)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"'per-file-ignores' must be a table of glob = [codes], got {value!r}")
            values["per_file_ignores"] = tuple(
                (glob, _codes(f"per-file-ignores.{glob}", c)) for glob, c in value.items()
            )
        elif key == "respect-gitignore":
            if not isinstance(value, bool):
                raise ConfigError(f"'respect-gitignore' must be true or false, got {value!r}")
            values["respect_gitignore"] = value
        elif key == "cache-dir":
            if not isinstance(value, str):
                raise ConfigError(f"'cache-dir' must be a string, got {value!r}")
            values["cache_dir"] = value
        elif key == "max-file-size":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"'max-file-size' must be a positive number of bytes, got {value!r}")
            values["max_file_size"] = value
        elif key == "verify":
            values["verify"] = verify_settings(value, root)
        elif key == "verify-timeout":
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"'verify-timeout' must be a positive number of seconds, got {value!r}")
            values["verify_timeout"] = float(value)
        elif key == "max-compiles":
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"'max-compiles' must be a positive integer, got {value!r}")
            values["max_compiles"] = value
        elif key == "max-compiles-per-function":
            if not isinstance(value, dict) or not all(isinstance(v, int) and v >= 1 for v in value.values()):
                raise ConfigError(
                    f"'max-compiles-per-function' must map function names to positive integers, got {value!r}"
                )
            values["max_compiles_per_function"] = dict(value)
        else:
            raise ConfigError(f"unknown setting '{raw_key}'")
    return Config(**values)


def with_overrides(config: Config, **overrides: Any) -> Config:
    """CLI flags over the file's settings; None means 'not given'."""
    changes = {key: value for key, value in overrides.items() if value is not None}
    for key in ("select", "ignore", "extend_select"):
        if key in changes:
            changes[key] = _codes(key.replace("_", "-"), list(changes[key]))
    # As in ruff: a --select on the command line replaces the file's select, ignore and extend-select.
    replaced = "select" in changes
    changes["ignore"] = (*(() if replaced else config.ignore), *changes.get("ignore", ()))
    changes["extend_select"] = (
        *(() if replaced else config.extend_select),
        *changes.get("extend_select", ()),
    )
    return dataclasses.replace(config, **changes)
