"""The one per-function record of recompile counting: what a Recorder counts in one window (a process, a
test, a `with` block) and what the parent adds up over windows, field for field the same."""

from __future__ import annotations

import dataclasses
from typing import Any

REASON_LIMIT = 100  # retrace reasons kept per function (in one window, and again over all windows)
SIGNATURE_LIMIT = 50  # distinct signatures kept per function; the rest are only counted
COMPILE_TIMES_LIMIT = (
    500  # compiles per function placed on the HTML report's timeline; the rest are only counted
)
SIGNATURE_TEXT_LIMIT = 2000  # characters of one rendered signature (a model's parameters can be thousands)


@dataclasses.dataclass
class FunctionRecord:
    module: str
    qualname: str
    path: str  # absolute path of the source file, as Python compiled it
    line: int  # the `def` (or `lambda`) line
    first_line: int  # the code object's first line: the first decorator line when decorated
    traces: int = 0
    compiles: int = 0
    persistent_cache_hits: int = 0
    compile_seconds: float = 0.0
    # [when it ended (time.time()), seconds] of each compile, for the timeline of `--run --html`
    compile_times: list[list[float]] = dataclasses.field(default_factory=list)
    signatures: list[str] = dataclasses.field(default_factory=list)  # rendered, clipped, distinct
    signatures_dropped: int = 0
    reasons: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    reasons_dropped: int = 0
    processes: int = 1  # windows it was seen in
    max_compiles_in_process: int = 0
    budget: int = 0

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.path, self.first_line, self.qualname)

    @property
    def name(self) -> str:
        return f"{self.module}:{self.qualname}"

    @property
    def over_budget(self) -> bool:
        return self.max_compiles_in_process > self.budget

    @property
    def retraced(self) -> bool:
        return self.traces > 1 or self.compiles > 1

    def add_signature(self, text: str) -> None:
        if len(text) > SIGNATURE_TEXT_LIMIT:
            text = text[: SIGNATURE_TEXT_LIMIT - 1] + "…"
        if text in self.signatures:
            return
        if len(self.signatures) < SIGNATURE_LIMIT:
            self.signatures.append(text)
        else:
            self.signatures_dropped += 1

    def add_compile_times(self, times: list[list[float]]) -> None:
        room = max(COMPILE_TIMES_LIMIT - len(self.compile_times), 0)
        self.compile_times.extend([float(end), float(seconds)] for end, seconds in times[:room])

    def add_reasons(self, reasons: list[dict[str, Any]], dropped: int = 0) -> None:
        room = max(REASON_LIMIT - len(self.reasons), 0)
        self.reasons.extend(reasons[:room])
        self.reasons_dropped += dropped + max(len(reasons) - room, 0)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["compile_seconds"] = round(self.compile_seconds, 6)
        return data
