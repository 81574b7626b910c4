"""The pytree model on its own: which classes are pytrees, which fields are static, in each library's style;
and what the value model makes of reading those fields from a traced argument."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxlint.analysis import TRACED, FlowWalker, ModuleIndex
from jaxlint.analysis.flow.walk import Frame
from jaxlint.analysis.objects.pytrees import PytreeClass, pytree_model


def classes_of(source: str) -> dict[str, PytreeClass]:
    index = ModuleIndex(cst.parse_module(textwrap.dedent(source)))
    return pytree_model(index).classes


def fields(cls: PytreeClass) -> tuple[set[str], set[str]]:
    return cls.static, cls.data


def test_flax_struct_dataclass_and_pytree_node() -> None:
    found = classes_of(
        """
        import dataclasses
        import flax.struct
        from flax import struct

        @flax.struct.dataclass
        class State:
            params: dict
            step: int
            config: "Config" = flax.struct.field(pytree_node=False)
            apply_fn: callable = struct.field(pytree_node=False, default=None)
            extra: int = struct.field(pytree_node=True, default=0)
            meta: str = dataclasses.field(metadata={"pytree_node": False}, default="")

        class Node(struct.PyTreeNode):
            w: object
            depth: int = struct.field(pytree_node=False)

        class Plain:
            x: int = struct.field(pytree_node=False)
        """
    )
    assert fields(found["State"]) == ({"config", "apply_fn", "meta"}, {"params", "step", "extra"})
    assert found["State"].field_types["config"] == "Config"
    assert fields(found["Node"]) == ({"depth"}, {"w"})
    assert "Plain" not in found  # a static-looking field in a class that is no pytree means nothing


def test_equinox_module() -> None:
    found = classes_of(
        """
        import equinox as eqx
        from typing import ClassVar

        class MLP(eqx.Module):
            layers: list
            activation: callable = eqx.field(static=True)
            width: int = eqx.static_field()
            out: int = eqx.field(static=False, default=1)
            registry: ClassVar[dict] = {}

        class Deeper(MLP):
            depth: int = eqx.field(static=True)
        """
    )
    # A ClassVar is a class attribute, no field: every instance reads the class's Python value.
    assert fields(found["MLP"]) == ({"activation", "width", "registry"}, {"layers", "out"})
    assert fields(found["Deeper"]) == ({"activation", "width", "registry", "depth"}, {"layers", "out"})


def test_class_attributes_and_jax_dataclasses_static_annotations() -> None:
    found = classes_of(
        """
        import abc
        from typing import ClassVar
        import flax.struct
        import jax
        import jax_dataclasses as jdc

        class Group(abc.ABC):
            dim: ClassVar[int]

        class Lie(Group):
            pass

        class Plain:
            pass

        @flax.struct.dataclass
        class Rot(Lie):
            angle: jax.Array
            width = 4

        @jdc.pytree_dataclass
        class Grid:
            n: jdc.Static[int]
            halo: "jdc.Static[Shape]"
            width: int = jdc.static_field()
            values: jax.Array

        class Box:
            size = 3

            def __init__(self, size):
                self.size = size

        jax.tree_util.register_pytree_node(Box, lambda b: ((b.size,), None), lambda _, c: Box(*c))
        """
    )
    assert (found["Group"].how, fields(found["Group"])) == ("plain", ({"dim"}, set()))
    assert (found["Lie"].how, fields(found["Lie"])) == ("plain", ({"dim"}, set()))
    assert "Plain" not in found
    assert fields(found["Rot"]) == ({"dim", "width"}, {"angle"})
    assert fields(found["Grid"]) == ({"n", "halo", "width"}, {"values"})
    assert found["Grid"].field_types["halo"] == "Shape"
    # Registered after the class body was read as a plain class: the flatten function decides.
    assert found["Box"].is_static("size") is False


def test_register_dataclass_styles() -> None:
    found = classes_of(
        """
        import dataclasses
        import functools
        import jax
        from jax.tree_util import register_dataclass

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class A:
            x: jax.Array
            n: int = dataclasses.field(metadata=dict(static=True))

        @functools.partial(register_dataclass, data_fields=["x"], meta_fields=["op"])
        @dataclasses.dataclass
        class B:
            x: jax.Array
            op: str

        @dataclasses.dataclass
        class C:
            x: jax.Array
            mode: str

        jax.tree_util.register_dataclass(C, data_fields=["x"], meta_fields=["mode"])
        """
    )
    assert fields(found["A"]) == ({"n"}, {"x"})
    assert fields(found["B"]) == ({"op"}, {"x"})
    assert fields(found["C"]) == ({"mode"}, {"x"})


def test_flatten_registrations_and_register_static() -> None:
    found = classes_of(
        """
        import jax
        from jax.tree_util import register_pytree_node_class

        @register_pytree_node_class
        class Inline:
            def tree_flatten(self):
                return (self.a, self.b), (self.n,)

        @jax.tree_util.register_pytree_node_class
        class Named:
            def tree_flatten(self):
                children = (self.w,)
                aux = {"shape": self.shape, "name": self.name}
                return children, aux

        class Manual:
            def __init__(self, v, k):
                self.v, self.k = v, k

        def flatten_manual(m):
            return [m.v], m.k

        jax.tree_util.register_pytree_node(Manual, flatten_manual, lambda k, c: Manual(c[0], k))

        @jax.tree_util.register_static
        class Options:
            lr: float
        """
    )
    assert fields(found["Inline"]) == ({"n"}, {"a", "b"})
    assert fields(found["Named"]) == ({"shape", "name"}, {"w"})
    assert fields(found["Manual"]) == ({"k"}, {"v"})
    assert found["Options"].is_static("lr") and found["Options"].is_static("anything")


def test_all_data_classes_and_linen_modules() -> None:
    found = classes_of(
        """
        from typing import NamedTuple
        import chex
        import flax.linen as nn

        class Batch(NamedTuple):
            x: object
            y: object

        @chex.dataclass
        class Params:
            w: object

        class Dense(nn.Module):
            features: int
            use_bias: bool = True
        """
    )
    assert fields(found["Batch"]) == (set(), {"x", "y"})
    assert fields(found["Params"]) == (set(), {"w"})
    assert found["Dense"].is_static("features") and found["Dense"].is_static("use_bias")


@pytest.mark.parametrize(
    "helper",
    [
        "def static_field(**kwargs):\n    return flax.struct.field(pytree_node=False, **kwargs)",
        "static_field = functools.partial(flax.struct.field, pytree_node=False)",
        # helpers calling helpers, and a metadata-style helper
        "def _static(**kw):\n    return dataclasses.field(metadata={'static': True}, **kw)\n"
        "def static_field(**kw):\n    return _static(**kw)",
        # imported from elsewhere in the project: the name is all there is
        "from .utils import static_field",
    ],
)
def test_project_static_field_helpers(helper: str) -> None:
    source = (
        "import dataclasses\nimport functools\nimport flax.struct\n"
        + helper
        + "\n\n@flax.struct.dataclass\nclass S:\n    x: object\n    n: int = static_field(default=3)\n"
    )
    assert fields(classes_of(source)["S"]) == ({"n"}, {"x"})


def test_properties_over_static_fields_are_static() -> None:
    found = classes_of(
        """
        import functools
        import equinox as eqx
        import jax.numpy as jnp

        class Net(eqx.Module):
            weights: list
            sizes: tuple = eqx.field(static=True)
            act: str = eqx.field(static=True)

            @property
            def depth(self):
                return len(self.sizes)

            @functools.cached_property
            def is_relu(self):
                if self.act == "relu":
                    return True
                return self.depth > 3

            @property
            def total(self):
                return sum(w.size for w in self.weights)

            @property
            def ones(self):
                return jnp.ones(self.sizes)

            @property
            def mixed(self):
                return self.sizes, self.weights

            def method(self):
                return self.sizes
        """
    )
    assert found["Net"].static == {"sizes", "act", "depth", "is_relu"}


def test_a_helper_that_makes_a_data_field_is_not_static() -> None:
    found = classes_of(
        """
        import flax.struct

        def array_field(**kwargs):
            return flax.struct.field(pytree_node=True, **kwargs)

        @flax.struct.dataclass
        class S:
            x: object = array_field()
        """
    )
    assert fields(found["S"]) == (set(), {"x"})


def test_static_names_exclude_names_that_are_children_elsewhere() -> None:
    index = ModuleIndex(
        cst.parse_module(
            textwrap.dedent(
                """
                import equinox as eqx
                import flax.struct

                class A(eqx.Module):
                    n: int = eqx.field(static=True)
                    mode: str = eqx.field(static=True)

                @flax.struct.dataclass
                class B:
                    n: object
                """
            )
        )
    )
    model = pytree_model(index)
    assert model.static_names == {"mode"}
    assert model.field_is_static("n", model.classes["A"]) and not model.field_is_static("n", None)


# -- reading fields from traced arguments --------------------------------------------------------------


def traced_probes(source: str) -> dict[str, bool]:
    """Run the flow walk; at each `probe(expr)`, whether `expr` is traced there."""
    index = ModuleIndex(cst.parse_module(textwrap.dedent(source)))
    seen: dict[str, bool] = {}

    def on_call(node: cst.Call, ctx: Frame) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            arg = node.args[0].value
            seen[cst.Module(body=[]).code_for_node(arg)] = bool(ctx.flags(arg) & TRACED)

    FlowWalker(index, {"Call": [on_call]}, lambda *a: None).run()
    return seen


def test_static_fields_of_traced_arguments_are_python_values() -> None:
    seen = traced_probes(
        """
        import jax
        import equinox as eqx
        from flax import struct

        @struct.dataclass
        class Config:
            rate: float
            use_dropout: bool = struct.field(pytree_node=False)

        @struct.dataclass
        class State:
            params: dict
            config: Config
            name: str = struct.field(pytree_node=False)

        class Model(eqx.Module):
            w: jax.Array
            depth: int = eqx.field(static=True)

        @jax.jit
        def step(state: State, model, x):
            probe(state.name)
            probe(state.name == "a")
            probe(state.config.use_dropout)
            probe(state.config.rate)
            probe(state.params)
            probe(model.depth)
            probe(model.depth > 2)
            probe(model.w)
            cfg = state.config
            probe(cfg.use_dropout)
        """
    )
    assert seen == {
        "state.name": False,
        'state.name == "a"': False,
        "state.config.use_dropout": False,
        "state.config.rate": True,
        "state.params": True,
        "model.depth": False,
        "model.depth > 2": False,
        "model.w": True,
        "cfg.use_dropout": False,
    }


def test_annotations_decide_over_names() -> None:
    seen = traced_probes(
        """
        import jax
        import equinox as eqx

        class A(eqx.Module):
            n: int = eqx.field(static=True)

        class B(eqx.Module):
            n: int

        @jax.jit
        def f(a: A, b: B, c):
            probe(a.n)
            probe(b.n)
            probe(c.n)

            def inner(d):
                probe(a.n * 1)
                probe(a.n * d)
                probe(b.n)

            jax.lax.fori_loop(0, 3, lambda i, acc: inner(acc), 0)
            return inner(1)
        """
    )
    assert seen == {"a.n": False, "b.n": True, "c.n": True, "a.n * 1": False, "a.n * d": True}


def test_library_train_state() -> None:
    seen = traced_probes(
        """
        import jax
        from flax.training.train_state import TrainState

        @jax.jit
        def f(state: TrainState):
            probe(state.tx)
            probe(state.step)
        """
    )
    assert seen == {"state.tx": False, "state.step": True}


def test_keys_of_a_pytree_are_python_values() -> None:
    seen = traced_probes(
        """
        import jax

        @jax.jit
        def f(params, x: jax.Array):
            for name, leaf in params.items():
                probe(name)
                probe(name == "bias")
                probe(leaf)
            for key in params.keys():
                probe(key)
            for key in params:
                probe(key.startswith("w"))
            probe(x == "w")
            probe(x != 0)
            probe(x.split())
        """
    )
    assert seen == {
        "name": False,
        'name == "bias"': False,
        "leaf": True,
        "key": False,
        'key.startswith("w")': False,
        'x == "w"': False,  # `tracer == "w"` is Python's identity fallback: False, no error
        "x != 0": True,
        "x.split()": False,  # arrays have no .split(): whatever `x` is here, it is no tracer
    }


def test_self_in_a_jitted_method_of_a_pytree_is_traced_but_its_static_fields_are_not() -> None:
    seen = traced_probes(
        """
        import functools
        import jax
        import equinox as eqx
        from flax import struct
        from jax.tree_util import register_pytree_node_class

        class Linear(eqx.Module):
            weight: jax.Array
            bias: object
            size: int = eqx.field(static=True)

            @jax.jit
            def __call__(self, x):
                probe(self.weight)
                probe(self.bias)
                probe(self.size)
                probe(self.forward)

            @eqx.filter_jit
            def filtered(self, x):
                probe(self.weight * 1)
                probe(self.bias * 1)

            @functools.partial(jax.jit, static_argnums=0)
            def static_self(self, x):
                probe(self.weight + 0)

            def plain(self, x):
                probe(self.weight - 0)

        @struct.dataclass
        class State:
            step: jax.Array
            name: str = struct.field(pytree_node=False)

            @jax.jit
            def advance(self):
                probe(self.step + 1)
                probe(self.name + "!")

        @register_pytree_node_class
        class Box:
            def tree_flatten(self):
                return (self.value,), (self.kind,)

            @jax.jit
            def get(self):
                probe(self.value / 1)
                probe(self.kind / 1)

        class NotAPytree:
            w: jax.Array

            @jax.jit
            def method(self):
                probe(self.w // 1)
        """
    )
    assert seen == {
        "self.weight": True,
        "self.bias": True,
        "self.size": False,
        "self.forward": False,
        "self.weight * 1": True,
        "self.bias * 1": False,  # filter_jit: not an array, so static
        "self.weight + 0": False,
        "self.weight - 0": False,
        "self.step + 1": True,
        'self.name + "!"': False,
        "self.value / 1": True,
        "self.kind / 1": False,
        "self.w // 1": False,
    }
