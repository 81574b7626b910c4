"""Inputs from calls recorded by `jaxlint --verify --run CMD` (written by `recompiles/call_records.py`, read
from the store by the parent and handed over in the request as plain JSON).

Each recorded argument is rebuilt as it was called: its pytree structure (registered dataclasses, flax
structs and custom pytrees through JAX's own node data, so `tree_unflatten` builds the user's class),
with `ShapeDtypeStruct` leaves of the recorded shapes, dtypes and weak types (ones when a concrete value
is needed, and PRNG keys for key leaves), static arguments with their recorded values. A class recorded
in `__main__` (a script run as `python train.py`) is looked up in the module being verified, which is
the same file imported by name.

A call kept by cloudpickle (`recompiles/pickled_calls.py`: a flax `TrainState`, whose static part holds
closures) is unpickled here, its `ShapeDtypeStruct` placeholders traced as they are (ones, or keys, when
a value is needed): the parent hands over only those the store's HMAC shows this user's jaxlint wrote.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import types
from typing import Any

from .inputs import Arg, CallInputs, ValueSpec, attribute_candidates
from .live_calls import LiveCall, fits, inputs_of
from .resolve import CLASSMETHOD, METHOD, Target

ORIGIN = "recorded by `jaxlint --verify --run`"


class Unbuildable(Exception):
    pass


class Decoder:
    """Turns call_records' JSON back into values and tree structures, in the module's namespace."""

    def __init__(self, jax: Any, module: types.ModuleType) -> None:
        self.jax = jax
        self.module = module

    def value(self, data: Any) -> Any:
        if isinstance(data, list):
            return [self.value(v) for v in data]
        if isinstance(data, dict):
            if "tuple" in data:
                return tuple(self.value(v) for v in data["tuple"])
            if "dict" in data:
                return {self.value(k): self.value(v) for k, v in data["dict"]}
            if "ref" in data:
                return self.reference(data["ref"])
            raise Unbuildable(f"unknown value {data!r}")
        return data

    def reference(self, text: str) -> Any:
        if text == "builtins:NoneType":
            return type(None)
        module_name, _, qualname = text.partition(":")
        if module_name == "__main__":
            holder: Any = self.module  # the script, imported by its own name here
        else:
            try:
                holder = importlib.import_module(module_name)
            except Exception as error:
                raise Unbuildable(f"cannot import {module_name}: {type(error).__name__}") from None
        for part in qualname.split("."):
            try:
                holder = getattr(holder, part)
            except AttributeError:
                raise Unbuildable(f"no {text}") from None
        return holder

    def treedef(self, data: Any) -> Any:
        tree_util = self.jax.tree_util
        if data == "*":
            return tree_util.tree_structure(0)
        node_type = self.reference(data["type"])
        children = [self.treedef(child) for child in data["children"]]
        node_data = (node_type, self.value(data["data"]))
        try:
            return type(tree_util.tree_structure(0)).from_node_data_and_children(
                tree_util.default_registry, node_data, children
            )
        except Exception as error:  # a class no longer registered, data that changed shape
            raise Unbuildable(f"cannot rebuild {data['type']}: {type(error).__name__}") from None


@dataclasses.dataclass(frozen=True)
class RecordedSpec:
    """One traced argument of a recorded call."""

    decoder: Decoder = dataclasses.field(compare=False)
    tree: Any
    leaves: tuple[tuple[tuple[int, ...], str, bool], ...]

    def describe(self) -> str:
        if self.tree == "*" and len(self.leaves) == 1:
            return _describe_leaf(self.leaves[0])
        name = self.tree["type"].rpartition(":")[2] if isinstance(self.tree, dict) else "tree"
        shown = ", ".join(_describe_leaf(leaf) for leaf in self.leaves[:3])
        more = f", +{len(self.leaves) - 3}" if len(self.leaves) > 3 else ""
        return f"{name}({shown}{more})"

    def build(self, traced: bool) -> Any:
        jax = self.decoder.jax
        treedef = self.decoder.treedef(self.tree)
        return jax.tree_util.tree_unflatten(treedef, [_leaf(jax, leaf, traced) for leaf in self.leaves])


def _describe_leaf(leaf: tuple[tuple[int, ...], str, bool]) -> str:
    shape, dtype, weak = leaf
    return f"{'weak ' if weak else ''}{dtype}[{','.join(str(d) for d in shape)}]"


def _leaf(jax: Any, leaf: tuple[tuple[int, ...], str, bool], traced: bool) -> Any:
    shape, dtype, weak = leaf
    if dtype.startswith("key<"):
        impl = dtype[4:-1]
        keys = jax.random.split(jax.random.key(0, impl=impl), max(1, math.prod(shape)))
        return keys.reshape(shape)
    import jax.numpy as jnp

    if traced:
        return jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype), weak_type=weak)
    return jnp.ones(shape, dtype)


def recorded_calls(
    jax: Any, module: types.ModuleType, target: Target, functions: dict[str, Any]
) -> tuple[list[CallInputs], list[str]]:
    """The calls recorded for `target` that fit its parameters, and why the others were skipped."""
    entry = _entry_for(target, functions)
    if entry is None:
        return [], []
    decoder = Decoder(jax, module)
    params = target.parameters
    bound = params[0].name if target.binding in (METHOD, CLASSMETHOD) and params else None
    calls: list[CallInputs] = []
    skipped: list[str] = []
    for record in entry.get("calls", []):
        try:
            if "pickled" in record:
                calls.append(_unpickled_call(jax, target, record))
            else:
                calls.append(_call(decoder, target, params, bound, record))
        except (Unbuildable, KeyError, TypeError, ValueError) as error:
            skipped.append(str(error))
    if entry.get("refused"):
        skipped.append(entry["refused"])
    return calls, skipped


def _unpickled_call(jax: Any, target: Target, record: dict[str, Any]) -> CallInputs:
    import base64
    import pickle

    try:
        values = pickle.loads(base64.b64decode(record["pickled"]))
        call = LiveCall(
            target.function,
            tuple(values["args"]),
            dict(values["kwargs"]),
            tuple(record.get("static_argnums", ())),
            tuple(record.get("static_argnames", ())),
            0,
        )
    except Exception as error:  # a class gone or renamed since the run, cloudpickle missing here
        raise Unbuildable(f"cannot unpickle the recorded call: {type(error).__name__}: {error}") from None
    if not fits(target, call):
        raise Unbuildable("the recorded call does not fit the function's parameters")
    return inputs_of(jax, target, call, f"a call {ORIGIN}")


def unkept_reason(target: Target, functions: dict[str, Any]) -> str | None:
    """Why `--run` saw calls of the target but kept none (an argument that cannot be rebuilt here)."""
    entry = _entry_for(target, functions)
    if entry is None or entry.get("calls"):
        return None
    reason = entry.get("unkept")
    return reason if isinstance(reason, str) else None


def refused_reason(target: Target, functions: dict[str, Any]) -> str | None:
    """Why recorded calls of the target were not loaded (pickles the store's HMAC does not vouch for)."""
    entry = _entry_for(target, functions)
    reason = entry.get("refused") if entry is not None and not entry.get("calls") else None
    return reason if isinstance(reason, str) else None


def _entry_for(target: Target, functions: dict[str, Any]) -> dict[str, Any] | None:
    code = target.function.__code__
    for name in (target.qualname, getattr(code, "co_qualname", None), target.function.__qualname__):
        if name and name in functions:
            return functions[name]
    return next((e for e in functions.values() if e.get("first_line") == code.co_firstlineno), None)


def _call(
    decoder: Decoder, target: Target, params: list[inspect.Parameter], bound: str | None, record: dict
) -> CallInputs:
    by_name = {p.name: p for p in params}
    named: dict[str, dict[str, Any]] = {}
    for index, arg in enumerate(record["args"]):
        name = arg.get("name") or (params[index].name if index < len(params) else None)
        if name is None or name not in by_name:
            raise Unbuildable(f"the recorded call has an argument the function has not ({name or index})")
        named[name] = arg
    for name, arg in record.get("kwargs", {}).items():
        if name not in by_name:
            raise Unbuildable(f"the recorded call passes '{name}', which the function does not take")
        named[name] = arg
    positional: list[Arg] = []
    keyword: dict[str, Arg] = {}
    words: list[str] = []
    for param in params:
        if param.name == bound:
            continue  # verify builds its own instance, as for any method
        arg = named.get(param.name)
        if arg is None:
            if param.default is param.empty and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise Unbuildable(f"the recorded call has no '{param.name}'")
            continue
        if "static" in arg:
            value = decoder.value(arg["static"])
            spec: Any = ValueSpec(value)
            traced = False
            words.append(f"{param.name}={spec.describe()}")
        else:
            spec = RecordedSpec(
                decoder, arg["tree"], tuple((tuple(s), d, bool(w)) for s, d, w in arg["leaves"])
            )
            spec.build(True)  # fails here, not in the attempt, when the structure cannot be rebuilt
            traced = True
            words.append(f"{param.name}: {spec.describe()}")
        if param.kind == param.POSITIONAL_ONLY:
            positional.append(Arg(spec, traced))
        else:
            keyword[param.name] = Arg(spec, traced)
    attributes = {n: c[0] for n, c in attribute_candidates(target, bound).items()}
    text = f"a call {ORIGIN}: " + (", ".join(words) or "no arguments")
    return CallInputs(positional, keyword, attributes, text, real=True)
