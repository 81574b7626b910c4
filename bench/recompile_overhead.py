"""What recompile counting costs a real run: `jaxlint --verify --run` against the same command bare.

    python bench/recompile_overhead.py [--repeats 5] [--steps 3000]

Three workloads, each run as its own Python process, bare and instrumented (through `run_command`,
the code path of `--run`), alternating, `--repeats` times; medians are reported:

- train: an MLP training loop, many calls and few compiles (two batch shapes, an eval step);
- dispatch: a tiny jitted function called in a tight loop, where per-call overhead would show most;
- recompile: jax.jit of a lambda in a loop, a compile per call: the cost of hooks on each trace;
- keys: a dropout-style step taking a fresh key each call (split in the loop) and an eager sampler per
  call, where key fingerprinting (key_fingerprints.py) works on every call.

The workload times its own loop (steady state, after one warm-up call; wall and CPU time) and the
process is timed from outside (start-up, import, compiles; wall, and CPU time of the command's
processes from rusage, which a busy shared machine disturbs less). Ratios are instrumented / bare:
1.00 means no overhead.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

WORKLOAD = r"""
import json, sys, time
import jax, jax.numpy as jnp

kind, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n)) / m**0.5, jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

def loss(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)

@jax.jit
def train_step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)

@jax.jit
def eval_step(params, x, y):
    return loss(params, x, y)

@jax.jit
def tiny(x):
    return x + 1

if kind == "train":
    params = init(jax.random.key(0), [32, 64, 64, 1])
    x, y = jnp.ones((128, 32)), jnp.ones((128, 1))
    last_x, last_y = jnp.ones((40, 32)), jnp.ones((40, 1))
    params = train_step(params, x, y)
    jax.block_until_ready(params)
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(steps):
        params = train_step(params, x, y) if i % 50 else train_step(params, last_x, last_y)
        if i % 500 == 0:
            eval_step(params, x, y)
    jax.block_until_ready(params)
elif kind == "dispatch":
    x = jnp.ones(8)
    tiny(x).block_until_ready()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        x = tiny(x)
    x.block_until_ready()
elif kind == "keys":
    @jax.jit
    def noisy_step(w, x, key):
        keep = jax.random.bernoulli(key, 0.9, x.shape)
        return w - 1e-3 * jnp.mean(jnp.where(keep, x, 0.0) @ w)

    w, x, key = jnp.ones((32, 32)), jnp.ones((128, 32)), jax.random.key(0)
    key, sub = jax.random.split(key)
    noisy_step(w, x, sub).block_until_ready()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        key, sub = jax.random.split(key)
        w = noisy_step(w, x, sub)
    w.block_until_ready()
elif kind == "recompile":
    x = jnp.ones(8)
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(steps):
        x = jax.jit(lambda v: v + i)(x)
    x.block_until_ready()
with open(out, "w") as f:
    json.dump({"loop": time.perf_counter() - start, "loop_cpu": time.process_time() - cpu}, f)
"""

STEPS = {"train": 1.0, "dispatch": 10.0, "recompile": 0.05, "keys": 1.0}  # × --steps


def run_once(script: str, kind: str, steps: int, instrumented: bool) -> dict[str, float]:
    from jaxlint.runtime.recompiles import run_command

    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        result_path = handle.name
    argv = [sys.executable, script, kind, str(steps), result_path]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if instrumented:
        code = run_command(argv, fmt="json", out=io.StringIO(), max_compiles=10**9)
    else:
        code = subprocess.run(argv).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        raise SystemExit(f"{kind} workload failed with exit code {code}")
    with open(result_path) as handle:
        result = json.load(handle)
    os.unlink(result_path)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {**result, "wall": wall, "cpu": cpu}


COLUMNS = ("loop", "loop_cpu", "wall", "cpu")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--only", choices=sorted(STEPS), action="append")
    args = parser.parse_args()
    import jax

    print(
        f"jax {jax.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {jax.default_backend()}"
    )
    print(f"medians of {args.repeats} runs, seconds")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "workload.py")
        with open(script, "w") as handle:
            handle.write(WORKLOAD)
        header = "".join(f"{c + ' bare':>15}{c + ' instr':>15}{'ratio':>7}" for c in COLUMNS)
        print(f"{'workload':<10}{'steps':>6}{header}")
        for kind in args.only or ["train", "dispatch", "recompile", "keys"]:
            steps = max(1, int(args.steps * STEPS[kind]))
            bare, instrumented = [], []
            for _ in range(args.repeats):  # alternate so that machine noise hits both alike
                bare.append(run_once(script, kind, steps, instrumented=False))
                instrumented.append(run_once(script, kind, steps, instrumented=True))
            row = f"{kind:<10}{steps:>6}"
            for column in COLUMNS:
                b = statistics.median(r[column] for r in bare)
                i = statistics.median(r[column] for r in instrumented)
                row += f"{b:>15.3f}{i:>15.3f}{i / b:>7.2f}"
            print(row)


if __name__ == "__main__":
    main()
