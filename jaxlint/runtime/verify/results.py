"""The records `--verify` produces: a verdict per finding, the environment the child traced on, and the
cost of each module. Data only: the faces (jaxlint.runtime_output) render them."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jaxlint.finding import Finding

CONFIRMED, NOT_REPRODUCED, NOT_RUN = "CONFIRMED", "NOT_REPRODUCED", "NOT_RUN"
NOT_CHECKED = (
    "NOT_CHECKED"  # a rule that tracing cannot show (JAX401/JAX402: recompiles; JAX403, JAX404, JAX501)
)
# A bug no static finding named: a JAX error a trace raised in the user's code (child/raised.py).
FOUND_BY_RUNNING = "FOUND_BY_RUNNING"
VERDICTS = (FOUND_BY_RUNNING, CONFIRMED, NOT_REPRODUCED, NOT_RUN, NOT_CHECKED)
# Said, in its reason, by a verdict that the last `--verify --run` contradicts (contradictions.py).
CONTRADICTED = "the run contradicts it"


@dataclasses.dataclass(frozen=True)
class FindingVerdict:
    verdict: str  # FOUND_BY_RUNNING | CONFIRMED | NOT_REPRODUCED | NOT_RUN | NOT_CHECKED
    reason: str
    inputs: tuple[str, ...] = ()  # the inputs tried, in order, as text ("x: f32[], n=2")
    device: str | None = None  # the environment the child traced on ("jax 0.10.2, cpu"); None if no child ran
    # A NOT_RUN that errors found by running blocked: their (path, line, code), and the reason without them
    # (child/raised.py's blocked_verdict; found.py keeps the first one the user's selection reports).
    blocked_by: tuple[tuple[str, int, str], ...] = ()
    unblocked: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "verdict_reason": self.reason,
            "inputs": list(self.inputs),
            "device": self.device,
        }


@dataclasses.dataclass(frozen=True)
class Environment:
    """Where the child traced: the user's interpreter and JAX, the default backend and its device."""

    jax: str
    backend: str
    device_kind: str
    jaxlib: str | None = None
    platform: str | None = None
    device_count: int = 1
    python: str | None = None
    executable: str | None = None
    missing: tuple[str, ...] = ()  # what this JAX cannot give --verify (see child/jax_features.py)

    @classmethod
    def from_event(cls, event: dict[str, Any]) -> Environment:
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in event.items() if k in fields}
        values["missing"] = tuple(values.get("missing") or ())
        return cls(**values)

    def describe(self) -> str:
        """`jax 0.10.2, cpu` or `jax 0.11.2, gpu: NVIDIA H100 80GB HBM3`."""
        text = f"jax {self.jax}, {self.backend}"
        if self.device_kind and self.device_kind.lower() != self.backend.lower():
            text += f": {self.device_kind}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "description": self.describe()}


@dataclasses.dataclass(frozen=True)
class VerifyStep:
    """Where a `--verify` run stands, for a progress display: once before the first module (`module` None),
    then after each module ends, with that module's verdicts."""

    modules_done: int
    modules: int
    findings_done: int
    findings: int  # the findings that are traced (those of modules that run), not the NOT_CHECKED ones
    module: ModuleRun | None = None
    verdicts: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class ModuleRun:
    """One child process: which module, how it ended, how long it took."""

    path: str
    module: str
    findings: int
    seconds: float  # wall time of the child, start to exit
    status: str  # "done", "import_failed", "timeout", "crashed", "memory", "flooded", "no_jax", "not_started"
    detail: str = ""
    import_seconds: float | None = None
    pid: int | None = None  # of the last child
    restarts: int = 0  # children started again after a crash, for the findings the crash cut off
    fresh_reason: str = ""  # why it ran in a fresh interpreter although a fork server was asked for

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class VerifyReport:
    verdicts: dict[Finding, FindingVerdict]
    environments: list[Environment] = dataclasses.field(default_factory=list)
    modules: list[ModuleRun] = dataclasses.field(default_factory=list)
    # Findings of the errors the traces raised that no static finding named (their verdicts are in
    # `verdicts` too, FOUND_BY_RUNNING); shown with the static ones.
    found: list[Finding] = dataclasses.field(default_factory=list)
    raised: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # the children's records

    def verdict_for(self, finding: Finding) -> FindingVerdict | None:
        return self.verdicts.get(finding)

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(VERDICTS, 0)
        for result in self.verdicts.values():
            counts[result.verdict] += 1
        return counts

    @property
    def any_confirmed(self) -> bool:
        return any(v.verdict in (CONFIRMED, FOUND_BY_RUNNING) for v in self.verdicts.values())

    @property
    def should_fail(self) -> bool:
        """Exit 1: something was confirmed or found by running, or a finding could not be run or checked
        (it still stands unverified)."""
        failing = (FOUND_BY_RUNNING, CONFIRMED, NOT_RUN, NOT_CHECKED)
        return any(v.verdict in failing for v in self.verdicts.values())
