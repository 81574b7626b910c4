"""Cross-module facts on their own: module names, summaries, what a module receives, and their cache form."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst

from jaxlint.analysis.binding.names import ImportTable
from jaxlint.analysis.kinds import ARRAY, LITERAL, NONE, STRICT, TRACED
from jaxlint.analysis.module_facts import ModuleFacts
from jaxlint.analysis.project import (
    CallFact,
    ClassFacts,
    FunctionFacts,
    ProjectIndex,
    Summary,
    incoming_key,
    module_name,
    package_name,
)
from jaxlint.engine import lint_text
from jaxlint.selection import LintSettings


def summarize(source: str, incoming=None) -> Summary:
    facts = ModuleFacts(incoming)
    lint_text(textwrap.dedent(source), "m.py", LintSettings(), project=facts)
    return facts.summary()


def test_module_names_follow_package_roots(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/mod.py", "train.py", "bad-name.py"):
        (tmp_path / name).write_text("")
    assert module_name(str(tmp_path / "pkg" / "sub" / "mod.py")) == "pkg.sub.mod"
    assert module_name(str(tmp_path / "pkg" / "__init__.py")) == "pkg"
    assert module_name(str(tmp_path / "train.py")) == "train"
    assert module_name(str(tmp_path / "bad-name.py")) is None
    assert module_name(str(tmp_path / "notebook.ipynb")) is None


def test_two_roots_giving_one_name_resolve_nowhere(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    paths = [str(tmp_path / "a" / "model.py"), str(tmp_path / "b" / "model.py"), str(tmp_path / "train.py")]
    project = ProjectIndex(paths)
    assert project.resolve("model.dropout") is None
    assert project.resolve("train.step") == (paths[2], "step")
    assert project.resolve("train") is None


def test_summary_records_traced_and_literal_calls_into_other_modules() -> None:
    summary = summarize(
        """
        import jax
        import model
        from helpers import scale

        @jax.jit
        def step(x, flag):
            return model.dropout(x * 2, flag, 0.5)

        scale(3, True)
        model.nothing_traced(1.0 + 2.0)
        jax.numpy.zeros(3)
        """
    )
    calls = {call.target: call for call in summary.calls}
    assert set(calls) == {"model.dropout", "helpers.scale"}
    dropout = calls["model.dropout"]
    assert dropout.kind == STRICT and dropout.context == "jax.jit-compiled 'step'"
    assert dropout.positional[0] & (TRACED | ARRAY) == TRACED | ARRAY
    assert dropout.positional[1] & TRACED and not dropout.positional[2] & TRACED
    assert calls["helpers.scale"] == CallFact("helpers.scale", NONE, "", (LITERAL, LITERAL))
    step = {f.name: f for f in summary.functions}["step"]
    assert step.jitted and step.kind == STRICT and step.traced == ("flag", "x")


def test_facts_that_add_nothing_are_dropped() -> None:
    helper = FunctionFacts("helper", ("x", "flag"), (), NONE, (), (), False)
    jitted = FunctionFacts("step", ("x", "flag"), (), STRICT, ("x",), (), True)
    traced = CallFact("m.helper", STRICT, "c", (TRACED | ARRAY, 0))
    literal = CallFact("m.step", NONE, "", (0, LITERAL))
    assert helper.adds(traced)
    assert not helper.adds(CallFact("m.helper", STRICT, "c", (0, 0)))  # nothing traced passed
    assert not helper.adds(literal)  # a literal matters only to a jitted function
    assert jitted.adds(literal)
    assert jitted.adds(
        CallFact("m.step", NONE, "", (LITERAL,))
    )  # `x` was traced, maybe a pytree: now an array
    assert jitted.adds(CallFact("m.step", NONE, "", (), (("flag", LITERAL),)))
    assert not FunctionFacts("step", ("x", "flag"), (), STRICT, ("flag", "x"), ("flag", "x"), True).adds(
        literal
    )


def test_incoming_keeps_facts_for_existing_functions_only(tmp_path: Path) -> None:
    model, train = str(tmp_path / "model.py"), str(tmp_path / "train.py")
    project = ProjectIndex([model, train])
    helper = FunctionFacts("dropout", ("x", "deterministic"), (), NONE, (), (), False)
    summaries = {
        model: Summary((), (helper,)),
        train: Summary(
            (
                CallFact(
                    "model.dropout", STRICT, "jax.jit-compiled 'step'", (TRACED | ARRAY, TRACED | ARRAY)
                ),
                CallFact("model.missing", STRICT, "jax.jit-compiled 'step'", (TRACED,)),
                CallFact("numpy.zeros", NONE, "", (LITERAL,)),
            ),
        ),
    }
    incoming = project.incoming(summaries)
    assert list(incoming) == [model]
    (fact,) = incoming[model]["dropout"]
    assert fact.target == "dropout" and fact.context == "jax.jit-compiled 'step' in train"
    assert incoming_key(incoming[model]) and incoming_key({}) == ""


def test_incoming_facts_make_the_receiving_module_traced() -> None:
    source = """
        import jax.numpy as jnp

        def dropout(x, deterministic):
            if not deterministic:
                x = x * 0.5
            return x
        """
    fact = CallFact("dropout", STRICT, "jax.jit-compiled 'step' in train", (TRACED | ARRAY, TRACED | ARRAY))
    findings = lint_text(
        textwrap.dedent(source), "model.py", LintSettings(), project=ModuleFacts({"dropout": (fact,)})
    )
    assert [(f.line, f.code) for f in findings] == [(5, "JAX101")]
    assert "called from jax.jit-compiled 'step' in train" in findings[0].message
    assert lint_text(textwrap.dedent(source), "model.py", LintSettings(), project=ModuleFacts()) == []


def test_summaries_survive_the_cache_form() -> None:
    summary = Summary(
        (CallFact("m.f", STRICT, "ctx", (TRACED, LITERAL), (("k", TRACED | ARRAY),), True),),
        (FunctionFacts("f", ("a",), ("k",), STRICT, ("a",), ("a",), True, ("a",)),),
    )
    assert Summary.from_json(summary.to_json()) == summary
    broken = summary.to_json()
    broken["calls"][0][1] = "STRICT"
    assert Summary.from_json(broken) is None
    assert Summary.from_json({"calls": [], "functions": [["f"]]}) is None


def test_relative_imports_resolve_against_the_package(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/mod.py", "top.py"):
        (tmp_path / name).write_text("")
    assert package_name(str(tmp_path / "pkg" / "sub" / "mod.py")) == "pkg.sub"
    assert package_name(str(tmp_path / "pkg" / "sub" / "__init__.py")) == "pkg.sub"  # a package is its own
    assert package_name(str(tmp_path / "top.py")) is None

    def names(source: str, package: str | None) -> dict[str, str]:
        table = ImportTable(package)
        statement = cst.parse_statement(source)
        assert isinstance(statement, cst.SimpleStatementLine)
        node = statement.body[0]
        assert isinstance(node, cst.ImportFrom)
        table.add_import_from(node)
        return table.names

    assert names("from . import model", "pkg.sub") == {"model": "pkg.sub.model"}
    assert names("from .model import dropout as d", "pkg.sub") == {"d": "pkg.sub.model.dropout"}
    assert names("from ..layers import dense", "pkg.sub") == {"dense": "pkg.layers.dense"}
    assert names("from .. import layers", "pkg.sub") == {"layers": "pkg.layers"}
    assert names("from ... import x", "pkg.sub") == {}  # past the top package
    assert names("from .model import dropout", None) == {}  # one file: no package known
    assert names("from .numpy import zeros", "jax") == {}  # never the jax library's names
    assert names("from jax import numpy", "pkg.sub") == {"numpy": "jax.numpy"}


def test_summary_names_linen_classes_and_project_bases() -> None:
    summary = summarize(
        """
        import flax.linen as nn
        import equinox as eqx
        from layers import Base
        import model

        class Dense(nn.Module):
            features: int

        class Deep(Dense):
            depth: int

        class Head(Base):
            pass

        class Other(eqx.Module):
            pass

        def build(key, x):
            return model.MLP().init(key, x)
        """
    )
    assert summary.classes == (
        ClassFacts("Deep", "linen"),
        ClassFacts("Dense", "linen"),
        ClassFacts("Head", "", ("layers.Base",)),
        ClassFacts("Other", "pytree::"),  # a pytree with no field: its subclasses elsewhere are pytrees
    )
    assert summary.imports == (("Base", "layers.Base"), ("model", "model"))
    assert summary.wants == ("model.MLP",)
    assert summarize("import jax\nfrom model import MLP\n\ntx.init(MLP)\n").wants == ()  # not an instance
    assert Summary.from_json(summary.to_json()) == summary


def test_class_kinds_follow_bases_and_re_exports(tmp_path: Path) -> None:
    paths = {name: str(tmp_path / f"{name}.py") for name in ("layers", "model", "api", "train", "other")}
    project = ProjectIndex(paths.values())
    summaries = {
        paths["layers"]: Summary(classes=(ClassFacts("Base", "linen"),)),
        paths["model"]: Summary(
            classes=(ClassFacts("MLP", "", ("layers.Base",)), ClassFacts("Loop", "", ("model.Loop",))),
            imports=(("Base", "layers.Base"),),
        ),
        paths["api"]: Summary(imports=(("MLP", "model.MLP"),)),
        paths["train"]: Summary(
            imports=(("MLP", "api.MLP"), ("model", "model")), wants=("api.MLP", "model.MLP", "model.Loop")
        ),
        paths["other"]: Summary(imports=(("MLP", "api.MLP"),)),  # calls no Module method on it: nothing
    }
    assert project.classes(summaries) == {paths["train"]: {"api.MLP": "linen", "model.MLP": "linen"}}


def test_methods_of_classes_are_summarised_and_resolved(tmp_path: Path) -> None:
    summary = summarize(
        """
        import flax.linen as nn

        class MLP(nn.Module):
            @nn.compact
            def __call__(self, x, train=False):
                return x

        class Plain:
            def __call__(self, x):
                return x
        """
    )
    methods = {f.name: f for f in summary.functions if "." in f.name}
    assert sorted(methods) == ["MLP.__call__", "Plain.__call__"]
    assert methods["MLP.__call__"].positional == ("x", "train")  # `self` left out
    project = ProjectIndex([str(tmp_path / "model.py")])
    assert project.resolve("model.MLP.__call__") == (str(tmp_path / "model.py"), "MLP.__call__")
    assert project.resolve("other.MLP.__call__") is None


def test_summary_exports_keys_returns_and_jitted_bindings() -> None:
    """What callers in other modules need: the parts of parameters a function consumes as keys (through its
    own callees), whether it returns one JAX array, and module-level `jax.jit(f)` bindings."""
    summary = summarize(
        """
        import jax
        import jax.numpy as jnp

        def draw(key, n):
            return jax.random.normal(key, (n,))

        def relay(state, n):
            return draw(state.rng, n) + draw(state.keys[1], n)

        def split_only(cfg):
            return jax.random.split(cfg["key"])

        def reads(key):
            return key.shape

        def loss(x):
            return jnp.mean(x) * 2

        def pair(x):
            return jnp.mean(x), x

        fast = jax.jit(loss)
        slow = loss
        """
    )
    functions = {f.name: f for f in summary.functions}
    assert functions["draw"].keys == (("key", ()),) and functions["draw"].returns
    assert functions["relay"].keys == (("state", (".keys", 1)), ("state", (".rng",)))
    assert functions["split_only"].keys == (("cfg", ("[key",)),)
    assert functions["reads"].keys == () and functions["reads"].export() is None
    assert functions["loss"].returns and not functions["pair"].returns
    assert functions["fast"].jitted and functions["fast"].export() is not None
    assert "slow" not in functions
    assert "uses" in summary.to_json() and Summary.from_json(summary.to_json()) == summary


def test_exports_reach_the_modules_that_can_use_them(tmp_path: Path) -> None:
    """Keys consumed go to every caller; an array returned to every module using the helper (a JAX array in
    its eager code, a tracer in its traced code); a jitted function only to a module that reads a clock.
    Re-exports are followed."""
    paths = {name: str(tmp_path / name) for name in ("helpers.py", "pkg/__init__.py", "a.py", "b.py")}
    (tmp_path / "pkg").mkdir()
    for path in paths.values():
        Path(path).write_text("")
    project = ProjectIndex(list(paths.values()))
    helpers = Summary(
        functions=(
            FunctionFacts("draw", ("key",), (), NONE, (), (), False, keys=(("key", ()),)),
            FunctionFacts("loss", ("x",), (), NONE, (), (), False, returns=True),
            FunctionFacts("step", ("x",), (), STRICT, ("x",), (), True),
            FunctionFacts("plain", ("x",), (), NONE, (), (), False),
        )
    )
    package = Summary(imports=(("draw", "helpers.draw"),))
    traced_call = CallFact("helpers.loss", STRICT, "jax.jit-compiled 'f'", (TRACED | ARRAY,))
    a = Summary(calls=(traced_call,), uses=("helpers.loss", "helpers.plain", "helpers.step", "pkg.draw"))
    b = Summary(uses=("helpers.loss", "helpers.step"), times=True)
    exports = project.exports(
        {paths["helpers.py"]: helpers, paths["pkg/__init__.py"]: package, paths["a.py"]: a, paths["b.py"]: b}
    )
    assert sorted(exports[paths["a.py"]]) == ["helpers.loss", "pkg.draw"]
    assert exports[paths["a.py"]]["pkg.draw"].keys == (("key", ()),)
    assert exports[paths["a.py"]]["helpers.loss"].returns
    assert list(exports[paths["b.py"]]) == ["helpers.loss", "helpers.step"]
    assert exports[paths["b.py"]]["helpers.loss"].returns and exports[paths["b.py"]]["helpers.step"].jitted
    assert paths["helpers.py"] not in exports
    assert incoming_key({}, None, exports[paths["a.py"]]) != incoming_key({}, None, exports[paths["b.py"]])


def test_method_exports_carry_the_keys_every_override_consumes() -> None:
    """A method's entry carries the keys a call on an instance surely consumes (by its parameters after
    `self`): only what every override the module defines consumes too; an inherited method is listed under
    the subclass when it consumes keys. The caller's `uses` names the methods it calls on project instances."""
    summary = summarize(
        """
        import jax
        from envs import Env

        class Base:
            def reset(self, key):
                return jax.random.normal(key)

            def noise(self, rng, n):
                return jax.random.normal(rng, (n,))

            def abstract(self, key):
                raise NotImplementedError

        class Loud(Base):
            def noise(self, k, n):
                return jax.random.uniform(k, (n,))

            def step(self, state, key):
                return self.reset(key) + state

        class Quiet(Base):
            def reset(self, key):
                return 0.0

        def run(key, env: Env):
            return env.reset(key)
        """
    )
    functions = {f.name: f for f in summary.functions}
    assert functions["Base.reset"].keys == ()  # Quiet.reset draws nothing
    assert functions["Base.noise"].keys == (("rng", ()),)  # Loud.noise draws too, from its `k`
    assert functions["Loud.noise"].keys == (("k", ()),)
    assert functions["Loud.step"].keys == (("key", ()),)  # `self.reset` of a Loud: Base.reset
    assert functions["Loud.reset"].keys == (("key", ()),)  # inherited, listed under the subclass
    assert "Quiet.noise" in functions and "Quiet.abstract" not in functions
    assert functions["Base.abstract"].keys == ()
    assert "envs.Env.reset" in summary.uses
    assert Summary.from_json(summary.to_json()) == summary
