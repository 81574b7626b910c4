"""Arguments to trace a function with when the user declared none (see examples.py) and no run recorded a
call (recorded.py): what the annotations say, a registered dataclass built from its fields (structs.py),
else a small search (float32 scalar, then (3,), then (2, 3); int32 first for parameters
that look like counts or indices; typed keys for parameters that look like PRNG keys)."""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from typing import Any

from . import source as src
from .pinned_jax import api
from .resolve import CLASSMETHOD, METHOD, Target
from .structs import StructSpec, data_fields, struct_class


class NoInputs(Exception):
    """No arguments could be built; the message is the NOT_RUN reason."""


_SHORT_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32", "uint32": "u32"}


@dataclasses.dataclass(frozen=True)
class ArraySpec:
    shape: tuple[int, ...]
    dtype: str = "float32"
    weak: bool = False  # a Python scalar under jit

    def describe(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        return f"{_SHORT_DTYPES.get(self.dtype, self.dtype)}[{dims}]"

    def build(self, traced: bool) -> Any:
        import jax.numpy as jnp

        jax = api()  # JAX's ShapeDtypeStruct, whatever the module put in its place
        if traced:
            return jax.ShapeDtypeStruct(self.shape, jnp.dtype(self.dtype), weak_type=self.weak)
        return jnp.ones(self.shape, self.dtype)


@dataclasses.dataclass(frozen=True)
class KeySpec:
    legacy: bool = False  # a raw uint32[2] PRNGKey (typed under custom-PRNG mode)

    def describe(self) -> str:
        return "PRNGKey(0)" if self.legacy else "key(0)"

    def build(self, traced: bool) -> Any:
        import jax

        return jax.random.PRNGKey(0) if self.legacy else jax.random.key(0)


@dataclasses.dataclass(frozen=True)
class ValueSpec:
    """A concrete Python value: a static argument, or a value from a declared example."""

    value: Any
    text: str = ""

    def describe(self) -> str:
        return self.text or _short_repr(self.value)

    def build(self, traced: bool) -> Any:
        return self.value


@dataclasses.dataclass(frozen=True)
class DictSpec:
    """A dict of arrays with the keys the function reads (`params["w"]`), all of one shape."""

    keys: tuple[str, ...]
    leaf: ArraySpec

    def describe(self) -> str:
        return "{" + ", ".join(f"{k!r}: {self.leaf.describe()}" for k in self.keys) + "}"

    def build(self, traced: bool) -> Any:
        return {key: self.leaf.build(traced) for key in self.keys}


Spec = Any  # ArraySpec | KeySpec | ValueSpec | ExampleSpec: has describe() and build(traced)


@dataclasses.dataclass(frozen=True)
class Arg:
    spec: Spec
    traced: bool


@dataclasses.dataclass
class CallInputs:
    """One way to call the target: arguments (traced or static) and the attributes its `self` needs."""

    positional: list[Arg]
    keyword: dict[str, Arg]
    attributes: dict[str, Spec]
    text: str
    declared: bool = False  # from the user's examples
    real: bool = False  # declared, recorded by a run, or made by the module's own code: not guessed
    instance: Spec | None = None  # `self` given by an example (`self=Model(3)`), instead of a bare instance
    # The function as the module called it (live_calls.py): a nested one keeps its real closure.
    function: Any = None


FLOAT_SEARCH = (ArraySpec(()), ArraySpec((3,)), ArraySpec((2, 3)))
INT_SEARCH = (ArraySpec((), "int32"), ArraySpec((3,), "int32"), ArraySpec(()))
# Outside the user's jit a count may be a plain Python int (a shape, a loop bound): try that second.
INT_SEARCH_UNJITTED = (ArraySpec((), "int32"), ValueSpec(3), ArraySpec((3,), "int32"))
KEY_SEARCH = (KeySpec(), KeySpec(legacy=True))

_KEY_NAME = re.compile(r"(^|_)(key|rng|prng|subkey|rng_key|prng_key)\d*($|_)")
_ARRAY_TYPES = {"Array", "ndarray", "ArrayLike", "ArrayImpl", "Tracer", "DeviceArray", "NDArray"}
_KEY_TYPES = {"PRNGKeyArray", "KeyArray", "PRNGKey"}
_JAXTYPING = re.compile(
    r"^(?:[\w]+\.)*(?P<kind>Float\d*|BFloat16|Int\d*|UInt\d*|Integer|Bool|Complex\d*|Inexact|Real|Num|Shaped|Key)"
    r"\[\s*[\w.\[\]]+\s*,\s*(?P<q>['\"])(?P<dims>.*)(?P=q)\s*\]$"
)
_JAXTYPING_DTYPES = {
    "Float16": "float16",
    "BFloat16": "bfloat16",
    "Int8": "int8",
    "Int16": "int16",
    "UInt8": "uint8",
    "UInt32": "uint32",
    "UInt": "uint32",
    "Bool": "bool",
    "Complex": "complex64",
    "Complex64": "complex64",
}
_SCALAR_TYPES = {
    "float": ArraySpec((), "float32", weak=True),
    "int": ArraySpec((), "int32", weak=True),
    "bool": ArraySpec((), "bool"),
    "complex": ArraySpec((), "complex64", weak=True),
}
_STATIC_GUESSES: dict[str, Any] = {"int": 2, "float": 1.0, "bool": True, "None": None}
_UNBUILDABLE = re.compile(r"^(str|bytes|Callable|callable|type|Type|.*Callable\[.*)$")


class DimSizes:
    """Sizes for named jaxtyping dimensions, shared by the parameters of one call: b=2, n=3, d=4, ..."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}

    def shape(self, dims: str) -> tuple[int, ...]:
        shape: list[int] = []
        for token in dims.split():
            token = token.lstrip("*#?")
            if token in ("...", "") or token.startswith("*"):
                continue
            if token.isdigit():
                shape.append(int(token))
            elif "=" in token and token.split("=", 1)[1].isdigit():
                shape.append(int(token.split("=", 1)[1]))
            else:
                shape.append(self.sizes.setdefault(token, 2 + len(self.sizes)))
        return tuple(shape)


def _strip_optional(text: str) -> str:
    text = text.strip().strip("'\"").strip()
    match = re.match(r"^(?:typing\.)?Optional\[(.*)\]$", text)
    if match:
        return match.group(1).strip()
    parts = [p.strip() for p in text.split("|")]
    if "None" in parts and len(parts) == 2:
        return next(p for p in parts if p != "None")
    return text


def array_annotation(annotation: str) -> bool:
    """No annotation, or one that names an array (`jax.Array`, `Float[Array, "b d"]`)."""
    text = _strip_optional(annotation)
    return not text or text.rsplit(".", 1)[-1] in _ARRAY_TYPES or bool(_JAXTYPING.match(text))


def traced_candidates(name: str, annotation: str, integer_like: bool, dims: DimSizes) -> tuple[Spec, ...]:
    """Candidate specs for a traced parameter, cheapest first; () when none can be built."""
    text = _strip_optional(annotation)
    base = text.rsplit(".", 1)[-1]
    match = _JAXTYPING.match(text)
    if match:
        kind = match.group("kind")
        if kind == "Key":
            return KEY_SEARCH
        dtype = _JAXTYPING_DTYPES.get(kind) or ("int32" if kind.startswith(("Int", "UInt")) else "float32")
        if kind.startswith("UInt") and kind not in _JAXTYPING_DTYPES:
            dtype = "uint32"
        return (ArraySpec(dims.shape(match.group("dims")), dtype),)
    if base in _KEY_TYPES or (_KEY_NAME.search(name) and (not text or base in _ARRAY_TYPES)):
        return KEY_SEARCH
    if text in _SCALAR_TYPES:
        return (_SCALAR_TYPES[text],)
    if text and _UNBUILDABLE.match(text):
        return ()
    return INT_SEARCH if integer_like else FLOAT_SEARCH


def static_value(annotation: str) -> ValueSpec | None:
    """A concrete value for a static parameter without a default; None when it cannot be guessed."""
    text = _strip_optional(annotation)
    if annotation and text != annotation.strip().strip("'\""):
        return ValueSpec(None)  # Optional[...]: None is a valid value
    if not text:
        return ValueSpec(2)
    if text in _STATIC_GUESSES:
        return ValueSpec(_STATIC_GUESSES[text])
    if re.match(r"^(tuple|Tuple|Sequence|typing\.Sequence|typing\.Tuple)\[int", text):
        return ValueSpec((2, 3))
    return None


def search_calls(target: Target, source: src.ModuleSource) -> list[CallInputs]:
    """Calls built from annotations and the small search; raises NoInputs naming the parameter that blocks."""
    params = target.parameters
    bound = params[0].name if target.binding in (METHOD, CLASSMETHOD) and params else None
    dims = DimSizes()
    slots: list[tuple[inspect.Parameter, bool, tuple[Spec, ...]]] = []
    for index, param in enumerate(params):
        if param.name == bound or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.default is not param.empty:
            continue  # called with its default, as most callers do
        annotation = src.annotation_text(source, target.node, param.name) or _runtime_annotation(param)
        if target.is_static(index, param.name):
            value = static_value(annotation)
            if value is None:
                raise NoInputs(
                    f"no value for static parameter '{param.name}: {annotation}'; declare an example"
                )
            slots.append((param, False, (value,)))
            continue
        read = [] if annotation else src.self_attributes_read(target.node, param.name)
        struct = struct_class(annotation, target.function.__globals__, read)
        structs = struct_candidates(struct, len(FLOAT_SEARCH)) if struct is not None else ()
        keys = [] if annotation or structs else src.dict_keys_read(target.node, param.name)
        if structs:
            candidates: tuple[Spec, ...] = structs
        elif keys:
            candidates = tuple(DictSpec(tuple(keys), leaf) for leaf in FLOAT_SEARCH)
        else:
            candidates = traced_candidates(
                param.name, annotation, src.integer_looking(target.node, param.name), dims
            )
        if candidates == INT_SEARCH and not target.under_jit:
            candidates = INT_SEARCH_UNJITTED
        if not candidates:
            raise NoInputs(f"cannot build a traced value for parameter '{param.name}: {annotation}'")
        slots.append((param, True, candidates))
    attributes = attribute_candidates(target, bound)
    rounds = max([len(c) for _, _, c in slots] + [len(c) for c in attributes.values()] + [1])
    calls: list[CallInputs] = []
    seen: set[str] = set()
    for r in range(rounds):
        positional: list[Arg] = []
        keyword: dict[str, Arg] = {}
        words: list[str] = []
        for param, traced, candidates in slots:
            spec = candidates[min(r, len(candidates) - 1)]
            traced_here = traced and not isinstance(spec, ValueSpec)
            arg = Arg(spec, traced_here)
            if param.kind == param.POSITIONAL_ONLY:
                positional.append(arg)
            else:
                keyword[param.name] = arg
            words.append(
                f"{param.name}: {spec.describe()}" if traced_here else f"{param.name}={spec.describe()}"
            )
        chosen = {name: c[min(r, len(c) - 1)] for name, c in attributes.items()}
        words += [f"self.{name}={spec.describe()}" for name, spec in chosen.items()]
        text = ", ".join(words) or "no arguments"
        if text not in seen:
            seen.add(text)
            calls.append(CallInputs(positional, keyword, chosen, text))
    return calls


def _runtime_annotation(param: inspect.Parameter) -> str:
    if param.annotation is param.empty:
        return ""
    annotation = param.annotation
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))


def attribute_candidates(target: Target, self_name: str | None) -> dict[str, tuple[Spec, ...]]:
    """`self.x` reads in a method that the class does not define: concrete arrays set on a bare instance."""
    if target.binding != METHOD or self_name is None:
        return {}
    names = src.self_attributes_read(target.node, self_name)
    owner = target.owner
    found: dict[str, tuple[Spec, ...]] = {}
    for name in names:
        if owner is not None and hasattr(owner, name):
            continue
        if _KEY_NAME.search(name):
            found[name] = KEY_SEARCH
        else:
            found[name] = INT_SEARCH if src.integer_looking(None, name) else FLOAT_SEARCH
    return found


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_STRUCT_DEPTH = 3  # nested dataclasses built at most this deep


def struct_candidates(cls: type, rounds: int, depth: int = 0) -> tuple[StructSpec, ...]:
    """One StructSpec per search round (each field takes its candidate of that round); () when a field
    cannot be built."""
    data = data_fields(cls)
    if data is None or depth > _STRUCT_DEPTH:
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
