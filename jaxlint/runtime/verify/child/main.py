"""Entry point of the verify child: `main([request.json, events.jsonl])`.

Events are appended to the events file one JSON line at a time, each written whole with one os.write, so
the parent can read everything that happened up to a hang, a crash or an `os._exit` in user code:
environment, imported | import_failed, then begin/verdict per finding, then done."""

from __future__ import annotations

import faulthandler
import importlib
import importlib.util
import json
import os
import platform
import sys
import time
import types
from typing import Any

from .expectations import EXCEPTION, EXPECTATIONS, PLAIN
from .judge import describe_error, frame_covers, user_frames


class EventLog:
    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def write(self, **event: Any) -> None:
        os.write(self._fd, (json.dumps(event, default=str) + "\n").encode())


def _limit_core_dumps() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass


def _limit_memory(backend: str, limit_mb: int | None) -> None:
    """RLIMIT_AS on CPU only: CUDA reserves huge virtual ranges, so on an accelerator the parent's RSS
    watchdog does this job. The limit is on top of what jax already mapped at start-up."""
    if backend != "cpu" or not limit_mb:
        return
    try:
        import resource

        with open("/proc/self/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = max(limit_mb * 2**20, mapped + 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ImportError, OSError, ValueError):
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


def _import_failure_verdict(error: BaseException, finding: dict[str, Any], path: str) -> dict[str, Any]:
    """Module-level code that raises the rule's exception at the flagged line confirms it by importing."""
    expectation = EXPECTATIONS[finding["code"]]
    names = {cls.__name__ for cls in type(error).__mro__}
    matches = (
        expectation.kind == EXCEPTION
        and expectation.mode == PLAIN
        and names & set(expectation.exception_names)
        and (not expectation.message_patterns or any(p in str(error) for p in expectation.message_patterns))
        and any(frame_covers(f, finding["line"]) for f in user_frames(error, path))
    )
    if matches:
        reason = f"{type(error).__name__} at line {finding['line']} while importing the module"
        return {"verdict": "CONFIRMED", "reason": reason, "inputs": ["module import"]}
    reason = f"importing the module failed: {describe_error(error, path)}"
    return {"verdict": "NOT_RUN", "reason": reason, "inputs": []}


def main(argv: list[str]) -> int:
    request_path, events_path = argv
    events = EventLog(events_path)
    with open(request_path, encoding="utf-8") as handle:
        request = json.load(handle)
    path = request["path"]
    faulthandler.enable(file=sys.__stderr__)
    _limit_core_dumps()
    # `python -c` put the working directory (an empty temp dir) first; the user's project goes there.
    sys.path[:] = [*request["search_path"], *[p for p in sys.path if p not in ("", os.getcwd())]]
    sys.argv = [path]  # module-level argparse sees no options of ours
    try:
        import jax
    except BaseException as error:
        events.write(event="no_jax", reason=f"cannot import jax: {type(error).__name__}: {error}")
        return 0
    environment = describe_environment(jax)
    events.write(event="environment", **environment)
    _limit_memory(environment["backend"], request.get("memory_limit_mb"))

    from .attempt import DebugPrintRecorder, ModuleLines
    from .source import ModuleSource
    from .verifier import ModuleContext, verify_finding

    lines = ModuleLines(path)
    recorder = DebugPrintRecorder(jax, lines)
    findings = sorted(request["findings"], key=lambda f: f["line"])
    started = time.perf_counter()
    try:
        module = import_user_module(request["module"], path)
        with open(path, encoding="utf-8") as handle:
            source = ModuleSource(path, handle.read())
    except BaseException as error:
        events.write(event="import_failed", reason=describe_error(error, path))
        for finding in findings:
            events.write(event="verdict", id=finding["id"], **_import_failure_verdict(error, finding, path))
        events.write(event="done")
        return 0
    events.write(event="imported", seconds=round(time.perf_counter() - started, 3))

    context = ModuleContext(jax, module, source, request.get("examples", {}), lines, recorder)
    for finding in findings:
        events.write(event="begin", id=finding["id"])
        try:
            result = verify_finding(context, finding)
        except BaseException as error:
            result = {
                "verdict": "NOT_RUN",
                "reason": f"internal error in the verify child: {error!r}",
                "inputs": [],
            }
        events.write(event="verdict", id=finding["id"], **result)
    events.write(event="done", seconds=round(time.perf_counter() - started, 3))
    return 0
