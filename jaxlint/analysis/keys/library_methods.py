"""The keys a method of a library object consumes, as the library table's KEY_METHODS says: the object is
made by a listed factory (`dist.Normal(0, 1)`, `hk.transform(f)`), right there or bound once to a name."""

from __future__ import annotations

import libcst as cst

from ..binding.index import ModuleIndex, Unit
from ..objects.instances import module_instance
from ..semantics.library import KEY_METHODS


def key_method_places(index: ModuleIndex, func: cst.Attribute, unit: Unit) -> list[tuple[int | None, str]]:
    """(position, keyword) of each argument that `obj.method(...)` consumes as a key; [] when unknown."""
    method = func.attr.value
    built = module_instance(index, func.value, unit)
    maker = _factory_name(index, built.func, unit) if built is not None else None
    if maker is None:
        return []
    return [
        methods[method]
        for factory, methods in KEY_METHODS.items()
        if method in methods and (maker == factory or factory.endswith(".") and maker.startswith(factory))
    ]


def _factory_name(index: ModuleIndex, func: cst.BaseExpression, unit: Unit) -> str | None:
    """The qualified name of a factory, also through a module alias bound once at module level
    (`tfd = tfp.distributions` ... `tfd.Normal`)."""
    name = index.qualname(func, unit)
    if name is not None or type(func) is not cst.Attribute or type(func.value) is not cst.Name:
        return name
    alias = index.root.single_assignment(func.value.value)
    if alias is None or type(alias) is not cst.Attribute:
        return None
    base = index.qualname(alias, index.root)
    return f"{base}.{func.attr.value}" if base is not None else None
