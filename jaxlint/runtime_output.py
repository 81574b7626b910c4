"""`--verify` results in the report formats: the one place verdicts are turned into text, JSON and SARIF.

Text: a header naming the device, then each finding with a short verdict on one line (`[CONFIRMED:
TracerBoolConversionError]`, `[NOT RUN: timed out after 60 s]`, `[not checked by tracing (use --run)]`);
`--verbose` adds the whole reason, the inputs tried and the device. A line number in a reason is shown
with its file (`model.py:12`). JSON and SARIF always carry everything (`verdict`, `verdict_reason`,
`inputs`, `device`)."""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from typing import TYPE_CHECKING, Any, TextIO

from . import report as formats
from .finding import Finding
from .runtime.shared.short_text import clip

if TYPE_CHECKING:
    from .runtime.verify.results import FindingVerdict, VerifyReport, VerifyStep

_LABELS = {
    "FOUND_BY_RUNNING": "FOUND BY RUNNING",
    "CONFIRMED": "CONFIRMED",
    "NOT_REPRODUCED": "NOT REPRODUCED",
    "NOT_RUN": "NOT RUN",
    "NOT_CHECKED": "",  # its reason says it all: "not checked by tracing (use --run)"
}
_SHORT_LIMIT = 100  # characters of a reason shown without --verbose
# "line 12" of the module, not "cell 2, line 3" of a notebook (that one names its cell).
_BARE_LINE = re.compile(r"(?<!, )\bline (\d+)\b")
_UNVERIFIED = {"verdict": "NOT_RUN", "verdict_reason": "not verified", "inputs": [], "device": None}


def header(report: VerifyReport) -> str:
    """`verify: jax 0.10.2, cpu`; several environments are listed; none when no child ran. A JAX that lacks
    a feature says so: `verify: jax 0.4.33, cpu (this JAX lacks: live calls of top-level code, …)`."""
    described = sorted(
        {
            e.describe() + (f" (this JAX lacks: {', '.join(e.missing)})" if e.missing else "")
            for e in report.environments
        }
    )
    return "verify: " + ("; ".join(described) if described else "no JAX environment (no child ran)")


def with_file(text: str, path: str) -> str:
    """`at line 12` → `at model.py:12`: every line number named with its file."""
    return _BARE_LINE.sub(lambda m: f"{os.path.basename(path)}:{m.group(1)}", text)


def _short_reason(result: FindingVerdict) -> str:
    """What a person needs at a glance, on one line: for CONFIRMED the error class, otherwise why not up
    to its first detail, without the inputs (the rest is in --verbose, JSON and SARIF)."""
    reason = result.reason.split(" (with ", 1)[0]
    if (
        result.verdict == "FOUND_BY_RUNNING"
    ):  # "TracerBoolConversionError raised at line 12 while tracing 'f'"
        return clip(" ".join(reason.split()), _SHORT_LIMIT)
    if result.verdict == "CONFIRMED":
        from .runtime.verify.results import CONTRADICTED

        short = clip(" ".join(reason.split(" at line ", 1)[0].split()), _SHORT_LIMIT)
        return f"{short}; {CONTRADICTED} (--verbose)" if f"; {CONTRADICTED}: " in result.reason else short
    # "no input traced far enough: with x: f32[]: ValueError: …; with …; to give inputs, …": the first
    # attempt's error stands for the rest.
    return clip(" ".join(reason.split("; ", 1)[0].split()), _SHORT_LIMIT)


def verdict_text(report: VerifyReport, finding: Finding, verbose: bool = False) -> str:
    """`CONFIRMED: TracerBoolConversionError`, or with `verbose` the whole reason, inputs and device."""
    result = report.verdicts.get(finding)
    if result is None:
        return "NOT RUN: not verified"
    label = _LABELS[result.verdict]
    reason = _short_reason(result) if not verbose else " ".join(result.reason.split())
    reason = with_file(reason, finding.path)
    text = f"{label}: {reason}" if label and reason else label or reason
    if not verbose:
        return text
    if result.inputs and "(with " not in result.reason:
        text += f"; inputs tried: {' | '.join(result.inputs)}"
    if result.device:
        text += f"; on {result.device}"
    return text


def verdict_json(report: VerifyReport, finding: Finding) -> dict[str, Any]:
    result = report.verdicts.get(finding)
    return dict(_UNVERIFIED) if result is None else result.to_dict()


def _sarif_properties(report: VerifyReport, finding: Finding) -> dict[str, Any]:
    data = verdict_json(report, finding)
    return {
        "verdict": data["verdict"],
        "verdictReason": data["verdict_reason"],
        "inputs": data["inputs"],
        "device": data["device"],
    }


def render_verify(report: VerifyReport, findings: list[Finding], fmt: str, verbose: bool = False) -> str:
    ordered = sorted([*findings, *report.found], key=lambda f: f.sort_key())
    if fmt == "json":
        return formats.as_json(ordered, extra=lambda f: verdict_json(report, f))
    if fmt == "sarif":
        return formats.sarif(ordered, extra=lambda f: _sarif_properties(report, f))
    if fmt == "github":
        noted = [
            dataclasses.replace(f, message=f"{f.message} [{verdict_text(report, f, verbose)}]")
            for f in ordered
        ]
        return formats.github(noted)
    lines = [header(report)]
    if verbose:
        lines += fresh_interpreter_notes(report)
    lines += [
        f"{formats.location(f)}: {f.code} {f.message} [{verdict_text(report, f, verbose)}]" for f in ordered
    ]
    return "\n".join(lines) + "\n"


def fresh_interpreter_notes(report: VerifyReport) -> list[str]:
    """`--verbose`: the modules that ran in a fresh interpreter instead of being forked, and why."""
    return [
        f"verify: {run.module} ran in a fresh interpreter: {run.fresh_reason}"
        for run in sorted(report.modules, key=lambda m: m.module)
        if run.fresh_reason
    ]


def verify_summary(report: VerifyReport, total: int) -> str:
    counts = report.counts()
    unchecked = f"{counts['NOT_CHECKED']} not checked by tracing, " if counts["NOT_CHECKED"] else ""
    found = f"{counts['FOUND_BY_RUNNING']} found by running, " if counts["FOUND_BY_RUNNING"] else ""
    return (
        f"verify: {found}{counts['CONFIRMED']} confirmed, {counts['NOT_REPRODUCED']} not reproduced, "
        f"{counts['NOT_RUN']} not run, {unchecked}of {total} finding(s)"
    )


class Progress:
    """`--verify`'s progress, on stderr only (stdout holds the report, JSON and SARIF included): on a terminal a
    bar over the findings being traced (tqdm, from the `runtime` extra; without it one rewritten line),
    elsewhere (a CI log, a pipe) one plain line per module as it ends."""

    def __init__(self, stream: TextIO | None = None, terminal: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = _isatty(self.stream) if terminal is None else terminal
        self._bar: Any = None
        self._by_modules = False  # `--verify --all` with no finding to trace: the bar counts modules
        self._width = 0

    def __call__(self, step: VerifyStep) -> None:
        if step.module is None:
            self._by_modules = step.findings == 0
            if self.terminal:
                self._bar = _bar(
                    self.stream, step.modules if self._by_modules else step.findings, self._by_modules
                )
            return
        if not self.terminal:
            self.stream.write(module_line(step) + "\n")
        elif self._bar is not None:
            self._bar.set_postfix_str(formats.clean(step.module.module)[:60], refresh=False)
            self._bar.update(1 if self._by_modules else step.module.findings)
            if step.modules_done == step.modules:
                self.close()
        else:
            self._rewrite(step)
        self.stream.flush()

    def _rewrite(self, step: VerifyStep) -> None:
        assert step.module is not None
        text = (
            f"verify: findings {step.findings_done}/{step.findings}, module {step.modules_done}/{step.modules}"
            f" {formats.clean(step.module.module)}"
        )[:120]
        self.stream.write("\r" + text.ljust(self._width))
        self._width = len(text)
        if step.modules_done == step.modules:
            self.stream.write("\r" + " " * self._width + "\r")

    def close(self) -> None:
        """Take the bar off the screen (the run ended, or was interrupted)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def module_line(step: VerifyStep) -> str:
    """`verify: [3/12] pkg.model: 4 findings: 2 confirmed, 1 not reproduced, 1 not run (2.1 s)`."""
    run = step.module
    assert run is not None
    counts = {label: step.verdicts.count(verdict) for verdict, label in _LINE_LABELS.items()}
    told = ", ".join(f"{n} {label}" for label, n in counts.items() if n)
    plural = "s" if run.findings != 1 else ""
    what = f"{run.findings} finding{plural}: {told}" if run.findings else "no finding (traced for --all)"
    ended = "" if run.status == "done" else f"; {run.status.replace('_', ' ')}"
    return (
        f"verify: [{step.modules_done}/{step.modules}] {formats.clean(run.module)}: {what}"
        f" ({run.seconds:.1f} s{ended})"
    )


_LINE_LABELS = {
    "FOUND_BY_RUNNING": "found by running",
    "CONFIRMED": "confirmed",
    "NOT_REPRODUCED": "not reproduced",
    "NOT_RUN": "not run",
    "NOT_CHECKED": "not checked",
}


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _bar(stream: TextIO, total: int, by_modules: bool) -> Any:
    """A tqdm bar when tqdm is installed (the `runtime` extra has it), else None: the rewritten line."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    unit = "module" if by_modules else "finding"
    # Drawn on every module (they end seconds apart), not throttled, so the bar never lags behind the run.
    return tqdm(
        total=total,
        file=stream,
        desc="verify",
        unit=unit,
        leave=False,
        dynamic_ncols=True,
        mininterval=0,
        miniters=1,
    )
