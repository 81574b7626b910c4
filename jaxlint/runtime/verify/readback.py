"""Turn what a child reported, or how it died, into verdicts."""

from __future__ import annotations

import dataclasses
import signal

from jaxlint.finding import Finding

from .results import NOT_RUN, Environment, FindingVerdict
from .supervise import EVENTS_KEPT, ChildRun

RAISE_TIMEOUT = " (raise the limit with `--verify-timeout SECONDS`, or `verify-timeout` in [tool.jaxlint])"


def _exit_description(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


@dataclasses.dataclass
class Reading:
    """One child's events read back: verdicts it gave or that its death implies, and what it never reached."""

    verdicts: dict[Finding, FindingVerdict]
    unreached: list[Finding]
    unreached_reason: str
    status: str  # ModuleRun.status
    detail: str
    environment: Environment | None
    import_seconds: float | None
    progressed: bool  # it got past the import: a restart can reach the unreached findings
    raised: list[dict] = dataclasses.field(default_factory=list)  # errors its traces raised (child/raised.py)


def read_child(
    findings: list[Finding], child: ChildRun, timeout: float, memory_limit_mb: int | None
) -> Reading:
    environment = None
    import_seconds = None
    import_failure = ""
    no_jax = ""
    in_progress: int | None = None
    results: dict[int, FindingVerdict] = {}
    done = False
    raised: list[dict] = []
    for event in child.events:
        kind = event.get("event")
        if kind == "environment":
            environment = Environment.from_event(event)
        elif kind == "imported":
            import_seconds = event.get("seconds")
        elif kind == "import_failed":
            import_failure = event.get("reason", "")
        elif kind == "no_jax":
            no_jax = event.get("reason", "")
        elif kind == "begin":
            in_progress = event["id"]
        elif kind == "verdict":
            results[event["id"]] = FindingVerdict(
                event["verdict"],
                event.get("reason", ""),
                tuple(event.get("inputs", ())),
                blocked_by=tuple(
                    (str(b[0]), int(b[1]), str(b[2])) for b in event.get("blocked_by") or () if len(b) == 3
                ),
                unblocked=str(event.get("unblocked") or ""),
            )
            in_progress = None
        elif kind == "done":
            done = True
        elif kind == "raised":
            raised.append(event)

    if child.ended == "not_started":
        status, what = "not_started", child.hint
    elif child.ended == "timeout":
        status, what = "timeout", f"timed out after {timeout:g} s"
    elif child.ended == "memory":
        status, what = (
            "memory",
            f"the child used more than {memory_limit_mb or 0} MiB of memory and was killed",
        )
    elif child.ended == "flooded":
        status, what = (
            "flooded",
            f"the child wrote more than {EVENTS_KEPT >> 20} MiB of events and was killed",
        )
    elif no_jax:
        status, what = "no_jax", no_jax
    elif not done:
        hint = f" ({child.hint})" if child.hint else ""
        status, what = "crashed", f"the child {_exit_description(child.returncode)}{hint}"
    else:
        status, what = ("import_failed", import_failure) if import_failure else ("done", "")

    # The one NOT_RUN whose way out is a setting: say which (the module's one limit, default 60 s).
    advice = RAISE_TIMEOUT if status == "timeout" else ""
    imported = import_seconds is not None or bool(import_failure)
    stage = "" if imported else ("starting jax" if environment is None else "importing the module")
    verdicts: dict[Finding, FindingVerdict] = {}
    unreached: list[Finding] = []
    for index, finding in enumerate(findings):
        if index in results:
            verdicts[finding] = results[index]
        elif status in ("no_jax", "not_started"):
            verdicts[finding] = FindingVerdict(NOT_RUN, what)
        elif stage:
            verdicts[finding] = FindingVerdict(NOT_RUN, f"{what} while {stage}{advice}")
        elif index == in_progress:
            verdicts[finding] = FindingVerdict(
                NOT_RUN, f"{what} while tracing '{finding.function or 'module code'}'{advice}"
            )
        else:
            unreached.append(finding)
    return Reading(
        verdicts,
        unreached,
        f"not reached: {what} on an earlier finding of this module{advice}",
        status,
        what,
        environment,
        import_seconds,
        progressed=imported and not import_failure,
        raised=raised,
    )
