"""Abstract values with structure: what a name or expression holds, beyond the flags.

The flow walk keeps one `Value` per local name. Its `flags` are the bit flags of `kinds.py` (TRACED, ARRAY,
BOOL, LIST, HOLDS_TRACED) that every rule tests; the rest says what the flags cannot: which kind of Python
value it is, a literal's value, the elements of a tuple (each a `Value` of its own, so `x, n = pair` of
`pair = (jnp.sin(t), 3)` keeps `n` a Python int), the function or class a name defines. Values join at merges (branches, loop rounds); whatever two sides disagree on becomes unknown, and
unknown stays silent: a rule speaks only about what the flags say.

| kind | what it is | structure kept | made by the walk today |
|---|---|---|---|
| `bool`, `int`, `float`, `str`, `none` | a Python scalar | `literal` (not for floats) | literals, `True`/`False`/`None` |
| `tuple` | a Python tuple | `items`, one `Value` each (or `each`: every element alike) | tuple displays, and names bound to one; `jnp` calls giving tuples of arrays |
| `list` | a Python list | `items` (or `each`) | list displays and `jnp` calls giving lists of arrays (`values/containers.py`: only where the function never mutates, passes or aliases it) |
| `dict` | a dict with string keys | `keys`, `items`: the entries | dict displays (as lists) |
| `instance` | an instance of a record class (`objects/records.py`) | `keys`: its fields, `items`: their values | constructor calls |
| `object` | an instance of another class whose constructor stores its arguments (`objects.records.constructor`): its fields can be reassigned | `keys`: the fields known, `items`: their values | constructor calls; a store `obj.f = v` rebinds `f` |
| `jax_array` | a JAX array (traced or concrete: the flags say) | `dtype` kind when known | `jnp`/`lax`/`jax.nn`/`jax.random` results |
| `numpy_array` | a NumPy array (writable, on the host) | `dtype` kind when known, or "float64"/"complex128" where asked for by name | `np.*` constructors (`np.array(jax_array)`: a writable copy; `np.asarray(jax_array)`: a read-only view) |
| `key` | a PRNG key | `dtype`: "key" (typed) or "uint32" (legacy) | `jax.random.key`/`PRNGKey`/`split`/`fold_in` |
| `function`, `class` | a def or class | `definition` (its `Unit`, its `ClassDef`) | `def`, `class` statements |
| `module` | an imported name, or an array namespace chosen at run time | `literal`: the module's name where known (`xp = array_namespace(x)` of JAX arrays: "jax.numpy", `summaries/namespaces.py`) | `import` statements, namespace getters |
| `dtype` | a dtype asked for as 64-bit by name | `literal`: "float64" or "complex128" (`values/wide_dtypes.py`) | `np.float64`, `np.dtype("f8")`, a `for` over literal dtypes |
| `unknown` | anything else: parameters, other calls | flags only | everything else |

A dtype kind is one of "bool", "int", "uint", "float", "complex" (a key's is "key" or "uint32"). Lists and
dicts are mutable: their entries are kept only for a name whose every use in its function reads an entry by
a literal (`values/containers.py`); an item store, `.update`/`.pop`/`.setdefault`/`.append`, passing it to a call or
binding it to another name drops them.

`kinds.py` stays the vocabulary of the cache's summaries; this module imports no libcst.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..kinds import HOLDS_TRACED, LIST, TRACED

UNKNOWN = "unknown"
SEQUENCES = frozenset({"tuple", "list"})
MUTABLE = frozenset({"list", "dict"})
ARRAYS = frozenset({"jax_array", "numpy_array", "key"})
INSTANCES = frozenset({"instance", "object"})


class _Absent:
    """No literal known (a literal may itself be None)."""

    __slots__ = ()

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True, slots=True)
class Value:
    flags: int = 0
    kind: str = UNKNOWN
    literal: Any = ABSENT
    dtype: str | None = None
    items: tuple[Value, ...] | None = None  # a tuple's elements, an instance's field values (in `keys` order)
    keys: tuple[str, ...] | None = None  # an instance's fields
    definition: Any = None  # the Unit of a function, the ClassDef of a class or of an instance's class
    each: Value | None = None  # every element of a tuple or list of unknown length (`jnp.split`'s arrays)

    def entry(self, key: str) -> Value | None:
        """A dict's entry under a string key; None when unknown."""
        if self.kind != "dict" or self.keys is None or self.items is None or key not in self.keys:
            return None
        return self.items[self.keys.index(key)]

    @property
    def traced(self) -> bool:
        return bool(self.flags & TRACED)

    def item(self, index: int) -> Value | None:
        """The element at `index` of a tuple or list of known length (or of known elements); None when
        unknown."""
        if self.items is None:
            return self.each if self.kind in SEQUENCES else None
        if self.keys is not None or self.kind not in SEQUENCES:
            return None
        if -len(self.items) <= index < len(self.items):
            return self.items[index]
        return None

    def field(self, name: str) -> Value | None:
        """An instance's field (a record class: `objects/records.py`); None when unknown."""
        if self.kind not in INSTANCES or self.keys is None or self.items is None or name not in self.keys:
            return None
        return self.items[self.keys.index(name)]


# Values with nothing but flags, one per combination (most values are these: no allocation per binding).
_PLAIN = {flags: Value(flags) for flags in range(2 * HOLDS_TRACED)}
NOTHING = _PLAIN[0]


def plain(flags: int) -> Value:
    """The value known only by its flags."""
    found = _PLAIN.get(flags)
    return found if found is not None else Value(flags)


def scalar(kind: str, literal: Any = ABSENT) -> Value:
    return Value(0, kind, literal)


def sequence(kind: str, items: tuple[Value, ...]) -> Value:
    """A tuple or list of known elements; its flags are what the flag evaluator gives the same display."""
    held = 0
    for item in items:
        held |= item.flags
    flags = HOLDS_TRACED if held & (TRACED | HOLDS_TRACED) else 0
    return Value(flags | LIST if kind == "list" else flags, kind, items=items)


def mapping(keys: tuple[str, ...], items: tuple[Value, ...], flags: int) -> Value:
    """A dict of known string keys and entries; `flags` are what the flag evaluator gives the display."""
    return Value(flags, "dict", items=items, keys=keys)


def array(kind: str, flags: int, dtype: str | None = None) -> Value:
    """A JAX array, NumPy array or PRNG key (`kind`), with its dtype kind when known."""
    return Value(flags, kind, dtype=dtype)


_MAY = TRACED | HOLDS_TRACED


def join(a: Value, b: Value) -> Value:
    """What a name holds after a merge where it holds `a` on one side and `b` on the other."""
    if a is b or a == b:
        return a
    # TRACED and HOLDS_TRACED hold where they may hold on either side; what the value is (ARRAY, BOOL, LIST)
    # only where both sides agree: a JAX array on one path and a list on the other (`if altup: outputs =
    # layer.correct(...)`) may be the list.
    flags = (a.flags | b.flags) & _MAY | (a.flags & b.flags)
    if a.kind != b.kind:
        return plain(flags)
    items = None
    if a.items is not None and b.items is not None and a.keys == b.keys and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items, strict=True))
    return Value(
        flags,
        a.kind,
        a.literal if a.literal == b.literal and type(a.literal) is type(b.literal) else ABSENT,
        a.dtype if a.dtype == b.dtype else None,
        items,
        a.keys if items is not None else None,
        a.definition if a.definition is b.definition else None,
        join(a.each, b.each) if a.each is not None and b.each is not None else None,
    )
