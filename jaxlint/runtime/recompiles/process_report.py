"""Child side of `--run`: counts this process's traces and compiles into its own JSON file.

Loaded by the injected `sitecustomize` in every Python process of the command. It costs nothing until
the process imports jax: a one-shot import watcher then hooks JAX right after `jax/__init__` ran, before
the user's next line. The file is rewritten at most every half second while events arrive and at exit,
so a process killed by a signal still leaves its counts; a forked child (multiprocessing's default on
Linux) starts from zero under its own file and writes on every event, since it ends with `os._exit`.
"""

from __future__ import annotations

import atexit
import importlib.abc
import json
import os
import sys
import threading
import time
import uuid
from typing import Any

from .call_records import MAX_CALLS_PER_FUNCTION, MAX_ERRORS, encode_error
from .line_watch import LineWatch, read_watch
from .recorder import Recorder

ENV_DIR = "JAXLINT_RECOMPILES_DIR"
FORMAT_VERSION = 1
_WRITE_INTERVAL = 0.5


class ProcessReport:
    """A Recorder that keeps a JSON copy of its counts in the reports directory."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.recorder = Recorder()
        self.path = self._new_path()
        self.write_through = False
        self._lock = threading.Lock()
        self._written_version: Any = None
        self._last_write = 0.0
        self._bus: Any = None
        self._backend: tuple[str, list[str]] | None = None
        self._reset_calls()

    def _reset_calls(self) -> None:
        # Calls as `--verify` can replay them (call_records), a few per function, and the errors that
        # tracing raised or that ended the process, with the user's frames.
        self.calls: dict[tuple[str, int, str], dict[str, Any]] = {}
        self.raised: list[dict[str, Any]] = []
        self.calls_version = 0
        self.observed: list[dict[str, Any]] = []

    def start(self) -> None:
        import jax

        from . import key_fingerprints, observations
        from .jax_hooks import install

        self._bus = install()
        self._bus.subscribe(self)
        observations.install(
            jax, observations.Observations(_skip_dirs(), self.on_observed), tracing=self._bus.tracing
        )
        statements = read_watch(self.directory)
        if statements:
            self._bus.line_watch = LineWatch(statements, self.on_observed)
        keys = key_fingerprints.KeyWatch(jax, _skip_dirs(), self.on_observed)
        if key_fingerprints.install(jax, keys):
            self._bus.key_watch = keys
        self.register_process_hooks()
        self.write()  # an empty report still says "this process imported jax"

    def register_process_hooks(self) -> None:
        atexit.register(self.write)
        previous = sys.excepthook

        def excepthook(kind: Any, error: BaseException, tb: Any) -> None:
            try:  # an error that ends the program (raised in a trace or in eager code)
                record = encode_error(error, _skip_dirs())
                record["uncaught"] = True  # nothing in the program caught it: a bug the run hit
                self._add_error(None, record)
            except Exception:
                pass
            previous(kind, error, tb)

        sys.excepthook = excepthook
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork)

    # the Recorder interface the bus calls
    def on_trace(self, event: Any) -> None:
        self.recorder.on_trace(event)
        self._maybe_write()

    def on_compile(self, event: Any) -> None:
        self.recorder.on_compile(event)
        self._maybe_write()

    def on_call(self, info: Any, call: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
        if error is not None:
            self._add_error(info, error)
        elif call is not None:
            with self._lock:
                entry = self.calls.setdefault(
                    info.key,
                    {
                        "module": info.module,
                        "qualname": info.qualname,
                        "path": info.path,
                        "line": info.line,
                        "first_line": info.first_line,
                        "calls": [],
                    },
                )
                if "unkept" in call:  # nothing to replay: say why, once
                    if "unkept" not in entry:
                        entry["unkept"] = call["unkept"]
                        self.calls_version += 1
                    return
                if call in entry["calls"] or len(entry["calls"]) >= MAX_CALLS_PER_FUNCTION:
                    return
                entry["calls"].append(call)
                self.calls_version += 1
        self._maybe_write()

    def on_observed(self, record: dict[str, Any]) -> None:
        """Something the user's code did that proves a finding (observations.py)."""
        with self._lock:
            self.observed.append(record)
            self.calls_version += 1
        self._maybe_write()

    def _add_error(self, info: Any, error: dict[str, Any]) -> None:
        with self._lock:
            if error in self.raised or len(self.raised) >= MAX_ERRORS:
                return
            if info is not None:
                error["function"] = {"qualname": info.qualname, "path": info.path, "line": info.line}
            self.raised.append(error)
            self.calls_version += 1

    def _maybe_write(self) -> None:
        if self.write_through or time.monotonic() - self._last_write >= _WRITE_INTERVAL:
            self.write()

    def _after_fork(self) -> None:
        self.recorder = Recorder()
        self.path = self._new_path()
        self.write_through = True
        self._lock = threading.Lock()
        self._written_version = None
        self._reset_calls()

    def _new_path(self) -> str:
        return os.path.join(self.directory, f"{os.getpid()}-{uuid.uuid4().hex[:8]}.json")

    def write(self) -> None:
        with self._lock:
            version = (self.recorder.version, self.calls_version)
            if version == self._written_version:
                return
            self._written_version = version
            self._last_write = time.monotonic()
            data = self.recorder.snapshot()
            data.update(
                format=FORMAT_VERSION,
                pid=os.getpid(),
                ppid=os.getppid(),
                argv=list(getattr(sys, "argv", [])),
                executable=sys.executable,
                mode=getattr(self._bus, "mode", "?"),
                errors=list(getattr(self._bus, "errors", [])),
                jax_version=_jax_version(),
                calls=list(self.calls.values()),
                raised=list(self.raised),
                observed=list(self.observed),
            )
            if data["compiles_total"]:  # the backend is up: asking does not start one
                data["backend"], data["devices"] = self._devices()
            tmp = self.path + ".tmp"
            try:
                with open(tmp, "w", encoding="utf-8") as handle:
                    json.dump(data, handle)
                os.replace(tmp, self.path)
            except OSError:
                pass  # the reports directory is gone: the parent stopped listening

    def _devices(self) -> tuple[str, list[str]]:
        if self._backend is None:
            try:
                import jax

                devices = jax.devices()
                self._backend = (
                    jax.default_backend(),
                    [f"{d.platform}:{d.device_kind}:{d.id}" for d in devices[:8]],
                )
            except Exception as exc:
                self._backend = (f"unknown ({type(exc).__name__})", [])
        return self._backend


def _skip_dirs() -> tuple[str, ...]:
    """Frames that are not the user's: jax, jaxlib and this package."""
    dirs = [os.path.dirname(os.path.abspath(__file__))]
    for name in ("jax", "jaxlib"):
        module = sys.modules.get(name)
        if getattr(module, "__file__", None):
            dirs.append(os.path.dirname(os.path.abspath(module.__file__)))
    return tuple(d + os.sep for d in dirs)


def _jax_version() -> str | None:
    module = sys.modules.get("jax")
    return getattr(module, "__version__", None)


class _JaxImportWatcher(importlib.abc.MetaPathFinder):
    """Finds nothing itself: it wraps jax's own loader so the hooks go in right after `import jax`."""

    def __init__(self, on_import: Any) -> None:
        self.on_import = on_import

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "jax":
            return None
        sys.meta_path.remove(self)  # one shot: later imports of jax are cache hits anyway
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find else None
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module
        on_import = self.on_import

        def exec_then_hook(module: Any) -> None:
            exec_module(module)
            on_import()

        spec.loader.exec_module = exec_then_hook  # this loader instance serves this one spec only
        return spec


def activate(directory: str) -> None:
    """Record this process into `directory` once it imports jax (now, if it already has)."""

    def start() -> None:
        try:
            ProcessReport(directory).start()
        except Exception as exc:  # never break the user's program
            print(f"jaxlint: recompile counting is off in this process: {exc!r}", file=sys.stderr)

    if "jax" in sys.modules:
        start()
    else:
        sys.meta_path.insert(0, _JaxImportWatcher(start))
