"""`--fix`: apply the rules' fixes to source texts and write files without losing anything.

`fix_source` lints, applies the non-overlapping fixes allowed by the safety level, re-parses the result and
repeats (a fix that sat inside another one's node gets its turn in the next round) until nothing is left to
fix, so running it twice changes nothing the second time. Text outside the fixed nodes stays byte-identical:
when libcst cannot give the text back exactly (it drops the last CR of a CR-only file) the lost tail is put
back, and a file it would change otherwise is not fixed.

`fix_file` writes only when it is safe to (`_refusal`): never a read-only file, never through a symlink that
leaves the project, never a file that changed since it was read. It keeps owner, group and mode, and edits
hard-linked files in place so the link survives; otherwise it writes a temp file and renames it over the
file. Temp files carry the writer's pid, so the next run removes those a killed run left behind.
`fix_files` runs it over many files with `lint.py`'s pool, reading, decoding and error policy.
Notebooks are linted but never rewritten.
"""

from __future__ import annotations

import dataclasses
import difflib
import io
import os
import re
import tokenize
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import libcst as cst

from .config import Config
from .finding import Finding
from .fix import SAFE, Fix, FixCollector
from .lint import (
    _MIN_FILES_FOR_POOL,
    ProjectFacts,
    bound_worker_memory,
    cached_findings,
    internal_error,
    keep_selected,
    lint_guarded,
    memory_limit,
    observe_re_exports,
    out_of_memory,
    pool_jobs,
    read_source,
    remember,
    run_batches,
    worker_died,
)
from .selection import LintSettings, settings_for
from .syntax import run_deep

if TYPE_CHECKING:
    from .analysis.module_facts import ModuleFacts
    from .analysis.project import Summary

_MAX_ROUNDS = 10  # rounds of fixes: fixes whose nodes overlap are applied one round each
_TEMP_SUFFIX = ".jaxlint-tmp"


# -- applying ---------------------------------------------------------------------------------------------


class _Replacer(cst.CSTTransformer):
    def __init__(self, edits: dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:
        replacement = self.edits.get(id(original_node))
        return updated_node if replacement is None else replacement


def _descendants(node: cst.CSTNode) -> set[int]:
    from .syntax import walk

    return {id(n) for n in walk(node)}


def choose(items: Iterable[tuple[Finding, Fix]], unsafe: bool) -> list[tuple[Finding, Fix]]:
    """The fixes to apply this round: allowed by the safety level, first in the file first, none inside another."""
    allowed = [(f, x) for f, x in items if x.safety == SAFE or unsafe]
    allowed.sort(key=lambda pair: pair[0].sort_key())
    chosen: list[tuple[Finding, Fix]] = []
    covered: set[int] = set()  # every node inside a chosen fix's node
    roots: set[int] = set()  # the chosen fixes' nodes (kept as a set: a file may have thousands of fixes)
    for finding, fix in allowed:
        if id(fix.node) in covered:
            continue
        inside = _descendants(fix.node)
        if inside & roots:
            continue
        chosen.append((finding, fix))
        covered |= inside
        roots.add(id(fix.node))
    return chosen


def apply(module: cst.Module, fixes: Iterable[Fix]) -> str:
    """The module's text with the fixes applied (on a deep stack: the module may nest thousands of levels)."""
    fixes = list(fixes)
    imports = list(dict.fromkeys(text for fix in fixes for text in fix.imports))
    return run_deep(_apply, module, {id(fix.node): fix.replacement for fix in fixes}, imports)


def _apply(module: cst.Module, edits: dict[int, cst.CSTNode], imports: list[str]) -> str:
    if not edits:
        return module.code
    fixed = module.visit(_Replacer(edits))
    return _with_imports(fixed, imports).code if imports else fixed.code


def _with_imports(module: cst.Module, imports: list[str]) -> cst.Module:
    """The module with the import statements added after its leading imports (after its docstring when it
    starts with no import). The rule asks for one only where the name it binds is unbound and unused."""
    body = list(module.body)
    at = 0
    for position, statement in enumerate(body):
        small = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
        first = small[0] if len(small) == 1 else None
        docstring = (
            position == 0 and isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString)
        )
        if not (docstring or small and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in small)):
            break
        at = position + 1
    added = [cst.parse_statement(text + "\n") for text in imports]
    return module.with_changes(body=[*body[:at], *added, *body[at:]])


# -- sources ----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class FixResult:
    path: str
    source: str  # as read
    fixed: str  # after every applied fix (== source when nothing applied)
    findings: list[Finding]  # what remains after fixing
    applied: Counter = dataclasses.field(default_factory=Counter)  # code -> fixes applied
    written: bool = False
    error: str | None = None  # why the file was not written
    summary: Summary | None = None  # the fixed text's, from the last round's lint (when fixes were applied)

    @property
    def changed(self) -> bool:
        return self.fixed != self.source

    def diff(self) -> str:
        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            self.source.splitlines(keepends=True),
            self.fixed.splitlines(keepends=True),
            fromfile=f"a/{self.path}",
            tofile=f"b/{self.path}",
        )
        out = []
        for line in lines:
            out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
        return "".join(out)


def fix_source(
    source: str,
    path: str,
    config: Config,
    unsafe: bool = False,
    facts: ProjectFacts | None = None,
    known: list[Finding] | None = None,
) -> FixResult:
    """Fix one source text (nothing is written), linted with the facts its project gives it (`facts`, from
    `lint.lint_project`: a finding that needs another module is fixed too). Notebooks are linted, not fixed.
    `known`: this text's findings with these facts, when a lint already gave them (`lint.cached_findings`):
    a text with nothing to fix at this safety level is not linted again."""
    settings = settings_for(config, path)

    def project() -> ModuleFacts | None:
        return facts.module_facts(path) if facts is not None else None

    if known is not None and (path.endswith(".ipynb") or not fixable(known, unsafe)):
        return FixResult(path, source, source, known)
    if path.endswith(".ipynb"):
        found = lint_guarded(source, path, settings, project=project())
        return FixResult(path, source, source, keep_selected(found, settings))
    # Every round parses and prints the module: on a deep stack, as the engine does.
    return run_deep(_fix_rounds, source, path, settings, unsafe, project)


def _fix_rounds(
    source: str,
    path: str,
    settings: LintSettings,
    unsafe: bool,
    project: Callable[[], ModuleFacts | None],
) -> FixResult:
    current = source
    applied: Counter = Counter()
    # At most _MAX_ROUNDS rounds of fixes; the last lint is always of the text returned, so what remains is
    # what `jaxlint` reports on it. Each lint has a record of its own (`project()`): it collects a summary.
    for round_number in range(_MAX_ROUNDS + 1):
        collector = FixCollector()
        record = project()
        findings = lint_guarded(current, path, settings, fixes=collector, project=record)
        module = collector.module
        chosen = choose(collector.items, unsafe) if module is not None and round_number < _MAX_ROUNDS else []
        if module is None or not chosen:
            break
        # libcst gives back the text it parsed except, on CR-only files, the last CR: put a lost tail back,
        # and fix nothing where the text would differ anywhere else.
        tail = current[len(module.code) :] if current.startswith(module.code) else None
        if tail is None:
            break
        new = apply(module, [fix for _, fix in chosen]) + tail
        if new == current or not _parses(new):
            break
        current = new
        applied.update(finding.code for finding, _ in chosen)
    summary = None
    if applied and record is not None:
        observe_re_exports(current, path, settings, record)
        summary = record.summary()
    return FixResult(path, source, current, keep_selected(findings, settings), applied, summary=summary)


def fixable(findings: Iterable[Finding], unsafe: bool) -> bool:
    """Whether a fix round would apply something: a finding whose fix the safety level allows (`choose`)."""
    return any(f.fix is not None and (unsafe or f.fix_safety == SAFE) for f in findings)


def _parses(source: str) -> bool:
    try:
        cst.parse_module(source)
    except Exception:
        return False
    return True


# -- files ------------------------------------------------------------------------------------------------


def fix_file(
    path: str,
    config: Config,
    unsafe: bool = False,
    write: bool = True,
    facts: ProjectFacts | None = None,
    cache_dir: str | None = None,
) -> FixResult:
    """Fix one file; with `write`, replace it when something changed and it is safe to (see the module doc).
    With `cache_dir`, the project's lint of the file (`lint.lint_project`, which just cached it) stands for
    the first round where nothing is fixable, and the lint of the written text is cached for the next one."""
    settings = settings_for(config, path)
    read = read_source(path, settings)
    if isinstance(read, list):
        return FixResult(path, "", "", keep_selected(read, settings))  # reports why, as JAX000
    data, source = read
    if write:
        remove_stale_temps(os.path.dirname(os.path.realpath(path)))
    known = cached_findings(path, data, config, cache_dir, facts)
    result = fix_source(source, path, config, unsafe, facts, known)
    if not (write and result.changed):
        return result
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        new = result.fixed.encode(encoding)
        result.error = write_checked(path, new, data, config)
    except UnicodeEncodeError as error:
        result.error = f"the fixed text cannot be written in the file's encoding ({error.reason})"
    except OSError as error:
        result.error = error.strerror or str(error)
    if result.error is None:
        result.written = True
        if result.summary is not None:
            remember(path, new, config, cache_dir, facts, (result.findings, result.summary))
    else:  # nothing was fixed: report what the file as it is has
        result.fixed, result.applied, result.summary = source, Counter(), None
        if known is None:
            found = lint_guarded(source, path, settings, project=facts.module_facts(path) if facts else None)
            known = keep_selected(found, settings)
        result.findings = known
    return result


def changes_the_project(
    results: Iterable[FixResult], facts: Mapping[str, ProjectFacts], summaries: Mapping[str, Summary]
) -> bool:
    """Whether the written files may change what the project's modules give each other, so the project must
    be linted again for what remains: a fixed text's summary differs from the one the project's lint had
    (`summaries`: path -> summary), or the file had facts from other modules (the project's first round read
    its summary without them, which the fix driver did not compute)."""
    for result in results:
        if not result.written:
            continue
        given = facts.get(result.path)
        if result.summary is None or given is None or result.summary != summaries.get(result.path):
            return True
        if given.incoming or given.classes or given.exports or given.imported:
            return True
    return False


def write_checked(path: str, data: bytes, expected: bytes, config: Config) -> str | None:
    """Replace the file's bytes with `data` when it is safe to (`_refusal`) and it still holds `expected`;
    None, or why not (what `--fix` and `--add-noqa` write through)."""
    return _refusal(path, config) or _write(path, data, expected=expected)


def _refusal(path: str, config: Config) -> str | None:
    """Why `path` must not be rewritten, or None."""
    status = os.stat(path)
    if not status.st_mode & 0o222 or not os.access(path, os.W_OK):
        return "the file is read-only; not fixed"
    real = os.path.realpath(path)
    if real != os.path.abspath(path):  # reached through a symlink
        project = _project_of(path, config)
        if os.path.commonpath([project, real]) != project:
            return f"it is a link to {real}, outside the project ({project}); not fixed"
    return None


def _project_of(path: str, config: Config) -> str:
    """The folder a link's target must stay in: the pyproject.toml's folder, else the current folder when
    the link is inside it, else the link's own folder."""
    if config.root is not None:
        return os.path.realpath(config.root)
    here = os.path.realpath(os.getcwd())
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return here if os.path.commonpath([here, folder]) == here else folder


def _write(path: str, data: bytes, expected: bytes) -> str | None:
    """Replace the file's bytes with `data` unless it no longer holds `expected`; None, or why not."""
    target = os.path.realpath(path)
    with open(target, "rb") as handle:
        if handle.read() != expected:
            return "the file changed since jaxlint read it; not fixed (run again)"
    status = os.stat(target)
    if status.st_nlink == 1:
        try:
            write_atomic(target, data, status)
            return None
        except PermissionError:
            pass  # the folder is not writable, or the owner cannot be kept: write in place
    # In place (not atomic): a rename would give this name a new inode and leave the other hard links with
    # the old text, or change the file's owner.
    with open(target, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())
    return None


def write_atomic(path: str, data: bytes, status: os.stat_result | None = None) -> None:
    """Write `data` to `path` through a temp file in the same folder and `os.replace`, keeping mode, owner
    and group."""
    target = os.path.realpath(path)
    status = status or os.stat(target)
    temp = _temp_name(target)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if (status.st_uid, status.st_gid) != (os.geteuid(), os.getegid()):
            os.chown(temp, status.st_uid, status.st_gid)  # as root; a PermissionError keeps the file as is
        os.chmod(temp, status.st_mode & 0o7777)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _temp_name(target: str) -> str:
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}.{os.getpid()}{_TEMP_SUFFIX}")


_TEMP_NAME = re.compile(r"\..+\.(\d+)" + re.escape(_TEMP_SUFFIX) + "$")
_CLEANED: set[str] = set()  # folders this process has cleaned


def remove_stale_temps(folder: str) -> None:
    """Delete the temp files in `folder` whose writer is no longer running (a run killed mid-write); once
    per folder and process, so a run stays linear in the number of files."""
    if folder in _CLEANED:
        return
    _CLEANED.add(folder)
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return
    for entry in entries:
        match = _TEMP_NAME.match(entry)
        if match and not _running(int(match.group(1))):
            try:
                os.unlink(os.path.join(folder, entry))
            except OSError:
                pass


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _fix_batch(
    paths: list[str],
    config: Config,
    unsafe: bool,
    write: bool,
    facts: Mapping[str, ProjectFacts],
    cache_dir: str | None = None,
) -> list[FixResult]:
    bound_worker_memory(config)
    return [_fix_guarded(path, config, unsafe, write, facts.get(path), cache_dir) for path in paths]


def _fix_guarded(
    path: str,
    config: Config,
    unsafe: bool,
    write: bool,
    facts: ProjectFacts | None = None,
    cache_dir: str | None = None,
) -> FixResult:
    try:
        return fix_file(path, config, unsafe, write, facts, cache_dir)
    except MemoryError:  # over a worker's bound (`lint.bound_memory`)
        return _failed(path, config, out_of_memory(path, memory_limit()))
    except Exception as error:  # lint_guarded catches the linter's bugs; this, the rest of the driver's
        return _failed(path, config, internal_error(path, error))


def _failed(path: str, config: Config, finding: Finding) -> FixResult:
    return FixResult(path, "", "", keep_selected([finding], settings_for(config, path)))


def fix_files(
    paths: Iterable[str],
    config: Config,
    unsafe: bool = False,
    write: bool = True,
    jobs: int | None = None,
    facts: Mapping[str, ProjectFacts] | None = None,
    cache_dir: str | None = None,
) -> list[FixResult]:
    """Fix many files, in worker processes like `lint.lint_files`, each with the facts its project gives it
    (`facts`: path -> `ProjectFacts`, from `lint.lint_project`, run with the same `cache_dir`); results in
    path order."""
    files = sorted(paths)
    facts = {path: facts[path] for path in files if path in facts} if facts else {}
    jobs = pool_jobs(jobs)
    if jobs <= 1 or len(files) < _MIN_FILES_FOR_POOL:
        return _fix_batch(files, config, unsafe, write, facts, cache_dir)
    return run_batches(
        _fix_batch,
        files,
        jobs,
        (config, unsafe, write, facts, cache_dir),
        lambda path, memory: _failed(path, config, worker_died(path, config, memory)),
    )
