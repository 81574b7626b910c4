"""Methods of flax linen Modules run the way flax runs them: a Module method needs a bound scope (its
`nn.Dense(...)` submodules, `self.param`), which a bare instance has not, so each of the method's inputs
is traced through `Module().init(key, *args, method=name)` on an instance of the class made with its
defaults (or the `self=` a declared example gives). `init` calls the method with those arguments exactly
as `apply` would, under the trace; the rule's error or print at the flagged line is the user's code's.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from .inputs import CallInputs, ValueSpec
from .resolve import METHOD, Target


def is_linen_module(cls: type | None) -> bool:
    return cls is not None and any(
        c.__module__.startswith("flax.linen") and c.__name__ == "Module" for c in cls.__mro__
    )


def _through_init(name: str, module: Any, *args: Any, **kwargs: Any) -> Any:
    import jax

    return module.init(jax.random.key(0), *args, method=name, **kwargs)


def through_init(target: Target, calls: list[CallInputs]) -> list[CallInputs]:
    """The calls of a linen Module method, made through `init`; others as they are."""
    owner = target.owner
    if target.binding != METHOD or not is_linen_module(owner):
        return calls
    assert owner is not None
    try:
        default = owner()
    except Exception:  # fields without defaults: only a declared `self=` can make one
        default = None
    name = target.function.__name__
    entry = functools.partial(_through_init, name)
    made = []
    for call in calls:
        instance = call.instance or (
            ValueSpec(default, f"{owner.__name__}()") if default is not None else None
        )
        if instance is None or call.function is not None:
            made.append(call)
            continue
        text = f"{call.text}, through {owner.__name__}().init(key, ..., method={name!r})"
        made.append(dataclasses.replace(call, instance=instance, function=entry, text=text))
    return made
