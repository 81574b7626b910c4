"""`--verify` of one flax train step for JAX105 (a loss appended to a global list), through the real command
(issue 27, item 7: goal <= 10 s on CPU). The step takes a flax `TrainState` built by a declared example.

    python bench/verify_flax_leak.py [--checkout PATH] [--repeat 2]

`--checkout` runs another copy of jaxlint (e.g. an older commit unpacked with `git archive`), for a
before/after on the same machine. Prints, per run, the wall time and the CPU time of the command and all
its children (the verify child included once reaped), which a shared machine disturbs less, and the
verdict; the load average is printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STEP = """\
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

PYPROJECT = """\
[tool.jaxlint]

[tool.jaxlint.verify.examples]
"flaxstep:train_step" = "create_state(jax.random.key(0), jnp.ones((4, 3))), jnp.ones((4, 3)), jnp.ones((4, 1))"
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkout", default=str(ROOT), help="the jaxlint checkout to run")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with open("/proc/loadavg") as handle:
        print("load average:", " ".join(handle.read().split()[:3]))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([args.checkout, os.environ.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "pyproject.toml").write_text(PYPROJECT)
        (Path(folder) / "flaxstep.py").write_text(STEP)
        command = [sys.executable, "-m", "jaxlint", "--verify", "--verify-timeout", "600", "--no-cache"]
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(
                [*command, "--format", "json", "."], cwd=folder, env=env, capture_output=True, text=True
            )
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            verdicts = [f["verdict"] for f in json.loads(done.stdout or "[]") if f["code"] == "JAX105"]
            print(f"wall {wall:.1f} s, cpu {cpu:.1f} s, JAX105 {verdicts}")


if __name__ == "__main__":
    main()
