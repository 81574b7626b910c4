"""Recompile counting, the parts without JAX: signatures, reasons, merging, budgets, cross-reference, output."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from jaxlint.finding import Finding
from jaxlint.runtime.recompiles.aggregate import Merger, budget_for, merge
from jaxlint.runtime.recompiles.crossref import cross_reference
from jaxlint.runtime.recompiles.events import CompileEvent, FunctionInfo, TraceEvent
from jaxlint.runtime.recompiles.recorder import Recorder
from jaxlint.runtime.recompiles.render import to_json, write_text
from jaxlint.runtime.recompiles.retrace_reasons import NEW_FUNCTION_OBJECT, RetraceExplainer
from jaxlint.runtime.recompiles.signatures import build_signature, describe_aval, differences, render

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Aval:
    """Quacks like jax.core.ShapedArray for what signatures read."""

    def __init__(self, text: str, weak: bool = False) -> None:
        self.text, self.weak_type = text, weak

    def str_short(self, short_dtypes: bool = False) -> str:
        return self.text


def sig(avals, *, names=("x",), args=(), kwargs=None, static_argnums=(), static_argnames=(), params=("x",)):
    return build_signature(
        leaf_names=names,
        avals=avals,
        args=args,
        kwargs=kwargs or {},
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        param_names=params,
    )


def test_signature_names_arrays_statics_and_keywords():
    s = sig(
        [Aval("f32[3]"), Aval("f32[]", weak=True)],
        names=("x", "c"),
        args=(None, None, 2),
        kwargs={"mode": "a"},
        static_argnums=(-1,),
        static_argnames=("mode",),
        params=("x", "c", "n"),
    )
    assert render(s) == "(x: f32[3], c: weak f32[], n=2, mode='a'; by keyword: mode)"


def test_differences_read_like_the_issue():
    assert differences(sig([Aval("f32[4]")]), sig([Aval("f32[3]")])) == ["arg 'x': f32[3] → f32[4]"]
    assert differences(sig([Aval("f32[]")], names=("c",)), sig([Aval("f32[]", True)], names=("c",))) == [
        "arg 'c': weak f32[] → f32[]"
    ]
    n3 = sig([Aval("f32[3]")], args=(None, 3), static_argnums=(1,), params=("x", "n"))
    n2 = sig([Aval("f32[3]")], args=(None, 2), static_argnums=(1,), params=("x", "n"))
    assert differences(n3, n2) == ["static 'n': 2 → 3"]
    by_keyword = sig([Aval("f32[3]")], kwargs={"n": 2}, static_argnames=("n",), params=("x", "n"))
    assert differences(by_keyword, n2) == ["arguments passed by keyword: (none) → n"]


def test_static_objects_hashed_by_identity_show_their_address():
    class Config:
        pass

    a, b = Config(), Config()
    described = [
        dict(sig([], names=(), args=(v,), static_argnums=(0,), params=("cfg",)))["cfg"] for v in (a, b)
    ]
    assert described[0] != described[1]


def test_describe_aval_strips_jax_weak_marker():
    assert describe_aval(Aval("~f32[]", weak=True)) == "weak f32[]"


def test_reasons_new_object_signature_and_context():
    explainer = RetraceExplainer(context_names=("precision",))
    key, fun = ("f.py", 1, "f"), lambda x: x
    s3, s4 = sig([Aval("f32[3]")]), sig([Aval("f32[4]")])
    assert explainer.explain(key, fun, s3, ("default",)) is None
    assert explainer.explain(key, fun, s4, ("default",)) == "arg 'x': f32[3] → f32[4]"
    assert (
        explainer.explain(key, fun, s3, ("highest",))
        == "tracing context changed (precision: 'default' → 'highest')"
    )
    assert explainer.explain(key, lambda x: x, s3, ("default",)) == NEW_FUNCTION_OBJECT


def _info(name="step", path="/src/train.py", line=5, module="__main__"):
    return FunctionInfo(module, name, path, line - 1, line)


def _report(pid, compiles, *, name="step", path="/src/train.py", line=5):
    recorder = Recorder()
    info = _info(name, path, line)
    for i in range(compiles):
        signature = sig([Aval(f"f32[{i + 1}]")])
        reason = None if i == 0 else f"arg 'x': f32[{i}] → f32[{i + 1}]"
        recorder.on_trace(TraceEvent(info, signature, reason, f"{path}:{line + 10}"))
        recorder.on_compile(CompileEvent(name, info))
    recorder.on_compile(
        CompileEvent("broadcast_in_dim", FunctionInfo("jax", "bid", "/jax/x.py", 1, 1, internal=True))
    )
    recorder.on_compile(CompileEvent("pmap(g)", None))
    return {**recorder.snapshot(), "pid": pid, "backend": "cpu", "devices": ["cpu:cpu:0"]}


def test_merge_adds_processes_and_budgets_the_largest_one():
    run = merge([_report(1, 3), _report(2, 2)], budgets={}, default_budget=2)
    (step,) = run.functions
    assert (step.compiles, step.traces, step.processes, step.max_compiles_in_process) == (5, 5, 2, 3)
    assert step.over_budget and run.over_budget == [step]
    assert run.internal_compiles == 2 and run.unattributed_compiles == {"pmap(g)": 2}
    assert run.backend == "cpu"


def test_budget_lookup_order():
    budgets = {"__main__:step": 1, "train:loss": 2, "apply": 3}
    assert budget_for("__main__", "step", "/x/train.py", budgets, 10) == 1
    assert budget_for("__main__", "loss", "/x/train.py", budgets, 10) == 2
    assert budget_for("model", "apply", "/x/model.py", budgets, 10) == 3
    assert budget_for("model", "other", "/x/model.py", budgets, 10) == 10


def test_merger_reports_keep_the_per_window_maximum():
    worker = Merger()
    worker.add(_report(1, 3), window="test_a")
    worker.add(_report(2, 1), window="test_b")
    controller = Merger()
    controller.add(worker.as_report())
    (step,) = controller.result(budgets={}, default_budget=10).functions
    assert (step.compiles, step.processes, step.max_compiles_in_process) == (4, 2, 3)


def _finding(code, line, function=None, path="/src/train.py"):
    return Finding(path, line, 9, line, 20, code, "jit-in-loop", "msg", function=function)


def test_cross_reference_matches_definition_callsite_and_function():
    run = merge([_report(1, 3)], budgets={}, default_budget=10)
    verdicts = cross_reference(
        [
            _finding("JAX401", 5),  # the def line
            _finding("JAX402", 15),  # where the retraces were called from
            _finding("JAX401", 40, function="step"),  # names the function
            _finding("JAX401", 40),  # elsewhere
            _finding("JAX401", 5, path="/src/other.py"),  # another file
            _finding("JAX101", 5),  # not a recompile rule
        ],
        run.functions,
    )
    assert [v.confirmed for v in verdicts] == [True, True, True, False, False]
    assert verdicts[0].to_dict()["status"] == "CONFIRMED" and verdicts[0].to_dict()["compiles"] == 3


def test_cross_reference_needs_a_recompile():
    run = merge([_report(1, 1)], budgets={}, default_budget=10)
    assert not cross_reference([_finding("JAX401", 5)], run.functions)[0].confirmed


def test_text_and_json_output():
    run = merge([_report(1, 3)], budgets={}, default_budget=2)
    verdicts = cross_reference([_finding("JAX401", 5)], run.functions)
    out = io.StringIO()
    write_text(out, command="python train.py", exit_code=0, run=run, verdicts=verdicts, default_budget=2)
    text = out.getvalue()
    assert "OVER BUDGET (3 > 2)" in text
    assert "retrace 2: arg 'x': f32[1] → f32[2]" in text
    assert "CONFIRMED JAX401" in text
    data = to_json(command="python train.py", exit_code=0, run=run, verdicts=verdicts, default_budget=2)
    json.dumps(data)
    assert {"command", "exit_code", "backend", "functions"} <= set(data)
    fn = data["functions"][0]
    assert {"qualname", "path", "line", "traces", "compiles", "signatures", "reasons"} <= set(fn)
    assert fn["signatures"] == ["(x: f32[1])", "(x: f32[2])", "(x: f32[3])"]


def test_forked_child_reports_only_its_own_counts(tmp_path):
    """A forked child inherits the parent's counters: it must start from zero under its own file."""
    script = f"""
import os, sys
sys.path.insert(0, {ROOT!r})
from jaxlint.runtime.recompiles.process_report import ProcessReport
from jaxlint.runtime.recompiles.events import CompileEvent, FunctionInfo
report = ProcessReport({str(tmp_path)!r})
report.register_process_hooks()
info = FunctionInfo("m", "f", "/f.py", 1, 1)
for _ in range(3):
    report.on_compile(CompileEvent("f", info))
pid = os.fork()
if pid == 0:
    report.on_compile(CompileEvent("f", info))
    os._exit(0)
os.waitpid(pid, 0)
"""
    subprocess.run([sys.executable, "-c", script], check=True)
    reports = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    counts = sorted(r["functions"][0]["compiles"] for r in reports)
    assert counts == [1, 3]


def test_static_mode_imports_no_jax():
    code = (
        "import sys, jaxlint.runtime, jaxlint.runtime.recompiles, jaxlint.pytest_plugin, jaxlint.runtime.recompiles.pytest_plugin;"
        "from jaxlint.runtime.recompiles import instrumented_run, render, aggregate, crossref;"
        "assert 'jax' not in sys.modules, 'jax imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_text_shows_jax_explanation_for_a_pytree_static_part_and_hides_library_functions():
    import io

    from jaxlint.runtime.recompiles.retrace_reasons import UNEXPLAINED

    recorder = Recorder()
    info = _info("step", "/src/train.py", 5)
    hint = "different input pytree: ... so the pytree node metadata does not match"
    recorder.on_trace(TraceEvent(info, sig([Aval("f32[3]")]), None, "/src/train.py:9"))
    recorder.on_trace(TraceEvent(info, sig([Aval("f32[3]")]), UNEXPLAINED, "/src/train.py:9", hint))
    library = _info("update", "/venv/lib/python3.11/site-packages/optax/_src/base.py", 40, "optax._src.base")
    for _ in range(2):
        recorder.on_trace(TraceEvent(library, sig([Aval("f32[3]")]), None, None))
        recorder.on_compile(CompileEvent("update", library))
    run = merge([{**recorder.snapshot(), "pid": 1}], budgets={}, default_budget=10)
    out = io.StringIO()
    write_text(out, command="python train.py", exit_code=0, run=run, verdicts=[], default_budget=10)
    text = out.getvalue()
    assert f"retrace 2: JAX says: {hint}" in text and "cache was cleared" not in text
    assert "optax" not in text and "1 jitted function of installed libraries (2 compiles" in text
    everything = io.StringIO()
    write_text(
        everything, command="x", exit_code=0, run=run, verdicts=[], default_budget=10, all_functions=True
    )
    assert "optax._src.base:update" in everything.getvalue()
