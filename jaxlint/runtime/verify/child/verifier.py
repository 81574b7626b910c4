"""Verify the findings of one imported module: reach each function, try inputs cheapest first, judge."""

from __future__ import annotations

import dataclasses
import itertools
import types
from collections.abc import Iterator
from typing import Any

from .attempt import (
    LEAK_PLACES,
    DebugPrintRecorder,
    ModuleLines,
    Outcome,
    run_attempt,
    run_self_jit_attempt,
    run_twice_attempt,
)
from .callers import ForeignCallers
from .examples import example_calls, example_namespace
from .expectations import EXPECTATIONS, LEAK, LEAKS, PLAIN, RUN_TWICE, SELF_NOT_ARRAY, Expectation
from .inputs import CallInputs, NoInputs, array_annotation, search_calls
from .judge import CLEAN, CONFIRMED, judge
from .live_calls import LiveCalls
from .module_methods import library_module, through_init
from .raised import UserCode, found_by_running
from .recorded import recorded_calls, refused_reason, unkept_reason
from .resolve import METHOD, Target, Unreachable, code_qualname, lookup, resolve, unwrap
from .source import ModuleSource, annotation_text, reassigned_self_attributes, statement_span, store_places

CONFIRMED_VERDICT, NOT_REPRODUCED, NOT_RUN = "CONFIRMED", "NOT_REPRODUCED", "NOT_RUN"
MAX_CALLERS = 4  # functions with real inputs tried to reach a line its own function's inputs did not


def verdict(kind: str, reason: str, inputs: list[str] | None = None) -> dict[str, Any]:
    return {"verdict": kind, "reason": reason, "inputs": inputs or []}


class ModuleContext:
    """Per-module state shared by its findings: resolved targets and attempt outcomes are reused, so
    findings in the same function trace it once per mode and input."""

    def __init__(
        self,
        jax: Any,
        module: types.ModuleType,
        source: ModuleSource,
        examples: dict[str, list[str]],
        lines: ModuleLines,
        recorder: DebugPrintRecorder,
        recorded: dict[str, Any] | None = None,
        module_name: str = "",
        live: LiveCalls | None = None,
        foreign: ForeignCallers | None = None,
        user: UserCode | None = None,
    ) -> None:
        self.jax = jax
        self.user = user  # the project's files: a JAX error raised in them is a finding (raised.py)
        # (path, line, code) -> what a trace with real inputs raised there; `raised` of the finding being
        # verified: the ones its attempts hit (they block it, unless it is that very error).
        self.found: dict[tuple[str, int, str], dict[str, Any]] = {}
        self.raised: list[dict[str, Any]] = []
        self.foreign = foreign  # the project's other modules' functions with real inputs (callers.py)
        self.live = live  # calls the module's top-level code made while imported (live_calls.py)
        self.recorded = recorded or {}  # qualname -> calls recorded by `--verify --run` (recorded.py)
        self.module_name = module_name
        self.module = module
        self.source = source
        self.examples = examples
        self.lines = lines
        self.recorder = recorder
        self._targets: dict[tuple[str | None, int], Target | Unreachable] = {}
        self._outcomes: dict[tuple[int, str, str, bool], Outcome] = {}

    def target(self, qualname: str | None, line: int) -> Target:
        key = (qualname, line)  # lambdas share a qualname: the line tells them apart
        if key not in self._targets:
            try:
                self._targets[key] = resolve(self.module, self.source, qualname, line)
            except Unreachable as error:
                self._targets[key] = error
        found = self._targets[key]
        if isinstance(found, Unreachable):
            raise found
        return found

    def calls(self, target: Target) -> list[CallInputs]:
        """The inputs to try (`gathered_calls`); a flax Module's method takes them through `Module.init`."""
        return through_init(target, self.gathered_calls(target))

    def gathered_calls(self, target: Target, search: bool = True) -> list[CallInputs]:
        """Declared examples; else the calls the module's own top-level code made, the calls a run
        recorded, then (with `search`) the search's own inputs."""
        declared = self.examples.get(target.qualname)
        if declared:
            return example_calls(target, declared, example_namespace(self.module.__dict__))
        recorded, skipped = recorded_calls(self.jax, self.module, target, self.recorded)
        recorded = (self.live.for_target(target) if self.live else []) + recorded
        if not search:
            return recorded
        try:
            searched = search_calls(target, self.source)
        except NoInputs as error:
            if recorded:
                return recorded
            unusable = f"; the recorded calls do not fit: {skipped[0]}" if skipped else ""
            raise NoInputs(f"{error}{unusable}; {self.how_to_give_inputs(target)}") from None
        return recorded + searched

    def callers(self, target: Target) -> list[Target]:
        """The module's other functions that have real inputs (declared examples, calls a run recorded or
        the module's top-level code made): tracing them may reach the target's line."""
        names = [*self.examples, *(q for q, e in self.recorded.items() if e.get("calls"))]
        names += [code_qualname(code, self.module) for code in (self.live.calls if self.live else {})]
        found: list[Target] = []
        for qualname in dict.fromkeys(names):
            if qualname == target.qualname or len(found) >= MAX_CALLERS:
                continue
            try:
                function, _ = unwrap(lookup(self.module, qualname)[0], qualname)
                caller = self.target(qualname, function.__code__.co_firstlineno)
            except (AttributeError, Unreachable):
                continue
            if caller.function is not target.function:
                found.append(caller)
        return found

    def how_to_give_inputs(self, target: Target) -> str:
        """The NOT_RUN advice: the two ways a user gives verify real inputs."""
        key = f"{self.module_name}:{target.qualname}" if self.module_name else target.qualname
        refused = refused_reason(target, self.recorded)
        if refused:
            return (
                f"{refused}; to give inputs, run `jaxlint --verify --run` again (it records them anew), or "
                f'declare `[tool.jaxlint.verify.examples]` "{key}" = "<call arguments>"'
            )
        unkept = unkept_reason(target, self.recorded)
        if unkept:
            return (
                f"`jaxlint --verify --run` saw calls of it but could not record them: {unkept}; to give "
                "inputs, call it from the module's own top-level code (a script or notebook that builds the "
                "state and calls it while imported: verify uses such calls live), or declare "
                f'`[tool.jaxlint.verify.examples]` "{key}" = "<call arguments>"'
            )
        return (
            "to give inputs, run code that calls it (the tests, or the script) under "
            '`jaxlint --verify --run "pytest"` or `jaxlint --verify --run "python script.py"`, which records '
            f'its calls for later runs, or declare `[tool.jaxlint.verify.examples]` "{key}" = "<call arguments>"'
        )

    def jitted(self, target: Target) -> Any:
        """The user's own jit of the function: the name it resolved through, or a module global wrapping
        it (`step_jit = jax.jit(step)`)."""
        if target.jitted is not None:
            return target.jitted
        for value in list(vars(self.module).values()):
            inner = value
            for _ in range(4):
                inner = getattr(inner, "__wrapped__", None)
                if inner is target.function:
                    return value if callable(value) and hasattr(value, "lower") else None
                if inner is None:
                    break
        return None

    def outcome(self, target: Target, call: CallInputs, mode: str, self_jit: bool) -> Outcome:
        key = (id(target.function.__code__), mode, call.text, self_jit)
        if key not in self._outcomes:
            if self_jit:
                params = target.parameters
                reassigned = (
                    reassigned_self_attributes(self.source.tree, target.node, params[0].name)
                    if params
                    else []
                )
                self._outcomes[key] = run_self_jit_attempt(self.jax, target, call, reassigned)
            elif mode == RUN_TWICE:
                jitted = self.jitted(target)
                self._outcomes[key] = run_twice_attempt(self.jax, target, call, self.lines.path, jitted)
            else:
                self._outcomes[key] = run_attempt(
                    self.jax, target, call, mode, self.lines, self.recorder, self.module.__dict__
                )
        outcome = self._outcomes[key]
        self._note_raised(target, call, outcome.error)
        return outcome

    def _note_raised(self, target: Target, call: CallInputs, error: BaseException | None) -> None:
        """A JAX error raised in the user's code while tracing with real inputs (recorded, declared, or
        made by the module's own code) is a bug found by running; inputs verify guessed may be wrong in
        ways the code never sees (a shape, an array for a Python int), so their errors only judge the
        finding being verified."""
        if self.user is None or not call.real:
            return
        record = found_by_running(error, self.user)
        if record is None:
            return
        key = (record["path"], record["line"], record["code"])
        if key not in self.found:
            self.found[key] = {**record, "traced": target.qualname, "inputs": call.text}
        if all(r is not self.found[key] for r in self.raised):
            self.raised.append(self.found[key])


def verify_finding(context: ModuleContext, finding: dict[str, Any]) -> dict[str, Any]:
    expectation = EXPECTATIONS[finding["code"]]
    line = finding["line"]
    try:
        target = context.target(finding.get("function"), line)
        calls = context.calls(target)
    except (Unreachable, NoInputs) as error:
        return verdict(NOT_RUN, str(error))
    if expectation.mode == RUN_TWICE and context.jitted(target) is None:
        reason = (
            f"'{target.qualname}' is not wrapped by jax.jit at runtime, so there is no cached call to watch"
        )
        return verdict(NOT_RUN, reason)
    self_jit = expectation.kind == SELF_NOT_ARRAY
    if self_jit and (target.jitted is None or target.binding != METHOD):
        return verdict(NOT_RUN, f"'{target.qualname}' is not a jax.jit-wrapped method at runtime")
    result = _try_inputs(context, expectation, target, calls, line, self_jit)
    qualname = target.qualname
    needs_closure = result.pop("closure", False)
    while needs_closure and ".<locals>." in qualname:
        # A nested function needs its closure: tracing its enclosing function may call it with the real one
        # (a lax.cond branch, a scan body, a helper called in place).
        qualname = qualname.rsplit(".<locals>.", 1)[0]
        try:
            outer = context.target(qualname, line)
            through = _try_inputs(context, expectation, outer, context.calls(outer), line, self_jit)
        except (Unreachable, NoInputs):
            break
        needs_closure = through.pop("closure", False)
        if through["verdict"] == CONFIRMED_VERDICT:
            through["reason"] += f", traced through the enclosing '{qualname}'"
            return through
    if result["verdict"] != CONFIRMED_VERDICT and not self_jit and expectation.mode != RUN_TWICE:
        return _through_callers(context, expectation, target, line) or result
    return result


def _through_callers(
    context: ModuleContext, expectation: Expectation, target: Target, line: int
) -> dict[str, Any] | None:
    """The line may be reached from a function that has real inputs (a train step calling a model), of
    this module or another: the rule's error, or print, at this very line confirms it whichever function
    was traced."""

    def own() -> Iterator[tuple[Target, list[CallInputs]]]:
        for caller in context.callers(target):
            try:
                yield caller, context.gathered_calls(caller, search=False)
            except NoInputs:
                continue

    foreign = context.foreign.targets(target.function) if context.foreign else iter(())
    for caller, inputs in itertools.chain(own(), foreign):
        if not inputs:
            continue  # recorded calls that do not fit it any more (the code changed since the run)
        through = _try_inputs(context, expectation, caller, through_init(caller, inputs), line, False)
        if through["verdict"] == CONFIRMED_VERDICT:
            through["reason"] += f", reached through '{caller.qualname}'"
            return through
    return None


def _try_inputs(
    context: ModuleContext,
    expectation: Expectation,
    target: Target,
    calls: list[CallInputs],
    line: int,
    self_jit: bool,
) -> dict[str, Any]:
    tried: list[str] = []
    clean: list[str] = []
    changed: list[str] = []  # attributes of a static `self` changed between calls (self_jit)
    errors: list[tuple[CallInputs, str, BaseException | None]] = []
    params = target.parameters
    self_name = params[0].name if params and target.binding == METHOD else None
    self_type = (self_name or "", target.owner.__name__ if target.owner else "")
    stores = store_places(context.source, line, self_name) if expectation.kind == LEAK else None
    span = statement_span(context.source.tree, line)
    # Where the statement stores is known: watch those places, without JAX's (slow) checker.
    mode = LEAK_PLACES if expectation.mode == LEAKS and stores else expectation.mode
    for call in calls:
        outcome = context.outcome(target, call, mode, self_jit)
        judgement = judge(expectation, outcome, line, context.lines.path, self_type, stores, span)
        tried.append(call.text)
        if judgement.status == CONFIRMED:
            return verdict(CONFIRMED_VERDICT, f"{judgement.detail} (with {call.text})", tried)
        if judgement.status == CLEAN:
            clean.append(call.text)
            changed += [n for n in outcome.changed if n not in changed]
        else:
            errors.append((call, judgement.detail, outcome.error))
            if isinstance(outcome.error, (SystemExit, KeyboardInterrupt)):
                break  # the code exits whatever the inputs
    if clean:
        reason = f"traced cleanly with {'; '.join(clean)}: no {expectation.looks_for} at line {line}"
        if self_jit and changed:
            shown = ", ".join(f"self.{n}" for n in changed)
            reason += f" (`self` is static: with {shown} changed, the next call returned what the method computes with the new value)"
        elif self_jit:
            reason += " (`self` is static, and no attribute it reads is reassigned by another method)"
        if errors:
            reason += "; " + "; ".join(f"with {c.text}: {detail}" for c, detail, _ in errors[:2])
        return verdict(NOT_REPRODUCED, reason, tried)
    closure = _missing_closure(target, [e for _, _, e in errors])
    if closure:
        names = ", ".join(f"'{n}'" for n in closure)
        reason = (
            f"nested function '{target.qualname}' needs closure variable(s) {names} of its enclosing call, "
            "which verify cannot rebuild"
        )
        return {**verdict(NOT_RUN, reason, tried), "closure": True}
    if not errors:  # no input at all to try: nothing ran, and nothing can be said of the line
        return verdict(
            NOT_RUN, f"no inputs to trace '{target.qualname}' with; {context.how_to_give_inputs(target)}"
        )
    call, detail, error = errors[-1]
    if isinstance(error, (SystemExit, KeyboardInterrupt)):
        return verdict(NOT_RUN, f"{detail} while being traced (with {call.text})", tried)
    shown = "; ".join(f"with {c.text}: {detail}" for c, detail, _ in errors[:3])
    advice = "" if any(c.declared for c, _, _ in errors) else f"; {context.how_to_give_inputs(target)}"
    return verdict(NOT_RUN, f"no input traced far enough: {shown}{advice}", tried)


def _missing_closure(target: Target, errors: list[BaseException | None]) -> list[str]:
    """The target's free variables that a NameError named (its `name`, Python 3.10 on: the message's wording
    differs between versions)."""
    names: list[str] = []
    for error in errors:
        name = getattr(error, "name", None) if isinstance(error, NameError) else None
        if name in target.free_vars and name not in names:
            names.append(name)
    return names


def trace_entry_points(context: ModuleContext) -> None:
    """`--verify --all`: trace every function of the module that has real inputs (declared examples, the
    jitted calls a `--verify --run` recorded, the calls the module's own code made), flagged or not; what
    the traces raise in the project's code lands in `context.found` (raised.py)."""
    names = [*context.examples, *(q for q, e in context.recorded.items() if e.get("calls"))]
    names += [code_qualname(code, context.module) for code in (context.live.calls if context.live else {})]
    for qualname in dict.fromkeys(names):
        try:
            function, _ = unwrap(lookup(context.module, qualname)[0], qualname)
            target = context.target(qualname, function.__code__.co_firstlineno)
            calls = through_init(target, context.gathered_calls(target, search=False))
        except (AttributeError, Unreachable, NoInputs):
            continue
        for call in calls:
            context.outcome(target, call, PLAIN, False)
    for target in _module_calls(context):
        try:
            calls = through_init(target, search_calls(target, context.source))
        except NoInputs:
            continue
        # Guessed inputs, and yet a bug's: the method's one input is an array in every use of a Module
        # (`model.apply(params, x)`), so what its trace raises does not come from the guess.
        for call in calls:
            context.outcome(target, dataclasses.replace(call, real=True), PLAIN, False)


def _module_calls(context: ModuleContext) -> Iterator[Target]:
    """The `__call__` of each flax or haiku Module class the module defines, when it takes one input (no
    default), unannotated or annotated as an array: what `apply` traces (module_methods.py)."""
    for value in list(vars(context.module).values()):
        if not isinstance(value, type) or value.__module__ != context.module.__name__:
            continue
        if library_module(value) is None or "__call__" not in vars(value):
            continue
        try:
            function, _ = unwrap(vars(value)["__call__"], "__call__")
            target = context.target(f"{value.__qualname__}.__call__", function.__code__.co_firstlineno)
        except (AttributeError, Unreachable):
            continue
        params = target.parameters[1:]
        required = [
            p for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if len(required) == 1:
            annotation = annotation_text(context.source, target.node, required[0].name)
            if array_annotation(annotation):
                yield target
