"""`[tool.jaxlint]` in pyproject.toml, found by walking up from the linted paths; CLI flags override it."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from .rules import ALL_RULES, PARSE_ERROR_CODE, Rule

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".env", "env", "__pypackages__", "__pycache__",
    "build", "dist", "_build", ".eggs", "*.egg-info", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".jaxlint_cache", "node_modules", "site-packages", ".ipynb_checkpoints",
)  # fmt: skip


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

    def enabled(self, code: str) -> bool:
        """ruff's rule: the most specific matching selector wins; on a tie, ignore wins."""
        rule = _RULES.get(code)
        selected = _longest(code, (*self.select, *self.extend_select), exact_for_opt_in=rule)
        ignored = _longest(code, self.ignore, exact_for_opt_in=None)
        return selected > ignored

    def rules(self) -> tuple[type[Rule], ...]:
        return tuple(r for r in ALL_RULES if self.enabled(r.code))

    def ignored_for(self, path: str) -> tuple[str, ...]:
        """Codes that `per-file-ignores` switches off for this path."""
        import fnmatch

        relative = _relative(path, self.root)
        codes: list[str] = []
        for pattern, pattern_codes in self.per_file_ignores:
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
                codes.extend(pattern_codes)
        return tuple(codes)


_RULES = {r.code: r for r in ALL_RULES}


def _longest(code: str, selectors: tuple[str, ...], exact_for_opt_in: type[Rule] | None) -> int:
    best = 0
    for selector in selectors:
        if selector == "ALL" or code.startswith(selector):
            # Opt-in rules need a selector more specific than the bare prefix.
            if exact_for_opt_in is not None and not exact_for_opt_in.default_enabled:
                if selector in ("ALL", "JAX", "J", "JA"):
                    continue
            best = max(best, len(selector) if selector != "ALL" else 1)
    return best


def _relative(path: str, root: Path | None) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix() if root else Path(path).as_posix()
    except ValueError:
        return Path(path).as_posix()


KNOWN_CODES = frozenset({*_RULES, PARSE_ERROR_CODE})


def _codes(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of rule codes or prefixes, got {value!r}")
    for selector in value:
        if selector != "ALL" and not any(code.startswith(selector) for code in KNOWN_CODES):
            raise ConfigError(f"'{key}': unknown rule selector '{selector}' (see `jaxlint --list-rules`)")
    return tuple(value)


def _strings(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of strings, got {value!r}")
    return tuple(value)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.jaxlint] table."""
    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
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
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
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
    # As in ruff: a --select on the command line replaces both select and ignore of the file.
    base_ignore = () if "select" in changes else config.ignore
    changes["ignore"] = (*base_ignore, *changes.get("ignore", ()))
    if "extend_select" in changes:
        changes["extend_select"] = (*config.extend_select, *changes["extend_select"])
    return dataclasses.replace(config, **changes)
