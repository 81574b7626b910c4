"""Lint many files: read, decode, lint, in worker processes over all cores (largest files first).

This module owns what every file driver shares (`autofix.py` reuses it):
- reading and decoding (`read_source`): unreadable, too large and undecodable files become JAX000 findings;
- the error policy (`lint_guarded`): an exception while linting one file becomes a JAX000 "internal error"
  finding for that file, and the other files are still reported;
- the one JAX000 filter (`keep_selected`), answered by `selection.settings_for`;
- the worker pool (`WorkerPool`, `run_batches`), one per run for all its rounds: workers die with the parent,
  and when one dies anyway (a crash in native code) its files are linted again one per process, so only the
  file that crashes gets a JAX000;
- project mode (`lint_files`): every file is linted once and leaves a summary of its calls into other modules
  and of what its own functions do (`analysis.project`); the files that other modules' summaries give facts to
  (calls they receive, kinds of the classes they use, `Export`s of the functions they call) are linted again with them,
  round after round until the facts stop changing. A file linted again goes to the worker that linted it, which
  kept its tree (the last `KEPT_TREE_CHARS` characters of text it parsed), so it is not parsed twice.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .analysis.imported_x64 import x64_on_import
from .analysis.project import (
    MAX_ROUNDS,
    Export,
    Incoming,
    ProjectIndex,
    Summary,
    incoming_key,
    library_heads,
    package_name,
)
from .config import Config
from .finding import (
    OUT_OF_MEMORY,
    PARSE_ERROR_CODE,
    Finding,
    internal_error,
    out_of_memory,
    parse_error,
    too_large,
)
from .selection import LintSettings, settings_for

# The engine (libcst and every rule) is imported only where a file is linted: a run answered from the
# findings cache never loads it, and half of such a run was that import. Workers are forked after the
# parent imported it (`WorkerPool.submit`), so they do not import it again.
if TYPE_CHECKING:
    from .analysis.module_facts import ModuleFacts
    from .cache import FindingCache  # hashlib, tempfile: imported only when a run uses the cache
    from .fix import FixCollector

# Below this many files a pool costs more than it saves.
_MIN_FILES_FOR_POOL = 8

# A worker's memory bound (issue 39). A lint takes about 1 KB of memory per byte of source (libcst's tree, the
# index, the walk: `bench/memory.py`, 0.92 MB of ordinary code peaks at 0.9 GB), so a worker may use twice
# that for the largest file `max-file-size` allows, and never less than 2 GiB (`JAXLINT_MEMORY_MB` sets
# it). A file that needs more is a JAX000 "too large to analyse within N MB"; the other files are linted.
_MEMORY_FLOOR = 2 << 30
_MEMORY_PER_SOURCE_BYTE = 2048
# A file larger than this goes to a (bounded) worker process even in a run too small for a pool.
_IN_PROCESS_MAX = 256 * 1024
_in_worker = False  # this process is a pool worker (`start_worker`, `start_isolated`)
_memory_bound: int | None = None  # this worker's bound, once `bound_memory` set it
_memory_base = None  # its data segment's size then (bytes)

R = TypeVar("R")


# -- one file ----------------------------------------------------------------------------------------------


def decode(data: bytes) -> str:
    """Source bytes to text, honouring a PEP 263 coding cookie; raises UnicodeDecodeError/SyntaxError."""
    import io
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def read_source(
    path: str, settings: LintSettings, texts: Mapping[str, str] | None = None
) -> tuple[bytes, str] | list[Finding]:
    """(bytes, text) of a file, or the JAX000 finding that says why it cannot be linted; `texts` (absolute
    path -> text: an editor's unsaved buffers) stand for what is on disk."""
    text = texts.get(os.path.abspath(path)) if texts else None
    if text is not None:
        return text.encode("utf-8", "surrogatepass"), text
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
    decoded = decode_or_finding(data, path)
    return (data, decoded) if isinstance(decoded, str) else [decoded]


def decode_or_finding(data: bytes, path: str) -> str | Finding:
    """`decode`, or the JAX000 that says why the bytes are not text in their declared coding."""
    try:
        return decode(data)
    except (UnicodeError, SyntaxError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        line = data[: getattr(error, "start", 0)].count(b"\n") + 1
        return parse_error(path, line, 1, f"cannot decode: {reason}")


def lint_guarded(
    source: str,
    path: str,
    settings: LintSettings,
    fixes: FixCollector | None = None,
    project: ModuleFacts | None = None,
) -> list[Finding]:
    """Lint one text; never raises: a bug in jaxlint costs this file a JAX000, not the run."""
    try:
        if path.endswith(".ipynb"):
            from .notebook import lint_notebook

            return lint_notebook(source, path, settings, project=project)
        from .engine import lint_text

        return lint_text(source, path, settings, fixes=fixes, project=project)
    except RecursionError:
        return [parse_error(path, 1, 1, "cannot analyse: nesting too deep")]
    except MemoryError:  # over this worker's bound (`bound_memory`), or the machine's memory
        return [out_of_memory(path, _memory_bound)]
    except Exception as error:
        return [internal_error(path, error)]


def keep_selected(findings: list[Finding], settings: LintSettings) -> list[Finding]:
    """The one JAX000 filter: drop parse errors when the selection (or per-file-ignores) switches them off."""
    if settings.parse_errors:
        return findings
    return [f for f in findings if f.code != PARSE_ERROR_CODE]


def memory_bound(max_file_size: int) -> int:
    """A worker's memory bound in bytes (see `_MEMORY_FLOOR`)."""
    given = os.environ.get("JAXLINT_MEMORY_MB", "")
    if given.isdigit() and int(given) > 0:
        return int(given) << 20
    return max(_MEMORY_FLOOR, _MEMORY_PER_SOURCE_BYTE * max_file_size)


def memory_limit() -> int | None:
    """This process's memory bound (`bound_memory`), None outside a bounded worker."""
    return _memory_bound


def bound_worker_memory(config: Config) -> None:
    """In a pool worker, cap the memory its lints may take (`bound_memory`); elsewhere nothing: a library
    does not set its host process's limits."""
    if _in_worker:
        bound_memory(memory_bound(config.max_file_size))


def bound_memory(limit: int) -> None:
    """Cap this process's data segment (RLIMIT_DATA) at `limit` bytes more than it holds when first bounded
    (its deep-stack thread's address space included: `syntax.one_deep_thread`), so that a lint that needs more
    raises MemoryError (`lint_guarded`) or, inside libcst's native parser, aborts the worker (`_isolated`)
    instead of taking the machine's memory. Linux only (elsewhere RLIMIT_DATA counts other things)."""
    global _memory_base, _memory_bound
    if _memory_bound == limit or not sys.platform.startswith("linux"):
        return
    import resource

    from .syntax import one_deep_thread

    if _memory_base is None:
        one_deep_thread()
        _memory_base = _data_bytes()
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = _memory_base + limit
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    except (ValueError, OSError):
        return
    _memory_bound = limit


def _data_bytes() -> int:
    """The size of this process's data segment now (VmData: what RLIMIT_DATA limits)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def lint_source_for(source: str, path: str, config: Config) -> list[Finding]:
    settings = settings_for(config, path)
    return keep_selected(lint_guarded(source, path, settings), settings)


def lint_file(path: str, config: Config, cache: FindingCache | None = None) -> list[Finding]:
    """One file, never raising: unreadable, undecodable and unparsable files become JAX000 findings."""
    return lint_project_file(path, config, cache)[0]


def lint_project_file(
    path: str,
    config: Config,
    cache: FindingCache | None = None,
    incoming: Incoming | None = None,
    also: frozenset[str] = frozenset(),
    classes: Mapping[str, str] | None = None,
    exports: Mapping[str, Export] | None = None,
    imported: bool = False,
    texts: Mapping[str, str] | None = None,
) -> tuple[list[Finding], Summary]:
    """One file of a project: its findings given the facts other modules give it (`incoming` for its
    functions, `classes`: the kinds of the project classes it imports, `exports`: what the other modules'
    functions it calls do), and its own summary (`also`: library names that are the project's own packages,
    `analysis.project.library_heads`; `imported`: analysed code calls it, so it is analysed whatever words it
    contains; `texts`: see `read_source`)."""
    settings = settings_for(config, path)
    read = read_source(path, settings, texts)
    if isinstance(read, list):
        return keep_selected(read, settings), Summary()
    data, source = read
    package = package_name(path)
    if cache is not None:
        key = _cache_key(cache, data, settings, path, also, package, incoming, classes, exports, imported)
        found = cache.lookup(key, path)
        if found is not None:
            return found
    from .analysis.module_facts import ModuleFacts

    project = ModuleFacts(incoming, also, package, classes, exports, imported, x64_on_import(path))
    findings = keep_selected(lint_guarded(source, path, settings, project=project), settings)
    observe_re_exports(source, path, settings, project)
    if cache is not None and not any(f.message.startswith(OUT_OF_MEMORY) for f in findings):
        cache.put(key, findings, project.summary())  # (a memory bound is no property of the file)
    return findings, project.summary()


def _cache_key(
    cache: FindingCache,
    data: bytes,
    settings: LintSettings,
    path: str,
    also: frozenset[str],
    package: str | None,
    incoming: Incoming | None,
    classes: Mapping[str, str] | None,
    exports: Mapping[str, Export] | None,
    imported: bool = False,
) -> str:
    # The facts a file was linted with are part of its key: a change in another module that changes them
    # lints it again.
    return cache.key(
        data,
        _settings_key(settings, path)
        + incoming_key(incoming or {}, classes or {}, exports or {})
        + repr((sorted(also), package) + ((True,) if imported else ()))
        + ("x64" if x64_on_import(path) else ""),  # (its packages' `__init__.py` or its imports enable x64)
    )


def cached_result(
    path: str,
    config: Config,
    cache: FindingCache,
    incoming: Incoming | None = None,
    also: frozenset[str] = frozenset(),
    classes: Mapping[str, str] | None = None,
    exports: Mapping[str, Export] | None = None,
    imported: bool = False,
    texts: Mapping[str, str] | None = None,
) -> tuple[list[Finding], Summary] | None:
    """What the findings cache holds for one file of a project, or None (a miss, or a file that does not
    read): `lint_project_file` without the linting."""
    settings = settings_for(config, path)
    read = read_source(path, settings, texts)
    if isinstance(read, list):
        return None
    data, _ = read
    key = _cache_key(
        cache, data, settings, path, also, package_name(path), incoming, classes, exports, imported
    )
    return cache.lookup(key, path)


def cached_findings(
    path: str, data: bytes, config: Config, cache_dir: str | None, facts: ProjectFacts | None
) -> list[Finding] | None:
    """What the findings cache holds for `data` as the file `path` linted with `facts` (a project lint that just
    linted these bytes left it there), or None: a face that lints a text it has the facts for asks this first,
    so the same text with the same facts is not linted twice."""
    if not cache_dir or facts is None:
        return None
    from .cache import FindingCache

    cache = FindingCache(cache_dir)
    hit = cache.lookup(_facts_key(cache, data, config, path, facts), path)
    return hit[0] if hit is not None else None


def remember(
    path: str,
    data: bytes,
    config: Config,
    cache_dir: str | None,
    facts: ProjectFacts | None,
    found: tuple[list[Finding], Summary],
) -> None:
    """Put a lint of `data` as `path` with `facts` done outside `lint_project_file` (the fix driver's last
    round, on the text it wrote) into the findings cache, where the project's next lint finds it."""
    if not cache_dir or facts is None:
        return
    from .cache import FindingCache

    cache = FindingCache(cache_dir)
    cache.put(_facts_key(cache, data, config, path, facts), *found)


def _facts_key(cache: FindingCache, data: bytes, config: Config, path: str, facts: ProjectFacts) -> str:
    settings = settings_for(config, path)
    return _cache_key(
        cache,
        data,
        settings,
        path,
        facts.also,
        package_name(path),
        facts.incoming,
        facts.classes,
        facts.exports,
        facts.imported,
    )


def observe_re_exports(source: str, path: str, settings: LintSettings, project: ModuleFacts) -> None:
    """A package's `__init__.py` that the engine skipped (it names no JAX library: its prefilter) still tells
    the project what it re-exports: its imports go into its summary. No finding, not even JAX000: such a file
    is not linted. Text with more than 1,000 brackets is left alone (libcst crashes on deep nesting)."""
    if project.observed or not path.endswith("__init__.py") or "import" not in source:
        return
    if len(source) > settings.max_file_size or sum(source.count(c) for c in "([{") > 1000:
        return
    from .analysis.binding.index import ModuleIndex
    from .syntax import parse_module

    try:
        module = parse_module(source)
    except Exception:
        return
    project.observe(ModuleIndex(module, settings.jit_decorators, project.package))


def _settings_key(settings: LintSettings, path: str) -> str:
    """Everything in the configuration that changes one file's findings."""
    return repr(
        (
            sorted(settings.rules),
            sorted(settings.jit_decorators),
            settings.parse_errors,
            path.endswith(".ipynb"),
            settings.max_file_size,
        )
    )


# -- many files --------------------------------------------------------------------------------------------


def batches(files: Sequence[str], jobs: int) -> list[list[str]]:
    """Files dealt round-robin into 16 batches per worker (callers sort largest first, so batches come out
    about even, and small enough that no worker waits long for the last one to end)."""
    count = min(len(files), jobs * 16)
    return [list(files[i::count]) for i in range(count)]


# Characters of source text whose trees a worker keeps for the later rounds (~23 bytes of tree a character: ~46 MiB).
KEPT_TREE_CHARS = 2_000_000
_IN_FLIGHT = 2  # batches sent ahead to each worker, so it never waits for the parent between two
_HELD_BATCH = 4  # files a batch of a later round holds: few files, so results come back as they are done
_STEAL_AFTER = 4  # batches another worker must have waiting before an idle one takes one (`_next_batch`)


def pool_jobs(jobs: int | None) -> int:
    """How many worker processes to fork: `jobs` (default: the cores), or 1 (lint here, fork nothing) while
    this process runs other threads. Workers are forked, and a fork copies only the forking thread: a lock
    another thread holds (JAX's thread pools, when a caller of `lint_paths` imported JAX) stays locked in
    the worker for good."""
    import threading

    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError:
        threads = threading.active_count()
    # jaxlint's own deep-stack thread (`syntax.run_deep`) holds no lock between runs, and a forked worker
    # starts its own: it does not count (it stays alive once this process has linted a file itself). Only
    # a process that imported `syntax` has one (a warm-cache run imports neither it nor libcst).
    syntax = sys.modules.get(f"{__package__}.syntax")
    if syntax is not None:
        threads -= sum(1 for thread in threading.enumerate() if thread.name == syntax.DEEP_THREAD_NAME)
    return 1 if threads > 1 else jobs or os.cpu_count() or 1


def threading_snapshot() -> list[Any]:
    """This process's threads now, for `wait_until_reaped` after a pool's shutdown."""
    import threading

    return threading.enumerate()


def wait_until_reaped(threads: list[Any], timeout: float = 10.0) -> None:
    """Wait (at most `timeout` s) until those of `threads` that have ended are gone from /proc/self/task too.
    A joined thread (an executor's manager, a queue's feeder) is still listed there until its OS thread has
    exited, which on a loaded machine comes well after `join` returns; `pool_jobs` counts that list, and a
    thread seen there turned the next pool of the run (`--fix` after the project's lint) into one process."""
    import time

    ended = [thread.native_id for thread in threads if not thread.is_alive() and thread.native_id is not None]
    deadline = time.monotonic() + timeout
    for tid in ended:
        while os.path.exists(f"/proc/self/task/{tid}") and time.monotonic() < deadline:
            time.sleep(0.005)


class WorkerPool:
    """The worker processes of one run, started on first use and kept for all its project rounds (starting
    them again for each round cost more than the few files a later round lints). Each worker is an executor of
    its own, so that a later round sends a file back to the worker that linted it, which still holds its tree
    (`syntax.keep_trees`). A worker's crash breaks only that worker; the next use starts a new one."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._executors: list[Any] = [None] * jobs
        self.holder: dict[str, int] = {}  # path -> the worker that linted it last

    def submit(self, worker: int, work: Callable[..., Any], *args: Any) -> Any:
        if self._executors[worker] is None:
            from concurrent.futures import ProcessPoolExecutor  # not needed (nor imported) for small runs

            from . import engine  # noqa: F401  (imported once here: forked workers inherit it)
            from .rules import ALL_RULES  # noqa: F401  (the rule modules too: the engine imports them on first use)

            self._executors[worker] = ProcessPoolExecutor(
                max_workers=1, initializer=start_worker, initargs=(os.getpid(),)
            )
        return self._executors[worker].submit(work, *args)

    def broken(self, worker: int) -> None:
        executor = self._executors[worker]
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
            self._executors[worker] = None
        self.holder = {path: held for path, held in self.holder.items() if held != worker}

    def close(self) -> None:
        threads = threading_snapshot()
        for worker, executor in enumerate(self._executors):
            if executor is not None:
                executor.shutdown(wait=True)
                self._executors[worker] = None
        wait_until_reaped(threads)

    def abort(self) -> None:
        """Stop now (an interrupt, an error in the parent): drop the queued batches and end the workers, whose
        batches in progress nobody will read (waiting for them kept Ctrl-C waiting for seconds)."""
        threads = threading_snapshot()
        for worker, executor in enumerate(self._executors):
            if executor is None:
                continue
            processes = list((getattr(executor, "_processes", None) or {}).values())
            executor.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
            for process in processes:
                process.join(5)
            self._executors[worker] = None
        wait_until_reaped(threads)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()


def run_batches(
    work: Callable[..., list[R]],
    files: Sequence[str],
    jobs: int,
    args: tuple,
    crashed: Callable[[str, bool], R],
    pool: WorkerPool | None = None,
) -> list[R]:
    """`work(batch, *args)` -> one result per file, in worker processes (`pool`'s, else a pool of `jobs` for
    this call only). A file goes back to the worker that linted it last, if any; a worker with nothing of its
    own left takes the next shared batch, then another worker's. A worker that dies (a crash in native code)
    loses its batches: their files are run again one per process, and a file whose process dies again gets
    `crashed(path, memory)` (`memory`: it died of an allocation that failed under its memory bound)."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    if pool is None:
        with WorkerPool(jobs) as own:
            return run_batches(work, files, jobs, args, crashed, own)
    held: list[list[str]] = [[] for _ in range(pool.jobs)]
    shared: list[str] = []
    for path in files:
        worker = pool.holder.get(path)
        (shared if worker is None else held[worker]).append(path)
    # Batches are popped from the end of these lists: reversed, so that the first batches go first.
    mine = [[paths[i : i + _HELD_BATCH] for i in range(0, len(paths), _HELD_BATCH)][::-1] for paths in held]
    queue = batches(shared, pool.jobs)[::-1]
    results: dict[str, R] = {}
    pending: list[str] = []
    running: dict[Any, tuple[int, list[str]]] = {}
    load = [0] * pool.jobs
    while True:
        for worker in range(pool.jobs):
            while load[worker] < _IN_FLIGHT:
                batch = _next_batch(worker, mine, queue)
                if batch is None:
                    break
                running[pool.submit(worker, work, batch, *args)] = (worker, batch)
                load[worker] += 1
        if not running:
            break
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        dead: set[int] = set()
        for future in done:
            worker, batch = running.pop(future)
            load[worker] -= 1
            try:
                results.update(zip(batch, future.result(), strict=True))
                pool.holder.update(dict.fromkeys(batch, worker))
            except BrokenProcessPool:
                pending.extend(batch)
                dead.add(worker)
        for worker in dead:  # its other batches fail too: wait for them, then start afresh on next use
            lost = [future for future, (w, _) in running.items() if w == worker]
            wait(lost)
            for future in lost:
                pending.extend(running.pop(future)[1])
            load[worker] = 0
            pool.broken(worker)
    for path in pending:
        results[path] = _isolated(work, path, args, crashed)
    return [results[path] for path in files]


def _next_batch(worker: int, mine: list[list[list[str]]], queue: list[list[str]]) -> list[str] | None:
    """The worker's own files first (it holds their trees), then the shared queue, then another worker's: a
    batch linted from kept trees costs about a quarter of one parsed anew, so only from a worker with more
    than `_STEAL_AFTER` batches waiting (it would take longer over them than this worker over one)."""
    if mine[worker]:
        return mine[worker].pop()
    if queue:
        return queue.pop()
    busiest = max(range(len(mine)), key=lambda other: len(mine[other]))
    return mine[busiest].pop(0) if len(mine[busiest]) > _STEAL_AFTER else None


def _isolated(work: Callable[..., list[R]], path: str, args: tuple, crashed: Callable[[str, bool], R]) -> R:
    import signal
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    threads: list[Any] = []
    processes: list[Any] = []
    try:
        with ProcessPoolExecutor(max_workers=1, initializer=start_isolated, initargs=(os.getpid(),)) as pool:
            future = pool.submit(work, [path], *args)
            threads = threading_snapshot()  # with the executor's own threads
            processes = list((getattr(pool, "_processes", None) or {}).values())
            try:
                return future.result()[0]
            except BrokenProcessPool:
                pass
    finally:
        wait_until_reaped(threads)
    # An allocation that fails under the bound inside libcst's native parser (Rust) aborts the process.
    for process in processes:
        process.join(5)
    return crashed(path, any(process.exitcode == -signal.SIGABRT for process in processes))


def worker_died(path: str, config: Config, memory: bool) -> Finding:
    """The JAX000 for a file whose worker process died on it, alone (`run_batches`' `crashed`)."""
    if memory:
        return out_of_memory(path, memory_bound(config.max_file_size))
    return internal_error(path, "its worker process died")


def start_worker(parent: int) -> None:
    """Pool worker initializer: die with the parent, and keep trees for the run's later rounds."""
    from .syntax import keep_trees

    start_isolated(parent)
    keep_trees(KEPT_TREE_CHARS)


def start_isolated(parent: int) -> None:
    """Initializer of a worker process: die with the parent; its lints are bounded (`bound_worker_memory`)."""
    global _in_worker
    _in_worker = True
    die_with_parent(parent)


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


def _lint_batch(
    paths: list[str],
    config: Config,
    cache_dir: str | None,
    incoming: dict[str, Incoming],
    also: frozenset[str] = frozenset(),
    classes: Mapping[str, Mapping[str, str]] | None = None,
    exports: Mapping[str, Mapping[str, Export]] | None = None,
    imported: frozenset[str] = frozenset(),
    texts: Mapping[str, str] | None = None,
) -> list[tuple[list[Finding], Summary]]:
    bound_worker_memory(config)
    cache = None
    if cache_dir:
        from .cache import FindingCache

        cache = FindingCache(cache_dir)
    classes, exports = classes or {}, exports or {}
    # Left to itself the cyclic collector would traverse a file's objects several times while it is parsed and
    # walked; one young-generation collection after each file finds little (a lint leaves no cycle, and the
    # trees this worker keeps are frozen out of the collector's reach: `syntax.keep_trees`).
    enabled = gc.isenabled()
    gc.disable()
    try:
        out = []
        for path in paths:
            out.append(
                lint_project_file(
                    path,
                    config,
                    cache,
                    incoming.get(path),
                    also,
                    classes.get(path),
                    exports.get(path),
                    path in imported,
                    texts,
                )
            )
            gc.collect(0)
        return out
    finally:
        if enabled:
            gc.enable()


def lint_files(
    paths: Iterable[str], config: Config, jobs: int | None = None, cache_dir: str | None = None
) -> list[Finding]:
    """Lint files as one project, these files only (`lint_named` brings in the rest of their project); with
    `cache_dir`, unchanged files under unchanged settings (and unchanged facts from the other modules) are
    not linted again."""
    files = list(paths)
    jobs = pool_jobs(jobs)
    with WorkerPool(jobs) as pool:
        return _lint_project(files, config, jobs, cache_dir, pool).findings(files)


# -- project context for the files a face names --------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ProjectFacts:
    """What one module receives from the other modules of its project, as `_lint_project` ended with it:
    the facts `lint_project_file` and the fix driver lint it with (`module_facts` makes the walk's record)."""

    incoming: Incoming | None = None
    classes: Mapping[str, str] | None = None
    exports: Mapping[str, Export] | None = None
    also: frozenset[str] = frozenset()
    imported: bool = False  # analysed code calls the module: analysed whatever words it holds

    def module_facts(self, path: str) -> ModuleFacts:
        from .analysis.module_facts import ModuleFacts

        return ModuleFacts(
            self.incoming,
            self.also,
            package_name(path),
            self.classes,
            self.exports,
            self.imported,
            x64_on_import(path),
        )


@dataclasses.dataclass
class ProjectRun:
    """One project's lint: each file's findings and summary, and the facts each was linted with."""

    results: dict[str, tuple[list[Finding], Summary]]
    facts: dict[str, ProjectFacts]

    def findings(self, paths: Iterable[str]) -> list[Finding]:
        """The findings of `paths` only, sorted."""
        found = [finding for path in paths for finding in self.results[path][0]]
        found.sort(key=Finding.sort_key)
        return found


def lint_project(
    named: Iterable[str],
    config: Config,
    jobs: int | None = None,
    cache_dir: str | None = None,
    given: Sequence[str] = (),
    texts: Mapping[str, str] | None = None,
) -> tuple[list[str], ProjectRun]:
    """Every face's door: the named files linted with the facts of their whole projects (`project_scope`:
    the project, narrowed to the modules its imports link to the named ones; their summaries come from the
    findings cache, computed where missing or stale). Returns the named files and the run, whose
    `findings(named)` are what a face reports: the same findings for a file whether it is named alone, with
    its folder, or with the whole project. `texts` (absolute path -> text) stand for files' contents on disk:
    the server's open documents."""
    from .project_scope import project_scope

    files = list(dict.fromkeys(named))
    if not files:
        return files, ProjectRun({}, {})
    scope = project_scope(files, config, given, texts)
    return files, lint_scope(scope.lint, scope.index, config, jobs, cache_dir, texts)


def lint_scope(
    files: list[str],
    modules: list[str],
    config: Config,
    jobs: int | None = None,
    cache_dir: str | None = None,
    texts: Mapping[str, str] | None = None,
) -> ProjectRun:
    """Lint `files` (a set closed under the project's import links, `project_scope.linked`) as one project
    whose modules are `modules`."""
    jobs = pool_jobs(jobs)
    with WorkerPool(jobs) as pool:
        return _lint_project(files, config, jobs, cache_dir, pool, modules, texts)


def facts_for(path: str, config: Config, cache_dir: str | None = None) -> ProjectFacts | None:
    """What the other modules of `path`'s project (as stored on disk) give it, for a face that lints a text
    of its own under that name (stdin with `--stdin-filename`, an editor's unsaved buffer); None for a name
    that is no file."""
    if not os.path.isfile(path):
        return None
    _, run = lint_project([path], config, jobs=1, cache_dir=cache_dir)
    return run.facts.get(path)


def lint_text_in_project(
    source: str, path: str, config: Config, cache_dir: str | None = None, data: bytes | None = None
) -> list[Finding]:
    """`source` (decoded from `data`) linted as the file `path` with the facts its project gives that file
    (`facts_for`): what `jaxlint path` would report if the file held `source`, the other modules as they are
    on disk. When the file holds these very bytes, the project's lint of it answers (`cached_findings`)."""
    facts = facts_for(path, config, cache_dir)
    known = cached_findings(path, data, config, cache_dir, facts) if data is not None else None
    if known is not None:
        return known
    settings = settings_for(config, path)
    project = facts.module_facts(path) if facts is not None else None
    return keep_selected(lint_guarded(source, path, settings, project=project), settings)


def lint_named(
    named: Iterable[str],
    config: Config,
    jobs: int | None = None,
    cache_dir: str | None = None,
    given: Sequence[str] = (),
) -> list[Finding]:
    """The findings of the named files, each linted with the facts of its whole project (`lint_project`)."""
    files, run = lint_project(named, config, jobs, cache_dir, given)
    return run.findings(files)


def _lint_project(
    files: list[str],
    config: Config,
    jobs: int,
    cache_dir: str | None,
    pool: WorkerPool,
    modules: Sequence[str] | None = None,
    texts: Mapping[str, str] | None = None,
) -> ProjectRun:
    """Lint `files` as one project, round after round; `modules` (default: `files`) name the project's
    modules, a superset when only the files linked to some named ones are linted (`project_scope`)."""
    project = ProjectIndex(dict.fromkeys(modules if modules is not None else files))
    also = library_heads(project.heads)
    results = _lint_many(files, config, jobs, cache_dir, pool, {}, also, texts=texts)
    # Modules the prefilter skipped that import an analysed module (`project_scope.silent_importers`), then
    # those that analysed code calls (`ProjectIndex.silent_callees`), are analysed after all, in this and
    # every later round.
    from .project_scope import silent_importers

    empty = Summary()
    importers = frozenset(
        silent_importers(
            [path for path, (_, summary) in results.items() if summary == empty],
            [path for path, (_, summary) in results.items() if summary != empty],
            project.names,
            config,
            texts,
        )
    )
    if importers:
        results.update(
            _lint_many(
                sorted(importers), config, jobs, cache_dir, pool, {}, also, imported=importers, texts=texts
            )
        )
    silent = project.silent_callees({path: summary for path, (_, summary) in results.items()}) - importers
    imported = importers | silent
    if silent:
        results.update(
            _lint_many(
                sorted(silent), config, jobs, cache_dir, pool, {}, also, imported=imported, texts=texts
            )
        )
    own = {path: summary for path, (_, summary) in results.items()}
    # The kinds of classes come from the modules' latest summaries: a module told of an imported pytree base or
    # static field maker may find more pytree classes (static fields) of its own, for its importers.
    given_classes: dict[str, dict[str, str]] = {}
    given: dict[str, Incoming] = {}
    # What the other modules' functions do (keys consumed, arrays returned, jitted) comes from their latest
    # summaries: a module linted again with new facts may export more, so these can change round to round.
    exported: dict[str, dict[str, Export]] = {}
    for _ in range(MAX_ROUNDS):
        latest = {path: summary for path, (_, summary) in results.items()}
        incoming = project.incoming(latest, own, imported)
        exports = project.exports(latest)
        classes = project.classes(latest)
        changed = [
            path
            for path in results
            if incoming.get(path, {}) != given.get(path, {})
            or exports.get(path, {}) != exported.get(path, {})
            or classes.get(path, {}) != given_classes.get(path, {})
        ]
        if not changed:
            break
        given.update((path, incoming.get(path, {})) for path in changed)
        given_classes.update((path, classes.get(path, {})) for path in changed)
        exported.update((path, exports.get(path, {})) for path in changed)
        results.update(
            _lint_many(
                changed,
                config,
                jobs,
                cache_dir,
                pool,
                {path: given[path] for path in changed},
                also,
                given_classes,
                {path: exported[path] for path in changed},
                imported,
                texts,
            )
        )
    facts = {
        path: ProjectFacts(
            given.get(path), given_classes.get(path) or None, exported.get(path), also, path in imported
        )
        for path in results
    }
    return ProjectRun(results, facts)


def _lint_many(
    files: list[str],
    config: Config,
    jobs: int,
    cache_dir: str | None,
    pool: WorkerPool,
    incoming: dict[str, Incoming],
    also: frozenset[str],
    classes: Mapping[str, Mapping[str, str]] | None = None,
    exports: Mapping[str, Mapping[str, Export]] | None = None,
    imported: frozenset[str] = frozenset(),
    texts: Mapping[str, str] | None = None,
) -> dict[str, tuple[list[Finding], Summary]]:
    done: dict[str, tuple[list[Finding], Summary]] = {}
    if cache_dir and jobs > 1 and len(files) >= _MIN_FILES_FOR_POOL:
        # Cache hits are answered here, so an unchanged re-run starts no worker processes at all.
        from .cache import FindingCache

        cache = FindingCache(cache_dir)
        for path in files:
            hit = cached_result(
                path,
                config,
                cache,
                incoming.get(path),
                also,
                (classes or {}).get(path),
                (exports or {}).get(path),
                path in imported,
                texts,
            )
            if hit is not None:
                done[path] = hit
        files = [path for path in files if path not in done]
    pooled = files if jobs > 1 and len(files) >= _MIN_FILES_FOR_POOL else []
    if jobs > 1 and not pooled:  # a large file goes to a worker all the same: there its memory is bounded
        pooled = [path for path in files if _size(path) > _IN_PROCESS_MAX]
    if len(pooled) < len(files):
        away = set(pooled)
        here = [path for path in files if path not in away]
        batch = _lint_batch(here, config, cache_dir, incoming, also, classes, exports, imported, texts)
        done.update(zip(here, batch, strict=True))
    if not pooled:
        return done
    ordered = sorted(pooled, key=_size, reverse=True)
    per_file = run_batches(
        _lint_batch,
        ordered,
        jobs,
        (config, cache_dir, incoming, also, classes, exports, imported, texts),
        lambda path, memory: (
            keep_selected([worker_died(path, config, memory)], settings_for(config, path)),
            Summary(),
        ),
        pool,
    )
    return done | dict(zip(ordered, per_file, strict=True))


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
