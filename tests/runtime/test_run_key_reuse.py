"""Issue 38, item 3: `--run` reports a key reused across calls (the same key bits consumed twice: by a jitted
function whose trace consumes that argument, or by an eager `jax.random` sampler or split) as JAX301, at the
consuming call's line, CONFIRMED where a static JAX301 covers the line and FOUND BY RUNNING otherwise; the
clean twins (the key split each step) report nothing. Through the real command (`jaxlint --verify --run`),
on a plain program and on the issue's flax-tutorial-shaped project (tests/fixtures/verify/flax_project, and
its plain-JAX twin jax_project) with its two crashing bugs fixed."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from test_verify_support import FIXTURES

from jaxlint.runtime.recompiles.key_fingerprints import consumed_inputs

REUSE = textwrap.dedent(
    """\
    import functools

    import jax
    import jax.numpy as jnp


    @jax.jit
    def step(w, key):
        return w + jax.random.normal(key, w.shape)


    @jax.jit
    def folded_step(w, key, i):
        return w + jax.random.normal(jax.random.fold_in(key, i), w.shape)


    @functools.partial(jax.jit, static_argnames="train")
    def maybe_noisy(w, key, train):
        return w + jax.random.normal(key, w.shape) if train else w


    @jax.jit
    def evaluate(state, x):
        return jnp.sum(state["w"] * x)


    def draw(key):
        return jax.random.uniform(key, (3,))


    def main():
        w = jnp.zeros(3)
        key, raw = jax.random.key(0), jax.random.PRNGKey(1)
        base, unused, eager = jax.random.key(2), jax.random.key(3), jax.random.key(4)
        state = {"w": w, "key": jax.random.key(5)}
        rngs = {"noise": jax.random.key(8), "quiet": jax.random.key(9)}
        for i in range(3):
            w = step(w, key)
            w = step(w, raw)
            w = folded_step(w, base, i)
            w = maybe_noisy(w, unused, train=False)
            evaluate(state, w)
            w = step(w, rngs["noise"])
            w = step(w, rngs["quiet"])  # noqa: JAX301
            w = w + draw(eager)
        twice = jax.random.key(6)
        a = jax.random.normal(twice, (2,))
        b = jax.random.normal(twice, (2,))
        print(w, a, b)


    if __name__ == "__main__":
        main()
    """
)

# The clean twin: each reused key split every step (or a fresh one).
FIXES = {
    "        w = step(w, key)\n": "        key, sub = jax.random.split(key)\n        w = step(w, sub)\n",
    "        w = step(w, raw)\n": "        raw, sub = jax.random.split(raw)\n        w = step(w, sub)\n",
    '        w = step(w, rngs["noise"])\n': '        rngs["noise"], sub = jax.random.split(rngs["noise"])\n'
    "        w = step(w, sub)\n",
    "        w = w + draw(eager)\n": "        eager, sub = jax.random.split(eager)\n        w = w + draw(sub)\n",
    "    b = jax.random.normal(twice, (2,))\n": "    b = jax.random.normal(jax.random.key(7), (2,))\n",
}


def _line(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def _run(cwd: Path, script: str) -> tuple[int, dict]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxlint",
            "--verify",
            "--format",
            "json",
            "--run",
            f"{shlex.quote(sys.executable)} {script}",
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "instrumentation error" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def _expected_exit(report: dict) -> int:
    """The program ran clean: `--run` fails only for a bug no static finding named (FOUND BY RUNNING)."""
    return 1 if any(v["status"] == "FOUND BY RUNNING" for v in report["static_findings"]) else 0


def _observed_reuse(report: dict) -> dict[tuple[str, int], dict]:
    return {
        (v["path"], v["line"]): v
        for v in report["static_findings"]
        if v["code"] == "JAX301" and v["status"] != "NOT OBSERVED"
    }


@pytest.mark.parametrize("fixed", [False, True])
def test_keys_reused_across_calls_are_reported_at_the_consuming_call(tmp_path, fixed):
    source = REUSE
    if fixed:
        for bad, good in FIXES.items():
            source = source.replace(bad, good)
    (tmp_path / "prog.py").write_text(source)
    code, report = _run(tmp_path, "prog.py")
    assert report["exit_code"] == 0 and code == _expected_exit(report)
    observed = _observed_reuse(report)
    if fixed:
        assert observed == {}, observed
        return
    line = lambda text: _line(source, text)  # noqa: E731
    loop = line("for i in range(3):")
    # A static JAX301 covers these lines: the run confirms them.
    for text in (
        "w = step(w, key)",
        "w = step(w, raw)",
        "w = w + draw(eager)",
        "b = jax.random.normal(twice",
    ):
        assert observed.pop(("prog.py", line(text)))["status"] == "CONFIRMED", text
    # A key held in a dict: no static finding, found by running, at the call, naming the loop.
    noise = observed.pop(("prog.py", line('w = step(w, rngs["noise"])')))
    assert noise["status"] == "FOUND BY RUNNING" and noise["observed"] == "key-reuse"
    assert f"loop at prog.py:{loop}" in noise["text"] and "'step'" in noise["text"]
    # Nothing else: not a key folded with the step, one a static flag leaves unconsumed, one a jitted
    # function is handed and does not use, nor a reuse the user silenced with a noqa comment.
    assert observed == {}, observed
    unconsumed = [v for v in report["static_findings"] if v["line"] == line("w = maybe_noisy(")]
    assert [v["status"] for v in unconsumed] == ["NOT OBSERVED"]


def _variant(tmp_path: Path, name: str) -> Path:
    """The issue's project with its two crashing bugs fixed (the in-place update, the traced `if`); the
    plain-JAX twin gets the flax one's dropout: the same key, closed over by the nested loss, every step."""
    project = tmp_path / name
    shutil.copytree(FIXTURES / name, project)
    utils = project / "proj" / "utils.py"
    utils.write_text(utils.read_text().replace("x[:, -1] = 0.0", "x = x.at[:, -1].set(0.0)"))
    model = project / "proj" / "model.py"
    model.write_text(model.read_text().replace("if jnp.mean(", "if jnp.ndim("))
    if name == "jax_project":
        train = (project / "train.py").read_text()
        train = train.replace(
            "def train_step(params, batch, labels):", "def train_step(params, batch, labels, dropout_key):"
        )
        train = train.replace(
            "        logits = MODELS[",
            "        batch_kept = batch * jax.random.bernoulli(dropout_key, 0.9, batch.shape)\n"
            "        logits = MODELS[",
        ).replace('MODELS["mlp"](p, batch)', 'MODELS["mlp"](p, batch_kept)')
        train = train.replace(
            "    for _ in range(3):\n", "    dropout_key = jax.random.key(1)\n    for _ in range(3):\n"
        )
        train = train.replace(
            "train_step(params, batch, labels)", "train_step(params, batch, labels, dropout_key)"
        )
        (project / "train.py").write_text(train)
    return project


@pytest.mark.parametrize(
    "name, twin",
    [
        ("flax_project", None),
        ("flax_project", "split"),
        ("flax_project", "fold_in"),
        ("jax_project", None),
        ("jax_project", "split"),
    ],
)
def test_the_issue_s_dropout_key_passed_every_step_is_observed(tmp_path, name, twin):
    if name == "flax_project":
        pytest.importorskip("flax")
        pytest.importorskip("optax")
    project = _variant(tmp_path, name)
    train = project / "train.py"
    call = next(line for line in train.read_text().splitlines() if "= train_step(" in line)
    if twin == "split":  # the clean twin: a new dropout key each step
        train.write_text(
            train.read_text().replace(
                call, f"        dropout_key, step_key = jax.random.split(dropout_key)\n{call}"
            )
        )
        train.write_text(train.read_text().replace(call, call.replace("dropout_key)", "step_key)")))
    elif twin == "fold_in":  # flax's own recipe: the same key, folded with the step inside the jitted step
        train.write_text(
            train.read_text().replace(
                'rngs={"dropout": dropout_key}',
                'rngs={"dropout": jax.random.fold_in(dropout_key, state.step)}',
            )
        )
    code, report = _run(project, "train.py")
    assert code == _expected_exit(report), report
    source = train.read_text()
    observed = _observed_reuse(report)
    if twin:
        assert observed == {}, observed
        return
    at = _line(source, "= train_step(")
    assert list(observed) == [("train.py", at)], observed
    verdict = observed[("train.py", at)]
    assert verdict["status"] == "CONFIRMED" and verdict["observed"] == "key-reuse"
    assert f"for loop at train.py:{_line(source, 'for _ in range(3):')}" in verdict["text"]


def _flat(fun, *args):
    jaxpr = jax.make_jaxpr(fun)(*args).jaxpr
    return consumed_inputs(jaxpr, _key_like)


def _key_like(var) -> bool:
    aval = var.aval
    if jax.dtypes.issubdtype(aval.dtype, jax.dtypes.prng_key):
        return True
    return aval.dtype == jnp.uint32 and aval.shape[-1:] in ((2,), (4,))


KEY = jax.random.key(0)
RAW = jax.random.PRNGKey(0)


@pytest.mark.parametrize(
    "fun, args, consumed",
    [
        (lambda k: jax.random.normal(k, (2,)), (KEY,), {0}),
        (lambda k: jax.random.normal(k, (2,)), (RAW,), {0}),  # a raw key, wrapped by jax.random
        (lambda k: k, (KEY,), set()),  # handed back, not consumed
        (lambda k: k + 1, (RAW,), set()),  # uint32 data that never reaches jax.random
        (lambda k, i: jax.random.normal(jax.random.fold_in(k, i), ()), (KEY, 3), set()),  # per-step data
        (lambda k: jax.random.normal(jax.random.fold_in(k, 7), ()), (KEY,), {0}),  # flax's make_rng
        (lambda a, b: jax.random.split(b), (KEY, KEY), {1}),
        (lambda k: jax.jit(lambda q: jax.random.bits(q))(k), (KEY,), {0}),  # a nested jit
        (lambda k: jax.lax.cond(True, lambda q: jax.random.bits(q), lambda q: jnp.uint32(0), k), (KEY,), {0}),
        (
            lambda k: jax.lax.scan(lambda c, _: (jax.random.split(c)[0], None), k, None, length=2)[0],
            (KEY,),
            {0},
        ),
        (lambda keys: jax.random.normal(keys[0], ()), (jax.random.split(KEY, 2),), {0}),
    ],
)
def test_which_key_inputs_a_trace_consumes(fun, args, consumed):
    count, found = _flat(fun, *args)
    assert count == sum(1 for a in args if hasattr(a, "dtype"))
    assert found == consumed
