"""`verify_findings`: give static findings verdicts by running the flagged code (see the package
docstring); `parse_examples`: the declared examples, by module."""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..recompiles.signature_store import read_functions, recorded_sources
from .child.expectations import CONFIRMABLE_CODES
from .children import LIVE_CHILDREN, REAPER
from .contradictions import note_contradictions
from .fork_server import ForkServer
from .found import join_raised
from .jobs import ModuleJob, example_keys, locate_module, run_module
from .notebook_module import NotebookModule, write_notebook_module
from .results import NOT_CHECKED, NOT_RUN, FindingVerdict, VerifyReport, VerifyStep

if TYPE_CHECKING:
    from jaxlint.finding import Finding

DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY_LIMIT_MB = 4096


def parse_examples(table: Any) -> dict[str, dict[str, list[str]]]:
    """`{"pkg.mod:qual": "args" | ["args", ...]}` (or the `examples` of VerifySettings) ->
    `{"pkg.mod": {"qual": ["args", ...]}}`. Raises ValueError naming the bad entry."""
    parsed: dict[str, dict[str, list[str]]] = {}
    if isinstance(table, Mapping) and isinstance(table.get("examples"), Mapping):
        table = table["examples"]  # handed the whole [tool.jaxlint.verify] table
    items = table.items() if isinstance(table, Mapping) else (table or ())
    for key, value in items:
        module, sep, qualname = str(key).rpartition(":")
        if not sep or not module or not qualname:
            raise ValueError(f"[tool.jaxlint.verify.examples] key {key!r} is not 'module:function'")
        values = [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else []
        if not values or not all(isinstance(v, str) for v in values):
            raise ValueError(f"[tool.jaxlint.verify.examples] {key!r} must be a string or a list of strings")
        parsed.setdefault(module, {}).setdefault(qualname, []).extend(values)
    return parsed


def _defined_names(path: Path) -> set[str]:
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return set()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {n.name for n in ast.walk(tree) if isinstance(n, kinds)} | {"<lambda>"}


def _example_module(module: str, root: Path) -> Path | None:
    """The file an example key's module part names: `pkg.mod` (also under `src/`) or a path."""
    dotted = module.replace(".", "/")
    candidates = [root / module] if module.endswith(".py") else []
    for base in (root, root / "src"):
        candidates += [base / f"{dotted}.py", base / dotted / "__init__.py"]
    return next((c for c in candidates if c.is_file()), None)


def unmatched_examples(examples: Any, root: Path) -> list[str]:
    """Declared example keys that name no module file under `root` (`pkg.mod`, `src/` layouts, or a
    path) or no function of that name in it: likely typos, which would otherwise be ignored silently."""
    root = Path(root)
    unmatched = []
    for module, functions in parse_examples(examples).items():
        path = _example_module(module, root)
        names = _defined_names(path) if path is not None else set()
        for qualname in functions:
            if path is None:
                unmatched.append(f"{module}:{qualname} (no module {module!r} in {root})")
            elif qualname.split(".")[-1] not in names:
                unmatched.append(f"{module}:{qualname} (no function {qualname.split('.')[-1]!r} in {path})")
    return unmatched


MAX_CALLER_MODULES = 4


def _defines_modules(path: Path) -> bool:
    """A file that may define a flax or haiku Module (its text names the library): verify imports it."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "Module" in text and ("flax" in text or "haiku" in text)


def _caller_modules(
    declared: dict[str, dict[str, list[str]]], signatures_dir: str | None, root: Path
) -> list[dict[str, Any]]:
    """The project's modules that have real inputs for some function: declared examples, recorded calls.
    Each module's verify child may trace them to reach a line its own inputs do not (child/callers.py)."""
    found: dict[Path, dict[str, Any]] = {}

    def entry(path: Path) -> dict[str, Any]:
        location = locate_module(path, root)
        if location.path not in found:
            found[location.path] = {
                "module": location.name,
                "path": str(location.path),
                "search_path": list(location.search_path),
                "examples": {},
                "recorded": {},
            }
        return found[location.path]

    for module, functions in declared.items():
        path = _example_module(module, root)
        if path is not None:
            for qualname, values in functions.items():
                entry(path)["examples"].setdefault(qualname, []).extend(values)
    for source in recorded_sources(signatures_dir):
        functions = {q: e for q, e in read_functions(signatures_dir, source).items() if e.get("calls")}
        if functions and Path(source).is_file():
            entry(Path(source))["recorded"].update(functions)
    return list(found.values())


def _callers_for(job: ModuleJob, modules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The other modules, those that name this one first (they likely call it), a few at most."""
    name = job.location.name.rpartition(".")[2]

    def mentions(module: dict[str, Any]) -> bool:
        try:
            return name in Path(module["path"]).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False

    others = [m for m in modules if m["path"] != str(job.location.path)]
    return sorted(others, key=lambda m: not mentions(m))[:MAX_CALLER_MODULES]


def _skip_reason(finding: Finding, path: Path | None) -> str:
    if path is None:
        return f"source file not found: {finding.path}"
    if finding.cell is not None and path.suffix != ".ipynb":
        return "cells of this kind of file are not verified"
    if finding.cell is None and path.suffix != ".py":
        return "only .py files can be imported"
    return ""


def _source_path(finding: Finding, root: Path) -> Path | None:
    for candidate in (Path(finding.path), root / finding.path):
        if candidate.is_file():
            return candidate
    return None


def verify_findings(
    findings: list[Finding],
    *,
    python: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    jobs: int = 1,
    examples: Mapping[str, str | Sequence[str]] | Sequence[tuple[str, Sequence[str]]] | None = None,
    root: Path = Path("."),
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
    progress: Callable[[VerifyStep], None] | None = None,
    fork: bool = True,
    signatures_dir: str | None = None,
    names: Mapping[str, str] | None = None,
    keep: Callable[[Finding], bool] | None = None,
    trace_all: Sequence[str] | None = None,
) -> VerifyReport:
    """Give every finding a verdict. Findings of rules that cannot be confirmed, of notebooks, or of files
    that are gone are NOT_RUN with the reason; the others are traced, one child per module. A JAX error a
    trace raised in the project's code confirms the finding there, or is a finding of its own
    (`report.found`, FOUND_BY_RUNNING; `names` gives its rule's name, `keep` filters it: found.py).
    `trace_all` (`--verify --all`: the files linted) also traces every function that has real inputs, in
    every module that has some, and the `__call__` of the flax and haiku Modules these files define, for
    what those traces raise."""
    with tempfile.TemporaryDirectory(prefix="jaxlint-notebooks-") as notebooks:
        report = _verify(
            findings,
            Path(notebooks),
            python,
            timeout,
            jobs,
            examples,
            Path(root),
            memory_limit_mb,
            progress,
            fork,
            signatures_dir,
            trace_all,
        )
    join_raised(report, findings, Path(root), names or {}, keep)
    note_contradictions(report, Path(root), signatures_dir)
    return report


def _verify(
    findings: list[Finding],
    notebooks: Path,
    python: str | None,
    timeout: float,
    jobs: int,
    examples: Any,
    root: Path,
    memory_limit_mb: int | None,
    progress: Callable[[VerifyStep], None] | None,
    fork: bool,
    signatures_dir: str | None = None,
    trace_all: Sequence[str] | None = None,
) -> VerifyReport:
    declared = parse_examples(examples)
    report = VerifyReport({})
    module_jobs: dict[Path, ModuleJob] = {}
    joined: dict[Path, NotebookModule] = {}
    from_cells: dict[Finding, tuple[Finding, NotebookModule]] = {}  # as run -> (as reported, its notebook)
    for finding in dict.fromkeys(findings):
        if finding.code not in CONFIRMABLE_CODES:
            from ..confirmable import RECOMPILE_CODES  # here: confirmable imports this package

            # `--run` shows recompiles (JAX401, JAX402) in a real run; the others no run shows.
            hint = " (use --run)" if finding.code in RECOMPILE_CODES else ""
            report.verdicts[finding] = FindingVerdict(NOT_CHECKED, f"not checked by tracing{hint}")
            continue
        path = _source_path(finding, root)
        reason = _skip_reason(finding, path)
        if reason:
            report.verdicts[finding] = FindingVerdict(NOT_RUN, reason)
            continue
        assert path is not None
        if finding.cell is not None:
            try:
                notebook = joined.get(path) or write_notebook_module(path, notebooks)
            except (OSError, ValueError) as error:
                report.verdicts[finding] = FindingVerdict(NOT_RUN, f"cannot read the notebook: {error}")
                continue
            joined[path] = notebook
            line = notebook.lines.get((finding.cell, finding.line))
            if line is None:
                report.verdicts[finding] = FindingVerdict(NOT_RUN, "the cell changed since it was linted")
                continue
            end = notebook.lines.get((finding.cell, finding.end_line), line)
            as_run = dataclasses.replace(finding, path=str(notebook.path), line=line, end_line=end, cell=None)
            from_cells[as_run] = (finding, notebook)
            finding, path = as_run, notebook.path
        location = locate_module(path, root)
        job = module_jobs.get(location.path)
        if job is None:
            job = module_jobs[location.path] = ModuleJob(location)
            # Calls a `--verify --run` recorded (recompiles/signature_store.py): inputs tried first.
            job.recorded = read_functions(signatures_dir, str(location.path))
            for key in example_keys(location, root):
                for qualname, values in declared.get(key, {}).items():
                    job.examples.setdefault(qualname, []).extend(values)
        job.findings.append(finding)

    callers = _caller_modules(declared, signatures_dir, root) if module_jobs or trace_all is not None else []
    if trace_all is not None:  # modules with real inputs for some function, or Modules, findings or not
        with_modules = [Path(p) for p in trace_all if _defines_modules(Path(p))]
        for path in [*(Path(m["path"]) for m in callers), *with_modules]:
            location = locate_module(path, root)
            if location.path not in module_jobs:
                job = module_jobs[location.path] = ModuleJob(location)
                job.recorded = read_functions(signatures_dir, str(location.path))
                for key in example_keys(location, root):
                    for qualname, values in declared.get(key, {}).items():
                        job.examples.setdefault(qualname, []).extend(values)
    for job in module_jobs.values():
        job.callers = _callers_for(job, callers)
        job.trace_all = trace_all is not None

    python = python or sys.executable
    LIVE_CHILDREN.reopen()
    with REAPER:  # what a module's processes leave behind is re-parented to jaxlint, and ended
        return _run_jobs(
            module_jobs, report, from_cells, python, timeout, jobs, memory_limit_mb, progress, fork
        )


def _in_cells(
    record: dict[str, Any], from_cells: dict[Finding, tuple[Finding, NotebookModule]]
) -> dict[str, Any]:
    """A record of a notebook's joined module also names the notebook, its cell and the line in the cell
    (the module is gone with its temporary folder when found.py joins the records)."""
    for shown, notebook in from_cells.values():
        if os.path.realpath(notebook.path) == record.get("path"):
            where = notebook.cells.get(record.get("line", 0))
            if where is not None:
                end = notebook.cells.get(record.get("end_line") or 0, where)
                return {
                    **record,
                    "notebook": shown.path,
                    "cell": where[0],
                    "cell_line": where[1],
                    "cell_end_line": end[1] if end[0] == where[0] else where[1],
                    "inputs": notebook.describe(str(record.get("inputs") or "")),
                }
            break
    return record


def _run_jobs(
    module_jobs: dict[Path, ModuleJob],
    report: VerifyReport,
    from_cells: dict[Finding, tuple[Finding, NotebookModule]],
    python: str,
    timeout: float,
    jobs: int,
    memory_limit_mb: int | None,
    progress: Callable[[VerifyStep], None] | None,
    fork: bool,
) -> VerifyReport:
    # One jax import for the whole run, each module forked from it (child/zygote.py); `fork=False`, or a
    # server that cannot start, gives each module a fresh interpreter.
    server: ForkServer | None = None

    def run(job: ModuleJob):
        return run_module(job, python=python, timeout=timeout, memory_limit_mb=memory_limit_mb, server=server)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        try:
            if fork and module_jobs:  # in the try: a signal while it starts ends what started
                server = ForkServer(python)
            modules, findings = len(module_jobs), sum(len(job.findings) for job in module_jobs.values())
            if progress is not None:
                progress(VerifyStep(0, modules, 0, findings))
            findings_done = 0
            for done, outcome in enumerate(pool.map(run, module_jobs.values()), 1):
                findings_done += outcome.run.findings
                if progress is not None:
                    verdicts = tuple(v.verdict for v in outcome.verdicts.values())
                    progress(VerifyStep(done, modules, findings_done, findings, outcome.run, verdicts))
                for finding, verdict in outcome.verdicts.items():
                    if finding in from_cells:
                        finding, notebook = from_cells[finding]
                        verdict = dataclasses.replace(
                            verdict,
                            reason=notebook.describe(verdict.reason),
                            unblocked=notebook.describe(verdict.unblocked),
                        )
                    report.verdicts[finding] = verdict
                report.modules.append(outcome.run)
                device = outcome.environment.describe() if outcome.environment else None
                report.raised += [
                    _in_cells({**record, "device": device}, from_cells) for record in outcome.raised
                ]
                if outcome.environment is not None and outcome.environment not in report.environments:
                    report.environments.append(outcome.environment)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            LIVE_CHILDREN.kill_all()  # then the supervising threads see their children gone and return
            raise
        finally:
            if server is not None:
                server.close()
    return report
