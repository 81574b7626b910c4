"""Inputs for a parameter that is a registered dataclass (`jax.tree_util.register_dataclass`, a flax
`struct.dataclass`, any dataclass registered as a pytree) when no run recorded one: the class named by the
parameter's annotation, or else the one dataclass of the module whose fields cover every attribute the
function reads on the parameter (`state.params`, `state.step`). Its fields are built from their own
annotations: arrays for array fields (the search's shapes), weak scalars for `float`/`int`, nested
dataclasses likewise; static (meta) fields get the guesses static parameters get, or their defaults
(`inputs.struct_candidates` builds them: this module only says which class and which fields).

Which fields are data and which are static is asked of JAX itself: an instance holding a marker per field
is flattened, and the markers that come out as leaves are the data fields.
"""

from __future__ import annotations

import dataclasses
from typing import Any


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
