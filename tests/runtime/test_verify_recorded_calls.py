"""Inputs learnt from a real run: `jaxlint --verify --run CMD` records every jitted call's abstract signature
(pytree structure, leaves, static values) and confirms exception findings from the errors the run raised;
a later `jaxlint --verify` rebuilds those calls in its child and traces the flagged function with them."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
import textwrap
import types

import pytest

from jaxlint.runtime.recompiles.call_records import encode_argument, encode_call, encode_error
from jaxlint.runtime.recompiles.crossref import cross_reference_errors
from jaxlint.runtime.recompiles.signature_store import read_functions, store_path, write_calls

TRAIN = textwrap.dedent(
    """\
    import dataclasses, functools

    import jax
    import jax.numpy as jnp


    @functools.partial(jax.tree_util.register_dataclass, data_fields=["params", "step"], meta_fields=[])
    @dataclasses.dataclass
    class State:
        params: jax.Array
        step: jax.Array


    @jax.jit
    def train_step(state, x, y):
        loss = jnp.mean((x @ state.params - y) ** 2)
        if loss > 100.0:
            loss = loss * 0.1
        return State(state.params - 0.01 * loss, state.step + 1), loss


    def main():
        state = State(jnp.zeros((3,)), jnp.array(0))
        for _ in range(3):
            state, loss = train_step(state, jnp.ones((4, 3)), jnp.ones((4,)))
        print(loss)


    if __name__ == "__main__":
        main()
    """
)

# A custom pytree with no annotations: nothing to build it from but a recorded call.
OPAQUE = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp


    @jax.tree_util.register_pytree_node_class
    class Box:
        def __init__(self, inner, scale):
            self.inner, self.scale = inner, scale

        def tree_flatten(self):
            return (self.inner,), self.scale

        @classmethod
        def tree_unflatten(cls, scale, children):
            return cls(children[0], scale)


    @jax.jit
    def step(box):
        if box.inner.sum() * box.scale > 1.0:
            return box.inner
        return -box.inner


    if __name__ == "__main__":
        step(Box(jnp.ones(2), 3))
    """
)


def _jaxlint(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def _project(tmp_path, name, text):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (project / name).write_text(text)
    return project


@pytest.mark.slow
@pytest.mark.usefixtures("needs_jit_hook")
def test_a_run_confirms_the_finding_and_a_later_verify_uses_its_recorded_call(tmp_path):
    project = _project(tmp_path, "train.py", TRAIN)
    run = _jaxlint(project, "--verify", "--run", f"{sys.executable} train.py")
    assert run.returncode == 1, run.stdout + run.stderr  # the script raised, as the finding says
    assert "TracerBoolConversionError" in run.stderr
    assert "CONFIRMED JAX101 train.py:17:8: TracerBoolConversionError raised at line 17" in run.stdout
    stored = read_functions(str(project / ".jaxlint_cache" / "signatures"), str(project / "train.py"))
    (call,) = stored["train_step"]["calls"]  # recorded at trace entry, before tracing failed
    state = call["args"][0]
    assert state["tree"]["type"] == "__main__:State"
    assert state["leaves"] == [[[3], "float32", False], [[], "int32", True]]
    assert [a["name"] for a in call["args"]] == ["state", "x", "y"]

    verify = _jaxlint(tmp_path, "--verify", "--verbose", "proj")
    assert verify.returncode == 1, verify.stdout + verify.stderr
    line = next(x for x in verify.stdout.splitlines() if "JAX101" in x)
    assert "CONFIRMED: TracerBoolConversionError at train.py:17" in line
    assert "recorded by `jaxlint --verify --run`: state: State(float32[3], weak int32[])" in line


@pytest.mark.slow
@pytest.mark.usefixtures("needs_jit_hook")
def test_without_a_recording_not_run_says_how_to_give_inputs_and_with_one_it_is_confirmed(tmp_path):
    project = _project(tmp_path, "boxes.py", OPAQUE)
    before = _jaxlint(project, "--verify", "--format", "json", ".")
    (verdict,) = [f for f in json.loads(before.stdout) if f["code"] == "JAX101"]
    assert verdict["verdict"] == "NOT_RUN", verdict
    assert '`jaxlint --verify --run "pytest"`' in verdict["verdict_reason"]
    assert '[tool.jaxlint.verify.examples]` "boxes:step"' in verdict["verdict_reason"]

    run = _jaxlint(project, "--verify", "--run", f"{sys.executable} boxes.py")
    assert "CONFIRMED JAX101" in run.stdout, run.stdout + run.stderr
    after = _jaxlint(project, "--verify", "--format", "json", ".")
    (verdict,) = [f for f in json.loads(after.stdout) if f["code"] == "JAX101"]
    assert verdict["verdict"] == "CONFIRMED", verdict
    assert "recorded by `jaxlint --verify --run`: box: Box(float32[2])" in verdict["verdict_reason"]


# -- the record format, in this process --------------------------------------------------------------


@functools.partial(
    __import__("jax").tree_util.register_dataclass, data_fields=["params", "step"], meta_fields=["lr", "kind"]
)
@dataclasses.dataclass
class _State:
    params: dict
    step: object
    lr: float = 0.1
    kind: tuple = ("adam", 2)


@pytest.mark.usefixtures("needs_jit_hook")
def test_a_recorded_argument_rebuilds_the_same_tree_in_the_verify_child():
    import jax
    import jax.numpy as jnp

    from jaxlint.runtime.verify.child.recorded import Decoder, RecordedSpec

    value = (_State({"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}, jnp.array(0), 0.5), [1.0, None], {"k": 2})
    encoded = json.loads(json.dumps(encode_argument(jax, value)))  # what the store keeps
    module = types.ModuleType("elsewhere")
    spec = RecordedSpec(
        Decoder(jax, module), encoded["tree"], tuple((tuple(s), d, w) for s, d, w in encoded["leaves"])
    )
    rebuilt = spec.build(traced=True)
    assert jax.tree_util.tree_structure(rebuilt) == jax.tree_util.tree_structure(value)
    assert rebuilt[0].lr == 0.5 and rebuilt[0].kind == ("adam", 2)
    assert [(x.shape, str(x.dtype), x.weak_type) for x in jax.tree_util.tree_leaves(rebuilt)] == [
        ((3,), "float32", False),
        ((2, 3), "float32", False),
        ((), "int32", True),
        ((), "float32", True),
        ((), "int32", True),
    ]
    concrete = spec.build(traced=False)
    assert float(concrete[0].params["w"].sum()) == 6.0


@pytest.mark.usefixtures("needs_jit_hook")
def test_key_leaves_are_rebuilt_as_keys_of_the_same_implementation():
    import jax

    from jaxlint.runtime.verify.child.recorded import Decoder, RecordedSpec

    value = {"k": jax.random.split(jax.random.key(1), 3), "r": jax.random.key(0, impl="rbg")}
    encoded = encode_argument(jax, value)
    leaves = tuple((tuple(s), d, w) for s, d, w in encoded["leaves"])
    rebuilt = RecordedSpec(Decoder(jax, types.ModuleType("m")), encoded["tree"], leaves).build(traced=True)
    assert jax.tree_util.tree_map(jax.typeof, rebuilt) == jax.tree_util.tree_map(jax.typeof, value)


def test_static_values_are_kept_and_unrebuildable_calls_are_not_recorded():
    import jax

    call = encode_call(jax, (jax.numpy.ones(2), 3, ("a", 1.5)), {}, (1, 2), (), ["x", "n", "cfg"])
    assert call == {
        "args": [
            {"name": "x", "tree": "*", "leaves": [[[2], "float32", False]]},
            {"name": "n", "static": 3},
            {"name": "cfg", "static": {"tuple": ["a", 1.5]}},
        ],
        "kwargs": {},
    }
    closure = 1
    assert encode_call(jax, (lambda: closure,), {}, (0,), (), ["f"]) is None  # a lambda has no import name


def test_the_store_keeps_a_few_calls_per_function_of_the_project_only(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("")
    store = str(tmp_path / "cache" / "signatures")

    def entry(n, path=str(source)):
        return {"module": "m", "qualname": "f", "path": path, "line": 2, "first_line": 1, "calls": [{"n": n}]}

    for n in range(6):
        write_calls(store, [entry(n), entry(n, "/elsewhere/lib.py")], root=str(tmp_path))
    calls = read_functions(store, str(source))["f"]["calls"]
    assert calls == [{"n": 5}, {"n": 4}, {"n": 3}, {"n": 2}]  # newest first, bounded
    assert not read_functions(store, "/elsewhere/lib.py")
    with open(store_path(store, str(source)), "w") as handle:
        handle.write("{not json")
    assert read_functions(store, str(source)) == {}  # a damaged file is no recording, not a crash


def test_pickled_calls_are_read_back_only_with_this_user_s_key(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXLINT_KEY_DIR", str(tmp_path / "key"))
    source = tmp_path / "m.py"
    source.write_text("")
    store = tmp_path / "cache" / "signatures"
    call = {"pickled": "cGlja2xl", "static_argnums": [], "static_argnames": []}
    entry = {"module": "m", "qualname": "f", "path": str(source), "line": 2, "first_line": 1, "calls": [call]}
    write_calls(str(store), [entry], root=str(tmp_path))
    key = tmp_path / "key" / "signing-key"
    assert key.stat().st_mode & 0o777 == 0o600 and key.parent.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [".gitignore", "signatures"]
    assert not list(store.glob("*secret*")) and not list(store.glob("*key*"))  # nothing beside the records
    (kept,) = read_functions(str(store), str(source))["f"]["calls"]
    assert kept["pickled"] == "cGlja2xl" and len(kept["hmac"]) == 64

    path = store_path(str(store), str(source))
    data = json.loads(open(path).read())
    data["functions"]["f"]["calls"][0]["pickled"] = "b3RoZXI="  # another pickle under the old HMAC
    with open(path, "w") as handle:
        json.dump(data, handle)
    refused = read_functions(str(store), str(source))["f"]
    assert refused["calls"] == [] and "not written by this user's jaxlint" in refused["refused"]

    write_calls(str(store), [entry], root=str(tmp_path))  # signed again
    key.chmod(0o644)  # a key others can read vouches for nothing
    assert read_functions(str(store), str(source))["f"]["calls"] == []
    key.chmod(0o600)
    assert read_functions(str(store), str(source))["f"]["calls"] != []
    monkeypatch.setenv("JAXLINT_KEY_DIR", str(tmp_path / "another-user-or-machine"))
    assert read_functions(str(store), str(source))["f"]["calls"] == []


def test_without_a_key_the_pickled_calls_are_left_out_and_the_others_kept(tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("JAXLINT_KEY_DIR", str(tmp_path / "file" / "key"))  # cannot be made
    source = tmp_path / "m.py"
    source.write_text("")
    store = str(tmp_path / "cache" / "signatures")
    calls = [{"pickled": "cGlja2xl", "static_argnums": [], "static_argnames": []}, {"n": 1}]
    entry = {"module": "m", "qualname": "f", "path": str(source), "line": 2, "first_line": 1, "calls": calls}
    write_calls(store, [entry], root=str(tmp_path))
    assert read_functions(store, str(source))["f"]["calls"] == [{"n": 1}]
    assert "cannot make the signing key" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the XDG folders of Linux and other Unixes")
def test_the_key_lives_in_the_user_s_cache_folder(tmp_path, monkeypatch):
    from jaxlint.runtime.recompiles.signing_key import key_dir

    monkeypatch.delenv("JAXLINT_KEY_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert key_dir() == str(tmp_path / "xdg" / "jaxlint")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # ignored, as the XDG spec says
    assert key_dir() == os.path.expanduser("~/.cache/jaxlint")


@dataclasses.dataclass(frozen=True)
class _Finding:
    code: str
    path: str
    line: int
    column: int = 4
    end_line: int | None = None


def test_an_error_confirms_a_finding_when_a_user_frame_is_inside_the_statement(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f(x):\n    y = g(\n        x,\n    )\n    return y\n")
    try:
        raise TypeError("boom")
    except TypeError as error:
        encoded = encode_error(error, ())
    encoded["frames"] = [[str(source), 2, 4]]  # JAX names the call's first line
    encoded["types"] = ["TracerBoolConversionError", "ConcretizationTypeError", "TypeError"]
    inside = _Finding("JAX101", str(source), 3)  # flagged on the call's second line
    outside = _Finding("JAX101", str(source), 5)
    other_rule = _Finding("JAX301", str(source), 3)  # KeyReuseError: not this error's class
    verdicts = cross_reference_errors([inside, outside, other_rule], [encoded])
    assert [v.confirmed for v in verdicts] == [True, False, False]
    assert verdicts[0].to_dict()["error"] == "TracerBoolConversionError"


# -- registered dataclasses built from their fields' annotations (no recording) ------------------------


@pytest.mark.slow
def test_registered_dataclasses_are_built_from_their_field_annotations():
    from test_verify_support import FIXTURES, marked

    from jaxlint.runtime.verify import verify_findings

    cases = {c.finding.function: c for c in marked("verify_structs.py")}
    report = verify_findings([c.finding for c in cases.values()], root=FIXTURES, timeout=120)
    results = {name: report.verdicts[c.finding] for name, c in cases.items()}
    assert results["annotated"].verdict == "CONFIRMED", results["annotated"]
    assert "state: State(params: f32[], step: f32[], lr: 0.1)" in results["annotated"].reason
    assert results["by_attributes"].verdict == "CONFIRMED", results["by_attributes"]
    assert results["nested"].verdict == "CONFIRMED", results["nested"]
    assert "outer: Outer(inner: State(params: f32[]" in results["nested"].reason
    assert results["plain"].verdict == "NOT_RUN", results["plain"]
    assert "jaxlint --verify --run" in results["plain"].reason
