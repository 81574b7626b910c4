"""Where tracers sit after a trace: module globals and the method's `self`. Diffing the places before and
after a leak-checked trace tells which of them the traced code stored a tracer into (JAX105: the verify
child's attempts); a `--run` command's processes look at the places a flagged statement stores into
(`recompiles/line_watch.py`). No jax import: a tracer is known by its class's name."""

from __future__ import annotations

import inspect
import types
from typing import Any


def is_tracer(value: Any) -> bool:
    return any(cls.__name__ == "Tracer" for cls in type(value).__mro__)


def _tracers(value: Any, depth: int = 2) -> set[int]:
    """ids of the tracers in a value, looking into lists, tuples, sets and dicts a little way."""
    if is_tracer(value):
        return {id(value)}
    if depth == 0:
        return set()
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return {i for item in list(value)[:1000] for i in _tracers(item, depth - 1)}
    return set()


def tracer_places(namespace: dict[str, Any], instance: Any) -> dict[str, set[int]]:
    """`global:NAME` (a module global, or an attribute of a module-level object) and `self:ATTR` -> the ids
    of the tracers held there."""
    places: dict[str, set[int]] = {}
    for name, value in list(namespace.items()):
        if isinstance(value, (types.ModuleType, type, types.FunctionType)) or name.startswith("__"):
            continue
        found = _global_tracers(value)
        if found:
            places[f"global:{name}"] = found
    for name, value in list(getattr(instance, "__dict__", {}).items()):
        found = _tracers(value)
        if found:
            places[f"self:{name}"] = found
    return places


def holds_tracer(place: str, namespace: dict[str, Any], instance: Any) -> bool:
    """Whether one place, named as `tracer_places` names it, holds a tracer now."""
    kind, _, name = place.partition(":")
    if kind == "global":
        return name in namespace and bool(_global_tracers(namespace[name]))
    return bool(_tracers(_attribute(instance, name)))


def global_tracers(place: str, namespace: dict[str, Any]) -> set[int]:
    """The ids of the tracers a `global:NAME` place holds now."""
    name = place.partition(":")[2]
    return _global_tracers(namespace[name]) if name in namespace else set()


def place_text(place: str) -> str:
    """`global:x` -> `global 'x'`, `self:w` -> `'self.w'`."""
    return place.replace("global:", "global '").replace("self:", "'self.") + "'"


def _attribute(instance: Any, name: str) -> Any:
    """`instance.name` as stored (its `__dict__`, or a `__slots__` entry), never running a property."""
    attributes = getattr(instance, "__dict__", None)
    if isinstance(attributes, dict) and name in attributes:
        return attributes[name]
    slot = inspect.getattr_static(instance, name, None)
    if isinstance(slot, types.MemberDescriptorType):
        try:
            return slot.__get__(instance, type(instance))
        except AttributeError:  # an empty slot
            return None
    return None


def _global_tracers(value: Any) -> set[int]:
    """A global's tracers: in the value, or in the attributes of a module-level object (not a callable's)."""
    found = _tracers(value)
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and not callable(value):
        found |= {i for v in list(attributes.values()) for i in _tracers(v)}
    return found
