"""Project mode: static parameters of another module's jitted functions (JAX402 across modules).

A jitted function with static parameters imported from another module (`@partial(jax.jit, static_argnums=1)`),
or the jitted nested function a factory of another module returns (`run = make_runner(step)`), given an
unhashable value (a list, a JAX array) at a static position: found at the caller, through the real command, as
`.py` modules and from a notebook; the twins (a tuple, the arrays traced) are silent. Each scenario is run once on
real JAX: the positive raises ValueError (non-hashable static argument) at the finding's line, the twin runs clean.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import notebook
from tests.test_project import write
from tests.test_project_recall import _lint, _run

STEPS = """
    from functools import partial

    import jax
    import jax.numpy as jnp


    @partial(jax.jit, static_argnums=1)
    def mlp(x, layers):
        for width in layers:
            x = jnp.tanh(x[..., :width])
        return x


    @partial(jax.jit, static_argnames=("shape",))
    def fill(x, shape):
        return jnp.broadcast_to(x, shape)


    def make_runner(step):
        @partial(jax.jit, static_argnums=(0, 1, 2))
        def run(position, momentum, n):
            for _ in range(n):
                position, momentum = step(position, momentum)
            return position

        return run


    def make_traced_runner(step):
        @partial(jax.jit, static_argnums=(2,))
        def run(position, momentum, n):
            for _ in range(n):
                position, momentum = step(position, momentum)
            return position

        return run
"""

HEAD = """
    import jax.numpy as jnp
    import steps
    from steps import fill, make_runner, make_traced_runner


    def step(p, m):
        return p + m, m
"""

# run -> the finding at the caller: (file, line, code); lines count in main.py (HEAD is 7 lines, then the run)
RUNS = {
    "imported list": ("steps.mlp(jnp.ones(4), [2, 2])", [("main.py", 8, "JAX402")]),
    "imported by name": ("fill(jnp.ones(2), shape=[3, 2])", [("main.py", 8, "JAX402")]),
    "factory": (
        "run = make_runner(step)\nrun(jnp.ones(2), jnp.ones(2), 3)",
        [("main.py", 9, "JAX402")] * 2,  # both arrays
    ),
}
TWINS = [
    "steps.mlp(jnp.ones(4), (2, 2))",
    "fill(jnp.ones(2), shape=(3, 2))",
    "run = make_traced_runner(step)\nrun(jnp.ones(2), jnp.ones(2), 3)",
    "run = make_runner(step)\nrun(1.0, 2.0, 3)",
]


def _main(*runs: str) -> str:
    from textwrap import dedent

    return dedent(HEAD).lstrip() + "\n".join(runs) + "\n"


def test_static_parameters_of_another_modules_jitted_functions(tmp_path: Path) -> None:
    for key, (run, expected) in RUNS.items():
        write(tmp_path, {"steps.py": STEPS, "main.py": _main(run)})
        assert _lint(tmp_path) == expected, key
    for twin in TWINS:
        write(tmp_path, {"steps.py": STEPS, "main.py": _main(twin)})
        assert _lint(tmp_path) == [], twin
    (tmp_path / "main.py").unlink()
    write(tmp_path, {"explore.ipynb": notebook(HEAD, RUNS["factory"][0])})
    assert [code for *_, code in _lint(tmp_path)] == ["JAX402"] * 2


def test_static_parameters_of_another_modules_jitted_functions_on_jax(tmp_path: Path) -> None:
    scenarios = {key: {"steps.py": STEPS, "main.py": _main(run)} for key, (run, _) in RUNS.items()}
    scenarios |= {f"twin {i}": {"steps.py": STEPS, "main.py": _main(twin)} for i, twin in enumerate(TWINS)}
    found = _run(tmp_path, scenarios)
    for key, (_, expected) in RUNS.items():
        assert found[key] == ["ValueError", "main.py", expected[0][1]], key
    assert all(found[f"twin {i}"] is None for i in range(len(TWINS)))
