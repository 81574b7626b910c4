"""The calls a module's own top-level code makes, kept live in the verify child (issue 14 item 3): a state
whose static part holds closures (a flax `TrainState`) is verified with no declared example; code above a
top-level statement that fails is still verified; `--run` says why it could not record such calls."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest
from test_verify_support import FIXTURES, marked

from jaxlint.runtime.recompiles.call_records import encode_call_or_reason
from jaxlint.runtime.verify import verify_findings

pytestmark = pytest.mark.slow


def _verdicts(name):
    cases = marked(name)
    report = verify_findings([c.finding for c in cases], root=FIXTURES, timeout=120)
    return {c.finding.line: (c.expect, report.verdicts[c.finding]) for c in cases}


@pytest.mark.usefixtures("needs_jit_hook")
def test_a_state_with_closures_in_its_static_part_is_verified_with_the_top_level_call():
    verdicts = _verdicts("live_closure_state.py")
    for line, (_expect, result) in verdicts.items():
        assert result.verdict == "CONFIRMED", (line, result.reason)
    printed = verdicts[37][1]
    assert "the call the module's top-level code made at line 60: state: State(float32[3])" in printed.reason
    assert "runs once per compile" in verdicts[38][1].reason  # observed with two calls of the live state
    # A function made by a factory is traced as called, with its real closure.
    assert "made at line 61: x: float32[4,3]" in verdicts[51][1].reason


@pytest.mark.skipif(importlib.util.find_spec("flax") is None, reason="flax is not installed")
@pytest.mark.usefixtures("needs_jit_hook")
def test_a_flax_train_state_is_verified_with_the_top_level_call():
    ((_expect, result),) = _verdicts("live_flax_state.py").values()
    assert result.verdict == "CONFIRMED", result.reason
    assert "made at line 32: state: TrainState(" in result.reason


@pytest.mark.usefixtures("needs_jit_hook")
def test_functions_above_a_failing_top_level_statement_are_still_verified():
    verdicts = _verdicts("live_import_fails.py")
    called = verdicts[9][1]  # called by the top-level code before it failed: that call is used
    assert called.verdict == "CONFIRMED" and "made at line 19: x: float32[3]" in called.reason
    assert verdicts[15][1].verdict == "CONFIRMED"  # never called: the search's own inputs
    below = verdicts[26][1]
    assert below.verdict == "NOT_RUN" and "importing the module failed: FileNotFoundError" in below.reason


def _make():
    def closure(p):
        return p

    return closure


@pytest.mark.usefixtures("needs_jit_hook")
def test_a_call_whose_static_part_holds_a_closure_is_not_recorded_and_says_why():
    import jax

    unkept = encode_call_or_reason(jax, (jax.numpy.ones(2), _make()), {}, (1,), (), ["x", "apply_fn"])
    assert unkept["unkept"].startswith("'apply_fn' holds function '_make.<locals>.closure'")
    assert "cannot be rebuilt in another process" in unkept["unkept"]


# The closure holds a lock: neither JSON nor cloudpickle can keep it.
SCRIPT = textwrap.dedent(
    """\
    import threading

    import jax
    import jax.numpy as jnp


    @jax.tree_util.register_pytree_node_class
    class State:
        def __init__(self, params, apply_fn):
            self.params, self.apply_fn = params, apply_fn

        def tree_flatten(self):
            return (self.params,), self.apply_fn

        @classmethod
        def tree_unflatten(cls, apply_fn, children):
            return cls(children[0], apply_fn)


    @jax.jit
    def train_step(state, x):
        out = state.apply_fn(state.params, x)
        print(out)
        return out


    if __name__ == "__main__":
        lock = threading.Lock()
        train_step(State(jnp.ones(3), lambda p, x: p * x if lock else p), jnp.ones(3))
    """
)


@pytest.mark.usefixtures("needs_jit_hook")
def test_run_and_a_later_verify_name_the_argument_that_could_not_be_recorded(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (project / "train.py").write_text(SCRIPT)

    def jaxlint(*args):
        command = [sys.executable, "-m", "jaxlint", *args]
        return subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600)

    run = jaxlint("--verify", "--run", f"{sys.executable} train.py")
    assert "could not record the calls of" in run.stdout, run.stdout + run.stderr
    assert "train_step: 'state' holds function '<lambda>' in its static part" in run.stdout
    assert "cloudpickle cannot pickle it" in run.stdout or "cloudpickle is not installed" in run.stdout
    assert "the way out: have the module's top-level code make such a call" in run.stdout
    verify = jaxlint("--verify", "--format", "json", ".")
    (verdict,) = [f for f in json.loads(verify.stdout) if f["code"] == "JAX201"]
    assert verdict["verdict"] == "NOT_RUN", verdict
    reason = verdict["verdict_reason"]
    assert "`jaxlint --verify --run` saw calls of it but could not record them: 'state' holds" in reason
    assert '`[tool.jaxlint.verify.examples]` "train:train_step"' in reason


def _notebook(cells):
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "metadata": {},
                    "source": source,
                    "outputs": [],
                    "execution_count": None,
                }
                for source in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


@pytest.mark.usefixtures("needs_jit_hook")
def test_a_notebook_cell_that_fails_on_import_leaves_the_earlier_cells_verified(tmp_path):
    from jaxlint import lint_paths

    notebook = tmp_path / "train.ipynb"
    notebook.write_text(
        _notebook(
            [
                "import jax\n\n\n@jax.jit\ndef step(x):\n    print(x)\n    return x * 2\n",
                "%matplotlib inline\nstep(jax.numpy.ones((2, 2)))\n",
                "rows = open('/nonexistent/jaxlint/data.csv').read()\n",
                "@jax.jit\ndef later(x):\n    print(x)\n    return x\n",
            ]
        )
    )
    findings = [f for f in lint_paths([str(notebook)]) if f.code == "JAX201"]
    report = verify_findings(findings, root=tmp_path, timeout=120)
    by_cell = {f.cell: report.verdicts[f] for f in findings}
    assert by_cell[1].verdict == "CONFIRMED", by_cell[1].reason
    assert "top-level code made at cell 2, line 2: x: float32[2,2]" in by_cell[1].reason
    assert by_cell[4].verdict == "NOT_RUN"
    assert "importing the module failed: FileNotFoundError" in by_cell[4].reason
    assert "(cell 3, line 1)" in by_cell[4].reason


@pytest.mark.usefixtures("needs_jit_hook")
def test_live_calls_keep_shapes_not_device_buffers_and_static_values_as_they_are(tmp_path):
    import importlib.util

    import jax
    import jax.numpy as jnp

    from jaxlint.runtime.verify.child.live_calls import LiveCalls

    path = tmp_path / "live_module.py"
    path.write_text(
        "import functools\nimport jax\n\n\n"
        '@functools.partial(jax.jit, static_argnums=2)\ndef f(x, key, n):\n    return x["w"] * n\n'
    )
    spec = importlib.util.spec_from_file_location("live_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    key = jax.random.key(1)
    with LiveCalls(jax, str(path)) as live:
        module.f({"w": jnp.ones((2, 3))}, key, 3)
    module.f({"w": jnp.ones(2)}, key, 4)  # after the import: not kept
    ((call,),) = live.calls.values()
    x, kept_key, n = call.args
    assert x == {"w": jax.ShapeDtypeStruct((2, 3), jnp.float32)}
    assert kept_key is key and n == 3
