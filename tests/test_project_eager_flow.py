"""Project mode: lax control flow called outside jit on a function made per call (or a jitted inner def made and
called per call), in a function (or method) that another module calls on every iteration of a loop (JAX401
across modules). Each call compiles the body again:
found in the callee's module at the lax call, through the real command, as `.py` modules and from a notebook;
the twins (the body defined once, the function called once, the loop in jitted code) are silent. Each scenario
is run once on real JAX, counting the body's traces (one per compile).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

from tests.conftest import notebook
from tests.test_project import write
from tests.test_project_recall import _lint

SAMPLERS = """
    import jax
    import jax.numpy as jnp
    from jax import lax

    TRACES = []


    def _shared_body(carry, key):
        TRACES.append(1)
        return carry + jax.random.normal(key, carry.shape), carry


    class Proposal:
        def __init__(self, scale):
            self.scale = scale

        def sample(self, key, x, n):
            def body(carry, key):
                TRACES.append(1)
                return carry + self.scale * jax.random.normal(key, carry.shape), carry

            return lax.scan(body, x, jax.random.split(key, n))[1]

        def sample_shared(self, key, x, n):
            return lax.scan(_shared_body, x, jax.random.split(key, n))[1]


    def relax(x, rate):
        return lax.fori_loop(0, 5, lambda i, c: c * rate + _tick(), x)


    def _tick():
        TRACES.append(1)
        return 0.0


    def collect(body_fun, upper, init_val):
        @jax.jit
        def loop_fn():
            TRACES.append(1)
            return lax.fori_loop(0, upper, lambda i, c: body_fun(c), init_val)

        return loop_fn()
"""

HEAD = """
    import jax
    import jax.numpy as jnp
    from samplers import TRACES, Proposal, collect, relax

    proposal = Proposal(0.5)
    key = jax.random.key(0)
"""

RUNS = {
    "method": (
        "for i in range(3):\n    proposal.sample(jax.random.key(i), jnp.zeros(2), 4)",
        [("samplers.py", 22, "JAX401")],
    ),
    "inner jit": (
        "for i in range(3):\n    collect(jnp.sin, 3, jnp.full(2, float(i)))",
        [("samplers.py", 38, "JAX401")],
    ),
    "function": ("for r in (0.1, 0.2, 0.3):\n    relax(jnp.ones(2), r)", [("samplers.py", 29, "JAX401")]),
}
# twin -> how often its body is traced: once, or (the loop unrolled in one jitted function) once per unrolled
# call, all in the one trace of `many` that compiles once
TWINS = {
    "for i in range(3):\n    proposal.sample_shared(jax.random.key(i), jnp.zeros(2), 4)": 1,
    "proposal.sample(key, jnp.zeros(2), 4)": 1,
    "collect(jnp.sin, 3, jnp.ones(2))": 1,
    "@jax.jit\ndef many(x):\n    for _ in range(3):\n        x = relax(x, 0.5)\n    return x\n\n\nmany(jnp.ones(2))": 3,
}

_COUNT = """
import os, runpy, sys
sys.path.insert(0, os.getcwd())
runpy.run_path("main.py")
from samplers import TRACES
print(len(TRACES))
"""


def _main(run: str) -> str:
    return dedent(HEAD).lstrip() + run + "\n"


def _traces(root: Path, run: str) -> int:
    write(root, {"samplers.py": SAMPLERS, "main.py": _main(run)})
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", _COUNT], cwd=root, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_eager_control_flow_run_in_another_modules_loop(tmp_path: Path) -> None:
    for key, (run, expected) in RUNS.items():
        write(tmp_path, {"samplers.py": SAMPLERS, "main.py": _main(run)})
        assert _lint(tmp_path) == expected, key
    for twin in TWINS:
        write(tmp_path, {"samplers.py": SAMPLERS, "main.py": _main(twin)})
        assert _lint(tmp_path) == [], twin
    (tmp_path / "main.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(HEAD, RUNS["method"][0])})
    assert _lint(tmp_path) == RUNS["method"][1]


def test_eager_control_flow_run_in_another_modules_loop_on_jax(tmp_path: Path) -> None:
    """Three iterations compile the made-per-call body three times (one trace each); the twins compile it once."""
    for key, (run, _) in RUNS.items():
        assert _traces(tmp_path / key, run) == 3, key
    for i, (twin, traces) in enumerate(TWINS.items()):
        assert _traces(tmp_path / f"twin{i}", twin) == traces, twin
