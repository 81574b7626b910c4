"""What `--run` keeps of a jitted call so that `--verify` can call the function again, and of an error
raised while tracing one so that the static finding at its line can be confirmed.

A call is recorded when JAX starts tracing it (a jit cache miss), before the body runs: a body that
raises while tracing (`if loss > 100.0:`) still leaves its inputs. Each argument is kept abstractly,
as plain JSON that another process rebuilds without this package (`verify/child/recorded.py`):

- a traced argument: its pytree structure and one `[shape, dtype, weak_type]` per leaf. The structure
  is a tree of nodes `{"type": "module:qualname", "data": V, "children": [...]}` with `"*"` for a
  leaf, read from JAX's own `PyTreeDef.node_data()`, so registered dataclasses, flax structs and custom
  pytrees come out as JAX flattens them (the node data of a dataclass is its static fields' values);
- a static argument: its value.

V is a JSON value: None, bool, int, float, str, lists, `{"tuple": [...]}`, `{"dict": [[k, v], ...]}`, or
`{"ref": "module:qualname"}` for a class or function importable by name. A call holding anything else
(a closure in a static field, an optax transformation) cannot be rebuilt from JSON: the hooks then keep it
with cloudpickle (pickled_calls.py), and only when that fails too is its function marked
`{"unkept": reason}`, so that `--verify` can say why it has no recorded input.

Nothing here imports jax; the hooks hand it their `jax` module.
"""

from __future__ import annotations

import math
import os
import traceback
from typing import Any

MAX_CALLS_PER_FUNCTION = 4
MAX_ERRORS = 50
_MAX_DEPTH = 64
_MAX_LEAVES = 10_000
_MESSAGE_LIMIT = 500


class Unencodable(Exception):
    pass


def encode_value(value: Any, depth: int = 0) -> Any:
    """A JSON form of `value` that `decode_value` (in the verify child) turns back into an equal value."""
    if depth > _MAX_DEPTH:
        raise Unencodable("too deep")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and type(value) is int:
        return value
    if isinstance(value, float) and type(value) is float:
        if not math.isfinite(value):
            raise Unencodable("a non-finite float")  # JSON has no NaN
        return value
    if type(value) is tuple:
        return {"tuple": [encode_value(v, depth + 1) for v in value]}
    if type(value) is list:
        return [encode_value(v, depth + 1) for v in value]
    if type(value) is dict:
        return {"dict": [[encode_value(k, depth + 1), encode_value(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, type) or callable(value):
        return {"ref": reference(value)}
    raise Unencodable(f"a {type(value).__name__} in its static part")


def reference(obj: Any) -> str:
    """`module:qualname` of a class or module-level function; Unencodable when it cannot be imported back."""
    if obj is type(None):
        return "builtins:NoneType"
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        shown = (
            f"{type(obj).__name__} '{qualname}'" if isinstance(qualname, str) else f"a {type(obj).__name__}"
        )
        shown = shown if len(shown) <= 100 else f"a {type(obj).__name__}"
        raise Unencodable(f"{shown} in its static part (a closure or bound method has no importable name)")
    return f"{module}:{qualname}"


def encode_treedef(treedef: Any, children_of: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise Unencodable("too deep")
    data = treedef.node_data()
    if data is None:
        return "*"
    node_type, aux = data
    return {
        "type": reference(node_type),
        "data": encode_value(aux),
        "children": [encode_treedef(child, children_of, depth + 1) for child in children_of(treedef)],
    }


def _leaf(jax: Any, leaf: Any) -> list[Any]:
    aval = jax.typeof(leaf) if hasattr(jax, "typeof") else jax.core.get_aval(leaf)
    dtype = str(aval.dtype)
    impl = getattr(getattr(aval.dtype, "_impl", None), "name", None)
    if dtype.startswith("key<") and isinstance(impl, str):
        dtype = f"key<{impl}>"  # `key<fry>` shows a short name that jax.random.key(impl=) does not take
    return [list(aval.shape), dtype, bool(getattr(aval, "weak_type", False))]


def encode_argument(jax: Any, value: Any) -> dict[str, Any]:
    tree_util = jax.tree_util
    leaves, treedef = tree_util.tree_flatten(value)
    if len(leaves) > _MAX_LEAVES:
        raise Unencodable("too many leaves")
    return {
        "tree": encode_treedef(treedef, tree_util.treedef_children),
        "leaves": [_leaf(jax, leaf) for leaf in leaves],
    }


def encode_call(
    jax: Any, args: tuple, kwargs: dict, static_argnums: tuple, static_argnames: tuple, names: list[str]
) -> dict[str, Any] | None:
    """`{"args": [...], "kwargs": {...}}`, each entry `{"name", "static": V}` or `{"name", "tree", "leaves"}`;
    None when some argument cannot be rebuilt in another process."""
    call = encode_call_or_reason(jax, args, kwargs, static_argnums, static_argnames, names)
    return None if "unkept" in call else call


def encode_call_or_reason(
    jax: Any, args: tuple, kwargs: dict, static_argnums: tuple, static_argnames: tuple, names: list[str]
) -> dict[str, Any]:
    """encode_call's call, or `{"unkept": "why"}` naming the argument that cannot be rebuilt."""
    statics = {i + len(args) if i < 0 else i for i in static_argnums}
    name: str | None = None
    try:
        positional = []
        for index, value in enumerate(args):
            name = names[index] if index < len(names) else f"argument {index}"
            entry = {"static": encode_value(value)} if index in statics else encode_argument(jax, value)
            positional.append({"name": names[index] if index < len(names) else None, **entry})
        keyword = {}
        static_names = set(static_argnames) | {names[i] for i in statics if i < len(names)}
        for name, value in kwargs.items():
            entry = {"static": encode_value(value)} if name in static_names else encode_argument(jax, value)
            keyword[name] = {"name": name, **entry}
    except (Unencodable, TypeError, AttributeError, ValueError) as error:
        return {"unkept": f"'{name}' holds {str(error)[:200]}, which cannot be rebuilt in another process"}
    return {"args": positional, "kwargs": keyword}


def encode_error(error: BaseException, skip_dirs: tuple[str, ...]) -> dict[str, Any]:
    """Class names (the whole MRO), the message's start, and the user's frames (file, first and last line)
    of the exception and of the causes JAX chains to it (a trace-time error keeps user frames there)."""
    frames: list[list[Any]] = []
    seen: set[int] = set()
    current: BaseException | None = error
    innermost_user: list[Any] | None = None  # of the first error of the chain that passed the user's code
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        last_user: list[Any] | None = None
        for frame in traceback.extract_tb(current.__traceback__):
            filename = frame.filename
            if filename.startswith(skip_dirs) or filename.startswith("<"):
                continue
            entry = [
                os.path.abspath(filename),
                frame.lineno,
                getattr(frame, "end_lineno", None) or frame.lineno,
            ]
            if entry not in frames:
                frames.append(entry)
            last_user = [*entry, (getattr(frame, "colno", None) or 0) + 1]
        innermost_user = innermost_user or last_user
        current = current.__cause__ or current.__context__
    message = str(error)
    # Seen inside JAX's jit, before its traceback filtering: the innermost frame is JAX's own function,
    # or the user's code (see verify's expectations.raising_function).
    innermost = traceback.extract_tb(error.__traceback__)[-1:]
    raised_in = ""
    if innermost:
        own = not innermost[0].filename.startswith(skip_dirs) and not innermost[0].filename.startswith("<")
        raised_in = "<user code>" if own else innermost[0].name
    return {
        "types": [cls.__name__ for cls in type(error).__mro__],
        "module": type(error).__module__,
        "raised_in": raised_in,
        "innermost": innermost_user,  # [path, line, end_line, column]: where the user's code raised it
        "message": message[:_MESSAGE_LIMIT],
        "frames": frames[-20:],
    }
