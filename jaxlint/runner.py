"""Lint many files: read, decode, lint, in worker processes over all cores (largest files first)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from .cache import FindingCache
from .config import Config
from .engine import LintSettings, decode, lint_text, parse_error
from .finding import Finding

# Below this many files a pool costs more than it saves.
_MIN_FILES_FOR_POOL = 8


def settings_for(config: Config, path: str | None = None) -> LintSettings:
    rules = config.rules()
    if path is not None:
        ignored = config.ignored_for(path)
        if ignored:
            rules = tuple(r for r in rules if not any(r.code.startswith(c) for c in ignored))
    return LintSettings(rules=rules, jit_decorators=frozenset(config.jit_decorators))


def lint_file(path: str, config: Config, cache: FindingCache | None = None) -> list[Finding]:
    """One file, never raising: unreadable, undecodable and unparsable files become JAX000 findings."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return [parse_error(path, 1, 1, "no such file")]
    except OSError as error:
        return [parse_error(path, 1, 1, f"cannot read: {error.strerror or error}")]
    if cache is None:
        return _lint_bytes(data, path, config)
    key = cache.key(data, _settings_key(config, path))
    findings = cache.get(key, path)
    if findings is None:
        findings = _lint_bytes(data, path, config)
        cache.put(key, findings)
    return findings


def _settings_key(config: Config, path: str) -> str:
    """Everything in the configuration that changes one file's findings."""
    settings = settings_for(config, path)
    return repr(
        (
            sorted(r.code for r in settings.rules),
            sorted(settings.jit_decorators),
            config.enabled("JAX000") and "JAX000" not in config.ignored_for(path),
            path.endswith(".ipynb"),
        )
    )


def _lint_bytes(data: bytes, path: str, config: Config) -> list[Finding]:
    try:
        source = decode(data)
    except (UnicodeError, SyntaxError, LookupError) as error:  # UnicodeError: `# coding: undefined`
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        line = data[: getattr(error, "start", 0)].count(b"\n") + 1
        return [parse_error(path, line, 1, f"cannot decode: {reason}")]
    return lint_source_for(source, path, config)


def lint_source_for(source: str, path: str, config: Config) -> list[Finding]:
    try:
        if path.endswith(".ipynb"):
            from .notebook import lint_notebook

            findings = lint_notebook(source, path, settings_for(config, path))
        else:
            findings = lint_text(source, path, settings_for(config, path))
    except RecursionError:
        return [parse_error(path, 1, 1, "cannot analyse: nesting too deep")]
    except Exception as error:  # a bug in jaxlint must not cost the other files
        return [parse_error(path, 1, 1, f"internal error while linting ({type(error).__name__}: {error})")]
    if not config.enabled("JAX000") or "JAX000" in config.ignored_for(path):
        findings = [f for f in findings if f.code != "JAX000"]
    return findings


def _lint_batch(paths: list[str], config: Config, cache_dir: str | None) -> list[Finding]:
    cache = FindingCache(cache_dir) if cache_dir else None
    out: list[Finding] = []
    for path in paths:
        out.extend(lint_file(path, config, cache))
    return out


def lint_files(
    paths: Iterable[str], config: Config, jobs: int | None = None, cache_dir: str | None = None
) -> list[Finding]:
    """Lint files; with `cache_dir`, unchanged files under unchanged settings are not linted again."""
    files = list(paths)
    jobs = jobs or os.cpu_count() or 1
    findings: list[Finding] = []
    if jobs <= 1 or len(files) < _MIN_FILES_FOR_POOL:
        findings = _lint_batch(files, config, cache_dir)
    else:
        files.sort(key=_size, reverse=True)
        # Deal files round-robin, largest first, so batches come out about even.
        batches = [files[i :: jobs * 4] for i in range(jobs * 4)]
        from concurrent.futures import ProcessPoolExecutor  # not needed (nor imported) for small runs

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for result in pool.map(_lint_batch, batches, [config] * len(batches), [cache_dir] * len(batches)):
                findings.extend(result)
    findings.sort(key=Finding.sort_key)
    return findings


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
