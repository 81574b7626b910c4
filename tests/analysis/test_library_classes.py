"""The library table's class rows (analysis/semantics/classes.py), run on real Python, JAX, flax and equinox: the
protocol methods run when the rows say, the record bases and decorators fill fields in order and refuse
assignment, the plain bases leave methods plain functions, flax.nnx's objects carry updates out of nnx.jit, and
every pytree decorator and base of library.py (PYTREE_CLASS_PREFIXES, read by storage.py and outer_objects.py)
makes instances that JAX flattens."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import types
import typing

import pytest

from jaxlint.analysis.semantics.library import (
    CLASS_VAR,
    CLASSES_CHECKED,
    CONSTRUCTOR_ANNOTATIONS,
    CONSTRUCTORS,
    DATACLASS,
    FIELD_FUNCTIONS,
    FIELD_LIST_KEYWORDS,
    NNX_BASES,
    PLAIN_BASES,
    PYTREE_BASES,
    PYTREE_CLASS_PREFIXES,
    PYTREE_DECORATORS,
    PYTREE_METHODS,
    RECORD_BASES,
    RECORD_DECORATORS,
    REGISTER_DATACLASS,
    RUNS_ON_CONSTRUCTION,
    SETUP_METHODS,
    STATIC_FIELD_WORDS,
    TYPING_PLAIN_BASES,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from tests.analysis.test_library_semantics import resolve  # noqa: E402


def test_checked_on_the_running_jax() -> None:
    assert CLASSES_CHECKED.startswith(f"jax {jax.__version__}")


def _ran(method: str) -> list[str]:
    """Which of the class's methods ran while an object was built (and copied, for `__setstate__`)."""
    ran: list[str] = []
    if method == "setup":
        nn = pytest.importorskip("flax.linen")

        class Layer(nn.Module):
            def setup(self):
                ran.append("setup")

            def __call__(self, x):
                return x

        Layer().init(jax.random.key(0), jnp.ones(2))
        return ran
    if method == "__check_init__":
        eqx = pytest.importorskip("equinox")

        class Checked(eqx.Module):
            a: int

            def __check_init__(self):
                ran.append("__check_init__")

        Checked(1)
        return ran
    if method == "__set_name__":

        class Descriptor:
            def __set_name__(self, owner, name):
                ran.append("__set_name__")

        type("Owner", (), {"d": Descriptor()})
        return ran

    @dataclasses.dataclass
    class Built:
        a: int = 0

        def __new__(cls, *args, **kwargs):
            ran.append("__new__")
            return super().__new__(cls)

        def __post_init__(self):
            ran.append("__post_init__")

        def __setstate__(self, state):
            ran.append("__setstate__")
            self.__dict__.update(state)

    built = Built()
    copy.copy(built)
    return ran if method != "__init__" else ran + ["__init__"] * (built.a == 0)


@pytest.mark.parametrize("method", sorted(CONSTRUCTORS | SETUP_METHODS | RUNS_ON_CONSTRUCTION))
def test_setup_method_runs_when_the_object_is_built(method: str) -> None:
    assert method in _ran(method), method


@pytest.mark.parametrize("method", sorted(PYTREE_METHODS))
def test_pytree_method_makes_a_pytree(method: str) -> None:
    """A class with the method (registered as JAX reads it) flattens into its leaves."""
    tree_util = jax.tree_util

    class Box:
        def __init__(self, x):
            self.x = x

        def tree_flatten(self):
            return (self.x,), None

        def tree_flatten_with_keys(self):
            return ((tree_util.GetAttrKey("x"), self.x),), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    if method == "__init_subclass__":

        class Registering:
            def __init_subclass__(cls, **kwargs):
                tree_util.register_pytree_node_class(cls)

        box = type("Sub", (Registering, Box), {})(jnp.ones(2))
    elif method == "tree_flatten_with_keys":
        box = tree_util.register_pytree_with_keys_class(type("Keyed", (Box,), {}))(jnp.ones(2))
    else:
        box = tree_util.register_pytree_node_class(type("Plain", (Box,), {}))(jnp.ones(2))
    assert len(jax.tree.leaves(box)) == 1
    assert type(jax.tree.map(lambda v: v + 1, box)) is type(box)


def _subclass(parent: typing.Any, annotations: dict[str, typing.Any], **namespace: typing.Any) -> typing.Any:
    """`class Sub(parent): <annotations>` built as a class statement builds it (metaclass, MRO entries)."""
    return types.new_class(
        "Sub", (parent,), {}, lambda ns: ns.update(__annotations__=annotations, **namespace)
    )


def _fields(make: typing.Callable[[type], type]) -> None:
    record = make(type)(1, 2)
    assert (record.a, record.b) == (1, 2)
    with pytest.raises((AttributeError, dataclasses.FrozenInstanceError)):
        record.a = 3


@pytest.mark.parametrize("base", sorted(RECORD_BASES))
def test_record_base_fills_fields_in_order_and_refuses_assignment(base: str) -> None:
    pytest.importorskip(base.split(".")[0])
    parent = resolve(base)

    def make(_: type) -> type:
        return _subclass(parent, {"a": int, "b": int})

    if base == "typing.NamedTuple":
        make = lambda _: typing.NamedTuple("Record", [("a", int), ("b", int)])  # noqa: E731
    _fields(make)


@pytest.mark.parametrize("name", sorted(RECORD_DECORATORS | {DATACLASS}))
def test_record_decorator_fills_fields_in_order_and_refuses_assignment(name: str) -> None:
    pytest.importorskip(name.split(".")[0])
    decorator = resolve(name)
    if name == DATACLASS:
        decorator = decorator(frozen=True)  # a record only when frozen
    _fields(lambda _: decorator(type("Record", (), {"__annotations__": {"a": int, "b": int}})))


@pytest.mark.parametrize("base", sorted(PLAIN_BASES | TYPING_PLAIN_BASES))
def test_plain_base_leaves_methods_plain_functions(base: str) -> None:
    parent = typing.Generic[typing.TypeVar("T")] if base == "typing.Generic" else resolve(base)
    cls = _subclass(parent, {}, m=lambda self: 1)
    obj = cls.__new__(cls) if base == "typing.Protocol" else cls()
    assert obj.m is not obj.m and obj.m.__func__ is cls.__dict__["m"]
    assert "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is not None
    assert not any(m in cls.__dict__ for m in PYTREE_METHODS if m != "__init_subclass__")


@pytest.mark.parametrize("prefix", NNX_BASES)
def test_nnx_object_carries_updates_out_of_nnx_jit(prefix: str) -> None:
    nnx = pytest.importorskip(prefix.rstrip("."))

    class Counter(nnx.Module):
        def __init__(self):
            self.count = nnx.Variable(jnp.zeros(()))

    counter = Counter()

    @nnx.jit
    def bump(c):
        c.count.value = c.count.value + 1

    bump(counter)
    assert float(counter.count.value) == 1.0


@pytest.mark.parametrize("name", sorted(PYTREE_DECORATORS))
def test_pytree_decorator_makes_a_pytree(name: str) -> None:
    """An instance of a class it decorates flattens with JAX (its leaves: the data fields, none for
    register_static)."""
    pytest.importorskip(name.split(".")[0])
    decorator = resolve(name)
    namespace: dict[str, typing.Any] = {"__annotations__": {"a": jax.Array}}
    if "pytree_node" in name or "with_keys" in name:
        namespace["tree_flatten"] = lambda self: ((self.a,), None)
        namespace["tree_flatten_with_keys"] = lambda self: (((jax.tree_util.GetAttrKey("a"), self.a),), None)
        namespace["tree_unflatten"] = classmethod(lambda cls, aux, children: cls(*children))
        namespace["__init__"] = lambda self, a: setattr(self, "a", a)
    cls = type("Tree", (), namespace)
    if name in ("jax.tree_util.register_dataclass", "jax.tree_util.register_static"):
        cls = dataclasses.dataclass(frozen=True)(cls)
    cls = decorator(cls)
    leaves = jax.tree.leaves(cls(a=jnp.ones(2)))  # by keyword: chex's dataclass takes its fields so only
    assert len(leaves) == (0 if name.endswith("register_static") else 1), name


@pytest.mark.parametrize("prefix", [p for p in PYTREE_CLASS_PREFIXES if p in PYTREE_BASES])
def test_pytree_base_makes_a_pytree(prefix: str) -> None:
    pytest.importorskip(prefix.split(".")[0])
    if prefix == "typing.NamedTuple":
        cls: typing.Any = typing.NamedTuple("Tree", [("a", jax.Array)])
    else:
        # pytreeclass builds no constructor from the fields: one of its own
        init = {"__init__": lambda self, a: setattr(self, "a", a)} if prefix.startswith("pytreeclass") else {}
        cls = _subclass(resolve(prefix), {"a": jax.Array}, **init)
    assert len(jax.tree.leaves(cls(jnp.ones(2)))) == 1, prefix


def test_register_dataclass_field_lists_say_data_and_static() -> None:
    """`register_dataclass(Cls, data_fields=[...], meta_fields=[...])`: the data fields are the leaves, the
    meta fields are static (a Python value under jit)."""
    data, meta = FIELD_LIST_KEYWORDS
    cls = dataclasses.dataclass(type("Pair", (), {"__annotations__": {"a": jax.Array, "n": int}}))
    resolve(REGISTER_DATACLASS)(cls, **{data: ["a"], meta: ["n"]})
    seen: list[object] = []
    jax.jit(lambda p: seen.append(p.n) or p.a)(cls(jnp.ones(2), 3))
    assert seen == [3] and len(jax.tree.leaves(cls(jnp.ones(2), 3))) == 1


@pytest.mark.parametrize("word", sorted(STATIC_FIELD_WORDS))
def test_static_field_word_names_functions_that_make_static_fields(word: str) -> None:
    """Each library function of that last word makes a field that is no leaf."""
    names = [n for n in FIELD_FUNCTIONS if n.rsplit(".", 1)[1] == word]
    assert names
    for name in names:
        pytest.importorskip(name.split(".")[0])
        if name.startswith("equinox."):
            eqx = pytest.importorskip("equinox")
            with pytest.warns(UserWarning):  # deprecated for `field(static=True)`, still static
                field = resolve(name)()
            cls = _subclass(eqx.Module, {"a": jax.Array, "n": int}, n=field)
            assert len(jax.tree.leaves(cls(jnp.ones(2), 3))) == 1, name


def test_class_var_is_no_field() -> None:
    hint = getattr(typing, CLASS_VAR)[int]
    cls = dataclasses.dataclass(type("C", (), {"__annotations__": {"a": int, "n": hint}, "n": 3}))
    assert [f.name for f in dataclasses.fields(cls)] == ["a"]


@pytest.mark.parametrize("word", sorted(CONSTRUCTOR_ANNOTATIONS))
def test_constructor_annotation_changes_the_constructor_parameters(word: str) -> None:
    """With it, the constructor does not take the fields in order (positionally): KW_ONLY makes the ones after it
    keywords, an InitVar is a parameter that is no field."""
    hint = getattr(dataclasses, word)
    annotations = {"a": int, "_": hint, "b": int} if word == "KW_ONLY" else {"a": int, "b": hint[int]}
    cls = dataclasses.dataclass(type("C", (), {"__annotations__": annotations}))
    fields = [f.name for f in dataclasses.fields(cls)]
    parameters = list(inspect.signature(cls).parameters.values())
    positional = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional != fields, word
