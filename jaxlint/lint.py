"""Lint many files: read, decode, lint, in worker processes over all cores (largest files first).

This module owns what every file driver shares (`autofix.py` reuses it):
- reading and decoding (`read_source`): unreadable, too large and undecodable files become JAX000 findings;
- the error policy (`lint_guarded`): an exception while linting one file becomes a JAX000 "internal error"
  finding for that file, and the other files are still reported;
- the one JAX000 filter (`keep_selected`), answered by `selection.settings_for`;
- the worker pool (`run_batches`): workers die with the parent, and when one dies anyway (a crash in native
  code) its files are linted again one per process, so only the file that crashes gets a JAX000.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from .cache import FindingCache
from .config import Config
from .engine import LintSettings, decode, internal_error, lint_text, parse_error, too_large
from .finding import PARSE_ERROR_CODE, Finding
from .fix import FixCollector
from .selection import settings_for

# Below this many files a pool costs more than it saves.
_MIN_FILES_FOR_POOL = 8

R = TypeVar("R")


# -- one file ----------------------------------------------------------------------------------------------


def read_source(path: str, settings: LintSettings) -> tuple[bytes, str] | list[Finding]:
    """(bytes, text) of a file, or the JAX000 finding that says why it cannot be linted."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            # Notebooks carry outputs (images): their limit applies to the joined code, in the engine.
            if size > settings.max_file_size and not path.endswith(".ipynb"):
                return [too_large(path, size, settings.max_file_size)]
            data = handle.read()
    except FileNotFoundError:
        return [parse_error(path, 1, 1, "no such file")]
    except OSError as error:
        return [parse_error(path, 1, 1, f"cannot read: {error.strerror or error}")]
    try:
        return data, decode(data)
    except (UnicodeError, SyntaxError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        line = data[: getattr(error, "start", 0)].count(b"\n") + 1
        return [parse_error(path, line, 1, f"cannot decode: {reason}")]


def lint_guarded(
    source: str, path: str, settings: LintSettings, fixes: FixCollector | None = None
) -> list[Finding]:
    """Lint one text; never raises: a bug in jaxlint costs this file a JAX000, not the run."""
    try:
        if path.endswith(".ipynb"):
            from .notebook import lint_notebook

            return lint_notebook(source, path, settings)
        return lint_text(source, path, settings, fixes=fixes)
    except RecursionError:
        return [parse_error(path, 1, 1, "cannot analyse: nesting too deep")]
    except Exception as error:
        return [internal_error(path, error)]


def keep_selected(findings: list[Finding], settings: LintSettings) -> list[Finding]:
    """The one JAX000 filter: drop parse errors when the selection (or per-file-ignores) switches them off."""
    if settings.parse_errors:
        return findings
    return [f for f in findings if f.code != PARSE_ERROR_CODE]


def lint_source_for(source: str, path: str, config: Config) -> list[Finding]:
    settings = settings_for(config, path)
    return keep_selected(lint_guarded(source, path, settings), settings)


def lint_file(path: str, config: Config, cache: FindingCache | None = None) -> list[Finding]:
    """One file, never raising: unreadable, undecodable and unparsable files become JAX000 findings."""
    settings = settings_for(config, path)
    read = read_source(path, settings)
    if isinstance(read, list):
        return keep_selected(read, settings)
    data, source = read
    if cache is None:
        return keep_selected(lint_guarded(source, path, settings), settings)
    key = cache.key(data, _settings_key(settings, path))
    findings = cache.get(key, path)
    if findings is None:
        findings = keep_selected(lint_guarded(source, path, settings), settings)
        cache.put(key, findings)
    return findings


def _settings_key(settings: LintSettings, path: str) -> str:
    """Everything in the configuration that changes one file's findings."""
    return repr(
        (
            sorted(r.code for r in settings.rules),
            sorted(settings.jit_decorators),
            settings.parse_errors,
            path.endswith(".ipynb"),
            settings.max_file_size,
        )
    )


# -- many files --------------------------------------------------------------------------------------------


def batches(files: Sequence[str], jobs: int) -> list[list[str]]:
    """Files dealt round-robin into 4 batches per worker (callers sort largest first, so batches come out
    about even)."""
    count = min(len(files), jobs * 4)
    return [list(files[i::count]) for i in range(count)]


def run_batches(
    work: Callable[..., list[R]],
    files: Sequence[str],
    jobs: int,
    args: tuple,
    crashed: Callable[[str], R],
) -> list[R]:
    """`work(batch, *args)` -> one result per file, in worker processes. A worker that dies (a crash in
    native code) breaks the pool: the files without results are run again one per process, and a file whose
    process dies again gets `crashed(path)`."""
    from concurrent.futures import ProcessPoolExecutor  # not needed (nor imported) for small runs
    from concurrent.futures.process import BrokenProcessPool

    results: dict[str, R] = {}
    pending: list[list[str]] = []
    with ProcessPoolExecutor(max_workers=jobs, initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        futures = [(batch, pool.submit(work, batch, *args)) for batch in batches(files, jobs)]
        for batch, future in futures:
            try:
                results.update(zip(batch, future.result(), strict=True))
            except BrokenProcessPool:
                pending.append(batch)
    for path in (path for batch in pending for path in batch):
        results[path] = _isolated(work, path, args, crashed)
    return [results[path] for path in files]


def _isolated(work: Callable[..., list[R]], path: str, args: tuple, crashed: Callable[[str], R]) -> R:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=1, initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        try:
            return pool.submit(work, [path], *args).result()[0]
        except BrokenProcessPool:
            return crashed(path)


def die_with_parent(parent: int) -> None:
    """Pool worker initializer: end this worker when the parent process ends (even by SIGKILL), so no worker
    goes on writing files for a run that is gone. Linux: the kernel's parent-death signal; elsewhere (and as a
    backstop) a thread that watches the parent's pid."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent ended before the signal was armed
        os._exit(1)
    import threading
    import time

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="jaxlint-parent-watch", daemon=True).start()


def _lint_batch(paths: list[str], config: Config, cache_dir: str | None) -> list[list[Finding]]:
    cache = FindingCache(cache_dir) if cache_dir else None
    return [lint_file(path, config, cache) for path in paths]


def lint_files(
    paths: Iterable[str], config: Config, jobs: int | None = None, cache_dir: str | None = None
) -> list[Finding]:
    """Lint files; with `cache_dir`, unchanged files under unchanged settings are not linted again."""
    files = list(paths)
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(files) < _MIN_FILES_FOR_POOL:
        per_file = _lint_batch(files, config, cache_dir)
    else:
        files.sort(key=_size, reverse=True)
        per_file = run_batches(
            _lint_batch,
            files,
            jobs,
            (config, cache_dir),
            lambda path: keep_selected(
                [internal_error(path, "its worker process died")], settings_for(config, path)
            ),
        )
    findings = [finding for found in per_file for finding in found]
    findings.sort(key=Finding.sort_key)
    return findings


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
