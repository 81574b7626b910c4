"""Abstract call signatures of a traced function, and why one differs from another.

A signature is what JAX's tracing cache keys a call on, written for people: one entry per flattened
array argument (`x: f32[3]`, `c: weak f32[]`), one per static argument (`n=2`), and which arguments were
passed by keyword (that changes the pytree, hence the key). Diffing two signatures gives the retrace
reason (`arg 'x': f32[3] → f32[4]`) without relying on JAX's own explanation, which picks a misleading
"closest key" when a function has several.

Nothing here imports jax: avals and JAX's jit metadata are read by duck typing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# (name, description): `("x", "f32[3]")`, `("n", "static 2")`, `(KEYWORDS, "n, scale")`.
Entry = tuple[str, str]
Signature = tuple[Entry, ...]

STATIC = "static "
KEYWORDS = "*keywords"  # sorts apart from argument names; never shown as an argument
_REPR_LIMIT = 60
_DIFF_LIMIT = 3


def describe_aval(aval: Any) -> str:
    """`f32[3]`, `weak f32[]`, `key<fry>[]`: dtype and shape, and the weak type that also splits the cache."""
    try:
        text = aval.str_short(short_dtypes=True)
    except Exception:
        text = str(aval)
    text = text.lstrip("~")
    if getattr(aval, "weak_type", False):
        text = "weak " + text
    return text


def describe_static(value: Any) -> str:
    """A short repr; objects compared by identity get their address, since equal reprs would hide the change."""
    cls = type(value)
    text = _short_repr(value)
    if cls.__hash__ is object.__hash__ and cls.__eq__ is object.__eq__ and f"{id(value):x}" not in text:
        text += f" @0x{id(value):x}"
    return STATIC + text


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not break the user's program
        text = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 1] + "…"


def build_signature(
    *,
    leaf_names: Sequence[str] | None,
    avals: Sequence[Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
    param_names: Sequence[str],
) -> Signature:
    """The signature of one jit call, from the values JAX hands its tracer.

    `leaf_names` are JAX's names for the flattened dynamic arguments (`x`, `params['w']`), aligned with
    `avals`; `param_names` are the function's positional parameter names, used to name static arguments.
    """
    names = list(leaf_names or ())
    if len(names) != len(avals):
        names = [f"arg{i}" for i in range(len(avals))]
    entries: list[Entry] = [(name, describe_aval(aval)) for name, aval in zip(names, avals, strict=True)]

    dynamic_roots = {_root(name) for name in names}
    for index in sorted({i + len(args) if i < 0 else i for i in static_argnums}):
        if 0 <= index < len(args):
            name = param_names[index] if index < len(param_names) else f"args[{index}]"
            entries.append((name, describe_static(args[index])))
    static_by_index = {param_names[i] for i in static_argnums if 0 <= i < len(param_names)}
    for key, value in kwargs.items():
        if key in static_argnames or (key in static_by_index and key not in dynamic_roots):
            entries.append((key, describe_static(value)))
    if kwargs:
        entries.append((KEYWORDS, ", ".join(sorted(kwargs))))
    return tuple(entries)


def _root(leaf_name: str) -> str:
    """`params['w']` → `params`: the argument a flattened leaf belongs to."""
    for i, char in enumerate(leaf_name):
        if char in "[.":
            return leaf_name[:i]
    return leaf_name


def render(signature: Signature) -> str:
    """`(x: f32[3], n=2; by keyword: n)`."""
    parts = []
    keywords = ""
    for name, desc in signature:
        if name == KEYWORDS:
            keywords = desc
        elif desc.startswith(STATIC):
            parts.append(f"{name}={desc[len(STATIC) :]}")
        else:
            parts.append(f"{name}: {desc}")
    text = ", ".join(parts)
    if keywords:
        text += f"; by keyword: {keywords}"
    return f"({text})"


def differences(new: Signature, old: Signature) -> list[str]:
    """One phrase per entry that differs: `arg 'x': f32[3] → f32[4]`, `static 'n': 2 → 3`."""
    new_map, old_map = dict(new), dict(old)
    out: list[str] = []
    for name in list(old_map) + [n for n in new_map if n not in old_map]:
        before, after = old_map.get(name), new_map.get(name)
        if before == after:
            continue
        if name == KEYWORDS:
            out.append(f"arguments passed by keyword: {before or '(none)'} → {after or '(none)'}")
            continue
        statics = [desc.startswith(STATIC) for desc in (before, after) if desc is not None]
        if all(statics):
            out.append(f"static '{name}': {_strip(before)} → {_strip(after)}")
        elif not any(statics):
            out.append(f"arg '{name}': {_strip(before)} → {_strip(after)}")
        else:  # static on one side only: keep the word "static" on that side
            out.append(f"arg '{name}': {before or '(absent)'} → {after or '(absent)'}")
    return out


def _strip(desc: str | None) -> str:
    if desc is None:
        return "(absent)"
    return desc[len(STATIC) :] if desc.startswith(STATIC) else desc


def closest(new: Signature, previous: Sequence[Signature]) -> tuple[Signature | None, list[str]]:
    """The previous signature with the fewest differences (the latest on ties), and those differences."""
    best: Signature | None = None
    best_diff: list[str] = []
    for old in previous:
        diff = differences(new, old)
        if best is None or len(diff) <= len(best_diff):
            best, best_diff = old, diff
    return best, best_diff


def summarize(diff: list[str]) -> str:
    """At most three differences in one line, then how many more."""
    shown = "; ".join(diff[:_DIFF_LIMIT])
    if len(diff) > _DIFF_LIMIT:
        shown += f"; and {len(diff) - _DIFF_LIMIT} more"
    return shown
