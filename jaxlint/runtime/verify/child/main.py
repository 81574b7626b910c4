"""Entry point of the verify child: `main([events_fd])`, the request (JSON) on stdin.

Events are written to the inherited pipe one JSON line at a time as they happen, so the parent has
everything up to a hang, a crash or an `os._exit` in user code: environment, imported | import_failed,
then begin/verdict per finding, then done."""

from __future__ import annotations

import contextlib
import faulthandler
import importlib
import importlib.util
import json
import os
import platform
import sys
import time
import traceback
import types
from collections.abc import Iterator
from typing import Any

from .expectations import EXCEPTION, EXPECTATIONS, KEY_REUSE, LEAK_RAISED_IN, LEAKS, raising_function
from .jax_features import missing_features
from .judge import describe_error, frame_covers, user_frames
from .lines_run import LinesRun
from .live_calls import LiveCalls
from .pinned_jax import PinnedJax, pin
from .source import ModuleSource, statement_span


def event_channel(fd: int, nonce: str) -> bytes:
    """The handle `write_event` takes: the inherited pipe the parent opened and the run's nonce, which
    every event carries and the module never sees; lines without it are dropped by the parent, so JSON a
    module writes (to any stream or descriptor, files in its working directory) is never an event. The
    handle is plain bytes held in this module's frames only: the garbage collector does not track bytes,
    so a module walking `gc.get_objects()` (or `gc.get_referrers`) finds no object that writes a valid
    event. What stays possible is deliberate: code that walks the interpreter's frames (or its memory)
    up to run_request's can read the nonce, as any code run with the user's rights can do anything the
    user can; the nonce guards against accidents and ordinary output, not against that."""
    os.set_inheritable(fd, False)  # processes the module starts do not get it
    return f"{fd} {nonce}".encode()


def write_event(channel: bytes, **event: Any) -> None:
    fd, nonce = channel.decode().split()
    data = (json.dumps({**event, "nonce": nonce}, default=str) + "\n").encode()
    while data:
        data = data[os.write(int(fd), data) :]


def _read_request() -> dict[str, Any]:
    """The request comes on stdin, which is then closed: the module reads nothing of ours there."""
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return json.loads(b"".join(chunks))


def _limit_core_dumps() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass


def describe_environment(jax: Any) -> dict[str, Any]:
    device = jax.devices()[0]
    try:
        import jaxlib

        jaxlib_version = jaxlib.__version__
    except Exception:
        jaxlib_version = None
    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib_version,
        "backend": jax.default_backend(),
        "platform": device.platform,
        "device_kind": device.device_kind,
        "device_count": jax.device_count(),
        "python": platform.python_version(),
        "executable": sys.executable,
        "missing": missing_features(),
    }


def import_user_module(name: str, path: str) -> types.ModuleType:
    module = importlib.import_module(name)
    if os.path.realpath(getattr(module, "__file__", "") or "") == os.path.realpath(path):
        return module
    # The name was taken before the user's module could have it (a file called `types.py`, say): load the
    # file itself under a private name. Relative imports then fail, which NOT_RUN reports.
    spec = importlib.util.spec_from_file_location(f"jaxlint_verify_user_{name.replace('.', '_')}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _import_failure_verdict(
    error: BaseException, finding: dict[str, Any], path: str, span: tuple[int, int]
) -> dict[str, Any]:
    """Importing runs the module's top-level code: the rule's exception raised inside the flagged
    statement confirms it (scripts and notebooks do their work at top level)."""
    expectation = EXPECTATIONS[finding["code"]]
    names = {cls.__name__ for cls in type(error).__mro__}
    matches = (
        expectation.kind == EXCEPTION
        and expectation.matches(names, raising_function(error, path))
        and any(frame_covers(f, span) for f in user_frames(error, path))
    )
    if matches:
        reason = f"{type(error).__name__} at line {finding['line']} while importing the module"
        return {"verdict": "CONFIRMED", "reason": reason, "inputs": ["module import"]}
    reason = f"importing the module failed: {describe_error(error, path)}"
    return {"verdict": "NOT_RUN", "reason": reason, "inputs": []}


def _partial_module(error: BaseException, path: str, name: str) -> tuple[types.ModuleType, int] | None:
    """What the module defined before its top-level code raised, from the module's own frame in the
    traceback, and the line that raised; None when that frame is not there."""
    path = os.path.realpath(path)
    for frame, line in traceback.walk_tb(error.__traceback__):
        code = frame.f_code
        if code.co_name == "<module>" and os.path.realpath(code.co_filename) == path:
            module = types.ModuleType(name)
            module.__dict__.update(frame.f_globals)
            return module, line
    return None


def _defined_before(finding: dict[str, Any], top_level: list[dict[str, Any]], failed_at: int) -> bool:
    """A finding inside a function whose code sits above the statement that failed."""
    return finding not in top_level and finding["line"] < failed_at


def _module_level_verdict(finding: dict[str, Any], ran: LinesRun, span: tuple[int, int]) -> dict[str, Any]:
    """A top-level finding of a module that imported cleanly, with the checkers it needs switched on."""
    line = finding["line"]
    if not ran.ran(span):
        reason = (
            f"line {line} did not run while importing the module (an `if __name__ == '__main__':` block "
            "or a branch not taken); only code inside a function can be traced"
        )
        return {"verdict": "NOT_RUN", "reason": reason, "inputs": []}
    looks_for = EXPECTATIONS[finding["code"]].looks_for
    reason = f"line {line} ran while importing the module: no {looks_for}"
    return {"verdict": "NOT_REPRODUCED", "reason": reason, "inputs": ["module import"]}


@contextlib.contextmanager
def _import_checks(jax: Any, modes: set[str]) -> Iterator[None]:
    """The checkers top-level findings need while the module runs: key reuse (typed keys, and legacy
    keys made typed by custom-PRNG mode) and tracer leaks. Off for every other module: they change what
    module-level objects are (legacy keys become typed) and cost time."""
    from .attempt import checking_mode

    with contextlib.ExitStack() as stack:
        for mode in sorted(modes & {KEY_REUSE, LEAKS}):
            stack.enter_context(checking_mode(jax, mode))
        yield


def _raised_by_checks(error: BaseException) -> bool:
    """An error of the checkers verify switches on (key reuse, tracer leaks), here or in its causes."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if "KeyReuseError" in {cls.__name__ for cls in type(current).__mro__}:
            return True
        if raising_function(current, "") in LEAK_RAISED_IN:  # by where JAX raises it, not its wording
            return True
        current = current.__cause__ or current.__context__
    return False


def _forget_module(name: str) -> None:
    for key in [k for k in sys.modules if k == name or k == f"jaxlint_verify_user_{name.replace('.', '_')}"]:
        del sys.modules[key]


def _checked_import_verdict(
    stopped: BaseException, finding: dict[str, Any], path: str, span: tuple[int, int], verdict: dict[str, Any]
) -> dict[str, Any]:
    """A top-level finding of a module whose first import our checker stopped (then imported without it)."""
    judged = _import_failure_verdict(stopped, finding, path, span)
    if judged["verdict"] == "CONFIRMED":
        return judged
    if EXPECTATIONS[finding["code"]].mode in (KEY_REUSE, LEAKS) and verdict["verdict"] != "NOT_RUN":
        where = user_frames(stopped, path)
        at = f" at line {where[-1].lineno}" if where else ""
        reason = (
            f"jaxlint's check raised {type(stopped).__name__}{at} while importing the module (imported "
            f"again without it): line {finding['line']} was not checked"
        )
        return {"verdict": "NOT_RUN", "reason": reason, "inputs": []}
    return verdict


def _unless_replaced(verdict: dict[str, Any], jax: PinnedJax) -> dict[str, Any]:
    """A clean trace is no evidence in a module that replaced JAX's entry points: verify traced with JAX's
    own, but the module's code (a helper it jits while traced, a function it wrapped) ran with its own."""
    replaced = jax.replaced_entry_points()
    if verdict["verdict"] != "NOT_REPRODUCED" or not replaced:
        return verdict
    reason = (
        f"the module replaced {', '.join(replaced)}, and its code runs with the replacement, so a clean "
        f"trace proves nothing ({verdict['reason']})"
    )
    return {**verdict, "verdict": "NOT_RUN", "reason": reason}


def main(argv: list[str]) -> int:
    request = _read_request()
    return run_request(request, event_channel(int(argv[0]), request.pop("nonce")))


def run_request(request: dict[str, Any], events: bytes) -> int:
    """Verify one module's findings (in a fresh process, or one forked from the zygote, which imported
    jax already and never started a backend)."""
    path = request["path"]
    faulthandler.enable(file=sys.__stderr__)
    _limit_core_dumps()
    sys.argv = [path]  # module-level argparse sees no options of ours
    try:
        import jax as module_jax
    except BaseException as error:
        write_event(events, event="no_jax", reason=f"cannot import jax: {type(error).__name__}: {error}")
        return 0
    try:  # keep JAX's own frames: a guarded expectation asks which of its functions raised
        module_jax.config.update("jax_traceback_filtering", "off")
    except Exception:
        pass
    jax = pin(module_jax)  # before the module's import: it may replace jax.jit, and the child keeps JAX's own
    environment = describe_environment(jax)
    write_event(events, event="environment", **environment)

    from .attempt import DebugPrintRecorder, ModuleLines
    from .callers import ForeignCallers
    from .raised import UserCode, blocked_verdict
    from .verifier import ModuleContext, trace_entry_points, verify_finding

    # The user's project goes first only now: what jax and our modules import (`logging`, `datetime`, ...)
    # must not be the project's modules of those names (the fork server imported jax before any request).
    sys.path[:] = [*request["search_path"], *[p for p in sys.path if p not in ("", os.getcwd())]]

    lines = ModuleLines(path)
    recorder = DebugPrintRecorder(jax, lines)
    findings = sorted(request["findings"], key=lambda f: f["line"])
    source: ModuleSource | None = None
    try:
        with open(path, encoding="utf-8") as handle:
            source = ModuleSource(path, handle.read())
    except (OSError, SyntaxError, ValueError):
        pass  # the import below fails the same way, and says why
    spans = {
        f["id"]: statement_span(source.tree, f["line"]) if source else (f["line"], f["line"])
        for f in findings
    }
    top_level = [
        f
        for f in findings
        if source is not None and f.get("function") is None and not source.inside_function(f["line"])
    ]
    modes = {EXPECTATIONS[f["code"]].mode for f in top_level}
    started = time.perf_counter()
    live = LiveCalls(jax, path)
    stopped: BaseException | None = None  # what jaxlint's own checker raised during the first import
    try:
        try:
            with _import_checks(jax, modes), LinesRun(path, active=bool(top_level)) as ran, live:
                module = import_user_module(request["module"], path)
        except BaseException as error:
            if not (modes & {KEY_REUSE, LEAKS} and _raised_by_checks(error)):
                raise
            # Our checker, not the module, stopped the import: its error judges the finding at its line;
            # the module is imported again without it, for every other finding.
            stopped = error
            _forget_module(request["module"])
            with LinesRun(path, active=bool(top_level)) as ran, live:
                module = import_user_module(request["module"], path)
        if source is None:
            raise ImportError(f"cannot read {path}")
    except BaseException as error:
        write_event(events, event="import_failed", reason=describe_error(error, path))
        partial = _partial_module(error, path, request["module"]) if source is not None else None
        later: list[dict[str, Any]] = []
        for finding in findings:
            verdict = _import_failure_verdict(error, finding, path, spans[finding["id"]])
            if (
                verdict["verdict"] == "NOT_RUN"
                and partial
                and _defined_before(finding, top_level, partial[1])
            ):
                later.append({**finding, "import_failure": verdict["reason"]})
                continue
            write_event(events, event="verdict", id=finding["id"], **verdict)
        if not later:
            write_event(events, event="done")
            return 0
        # Code defined before the failing statement exists (earlier notebook cells, functions above it):
        # its findings are verified like any, and say why the module did not import.
        module, findings = partial[0], later
    else:
        write_event(events, event="imported", seconds=round(time.perf_counter() - started, 3))
        for finding in top_level:
            verdict = _module_level_verdict(finding, ran, spans[finding["id"]])
            if stopped is not None:
                verdict = _checked_import_verdict(stopped, finding, path, spans[finding["id"]], verdict)
            write_event(events, event="verdict", id=finding["id"], **_unless_replaced(verdict, jax))
        findings = [f for f in findings if f not in top_level]
    assert source is not None

    context = ModuleContext(
        jax,
        module,
        source,
        request.get("examples", {}),
        lines,
        recorder,
        recorded=request.get("recorded"),
        module_name=request["module"],
        live=live,
        foreign=ForeignCallers(jax, request.get("callers") or []),
        user=UserCode(request["search_path"]),
    )
    reported: set[tuple[str, int, str]] = set()
    for finding in findings:
        write_event(events, event="begin", id=finding["id"])
        context.raised = []
        try:
            result = verify_finding(context, finding)
        except BaseException as error:
            result = {
                "verdict": "NOT_RUN",
                "reason": f"internal error in the verify child: {error!r}",
                "inputs": [],
            }
        # What the traces raised in the user's code: findings of their own, sent before the verdict they
        # block (the parent then has them whatever happens next).
        for key, record in context.found.items():
            if key not in reported:
                reported.add(key)
                write_event(events, event="raised", **record)
        if result["verdict"] == "NOT_RUN":
            result = blocked_verdict(result, finding, spans[finding["id"]], path, context.raised)
        failure = finding.get("import_failure")
        if failure and result["verdict"] == "NOT_RUN":
            result["reason"] = f"{failure}; {result['reason']}"
        result = _unless_replaced(result, jax)
        write_event(events, event="verdict", id=finding["id"], **result)
    if request.get("all"):
        write_event(events, event="begin", id=-1)  # a crash here costs no finding its verdict
        try:
            trace_entry_points(context)
        except Exception:
            pass  # what could be traced was; a bug of ours here must not lose the findings' verdicts
        for key, record in context.found.items():
            if key not in reported:
                reported.add(key)
                write_event(events, event="raised", **record)
    write_event(events, event="done", seconds=round(time.perf_counter() - started, 3))
    return 0
