"""Which rules run on which file: `Config` x the rule registry -> `LintSettings` per path. The one copy.

ruff's semantics: among the selectors that match a code, the most specific (longest) wins, and on a tie
`ignore` wins; `ALL` counts as the least specific selector. Opt-in rules (`default_enabled = False`) need a
selector more specific than the bare prefix (`JAX302`, `JAX3`): `--select JAX` means "the JAX rules", not
"every opt-in rule too". `per-file-ignores` then switches codes off for matching paths.

JAX000 is not a rule but takes part in selection like a code, as ruff's syntax errors do not: a file that
cannot be read, decoded or parsed (or is too large, or made jaxlint fail) is reported as JAX000 unless a
selector switches JAX000 off (`--ignore JAX000`, or a `--select` that does not cover it, e.g. `JAX1`).

Used by every face: the CLI, the Python API (`jaxlint.lint_paths`), the flake8 plugin (which leaves the
final filtering to flake8 and only asks which opt-in rules to run) and `--fix`.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path

from .config import DEFAULT_MAX_FILE_SIZE, Config, ConfigError
from .finding import PARSE_ERROR_CODE, RUNTIME_ERROR_CODE
from .rules import ENTRIES_BY_CODE, REGISTRY

KNOWN_CODES = frozenset({*ENTRIES_BY_CODE, PARSE_ERROR_CODE, RUNTIME_ERROR_CODE})
# A file naming none of these is never linted (the engine's prefilter), unless analysed code calls it.
# A module using equinox alone (`import equinox as eqx`, its filter_jit) names none of jax's words.
PREFILTER_WORDS = ("jax", "jnp", "lax", "equinox")
_BARE_PREFIXES = ("ALL", "JAX", "J", "JA")  # not specific enough to switch an opt-in rule on


@dataclasses.dataclass(frozen=True)
class LintSettings:
    """What the engine needs from the configuration for one file."""

    rules: tuple[str, ...] = tuple(e.code for e in REGISTRY if e.default_enabled)  # codes, registry order
    jit_decorators: frozenset[str] = frozenset()
    parse_errors: bool = True  # report JAX000 (the file drivers drop it otherwise)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes of source; larger texts are skipped with a JAX000
    noqa: bool = True  # False with `--ignore-noqa`: noqa comments suppress nothing


def validate(config: Config, origin: str = "") -> None:
    """Raise ConfigError for a selector that matches no code (a typo would otherwise select nothing);
    `origin` prefixes the message (the pyproject.toml it came from)."""
    checks: list[tuple[str, Iterable[str]]] = [
        ("select", config.select),
        ("ignore", config.ignore),
        ("extend-select", config.extend_select),
    ]
    checks.extend((f"per-file-ignores.{glob}", codes) for glob, codes in config.per_file_ignores)
    for key, selectors in checks:
        for selector in selectors:
            if selector != "ALL" and not any(code.startswith(selector) for code in KNOWN_CODES):
                raise ConfigError(
                    f"{origin}'{key}': unknown rule selector '{selector}' (see `jaxlint --list-rules`)"
                )


def enabled(config: Config, code: str) -> bool:
    """Whether `code` is selected (before per-file-ignores)."""
    entry = ENTRIES_BY_CODE.get(code)
    opt_in = entry is not None and not entry.default_enabled
    selected = _longest(code, (*config.select, *config.extend_select), opt_in)
    ignored = _longest(code, config.ignore, opt_in=False)
    return selected > ignored


def _longest(code: str, selectors: Iterable[str], opt_in: bool) -> int:
    best = 0
    for selector in selectors:
        if selector == "ALL" or code.startswith(selector):
            if opt_in and selector in _BARE_PREFIXES:
                continue
            best = max(best, len(selector) if selector != "ALL" else 1)
    return best


def rules(config: Config) -> tuple[str, ...]:
    """The codes of the rules `config` selects, in registry order."""
    return tuple(entry.code for entry in REGISTRY if enabled(config, entry.code))


def ignored_for(config: Config, path: str) -> tuple[str, ...]:
    """Codes that `per-file-ignores` switches off for this path (globs match the path relative to the
    project root, or the file name)."""
    if not config.per_file_ignores:
        return ()
    relative = _relative(path, config.root)
    codes: list[str] = []
    for pattern, pattern_codes in config.per_file_ignores:
        if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
            codes.extend(pattern_codes)
    return tuple(codes)


def _relative(path: str, root: Path | None) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix() if root else Path(path).as_posix()
    except ValueError:
        return Path(path).as_posix()


def settings_for(config: Config, path: str | None = None) -> LintSettings:
    """Everything the engine and the file drivers need to lint `path` under `config`."""
    chosen = rules(config)
    parse_errors = enabled(config, PARSE_ERROR_CODE)
    if path is not None:
        ignored = ignored_for(config, path)
        if ignored:
            chosen = tuple(code for code in chosen if not any(code.startswith(c) for c in ignored))
            parse_errors = parse_errors and not any(PARSE_ERROR_CODE.startswith(c) for c in ignored)
    return LintSettings(
        rules=chosen,
        jit_decorators=frozenset(config.jit_decorators),
        parse_errors=parse_errors,
        max_file_size=config.max_file_size,
        noqa=not config.ignore_noqa,
    )


def rules_for_flake8(selectors: Iterable[str]) -> tuple[str, ...]:
    """The rules the flake8 plugin runs: every default rule (flake8 filters what it reports itself) and the
    opt-in rules that flake8's --select/--extend-select name specifically."""
    named = tuple(s.strip().upper() for s in selectors if s.strip())
    return rules(Config(select=("JAX", *named)))


def opt_in_codes() -> list[str]:
    return [entry.code for entry in REGISTRY if not entry.default_enabled]
