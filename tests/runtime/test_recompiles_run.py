"""`--verify --run`: real commands, real JAX on CPU, counted through the injected sitecustomize."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from jaxlint.finding import Finding
from jaxlint.runtime.recompiles import run_command
from tests.conftest import exact_recompiles

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "fixtures", "recompiles")


def script(name: str) -> str:
    return os.path.join(SCRIPTS, name)


def run(name: str, *args: str, fmt: str = "json", **options):
    out = io.StringIO()
    code = run_command([sys.executable, script(name), *args], fmt=fmt, out=out, **options)
    return code, (json.loads(out.getvalue()) if fmt == "json" else out.getvalue())


def functions(report) -> dict:
    return {f["qualname"]: f for f in report["functions"]}


def test_three_shapes_compile_three_times_with_shape_reasons():
    code, report = run("three_shapes.py")
    assert code == 0
    assert report["exit_code"] == 0 and report["backend"]
    assert report["command"].endswith("three_shapes.py")
    step = functions(report)["step"]
    assert (step["compiles"], step["traces"]) == (3, 3)
    assert step["line"] == 8 and step["path"].endswith("three_shapes.py")  # the def, not the decorator
    if not exact_recompiles():
        pytest.skip("signatures and retrace reasons need JAX's per-call jit hook (JAX 0.9 on)")
    assert step["signatures"] == ["(x: f32[3])", "(x: f32[4])", "(x: f32[5])"]
    assert [r["reason"] for r in step["reasons"]] == ["arg 'x': f32[3] → f32[4]", "arg 'x': f32[4] → f32[5]"]
    assert all(r["callsite"].endswith("three_shapes.py:14") for r in step["reasons"])


def test_static_weak_type_and_dtype_changes():
    code, report = run("retrace_kinds.py")
    assert code == 0
    fns = functions(report)
    assert fns["power"]["compiles"] == 2
    if not exact_recompiles():
        pytest.skip("retrace reasons need JAX's per-call jit hook (JAX 0.9 on)")
    assert [r["reason"] for r in fns["power"]["reasons"]] == ["static 'n': 2 → 3"]
    assert [r["reason"] for r in fns["shift"]["reasons"]] == ["arg 'c': weak f32[] → f32[]"]
    assert [r["reason"] for r in fns["double"]["reasons"]] == ["arg 'x': f32[3] → i32[3]"]
    assert "i32[3]" in fns["double"]["reasons"][0]["jax_hint"]  # JAX's own explanation, kept as a hint


def test_jit_of_a_lambda_in_a_loop():
    code, report = run("lambda_in_loop.py")
    assert code == 0
    fn = functions(report)["train.<locals>.<lambda>"]
    assert (fn["compiles"], fn["traces"]) == (4, 4)
    if not exact_recompiles():
        pytest.skip("signatures and retrace reasons need JAX's per-call jit hook (JAX 0.9 on)")
    assert len(fn["signatures"]) == 1
    assert all(r["reason"].startswith("new function object") for r in fn["reasons"])


def test_nested_jit_is_traced_but_not_compiled():
    code, report = run("nested.py")
    assert code == 0
    fns = functions(report)
    assert (fns["outer"]["traces"], fns["outer"]["compiles"]) == (3, 3)
    assert (fns["inner"]["traces"], fns["inner"]["compiles"]) == (3, 0)
    if not exact_recompiles():
        pytest.skip("retrace reasons need JAX's per-call jit hook (JAX 0.9 on)")
    assert fns["inner"]["reasons"][0]["callsite"].endswith("nested.py:14")


def test_failing_exit_code_is_reported_and_returned():
    code, text = run("exits_two.py", fmt="text")
    assert code == 2
    assert "exit code 2" in text and "the command failed with exit code 2" in text


def test_subprocesses_are_counted_once_each():
    code, report = run("spawns_child.py")
    assert code == 0
    assert len(report["processes"]) == 2
    fns = functions(report)
    assert (fns["parent_step"]["compiles"], fns["parent_step"]["processes"]) == (2, 1)
    assert (fns["child_step"]["compiles"], fns["child_step"]["processes"]) == (3, 1)


def test_budget_fails_the_run_and_can_be_raised_per_function():
    code, text = run("three_shapes.py", fmt="text", max_compiles=2)
    assert code == 1
    assert "OVER BUDGET (3 > 2)" in text and "FAILED: 1 function over the compile budget" in text
    code, _ = run("three_shapes.py", max_compiles=2, budgets={"three_shapes:step": 3})
    assert code == 0


def test_failing_command_wins_over_the_budget():
    code, report = run("exits_two.py", max_compiles=0)
    assert code == 2 and report["over_budget"] == ["__main__:f"]


def test_static_findings_are_confirmed_by_recompiles():
    path = script("lambda_in_loop.py")
    findings = [
        Finding(path, 10, 21, 10, 45, "JAX401", "jit-in-loop", "jax.jit in a loop", function="train"),
        Finding(path, 14, 1, 14, 9, "JAX401", "jit-in-loop", "not this one"),
    ]
    code, text = run("lambda_in_loop.py", fmt="text", static_findings=findings)
    assert code == 0
    assert "CONFIRMED JAX401" in text and "lambda_in_loop.py:10:21" in text and "compiled 4 times" in text
    assert "1 JAX401/JAX402 finding not observed" in text
    _, report = run("lambda_in_loop.py", static_findings=findings)
    assert [f["status"] for f in report["static_findings"]] == ["CONFIRMED", "NOT OBSERVED"]


def test_json_stdout_holds_only_the_report(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from jaxlint.runtime.recompiles import run_command;"
            f"sys.exit(run_command([sys.executable, {script('three_shapes.py')!r}], fmt='json'))",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["functions"][0]["compiles"] == 3
    assert "three_shapes: done" in result.stderr


def test_existing_sitecustomize_still_runs(tmp_path, monkeypatch):
    (tmp_path / "sitecustomize.py").write_text("import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = '1'\n")
    check = tmp_path / "check.py"
    check.write_text(
        "import os, sys\nimport jax, jax.numpy as jnp\n"
        "jax.jit(lambda x: x + 1)(jnp.ones(2))\n"
        "sys.exit(0 if os.environ.get('USER_SITECUSTOMIZE_RAN') == '1' else 5)\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    out = io.StringIO()
    code = run_command([sys.executable, str(check)], fmt="json", out=out)
    assert code == 0
    assert functions(json.loads(out.getvalue()))["<lambda>"]["compiles"] == 1


def test_command_without_jax_and_missing_command():
    code, text = run("no_jax.py", fmt="text")
    assert code == 0 and "no Python process of the command imported jax" in text
    out = io.StringIO()
    assert run_command(["/nonexistent/jaxlint-test-binary", "x"], out=out) == 127


def test_shell_string_command():
    out = io.StringIO()
    command = f"{sys.executable} {script('exits_two.py')} && echo unreachable"
    assert run_command([command], fmt="json", out=out) == 2
    assert json.loads(out.getvalue())["command"] == command


def test_public_events_fallback_still_counts(monkeypatch):
    """Without JAX's private jit hook: public monitoring events and JAX's explanations only."""
    if not exact_recompiles():  # there JAX explains a miss after the trace, not before it
        pytest.skip("the public-events fallback places traces by JAX 0.9's explanations")
    monkeypatch.setenv("JAXLINT_RECOMPILES_PUBLIC_ONLY", "1")
    code, report = run("nested.py")
    assert code == 0
    outer = functions(report)["outer"]
    assert (outer["traces"], outer["compiles"], outer["signatures"]) == (3, 3, [])
    assert report["processes"][0]["mode"] == "fallback"


def test_through_the_jaxlint_command():
    result = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--verify", "--run", f"{sys.executable} {script('exits_two.py')}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "exit code 2" in result.stdout


def test_persistent_cache_hits_are_counted_quietly(tmp_path):
    program = tmp_path / "cached.py"
    program.write_text(
        "import jax, jax.numpy as jnp\n"
        f"jax.config.update('jax_compilation_cache_dir', {str(tmp_path / 'cache')!r})\n"
        "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n"
        "jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)\n"
        "f = jax.jit(lambda x: x * 2 + 1)\n"
        "f(jnp.ones(3)); f(jnp.ones(4))\n"
    )
    code = (
        "import io, json, sys; from jaxlint.runtime.recompiles import run_command; out = io.StringIO();"
        f"run_command([sys.executable, {str(program)!r}], fmt='json', out=out);"
        "print(json.dumps([f['persistent_cache_hits'] for f in json.loads(out.getvalue())['functions']]))"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
        for _ in range(2)
    ]
    assert [json.loads(r.stdout) for r in runs] == [[0], [2]]
    assert "persistent" not in runs[0].stderr.lower()  # JAX's cache-write warnings stay off stderr


def test_budget_keys_that_match_no_function_are_warnings(capsys):
    code, _ = run("three_shapes.py", budgets={"three_shapes:step": 3, "three_shapes:stepp": 2, "nothing": 1})
    assert code == 0
    err = capsys.readouterr().err
    assert "'three_shapes:stepp' matched no function" in err and "'nothing' matched no function" in err
    assert "'three_shapes:step' matched" not in err


def test_sigterm_to_jaxlint_ends_the_command_and_removes_the_folder(tmp_path):
    import signal
    import time

    (tmp_path / "spin.py").write_text("import jax, time\nprint('up', flush=True)\ntime.sleep(300)\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": ROOT}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--verify", "--run", f"{sys.executable} spin.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "up"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    time.sleep(0.3)
    assert list(temp.iterdir()) == []
