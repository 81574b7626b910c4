"""Functions of the project's other modules that have real inputs (declared examples, calls a `--run`
recorded), tried when a finding's own function could not confirm it: a train step in `train.py` reaches a
model's method in `model.py`. The parent lists them in the request (`callers`: module name, file, sys.path
entries, examples and recorded calls by qualname); each module is imported by name here, once, and its
functions traced with those inputs only (no search: a guess would prove nothing about a caller).
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

from .examples import example_calls, example_namespace
from .inputs import CallInputs
from .recorded import recorded_calls
from .resolve import Target, Unreachable, lookup, set_statics, unwrap

MAX_FUNCTIONS = 4  # per finding: a few callers, not every recorded function of the project


class ForeignCallers:
    def __init__(self, jax: Any, callers: list[dict[str, Any]]) -> None:
        self.jax = jax
        self.callers = callers
        self._modules: dict[str, types.ModuleType | None] = {}

    def _module(self, caller: dict[str, Any]) -> types.ModuleType | None:
        name = caller["module"]
        if name not in self._modules:
            for entry in caller.get("search_path", []):
                if entry not in sys.path:
                    sys.path.append(entry)
            try:
                module = importlib.import_module(name)
                same = os.path.realpath(getattr(module, "__file__", "") or "") == os.path.realpath(
                    caller["path"]
                )
                self._modules[name] = module if same else None
            except BaseException:  # its import fails: it reaches nothing
                self._modules[name] = None
        return self._modules[name]

    def targets(self, skip: Any) -> Iterator[tuple[Target, list[CallInputs]]]:
        """(caller, its real inputs), at most MAX_FUNCTIONS; `skip` is the finding's own function."""
        given = 0
        for caller in self.callers:
            module = None
            for qualname in dict.fromkeys([*caller.get("examples", {}), *caller.get("recorded", {})]):
                if given >= MAX_FUNCTIONS:
                    return
                module = module or self._module(caller)
                if module is None:
                    break
                found = self._target(module, qualname)
                if found is None or found.function is skip:
                    continue
                calls = self._calls(module, found, caller, qualname)
                if calls:
                    given += 1
                    yield found, calls

    def _target(self, module: types.ModuleType, qualname: str) -> Target | None:
        try:
            obj, owner, binding = lookup(module, qualname)
            function, jitted = unwrap(obj, qualname)
        except (AttributeError, Unreachable):
            return None
        target = Target(f"{module.__name__}:{qualname}", function, None, binding, owner, jitted)
        set_statics(target)
        return target

    def _calls(
        self, module: types.ModuleType, target: Target, caller: dict[str, Any], qualname: str
    ) -> list[CallInputs]:
        declared = caller.get("examples", {}).get(qualname)
        try:
            if declared:
                return example_calls(target, declared, example_namespace(module.__dict__))
            local = Target(qualname, target.function, None, target.binding, target.owner, target.jitted)
            return recorded_calls(self.jax, module, local, caller.get("recorded", {}))[0]
        except Exception:
            return []
