"""Inputs for a parameter that is a registered dataclass (`jax.tree_util.register_dataclass`, a flax
`struct.dataclass`, any dataclass registered as a pytree) when no run recorded one: the class named by the
parameter's annotation, or else the one dataclass of the module whose fields cover every attribute the
function reads on the parameter (`state.params`, `state.step`). Its fields are built from their own
annotations: arrays for array fields (the search's shapes), weak scalars for `float`/`int`, nested
dataclasses likewise; static (meta) fields get the guesses static parameters get, or their defaults.

Which fields are data and which are static is asked of JAX itself: an instance holding a marker per field
is flattened, and the markers that come out as leaves are the data fields.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

_DEPTH = 3


@dataclasses.dataclass(frozen=True)
class StructSpec:
    cls: type
    fields: tuple[tuple[str, Any, bool], ...]  # (name, spec, is_data)

    def describe(self) -> str:
        return f"{self.cls.__name__}(" + ", ".join(f"{n}: {s.describe()}" for n, s, _ in self.fields) + ")"

    def build(self, traced: bool) -> Any:
        obj = object.__new__(self.cls)  # no __init__/__post_init__: they may check concrete values
        for name, spec, is_data in self.fields:
            object.__setattr__(obj, name, spec.build(traced and is_data))
        return obj


def struct_class(annotation: str, namespace: dict[str, Any], attributes: list[str]) -> type | None:
    """The registered dataclass a parameter holds: by annotation, else by the attributes read on it."""
    if annotation:
        found: Any = namespace.get(annotation.split(".")[0])
        for part in annotation.split(".")[1:]:
            found = getattr(found, part, None)
        return found if isinstance(found, type) and data_fields(found) is not None else None
    if not attributes:
        return None
    module = namespace.get("__name__")
    matches = [
        value
        for value in list(namespace.values())
        if isinstance(value, type)
        and getattr(value, "__module__", None) == module
        and dataclasses.is_dataclass(value)
        and set(attributes) <= {f.name for f in dataclasses.fields(value)}
        and data_fields(value) is not None
    ]
    return matches[0] if len(matches) == 1 else None  # two candidates: a guess, and precision comes first


def data_fields(cls: type) -> set[str] | None:
    """The fields JAX flattens as leaves; None when `cls` is not a dataclass registered as a pytree."""
    if not dataclasses.is_dataclass(cls):
        return None
    import jax

    probe = object.__new__(cls)
    markers = {}
    for field in dataclasses.fields(cls):
        marker = _Marker(field.name)
        markers[id(marker)] = field.name
        object.__setattr__(probe, field.name, marker)
    try:
        leaves = jax.tree_util.tree_leaves(probe)
    except Exception:
        return None
    if len(leaves) == 1 and leaves[0] is probe:
        return None  # not registered: the instance is one leaf
    return {markers[id(leaf)] for leaf in leaves if id(leaf) in markers}


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def struct_candidates(cls: type, rounds: int, depth: int = 0) -> tuple[StructSpec, ...]:
    """One StructSpec per search round (each field takes its candidate of that round); () when a field
    cannot be built."""
    from .inputs import DimSizes, ValueSpec, static_value, traced_candidates

    data = data_fields(cls)
    if data is None or depth > _DEPTH:
        return ()
    slots: list[tuple[str, tuple[Any, ...], bool]] = []
    for field in dataclasses.fields(cls):
        text = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", str(field.type))
        if field.name in data:
            nested = _field_class(cls, text)
            candidates = struct_candidates(nested, rounds, depth + 1) if nested else ()
            candidates = candidates or traced_candidates(field.name, text, False, DimSizes())
        elif field.default is not dataclasses.MISSING:
            candidates = (ValueSpec(field.default),)
        else:
            value = static_value(text)
            candidates = (value,) if value is not None else ()
        if not candidates:
            return ()
        slots.append((field.name, candidates, field.name in data))
    return tuple(
        StructSpec(cls, tuple((n, c[min(r, len(c) - 1)], d) for n, c, d in slots)) for r in range(rounds)
    )


def _field_class(cls: type, text: str) -> type | None:
    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    namespace = vars(module) if module is not None else {}
    found: Any = namespace.get(text.split(".")[0])
    for part in text.split(".")[1:]:
        found = getattr(found, part, None)
    return found if isinstance(found, type) and dataclasses.is_dataclass(found) else None
