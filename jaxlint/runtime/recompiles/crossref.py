"""Static findings that a run proves.

JAX401 (jit-in-loop) and JAX402 (unhashable static argument): CONFIRMED by a function that was traced
or compiled more than once, in the same file, when the finding's line is the function's definition
(decorators to `def`, or the `lambda` line), a line from which a retrace was called, or when the
finding names the function as its own.

Rules whose pitfall is an exception (JAX101 `if tracer:`, JAX102, JAX103, ...; see
`verify/child/expectations.py`): CONFIRMED by an error the run raised, of a class the rule predicts,
with one of the user's frames inside the flagged statement's lines (as `--verify` matches).

JAX201 (`print` of a traced value) and JAX203 (a tracer formatted into jax.debug.print's string):
CONFIRMED by a tracer printed from inside the flagged statement's lines (observations.py). JAX202 (a side
effect in a jitted function) by the statement running while JAX traced it, JAX105 (a leaked tracer) by a
tracer left, after the trace, where the statement stores (line_watch.py watches `watched_statements`).
JAX301 also by a key whose bits two calls consumed (key_fingerprints.py), at the statement or at the loop's
call of the helper that consumed it.

An observation that names its rule (`code`: the key reuse) and that no static finding covers is a finding of
its own, FOUND BY RUNNING (run_found.py).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from typing import Any

from ..confirmable import RECOMPILE_CODES
from .function_record import FunctionRecord


@dataclasses.dataclass(frozen=True)
class Verdict:
    finding: Any  # jaxlint.finding.Finding (duck-typed: path, line, column, code, name, function)
    function: FunctionRecord | None  # the function that confirms it, if any
    error: dict[str, Any] | None = None  # or the error raised at its line (call_records.encode_error)
    observed: dict[str, Any] | None = None  # or what the code was seen doing there (observations.py)
    found: bool = False  # a finding of the run's own, where no static finding was (run_found.py)

    @property
    def confirmed(self) -> bool:
        return self.function is not None or self.error is not None or self.observed is not None

    @property
    def status(self) -> str:
        return "FOUND BY RUNNING" if self.found else "CONFIRMED" if self.confirmed else "NOT OBSERVED"

    @property
    def error_line(self) -> int | None:
        if self.error is None:
            return None
        innermost = self.error.get("innermost")
        if self.found and innermost:
            return int(innermost[1])
        return next(
            (f[1] for f in reversed(self.error["frames"]) if _same_file(f[0], self.finding.path)), None
        )

    def to_dict(self) -> dict[str, Any]:
        f = self.finding
        data: dict[str, Any] = {
            "code": f.code,
            "path": f.path,
            "line": f.line,
            "column": f.column,
            "status": self.status,
        }
        if self.found:
            data.update(name=f.name, message=f.message)
        if self.error is not None:
            data.update(
                error=self.error["types"][0], message=self.error["message"], error_line=self.error_line
            )
        if self.observed is not None:
            data.update(observed=self.observed["kind"], text=self.observed["text"])
        if self.function is not None:
            data.update(
                qualname=self.function.qualname, traces=self.function.traces, compiles=self.function.compiles
            )
        return data


def cross_reference(findings: Iterable[Any] | None, functions: list[FunctionRecord]) -> list[Verdict]:
    verdicts = []
    for finding in findings or ():
        if getattr(finding, "code", None) not in RECOMPILE_CODES:
            continue
        matches = [fn for fn in functions if fn.retraced and _matches(finding, fn)]
        best = max(matches, key=lambda fn: (fn.compiles, fn.traces), default=None)
        verdicts.append(Verdict(finding, best))
    return verdicts


def cross_reference_errors(findings: Iterable[Any] | None, raised: list[dict[str, Any]]) -> list[Verdict]:
    """Findings of exception rules, each with the first error of the run that confirms it (or none)."""
    from ..verify.child.expectations import EXCEPTION, EXPECTATIONS

    verdicts = []
    spans: dict[tuple[str, int], tuple[int, int]] = {}
    for finding in findings or ():
        expectation = EXPECTATIONS.get(getattr(finding, "code", ""))
        if expectation is None or expectation.kind != EXCEPTION:
            continue
        key = (finding.path, finding.line)
        if key not in spans:
            spans[key] = _span(finding)
        match = next((e for e in raised if _error_matches(e, expectation, finding.path, spans[key])), None)
        verdicts.append(Verdict(finding, None, match))
    return verdicts


def cross_reference_observations(
    findings: Iterable[Any] | None, observed: list[dict[str, Any]]
) -> list[Verdict]:
    """Findings of the rules an observation proves (a tracer printed at the line, a key consumed again),
    each with the first observation inside its statement (or none)."""
    from ..verify.child.expectations import EXPECTATIONS
    from .evidence import KEY_REUSE, LEAK, RUNS_ONCE
    from .observations import DEBUG_PRINT_TRACER, PRINTED_TRACER

    WATCHED = (LEAK, RUNS_ONCE)
    # Rules whose pitfall a run also observes without an error: JAX301's KeyReuseError comes from a
    # single trace (cross_reference_errors); a key reused across calls is observed (key_fingerprints.py).
    ALSO_OBSERVED = {"JAX301": KEY_REUSE}

    verdicts = []
    for finding in findings or ():
        code = getattr(finding, "code", "")
        expectation = EXPECTATIONS.get(code)
        kind = ALSO_OBSERVED.get(code) or (expectation.kind if expectation is not None else None)
        if kind not in (PRINTED_TRACER, DEBUG_PRINT_TRACER, KEY_REUSE, *WATCHED):
            continue
        span = _span(finding)
        match = next(
            (
                o
                for o in observed
                if o.get("kind") == kind
                and any(
                    _same_file(str(place.get("path")), finding.path)
                    and span[0] <= int(place.get("line") or 0) <= span[1]
                    for place in (o, o.get("through") or {})  # a helper's key reuse, called in a loop
                )
            ),
            None,
        )
        verdicts.append(Verdict(finding, None, observed=match))
    return verdicts


def watched_statements(findings: Iterable[Any] | None) -> list[dict[str, Any]]:
    """The flagged statements a run watches while JAX traces (line_watch.py): JAX202's and JAX105's."""
    from ..verify.child.expectations import EXPECTATIONS
    from ..verify.child.source import ModuleSource, store_places
    from .evidence import LEAK, RUNS_ONCE

    statements = []
    sources: dict[str, Any] = {}
    for finding in findings or ():
        expectation = EXPECTATIONS.get(getattr(finding, "code", ""))
        if expectation is None or expectation.kind not in (LEAK, RUNS_ONCE):
            continue
        path = os.path.realpath(finding.path)
        if path not in sources:
            try:
                with open(path, encoding="utf-8") as handle:
                    sources[path] = ModuleSource(path, handle.read())
            except (OSError, SyntaxError, ValueError):
                sources[path] = None
        if sources[path] is None:
            continue
        stores = store_places(sources[path], finding.line, "self") if expectation.kind == LEAK else None
        if expectation.kind == LEAK and not stores:
            continue  # a leak that cannot be tied to a place is left to `--verify`'s checker
        span = _span(finding)
        statements.append(
            {
                "code": finding.code,
                "kind": expectation.kind,
                "path": path,
                "span": list(span),
                "stores": sorted(stores or ()),
            }
        )
    return statements


def _error_matches(error: dict[str, Any], expectation: Any, path: str, span: tuple[int, int]) -> bool:
    if not expectation.matches(set(error.get("types", ())), error.get("raised_in", "")):
        return False
    return any(
        _same_file(file, path) and first <= span[1] and span[0] <= (last or first)
        for file, first, last in error.get("frames", ())
    )


def _span(finding: Any) -> tuple[int, int]:
    """The flagged statement's lines (a multi-line call is reported by its first line)."""
    import ast

    from ..verify.child.source import statement_span

    end = getattr(finding, "end_line", None)
    try:
        with open(finding.path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return (finding.line, max(finding.line, end or finding.line))
    return statement_span(tree, finding.line, end)


def _matches(finding: Any, fn: FunctionRecord) -> bool:
    line = finding.line
    # A retrace called from the finding's line: the jit built there (of a function defined in this file
    # or another, `jax.jit(partial(metrics.accuracy, ...))` in a loop) is the one that recompiled.
    if any(_callsite_line(reason.get("callsite"), finding.path) == line for reason in fn.reasons):
        return True
    if not _same_file(finding.path, fn.path):
        return False
    if fn.first_line <= line <= fn.line:
        return True
    return getattr(finding, "function", None) == fn.qualname


def _callsite_line(callsite: str | None, path: str) -> int | None:
    if not callsite:
        return None
    file, _, line = callsite.rpartition(":")
    return int(line) if line.isdigit() and _same_file(file, path) else None


def _same_file(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False
