"""Runtime mode on flax projects, through the real command (issue 27, items 4-7): `--run` confirms what it
sees (a tracer printed while JAX traces), keeps a flax `TrainState` call with cloudpickle (signed, so a
later `--verify` traces with it and refuses a store it did not write), reaches flax Module methods, and
verify's own checks neither cost a flax step half a minute nor fail a module's import."""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("flax")
pytest.importorskip("optax")

MODEL = textwrap.dedent(
    """\
    import flax.linen as nn


    class MLP(nn.Module):
        features: int = 8

        @nn.compact
        def __call__(self, x):
            x = nn.Dense(self.features)(x)
            x = nn.relu(x)
            return nn.Dense(1)(x)
    """
)

STEPS = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp
    import optax
    from flax.training import train_state


    def create_state(model, key, x):
        params = model.init(key, x)["params"]
        return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-3))


    @jax.jit
    def train_step(state, x, y, key):
        noise = jax.random.normal(key, x.shape) * 0.01

        def loss_fn(params):
            pred = state.apply_fn({"params": params}, x + noise)
            return jnp.mean((pred - y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(state.params)
        print("loss", loss)
        jax.debug.print(f"traced loss {loss}")
        return state.apply_gradients(grads=grads), loss


    @jax.jit
    def eval_step(state, x):
        out = state.apply_fn({"params": state.params}, x)
        if out.sum() > 0:
            return out
        return -out
    """
)

TRAIN = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp

    from mypkg.model import MLP
    from mypkg.steps import create_state, train_step


    def main():
        key = jax.random.key(0)
        x = jnp.ones((16, 4))
        y = jnp.zeros((16, 1))
        state = create_state(MLP(), key, x)
        for _ in range(3):
            key, sub = jax.random.split(key)
            state, loss = train_step(state, x, y, sub)
        print("final", float(loss))


    if __name__ == "__main__":
        main()
    """
)


def _jaxlint(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def _write(root, files):
    (root / "pyproject.toml").write_text(files.pop("pyproject.toml", "[tool.jaxlint]\n"))
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _verdicts(result):
    return {(f["path"].replace("\\", "/"), f["line"], f["code"]): f for f in json.loads(result.stdout)}


@pytest.fixture
def trainer(tmp_path):
    pytest.importorskip("cloudpickle")
    return _write(
        tmp_path,
        {"mypkg/__init__.py": "", "mypkg/model.py": MODEL, "mypkg/steps.py": STEPS, "train.py": TRAIN},
    )


@pytest.mark.slow
def test_a_run_confirms_the_print_and_a_later_verify_traces_the_pickled_train_state(trainer):
    run = _jaxlint(trainer, "--verify", "--run", f"{sys.executable} train.py")
    assert "final" in run.stdout, run.stdout + run.stderr  # the script ran to its end
    assert "CONFIRMED JAX201 mypkg/steps.py:21:5: line 21 printed 'loss " in run.stdout, (
        run.stdout + run.stderr
    )
    assert "CONFIRMED JAX203 mypkg/steps.py:22:" in run.stdout
    assert "could not record" not in run.stdout  # the TrainState call was kept (pickled)
    assert (trainer / ".jaxlint_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    key = Path(os.environ["JAXLINT_KEY_DIR"]) / "signing-key"  # the user's, outside the project
    assert key.stat().st_mode & 0o077 == 0
    assert not list((trainer / ".jaxlint_cache" / "signatures").glob("*secret*"))

    verify = _jaxlint(trainer, "--verify", "--format", "json", ".")
    verdicts = _verdicts(verify)
    printed = verdicts[("mypkg/steps.py", 21, "JAX201")]
    assert printed["verdict"] == "CONFIRMED", printed
    assert "a call recorded by `jaxlint --verify --run`: state: TrainState(" in printed["verdict_reason"]
    # The step the script never calls has no recorded call: still NOT_RUN, not confirmed by accident.
    assert verdicts[("mypkg/steps.py", 29, "JAX101")]["verdict"] == "NOT_RUN"


@pytest.mark.slow
def test_a_pickled_call_this_jaxlint_did_not_sign_is_never_unpickled(trainer, tmp_path):
    run = _jaxlint(trainer, "--verify", "--run", f"{sys.executable} train.py")
    assert run.returncode in (0, 1), run.stderr
    (stored,) = (trainer / ".jaxlint_cache" / "signatures").glob("steps-*.json")
    data = json.loads(stored.read_text())
    (call,) = data["functions"]["train_step"]["calls"]
    marker = tmp_path / "unpickled"

    class Payload:
        def __reduce__(self):
            import os

            return (os.mkdir, (str(marker),))

    call["pickled"] = base64.b64encode(pickle.dumps(Payload())).decode()  # the old HMAC no longer matches
    stored.write_text(json.dumps(data))

    verify = _jaxlint(trainer, "--verify", "--format", "json", ".")
    printed = _verdicts(verify)[("mypkg/steps.py", 21, "JAX201")]
    assert not marker.exists()
    assert printed["verdict"] == "NOT_RUN", printed
    assert "not written by this user's jaxlint" in printed["verdict_reason"]


FLAX_MODEL = textwrap.dedent(
    """\
    import flax.linen as nn


    class MLP(nn.Module):
        features: int = 8

        @nn.compact
        def __call__(self, x):
            h = nn.Dense(self.features)(x)
            if x.sum() > 0:
                h = nn.relu(h)
            return nn.Dense(1)(h)
    """
)

FLAX_PREDICT = textwrap.dedent(
    """\
    import jax

    from model import MLP


    @jax.jit
    def predict(params, x):
        return MLP().apply(params, x)
    """
)


@pytest.mark.slow
def test_a_flax_module_method_is_reached_through_the_wrapper_flax_puts_on_it(tmp_path):
    _write(tmp_path, {"model.py": FLAX_MODEL, "train.py": FLAX_PREDICT})
    verify = _jaxlint(tmp_path, "--verify", "--format", "json", ".")
    found = _verdicts(verify)[("model.py", 10, "JAX101")]
    assert found["verdict"] == "CONFIRMED", found
    assert found["verdict_reason"].startswith("TracerBoolConversionError at line 10")


# A Module whose field has no default: verify cannot make one, so the method is reached through the jitted
# function of the same module that has a declared example.
THROUGH_CALLER = textwrap.dedent(
    """\
    import flax.linen as nn
    import jax


    class MLP(nn.Module):
        features: int

        @nn.compact
        def __call__(self, x):
            h = nn.Dense(self.features)(x)
            if x.sum() > 0:
                h = nn.relu(h)
            return h


    @jax.jit
    def predict(params, x):
        return MLP(4).apply(params, x)
    """
)


@pytest.mark.slow
def test_a_finding_is_confirmed_at_its_line_when_reached_through_a_caller_with_an_example(tmp_path):
    example = "MLP(4).init(jax.random.key(0), jnp.ones((2, 3))), jnp.ones((2, 3))"
    pyproject = f'[tool.jaxlint]\n\n[tool.jaxlint.verify.examples]\n"model:predict" = "{example}"\n'
    _write(tmp_path, {"pyproject.toml": pyproject, "model.py": THROUGH_CALLER})
    found = _verdicts(_jaxlint(tmp_path, "--verify", "--format", "json", "."))[("model.py", 11, "JAX101")]
    assert found["verdict"] == "CONFIRMED", found
    assert found["verdict_reason"].startswith("TracerBoolConversionError at line 11")
    assert "reached through 'predict'" in found["verdict_reason"]

    # Without the example nothing reaches it: the same finding is not confirmed.
    _write(tmp_path, {"model.py": THROUGH_CALLER})
    alone = _verdicts(_jaxlint(tmp_path, "--verify", "--format", "json", "."))[("model.py", 11, "JAX101")]
    assert alone["verdict"] == "NOT_RUN", alone


LEAKING_STEP = textwrap.dedent(
    """\
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax
    from flax.training import train_state

    history = []


    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(1)(nn.relu(nn.Dense(8)(x)))


    def create_state(key, x):
        model = MLP()
        params = model.init(key, x)["params"]
        return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-3))


    @jax.jit
    def train_step(state, x, y):
        def loss_fn(params):
            return jnp.mean((state.apply_fn({"params": params}, x) - y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(state.params)
        history.append(loss)
        return state.apply_gradients(grads=grads), loss
    """
)


@pytest.mark.slow
def test_a_tracer_leaked_by_a_flax_step_is_confirmed_where_it_is_stored(tmp_path):
    example = "create_state(jax.random.key(0), jnp.ones((4, 3))), jnp.ones((4, 3)), jnp.ones((4, 1))"
    pyproject = f'[tool.jaxlint]\n\n[tool.jaxlint.verify.examples]\n"flaxstep:train_step" = "{example}"\n'
    _write(tmp_path, {"pyproject.toml": pyproject, "flaxstep.py": LEAKING_STEP})
    found = _verdicts(_jaxlint(tmp_path, "--verify", "--format", "json", "."))[("flaxstep.py", 28, "JAX105")]
    assert found["verdict"] == "CONFIRMED", found
    assert "global 'history' at line 28" in found["verdict_reason"]


KEY_REUSE_FIRST = textwrap.dedent(
    """\
    import jax

    key = jax.random.key(0)
    a = jax.random.normal(key, (3,))
    b = jax.random.uniform(key, (3,))


    @jax.jit
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    """
)


@pytest.mark.slow
def test_verify_s_key_reuse_check_confirms_its_line_and_never_fails_the_import_for_later_findings(tmp_path):
    _write(tmp_path, {"script.py": KEY_REUSE_FIRST})
    verdicts = _verdicts(_jaxlint(tmp_path, "--verify", "--format", "json", "."))
    reuse = verdicts[("script.py", 5, "JAX301")]
    assert reuse["verdict"] == "CONFIRMED" and reuse["verdict_reason"].startswith("KeyReuseError at line 5")
    later = verdicts[("script.py", 10, "JAX101")]  # defined after the statement the check stopped
    assert later["verdict"] == "CONFIRMED", later
    assert later["verdict_reason"].startswith("TracerBoolConversionError at line 10")


@pytest.mark.slow
def test_a_timeout_says_how_to_raise_the_limit(tmp_path):
    slow = "import time\n\nimport jax\n\ntime.sleep(60)\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
    _write(tmp_path, {"slow.py": slow})
    result = _jaxlint(tmp_path, "--verify", "--verify-timeout", "5", "--format", "json", ".")
    found = _verdicts(result)[("slow.py", 10, "JAX101")]
    assert found["verdict"] == "NOT_RUN", found
    assert "`--verify-timeout SECONDS`" in found["verdict_reason"]


SIDE_EFFECTS = textwrap.dedent(
    """\
    import os

    import jax

    history = []


    @jax.jit
    def step(x):
        y = x * 2
        history.append(y)
        os.makedirs("out", exist_ok=True)
        return y


    @jax.jit
    def never(x):
        os.makedirs("never", exist_ok=True)
        return x


    if __name__ == "__main__":
        for _ in range(3):
            step(jax.numpy.ones(3))
    """
)


@pytest.mark.slow
def test_a_run_confirms_side_effects_and_leaks_it_watches_run_while_jax_traces(tmp_path):
    _write(tmp_path, {"run.py": SIDE_EFFECTS})
    run = _jaxlint(tmp_path, "--verify", "--run", f"{sys.executable} run.py")
    assert (
        "CONFIRMED JAX105 run.py:11:5: line 11 left a tracer in global 'history' after the trace"
        in run.stdout
    ), run.stdout + run.stderr
    assert "CONFIRMED JAX202 run.py:12:5: line 12 ran while JAX traced the function" in run.stdout
    assert "JAX202 run.py:18" not in run.stdout  # `never` was never traced
    assert "1 other confirmable finding not observed in this run" in run.stdout


SELF_STORES = textwrap.dedent(
    """\
    import functools

    import jax


    class Model:
        def __init__(self):
            self.cache = None

        @functools.partial(jax.jit, static_argnums=0)
        def step(self, x):
            y = x * 2
            self.cache = y
            return y


    class Slotted:
        __slots__ = ("cache",)

        @functools.partial(jax.jit, static_argnums=0)
        def step(self, x):
            y = x * 2
            self.cache = y
            return y


    if __name__ == "__main__":
        model, slotted = Model(), Slotted()
        for _ in range(2):
            model.step(jax.numpy.ones(3))
            slotted.step(jax.numpy.ones(3))
    """
)


@pytest.mark.slow
def test_a_run_confirms_a_tracer_left_in_self_in_a_dict_or_a_slot(tmp_path):
    """The run's processes look where the flagged statement stores (`runtime/shared/leaks.py`, the walk the
    verify child uses too): an instance's `__dict__`, or its `__slots__`."""
    _write(tmp_path, {"run.py": SELF_STORES})
    run = _jaxlint(tmp_path, "--verify", "--run", f"{sys.executable} run.py")
    for line in (13, 23):
        assert (
            f"CONFIRMED JAX105 run.py:{line}:9: line {line} left a tracer in 'self.cache' after the trace"
            in (run.stdout)
        ), run.stdout + run.stderr


KEY_REUSE_IN_A_STEP = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp


    @jax.jit
    def noisy(key, x):
        a = jax.random.normal(key, x.shape)
        b = jax.random.uniform(key, x.shape)
        return x + a + b


    if __name__ == "__main__":
        out = noisy(jax.random.key(0), jnp.ones(3))
        print("ran on", out.shape)
    """
)


@pytest.mark.slow
def test_a_run_confirms_key_reuse_in_a_traced_step_without_stopping_the_program(tmp_path):
    _write(tmp_path, {"run.py": KEY_REUSE_IN_A_STEP})
    run = _jaxlint(tmp_path, "--verify", "--run", f"{sys.executable} run.py")
    assert "ran on (3,)" in run.stdout, run.stdout + run.stderr  # the program was not stopped
    assert "CONFIRMED JAX301 run.py:8:" in run.stdout
    assert "KeyReuseError at line 8, by JAX's key-reuse check" in run.stdout


HAIKU_MODEL = textwrap.dedent(
    """\
    import haiku as hk
    import jax


    class Block(hk.Module):
        def __call__(self, x):
            h = hk.Linear(4)(x)
            if x.sum() > 0:
                h = jax.nn.relu(h)
            return h


    net = hk.transform(lambda x: Block()(x))


    @jax.jit
    def predict(params, x):
        return net.apply(params, None, x)
    """
)


@pytest.mark.slow
def test_a_haiku_module_method_is_traced_inside_hk_transform(tmp_path):
    pytest.importorskip("haiku")
    _write(tmp_path, {"model.py": HAIKU_MODEL})
    found = _verdicts(_jaxlint(tmp_path, "--verify", "--format", "json", "."))[("model.py", 8, "JAX101")]
    assert found["verdict"] == "CONFIRMED", found
    assert found["verdict_reason"].startswith("TracerBoolConversionError at line 8")


MODEL_NEEDS_FEATURES = THROUGH_CALLER.split("\n\n@jax.jit")[0] + "\n"
CALLER_MODULE = textwrap.dedent(
    """\
    import jax

    from model import MLP


    @jax.jit
    def predict(params, x):
        return MLP(4).apply(params, x)


    if __name__ == "__main__":
        import jax.numpy as jnp

        x = jnp.ones((2, 3))
        try:
            predict(MLP(4).init(jax.random.key(0), x), x)
        except Exception as error:
            print("caught", type(error).__name__)
    """
)


@pytest.mark.slow
def test_a_line_is_reached_through_another_module_s_function_with_recorded_calls(tmp_path):
    _write(tmp_path, {"model.py": MODEL_NEEDS_FEATURES, "train.py": CALLER_MODULE})
    before = _verdicts(_jaxlint(tmp_path, "--verify", "--format", "json", "."))[("model.py", 11, "JAX101")]
    assert before["verdict"] == "NOT_RUN", before  # MLP() cannot be made, nothing calls it yet

    run = _jaxlint(tmp_path, "--verify", "--run", f"{sys.executable} train.py")
    assert "caught TracerBoolConversionError" in run.stdout, run.stdout + run.stderr
    after = _verdicts(_jaxlint(tmp_path, "--verify", "--format", "json", "."))[("model.py", 11, "JAX101")]
    assert after["verdict"] == "CONFIRMED", after
    assert after["verdict_reason"].startswith("TracerBoolConversionError at line 11")
    assert "reached through 'train:predict'" in after["verdict_reason"]
