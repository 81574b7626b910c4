"""What `--run` saw at a line where no static finding of its rule is: a finding of its own, FOUND BY RUNNING.

Only what the run proves, in the project's own files (not an installed library's):

- an observation (observations.py, line_watch.py): a tracer printed (JAX201) or formatted into
  `jax.debug.print`'s string (JAX203) while JAX traced, a logging call made while JAX traced a jitted
  function (JAX202), a tracer left where a statement stores (JAX105). A record may name its rule in
  "code"; otherwise its kind gives it (`RULE_OF_KIND`);
- a JAX error that ended a process of the command (nothing caught it), at the innermost line of the
  user's code where it was raised, under the rule its class stands for (as `--verify`'s found-by-running
  errors: verify/child/raised.py): an UnexpectedTracerError is JAX105, any JAX error without a rule of its
  own JAX900. A caught error is left alone: a program may try a trace and fall back on purpose;
- a function over the compile budget whose retraces were new function objects (a `jax.jit` of a lambda,
  partial or inner function built anew for each call): JAX401 at the line that built and called it.

A static finding of the same rule whose statement holds that line takes the evidence instead (CONFIRMED).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import Any

from .crossref import Verdict, _same_file, _span
from .evidence import DEBUG_PRINT_TRACER, LEAK, PRINTED_TRACER, RUNS_ONCE
from .function_record import FunctionRecord
from .render import display_path
from .retrace_reasons import NEW_FUNCTION_OBJECT

RULE_OF_KIND = {PRINTED_TRACER: "JAX201", DEBUG_PRINT_TRACER: "JAX203", RUNS_ONCE: "JAX202", LEAK: "JAX105"}


def found_by_running(
    verdicts: list[Verdict],
    run: Any,
    root: str | None,
    names: Mapping[str, str],
    keep: Callable[[Any], bool] | None = None,
) -> list[Verdict]:
    """`verdicts` (the static findings' verdicts: those this run's evidence confirms are updated in place)
    plus one FOUND BY RUNNING verdict per place the run proved a pitfall no static finding names."""
    verdicts = _one_per_finding(verdicts)
    used = {id(v.observed) for v in verdicts if v.observed is not None}  # already evidence for a finding
    project = _Project(root)
    found: dict[tuple[str, int, str], Verdict] = {}

    def place(code: str, path: str, line: int, column: int, text: str, evidence: dict[str, Any]) -> None:
        if not project.holds(path):
            return
        for index, verdict in enumerate(verdicts):
            f = verdict.finding
            if f.code == code and _same_file(f.path, path) and _covers(f, line):
                if not verdict.confirmed:
                    verdicts[index] = dataclasses.replace(verdict, **_as_evidence(evidence))
                return
        key = (os.path.realpath(path), line, code)
        if key in found:
            return
        finding = _finding(path, line, column, code, names.get(code, code), text)
        if keep is None or keep(finding):
            found[key] = Verdict(finding, found=True, **_as_evidence(evidence))

    for record in run.observed:
        if id(record) in used:  # e.g. a key reuse in a helper, confirming the JAX301 at the loop's call
            continue
        code = record.get("code") or RULE_OF_KIND.get(str(record.get("kind")))
        if code and isinstance(record.get("line"), int) and isinstance(record.get("path"), str):
            place(code, record["path"], record["line"], 1, str(record.get("text", "")), {"observed": record})
    for record in run.raised:
        where = record.get("innermost")
        code = _rule_of_record(record) if record.get("uncaught") and where else None
        if code:
            text = f"{record['types'][0]}: {_first_line(record.get('message', ''))}"
            place(code, where[0], where[1], where[3] if len(where) > 3 else 1, text, {"error": record})
    for fn in run.functions:
        if fn.over_budget:
            for line, path in _new_object_callsites(fn):
                text = f"'{fn.qualname}' compiled {fn.max_compiles_in_process} times (budget {fn.budget}): {NEW_FUNCTION_OBJECT}"
                place("JAX401", path, line, 1, text, {"function": fn})
    return verdicts + sorted(found.values(), key=lambda v: (v.finding.path, v.finding.line, v.finding.code))


def _one_per_finding(verdicts: list[Verdict]) -> list[Verdict]:
    """A finding checked two ways (JAX301: a KeyReuseError in one trace, a key reused across calls) keeps
    the verdict that confirms it."""
    kept: dict[int, Verdict] = {}
    for v in verdicts:
        before = kept.get(id(v.finding))
        if before is None or (v.confirmed and not before.confirmed):
            kept[id(v.finding)] = v
    return list(kept.values())


def _as_evidence(evidence: dict[str, Any]) -> dict[str, Any]:
    return {"function": None, **evidence} if "function" not in evidence else evidence


def _rule_of_record(record: dict[str, Any]) -> str | None:
    from ..verify.child.raised import rule_of_class

    raised_in = str(record.get("raised_in") or "")
    jax_function = "" if raised_in == "<user code>" else raised_in
    return rule_of_class(set(record.get("types") or ()), str(record.get("module") or ""), jax_function)


def _new_object_callsites(fn: FunctionRecord) -> list[tuple[int, str]]:
    """The lines whose jit of a new function object retraced `fn` (`path:line` callsites), each once."""
    places: list[tuple[int, str]] = []
    for reason in fn.reasons:
        callsite = reason.get("callsite")
        if reason.get("reason") != NEW_FUNCTION_OBJECT or not callsite:
            continue
        path, _, line = str(callsite).rpartition(":")
        if line.isdigit() and (int(line), path) not in places:
            places.append((int(line), path))
    return places


def _covers(finding: Any, line: int) -> bool:
    first, last = _span(finding)
    return first <= line <= last


def _first_line(message: str) -> str:
    text = message.strip().splitlines()[0] if message.strip() else ""
    return text if len(text) <= 160 else text[:159] + "…"


def _finding(path: str, line: int, column: int, code: str, name: str, message: str) -> Any:
    from jaxlint.finding import Finding

    shown = display_path(path).replace(os.sep, "/")
    return Finding(shown, line, column, line, column, code, name, message)


class _Project:
    """The user's files: under the project's root, not in an installed library."""

    def __init__(self, root: str | None) -> None:
        from ..verify.child.raised import UserCode

        self.user = UserCode([root or os.getcwd()])

    def holds(self, path: str) -> bool:
        return not path.startswith("<") and os.path.isfile(path) and path in self.user
