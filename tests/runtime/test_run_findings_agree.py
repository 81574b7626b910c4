"""Issue 38, item 4: what `--run` counts and the verdicts it gives agree. A JAX401 finding where a jit of a
function defined in another module is built in a loop (`jax.jit(partial(metrics.accuracy, ...))`) is
CONFIRMED with the compile count the table shows, not "not observed recompiling". Through the real command."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import exact_recompiles

METRICS = textwrap.dedent(
    """\
    import jax.numpy as jnp


    def accuracy(logits, labels, axis):
        return jnp.mean(jnp.argmax(logits, axis) == labels)
    """
)

TRAIN = textwrap.dedent(
    """\
    import functools

    import jax
    import jax.numpy as jnp

    from proj.metrics import accuracy


    def main():
        logits = jnp.ones((4, 2))
        labels = jnp.zeros((4,), dtype=jnp.int32)
        for _ in range(12):
            acc = jax.jit(functools.partial(accuracy, axis=-1))(logits, labels)
        print(acc)


    if __name__ == "__main__":
        main()
    """
)


@pytest.mark.parametrize("built_once", [False, True])
def test_a_jit_built_in_a_loop_of_another_module_s_function_is_confirmed_with_its_count(tmp_path, built_once):
    if not exact_recompiles():
        pytest.skip("the call site of a retrace needs JAX's per-call jit hook (JAX 0.9 on)")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "metrics.py").write_text(METRICS)
    train = TRAIN
    if built_once:  # the clean twin: built once, compiled once, and no JAX401 to confirm
        train = train.replace(
            "    for _ in range(12):\n        acc = jax.jit(functools.partial(accuracy, axis=-1))(logits, labels)",
            "    jitted = jax.jit(functools.partial(accuracy, axis=-1))\n    for _ in range(12):\n"
            "        acc = jitted(logits, labels)",
        )
    (tmp_path / "train.py").write_text(train)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxlint",
            "--verify",
            "--format",
            "json",
            "--run",
            f"{shlex.quote(sys.executable)} train.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(result.stdout)
    accuracy = next(f for f in report["functions"] if f["qualname"] == "accuracy")
    verdicts = [v for v in report["static_findings"] if v["code"] == "JAX401"]
    if built_once:
        assert accuracy["compiles"] == 1 and verdicts == []
        return
    assert accuracy["compiles"] == 12
    assert len(verdicts) == 1, report
    assert verdicts[0]["line"] == 13 and verdicts[0]["status"] == "CONFIRMED"
    assert verdicts[0]["compiles"] == 12
