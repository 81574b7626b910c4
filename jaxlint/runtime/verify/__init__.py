"""`jaxlint --verify`: confirm static findings by tracing the flagged code with the user's own JAX.

The linter's process never imports jax or user code. Each module with confirmable findings (JAX101-JAX106,
JAX201, JAX203, JAX301, JAX405, JAX502) is handed to a child process run by the user's interpreter: it
imports the module by its dotted name (so its `__main__` block does not run), reaches each flagged function,
and traces it with `jax.jit(entry).trace(...)`, which costs no device time. Verdicts:

- CONFIRMED: the rule's exception was raised at the flagged file and line (from the traceback, including
  the cause JAX chains on trace-time errors), or its behaviour was seen: a tracer printed at the line
  (JAX201), a tracer formatted into jax.debug.print's string (JAX203), a leak under jax.checking_leaks()
  (JAX105), an update at the line whose result the jaxpr never reads (JAX106), jax.jit rejecting `self`
  (JAX405).
- NOT_REPRODUCED: traced cleanly with the inputs tried (listed in `inputs`).
- NOT_RUN: with the reason: import failed, timeout, crash, memory, no inputs, closure variables, ...

Inputs, cheapest first; the first source that applies is the only one used:

1. Examples the user declares in pyproject.toml::

       [tool.jaxlint.verify.examples]
       "pkg.model:step" = "jnp.ones((4, 3)), 0.1"          # module:qualname -> call arguments
       "pkg.model:Model.apply" = ["jnp.ones(3)", "x=jnp.ones((2, 3))"]   # several, tried in order
       "scripts/train.py:make_step.<locals>.step" = "sds((8,), jnp.float32)"

   The key is the module's dotted name (or its path relative to the project root), a colon, and the
   function's qualname (`Class.method`, `outer.<locals>.inner`). The value is the text between the
   parentheses of a call, evaluated in the child in the module's namespace plus `jax`, `jnp`, `np`, `lax`
   and `sds` (= jax.ShapeDtypeStruct). Arguments holding arrays or ShapeDtypeStructs are traced; other
   values are passed as they are (static), except under the user's own jax.jit, where every non-static
   argument is traced as a real call would. A method's example may pass `self=Model(...)`; without it,
   `self` is the class's instance made without __init__, with the attributes the method reads set to
   arrays. Examples are evaluated afresh for each attempt, so keys they make are checked for reuse. The
   CLI passes this table (or the whole `[tool.jaxlint.verify]` table) as `examples`.
2. Annotations: `jax.Array`/`ArrayLike` (shape searched), jaxtyping `Float[Array, "b n"]` (named dims get
   2, 3, 4, ... shared across parameters), `float`/`int`/`bool` scalars, typed PRNG keys. Static
   parameters (static_argnums/argnames) take their default, else a value from their annotation.
3. A small search: float32 scalar, then (3,), then (2, 3) (a vector would turn `if x > 0` into a plain
   ValueError); int32 first for parameters named or used like counts and indices; `jax.random.key(0)`
   then a legacy `PRNGKey(0)` for parameters named like keys. Parameters with defaults keep them.

Isolation: a fresh session per child (killed as a group on timeout and after exit), stdin closed,
stdout/stderr captured and never shown, results through an events file, RLIMIT_AS on CPU runs and an RSS
watchdog everywhere, modules run in parallel up to `jobs`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .child.expectations import CONFIRMABLE_CODES
from .model import CONFIRMED, NOT_REPRODUCED, NOT_RUN, Environment, FindingVerdict, ModuleRun, VerifyReport
from .process import LIVE_CHILDREN
from .project import example_keys, locate_module
from .runner import ModuleJob, run_module

if TYPE_CHECKING:
    from jaxlint.finding import Finding

__all__ = [
    "CONFIRMABLE_CODES",
    "cli_verify",
    "CONFIRMED",
    "NOT_REPRODUCED",
    "NOT_RUN",
    "Environment",
    "FindingVerdict",
    "ModuleRun",
    "VerifyReport",
    "parse_examples",
    "verify_findings",
]

DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY_LIMIT_MB = 4096


def parse_examples(table: Mapping[str, str | Sequence[str]] | None) -> dict[str, dict[str, list[str]]]:
    """`{"pkg.mod:qual": "args" | ["args", ...]}` -> `{"pkg.mod": {"qual": ["args", ...]}}`.
    Raises ValueError naming the bad entry (a configuration error)."""
    parsed: dict[str, dict[str, list[str]]] = {}
    if table and isinstance(table.get("examples"), Mapping):
        table = table["examples"]  # handed the whole [tool.jaxlint.verify] table
    for key, value in (table or {}).items():
        module, sep, qualname = str(key).rpartition(":")
        if not sep or not module or not qualname:
            raise ValueError(f"[tool.jaxlint.verify.examples] key {key!r} is not 'module:function'")
        values = [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else []
        if not values or not all(isinstance(v, str) for v in values):
            raise ValueError(f"[tool.jaxlint.verify.examples] {key!r} must be a string or a list of strings")
        parsed.setdefault(module, {}).setdefault(qualname, []).extend(values)
    return parsed


def _skip_reason(finding: Finding, path: Path | None) -> str:
    if finding.code not in CONFIRMABLE_CODES:
        return f"{finding.code} is not confirmable by tracing"
    if finding.cell is not None:
        return "notebook cells are not verified"
    if path is None:
        return f"source file not found: {finding.path}"
    if path.suffix != ".py":
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
    examples: Mapping[str, str | Sequence[str]] | None = None,
    root: Path = Path("."),
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
) -> VerifyReport:
    """Give every finding a verdict. Findings of rules that cannot be confirmed, of notebooks, or of files
    that are gone are NOT_RUN with the reason; the others are traced, one child per module."""
    root = Path(root)
    declared = parse_examples(examples)
    report = VerifyReport({})
    module_jobs: dict[Path, ModuleJob] = {}
    for finding in dict.fromkeys(findings):
        path = _source_path(finding, root)
        reason = _skip_reason(finding, path)
        if reason:
            report.verdicts[finding] = FindingVerdict(NOT_RUN, reason)
            continue
        assert path is not None
        location = locate_module(path, root)
        job = module_jobs.get(location.path)
        if job is None:
            job = module_jobs[location.path] = ModuleJob(location)
            for key in example_keys(location, root):
                for qualname, values in declared.get(key, {}).items():
                    job.examples.setdefault(qualname, []).extend(values)
        job.findings.append(finding)

    def run(job: ModuleJob):
        return run_module(
            job, python=python or sys.executable, timeout=timeout, memory_limit_mb=memory_limit_mb
        )

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        try:
            for outcome in pool.map(run, module_jobs.values()):
                report.verdicts.update(outcome.verdicts)
                report.modules.append(outcome.run)
                if outcome.environment is not None and outcome.environment not in report.environments:
                    report.environments.append(outcome.environment)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            LIVE_CHILDREN.kill_all()  # then the supervising threads see their children gone and return
            raise
    return report


def cli_verify(args: Any, config: Any, findings: list[Finding]) -> int:
    """`jaxlint --verify`: verify, print in `args.format`, return the exit code (see command.py)."""
    from .command import cli_verify as run

    return run(args, config, findings)
