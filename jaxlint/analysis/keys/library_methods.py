"""The keys a method of a library object consumes, as the library table's KEY_METHODS says: the object is
made by a listed factory (`dist.Normal(0, 1)`, `hk.transform(f)`), right there or bound once to a name, or
for `__call__` also held in a field of `self` that construction alone sets (`dropout: eqx.nn.Dropout`)."""

from __future__ import annotations

import libcst as cst

from ..binding.index import ModuleIndex, Unit
from ..objects.held_fields import field_factory
from ..objects.instances import module_instance
from ..semantics.library import KEY_METHODS


def key_method_places(index: ModuleIndex, func: cst.Attribute, unit: Unit) -> list[tuple[int | None, str]]:
    """(position, keyword) of each argument that `obj.method(...)` consumes as a key; [] when unknown."""
    return _places(index, func.value, func.attr.value, unit)


def called_object_places(
    index: ModuleIndex, func: cst.BaseExpression, unit: Unit
) -> list[tuple[int | None, str]]:
    """`layer(x, key=k)` of a library object (a name bound to it, or a field of `self`): its `__call__`'s places."""
    if type(func) is not cst.Name and type(func) is not cst.Attribute:
        return []
    return _places(index, func, "__call__", unit)


def _places(
    index: ModuleIndex, receiver: cst.BaseExpression, method: str, unit: Unit
) -> list[tuple[int | None, str]]:
    built = module_instance(index, receiver, unit)
    maker = _factory_name(index, built.func, unit) if built is not None else None
    if maker is None and type(receiver) is cst.Attribute and method == "__call__":
        # a field holding a layer called with its key (`self.dropout(x, key=k)`); not a field's haiku
        # `apply(params, rng, x)`, which draws only where the transformed function does (`hk.next_rng_key`),
        # and which function a field's transformation holds is seldom shown there
        maker = field_factory(index, receiver, unit)
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
