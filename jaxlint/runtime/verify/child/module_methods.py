"""Methods of flax linen and haiku Modules, run the way those libraries run them. Such a method needs a bound
scope (its `nn.Dense(...)` submodules, `self.param`, haiku's frame), which a bare instance has not, so each of
the method's inputs is traced through the library's own entry:

- flax linen: `Module().init(key, *args, method=name)` on an instance of the class made with its defaults (or
  the `self=` a declared example gives);
- haiku: `hk.transform(lambda *args: getattr(Module(), name)(*args)).init(key, *args)`, the instance made
  inside the transform as haiku requires.

`init` calls the method with those arguments exactly as `apply` would, under the trace; the rule's error or
print at the flagged line is the user's code's.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from .inputs import CallInputs, ValueSpec
from .resolve import METHOD, Target


def library_module(cls: type | None) -> str | None:
    """ "flax" or "haiku" when `cls` subclasses that library's Module."""
    for base in cls.__mro__ if cls is not None else ():
        if base.__name__ == "Module":
            if base.__module__.startswith("flax.linen"):
                return "flax"
            if base.__module__.startswith("haiku"):
                return "haiku"
    return None


def _through_flax_init(name: str, module: Any, *args: Any, **kwargs: Any) -> Any:
    import jax

    return module.init(jax.random.key(0), *args, method=name, **kwargs)


def _through_haiku_init(owner: type, name: str, *args: Any, **kwargs: Any) -> Any:
    import haiku as hk
    import jax

    transformed = hk.transform(lambda *a, **k: getattr(owner(), name)(*a, **k))
    return transformed.init(jax.random.PRNGKey(0), *args, **kwargs)


def _haiku_entry(owner: type, name: str) -> Any:
    def entry(*args: Any, **kwargs: Any) -> Any:
        return _through_haiku_init(owner, name, *args, **kwargs)

    return entry


def through_init(target: Target, calls: list[CallInputs]) -> list[CallInputs]:
    """The calls of a flax or haiku Module method, made through the library's `init`; others as they are."""
    owner = target.owner
    library = library_module(owner) if target.binding == METHOD else None
    if library is None:
        return calls
    assert owner is not None
    name = target.function.__name__
    made = []
    for call in calls:
        if call.function is not None:  # a live or pickled call already says how it was called
            made.append(call)
        elif library == "haiku":
            text = f"{call.text}, through hk.transform(...{owner.__name__}().{name}).init"
            # The bound first argument is dropped: haiku builds the instance inside its transform.
            made.append(dataclasses.replace(call, function=_drop_first(_haiku_entry(owner, name)), text=text))
        else:
            instance = call.instance or _default_instance(owner)
            if instance is None:
                made.append(call)
                continue
            text = f"{call.text}, through {owner.__name__}().init(key, ..., method={name!r})"
            entry = functools.partial(_through_flax_init, name)
            made.append(dataclasses.replace(call, instance=instance, function=entry, text=text))
    return made


def _default_instance(owner: type) -> ValueSpec | None:
    try:
        return ValueSpec(owner(), f"{owner.__name__}()")
    except Exception:  # fields without defaults: only a declared `self=` can make one
        return None


def _drop_first(entry: Any) -> Any:
    def call(_self: Any, *args: Any, **kwargs: Any) -> Any:
        return entry(*args, **kwargs)

    return call
