"""One module's job: where the child imports it from (its dotted name and sys.path), which findings and
examples it carries, and running it in a child, restarted for the findings a crash cut off."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from jaxlint.finding import Finding

from .readback import Reading, read_child
from .results import NOT_RUN, Environment, FindingVerdict, ModuleRun
from .supervise import ChildRun, run_child


@dataclasses.dataclass(frozen=True)
class ModuleLocation:
    path: Path  # resolved file
    name: str  # dotted module name, e.g. "pkg.sub.mod"
    search_path: tuple[str, ...]  # put first on the child's sys.path, in this order


def locate_module(path: Path, root: Path) -> ModuleLocation:
    """Walk up from the file while folders are packages (have __init__.py): the first folder that is not
    is the import root. The project root (and its src/) come after it, for absolute imports of the
    project's other packages."""
    path = path.resolve()
    parts = [path.stem] if path.name != "__init__.py" else []
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    search = [str(folder)]
    root = root.resolve()
    for extra in (root, root / "src"):
        if extra.is_dir() and str(extra) not in search:
            search.append(str(extra))
    return ModuleLocation(path, ".".join(parts) or path.parent.name, tuple(search))


def example_keys(location: ModuleLocation, root: Path) -> tuple[str, ...]:
    """Prefixes under which the user may declare examples for this module: `pkg.mod:` or `path/to/mod.py:`."""
    keys = [location.name]
    try:
        keys.append(location.path.relative_to(root.resolve()).as_posix())
    except ValueError:
        pass
    return tuple(keys)


@dataclasses.dataclass
class ModuleJob:
    location: ModuleLocation
    findings: list[Finding] = dataclasses.field(default_factory=list)
    examples: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # qualname -> argument strings
    recorded: dict[str, Any] = dataclasses.field(default_factory=dict)  # qualname -> calls from `--run`
    callers: list[dict[str, Any]] = dataclasses.field(
        default_factory=list
    )  # other modules' (child/callers.py)
    trace_all: bool = False  # `--verify --all`: also trace every function with real inputs, flagged or not


@dataclasses.dataclass
class ModuleOutcome:
    verdicts: dict[Finding, FindingVerdict]
    environment: Environment | None
    run: ModuleRun
    raised: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # what its traces raised


def _request(job: ModuleJob) -> dict[str, Any]:
    return {
        "path": str(job.location.path),
        "module": job.location.name,
        "search_path": list(job.location.search_path),
        "examples": job.examples,
        "recorded": job.recorded,
        "callers": job.callers,
        "all": job.trace_all,
        "findings": [
            {"id": i, "code": f.code, "line": f.line, "end_line": f.end_line, "function": f.function}
            for i, f in enumerate(job.findings)
        ],
    }


# A crash in one function (a segfault, os._exit) costs the module's later findings; restart the child for
# them a few times, within the module's one timeout.
MAX_RESTARTS = 3
# A fork server that died took this module's child with it: the server is started again and the module
# run again from the start, a few times, then in a fresh interpreter (the module may be what kills it).
MAX_SERVER_DEATHS = 2


def run_module(
    job: ModuleJob, *, python: str, timeout: float, memory_limit_mb: int | None, server: Any = None
) -> ModuleOutcome:
    deadline = time.monotonic() + timeout
    verdicts: dict[Finding, FindingVerdict] = {}
    pending = list(job.findings)
    runs: list[tuple[ChildRun, Reading]] = []
    server_deaths = 0
    fresh_reason = ""
    while pending or (job.trace_all and not runs):
        left = max(deadline - time.monotonic(), 0.1)
        child = run_child(
            _request(dataclasses.replace(job, findings=pending)),
            python=python,
            timeout=left,
            memory_limit_mb=memory_limit_mb,
            server=server,
        )
        fresh_reason = fresh_reason or child.fresh_reason
        if child.ended == "server_died":
            server_deaths += 1
            if server_deaths >= MAX_SERVER_DEATHS or not server.restart():
                fresh_reason = fresh_reason or "the fork server died while it ran this module"
                server = None
            continue  # not the module's failure: nothing of this run is kept
        reading = read_child(pending, child, timeout, memory_limit_mb)
        runs.append((child, reading))
        verdicts.update(reading.verdicts)
        pending = reading.unreached
        if pending and (reading.status != "crashed" or len(runs) > MAX_RESTARTS or not reading.progressed):
            verdicts.update({f: FindingVerdict(NOT_RUN, reading.unreached_reason) for f in pending})
            break
    first, last = runs[0][1], runs[-1][1]
    environment = next((r.environment for _, r in runs if r.environment), None)
    device = environment.describe() if environment else None
    location = job.location
    run = ModuleRun(
        str(location.path),
        location.name,
        len(job.findings),
        round(sum(c.seconds for c, _ in runs), 3),
        last.status,
        last.detail,
        first.import_seconds,
        runs[-1][0].pid,
        restarts=len(runs) - 1,
        fresh_reason=fresh_reason,
    )
    verdicts = {f: dataclasses.replace(verdicts[f], device=device) for f in job.findings}
    raised = [record for _, reading in runs for record in reading.raised]
    return ModuleOutcome(verdicts, environment, run, raised)
