"""Issue 38, item 3: what `jaxlint --verify --run CMD` sees at a line with no static finding of its rule, it
reports as a finding of its own, FOUND BY RUNNING: a printed tracer (JAX201), a tracer formatted into
jax.debug.print (JAX203), logging while JAX traces a jitted function (JAX202), a leaked tracer the program
then hits (UnexpectedTracerError, JAX105), another JAX error that ends the program (JAX900), a function over
the compile budget because it is jitted anew for each call (JAX401). Each through the real command, on a
program whose traced function is reached dynamically (`jax.jit(globals()["body"])`), so that no static rule
flags it, and each with a clean twin that reports nothing."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import exact_recompiles

HEADER = textwrap.dedent(
    """\
    import logging

    import jax
    import jax.numpy as jnp
    from jax.experimental import checkify

    log = logging.getLogger("prog")
    SAVED = []


    """
)

# name: (the bad program's body, its clean twin's, the line of the finding in the bad one)
CASES = {
    "JAX201": (
        'def body(x):\n    print("x is", x)\n    return x + 1\n',
        'def body(x):\n    print("x has shape", x.shape)\n    return x + 1\n',
        12,
    ),
    "JAX203": (
        'def body(x):\n    jax.debug.print(f"x is {x}")\n    return x + 1\n',
        'def body(x):\n    jax.debug.print("x is {}", x)\n    return x + 1\n',
        12,
    ),
    "JAX202": (
        'def body(x):\n    log.warning("tracing body")\n    return x + 1\n',
        'def body(x):\n    return x + 1\n\n\nlog.warning("calling body")\n',
        12,
    ),
    "JAX105": (
        "def body(x):\n    SAVED.append(x)\n    return x + 1\n",
        "def body(x):\n    SAVED.append(x.shape[0])\n    return x + 1\n",  # a size is no tracer
        None,  # where the program uses the leaked tracer: the last line
    ),
}
CALLS = 'step = jax.jit(globals()["body"])\nstep(jnp.ones(3))\nstep(jnp.ones(3))\n'
USE_SAVED = "print(jnp.sin(SAVED[0]))\n"


def _run(tmp_path: Path, source: str) -> tuple[int, list[dict]]:
    (tmp_path / "prog.py").write_text(source)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxlint",
            "--verify",
            "--format",
            "json",
            "--run",
            f"{shlex.quote(sys.executable)} prog.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(result.stdout)
    return result.returncode, report["static_findings"]


def _stores_watched() -> bool:
    return sys.version_info >= (3, 12) and exact_recompiles()


def _seen(verdicts: list[dict]) -> list[tuple[str, int, str]]:
    return [(v["code"], v["line"], v["status"]) for v in verdicts if v["status"] != "NOT OBSERVED"]


@pytest.mark.parametrize("code", sorted(CASES))
@pytest.mark.parametrize("twin", [False, True], ids=["bad", "clean twin"])
def test_an_observation_on_a_line_no_static_finding_names_is_found_by_running(tmp_path, code, twin):
    bad, clean, line = CASES[code]
    source = HEADER + (clean if twin else bad) + CALLS + (USE_SAVED if code == "JAX105" else "")
    exit_code, verdicts = _run(tmp_path, source)
    if twin:
        assert _seen(verdicts) == [], verdicts
        assert exit_code == 0
        return
    if code == "JAX105":
        # the use of the leaked tracer, which raised; with JAX's per-call jit hook (0.9 on) also the statement
        # that stored it, seen holding a tracer after the trace
        stored = [("JAX105", 12, "FOUND BY RUNNING")] if _stores_watched() else []
        used = ("JAX105", len(source.splitlines()), "FOUND BY RUNNING")
        assert _seen(verdicts) == [*stored, used], verdicts
        assert verdicts[-1]["error"] == "UnexpectedTracerError"
        assert exit_code != 0  # the program's own failure
        return
    assert _seen(verdicts) == [(code, line, "FOUND BY RUNNING")], verdicts
    found = verdicts[0]
    assert found["path"] == "prog.py" and found["name"]
    assert exit_code == 1


@pytest.mark.parametrize(
    "stores",
    [
        ("SAVED.append(x)",),
        ("SAVED.append(x.shape[0])",),  # the clean twin: no tracer stored
        ("SAVED.append(x.shape[0])", "SAVED.append(x)"),  # two store there: only the one that leaked is named
    ],
    ids=["leak", "clean twin", "two storers"],
)
def test_a_tracer_stored_in_a_global_is_a_leak_found_by_running(tmp_path, stores):
    if not _stores_watched():
        pytest.skip(
            "stores are watched with sys.monitoring (Python 3.12 on) in JAX's per-call jit hook (0.9 on)"
        )
    body = "".join(f"    {store}\n" for store in stores)
    source = HEADER + f"def body(x):\n{body}    return x + 1\n" + CALLS + "print(len(SAVED))\n"
    exit_code, verdicts = _run(tmp_path, source)
    if "SAVED.append(x)" in stores:
        line = 11 + len(stores)
        assert _seen(verdicts) == [("JAX105", line, "FOUND BY RUNNING")], verdicts
        assert verdicts[0]["text"] == "left a tracer in global 'SAVED' after the trace"
        assert exit_code == 1
    else:
        assert _seen(verdicts) == [] and exit_code == 0, verdicts


CHECKED = textwrap.dedent(
    """\
    def positive_log(x):
        checkify.check(jnp.all(x > 0), "x must be positive")
        return jnp.log(x)


    err, out = checkify.checkify(positive_log)(SIGN * jnp.ones(3))
    err.throw()
    """
)


@pytest.mark.parametrize("sign", [-1, 1], ids=["bad", "clean twin"])
def test_another_jax_error_that_ends_the_program_is_a_runtime_error_found_by_running(tmp_path, sign):
    source = HEADER + f"SIGN = {sign}\n\n\n" + CHECKED
    exit_code, verdicts = _run(tmp_path, source)
    if sign > 0:
        assert _seen(verdicts) == [] and exit_code == 0, verdicts
        return
    assert _seen(verdicts) == [("JAX900", len(source.splitlines()), "FOUND BY RUNNING")], verdicts
    assert verdicts[0]["error"] == "JaxRuntimeError"


def test_a_caught_jax_error_is_not_a_finding(tmp_path):
    """A program may try a trace and fall back on purpose: only an error nothing caught is one the run hit."""
    source = (
        HEADER
        + "SIGN = -1\n\n\n"
        + CHECKED.replace("err.throw()", "try:\n    err.throw()\nexcept ValueError:\n    pass")
    )
    exit_code, verdicts = _run(tmp_path, source)
    assert _seen(verdicts) == [] and exit_code == 0, verdicts


@pytest.mark.parametrize("built_once", [False, True], ids=["bad", "clean twin"])
def test_a_function_jitted_anew_over_the_budget_is_found_by_running(tmp_path, built_once):
    if not exact_recompiles():
        pytest.skip("a retrace's reason and call site need JAX's per-call jit hook (JAX 0.9 on)")
    loop = (
        "double = jit(lambda x: x * 2)\nfor i in range(12):\n    double(jnp.ones(3))\n"
        if built_once
        else "for i in range(12):\n    jit(lambda x: x * 2)(jnp.ones(3))\n"
    )
    source = HEADER + 'jit = vars(jax)["jit"]\n' + loop
    exit_code, verdicts = _run(tmp_path, source)
    if built_once:
        assert _seen(verdicts) == [] and exit_code == 0, verdicts
        return
    assert _seen(verdicts) == [("JAX401", len(source.splitlines()), "FOUND BY RUNNING")], verdicts
    assert verdicts[0]["compiles"] == 12
    assert exit_code == 1


def test_a_static_finding_on_the_line_takes_the_evidence_instead(tmp_path):
    """Merged, not reported twice: the static JAX201 of a print in a decorated jitted function is CONFIRMED."""
    source = (
        HEADER + '@jax.jit\ndef body(x):\n    print("x is", x)\n    return x + 1\n\n\nbody(jnp.ones(3))\n'
    )
    exit_code, verdicts = _run(tmp_path, source)
    assert _seen(verdicts) == [("JAX201", 13, "CONFIRMED")], verdicts
    assert exit_code == 0  # a confirmed static finding does not fail `--run`, as before


def test_the_user_s_selection_applies_to_what_the_run_found(tmp_path):
    bad, _, _ = CASES["JAX201"]
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nignore = ["JAX201"]\n')
    exit_code, verdicts = _run(tmp_path, HEADER + bad + CALLS)
    assert _seen(verdicts) == [] and exit_code == 0, verdicts


# Issue 38, item 4: a verdict that the last run contradicts says so. The program's own call takes the first
# branch (size 3) or reaches the traced `if` (size 4); the example declared for `--verify` does the other.
BRANCHES = textwrap.dedent(
    """\
    import sys

    import jax
    import jax.numpy as jnp


    @jax.jit
    def step(x):
        if x.shape[0] == 3:
            return x * 2
        if x.sum() > 0:
            return x
        return -x


    step(jnp.ones(int(sys.argv[1])))
    """
)


def _verify_after_run(tmp_path: Path, run_size: int, example_size: int) -> dict:
    (tmp_path / "prog.py").write_text(BRANCHES)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.jaxlint.verify.examples]\n"prog:step" = "jnp.ones({example_size})"\n'
    )
    command = f"{shlex.quote(sys.executable)} prog.py {run_size}"
    subprocess.run(
        [sys.executable, "-m", "jaxlint", "--verify", "--run", command],
        cwd=tmp_path,
        capture_output=True,
        timeout=600,
    )
    result = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--verify", "--format", "json", "prog.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (row,) = [r for r in json.loads(result.stdout) if r["code"] == "JAX101"]
    return row


def test_a_finding_not_reproduced_that_the_run_hit_is_confirmed_and_says_both(tmp_path):
    row = _verify_after_run(tmp_path, run_size=4, example_size=3)
    assert row["line"] == 11 and row["verdict"] == "CONFIRMED", row
    assert row["verdict_reason"].startswith(
        "`--verify --run` saw it: TracerBoolConversionError raised at line 11"
    )
    assert "by tracing here, not reproduced" in row["verdict_reason"]


def test_a_confirmed_finding_in_a_function_the_run_traced_clean_says_the_run_contradicts_it(tmp_path):
    if not exact_recompiles():
        pytest.skip("every error a trace raises is recorded with JAX's per-call jit hook (JAX 0.9 on)")
    row = _verify_after_run(tmp_path, run_size=3, example_size=4)
    assert row["verdict"] == "CONFIRMED", row
    assert "the run contradicts it: `--verify --run` traced 'step' 1 time" in row["verdict_reason"]
    text = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--verify", "prog.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert "[CONFIRMED: TracerBoolConversionError; the run contradicts it (--verbose)]" in text.stdout


@pytest.mark.parametrize("run_size", [3, 4])
def test_no_contradiction_where_the_run_and_the_trace_agree_or_the_file_changed(tmp_path, run_size):
    """The twins: the example does what the run did; and a file edited after the run is not judged by it."""
    row = _verify_after_run(tmp_path, run_size=run_size, example_size=run_size)
    assert "the run" not in row["verdict_reason"], row
    assert row["verdict"] == ("NOT_REPRODUCED" if run_size == 3 else "CONFIRMED")
    if run_size == 4:
        (tmp_path / "prog.py").write_text(BRANCHES + "\n")
        (tmp_path / "pyproject.toml").write_text(
            '[tool.jaxlint.verify.examples]\n"prog:step" = "jnp.ones(3)"\n'
        )
        result = subprocess.run(
            [sys.executable, "-m", "jaxlint", "--verify", "--format", "json", "prog.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        (row,) = [r for r in json.loads(result.stdout) if r["code"] == "JAX101"]
        assert row["verdict"] == "NOT_REPRODUCED" and "--run" not in row["verdict_reason"], row
