"""Fast tests of the verify pieces that need no child process."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_verify_support import FIXTURES

from jaxlint.finding import Finding
from jaxlint.runtime.verify import (
    Environment,
    FindingVerdict,
    ModuleRun,
    VerifyReport,
    parse_examples,
    verify_findings,
)
from jaxlint.runtime.verify.child import inputs, source
from jaxlint.runtime.verify.jobs import example_keys, locate_module
from jaxlint.runtime.verify.readback import read_child
from jaxlint.runtime.verify.supervise import ChildRun
from jaxlint.runtime_output import clip, header, render_verify, verify_summary, with_file


def finding(code="JAX101", line=3, path="mod.py", function="f", cell=None) -> Finding:
    return Finding(path, line, 5, line, 10, code, "rule-name", "message", function=function, cell=cell)


def test_importing_verify_imports_no_jax_and_no_user_code():
    code = "import sys, jaxlint.runtime.verify; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_parse_examples_accepts_strings_lists_and_the_whole_table():
    parsed = parse_examples({"pkg.mod:step": "jnp.ones(3)", "pkg.mod:Model.apply": ["1", "2"]})
    assert parsed == {"pkg.mod": {"step": ["jnp.ones(3)"], "Model.apply": ["1", "2"]}}
    assert parse_examples({"timeout": 5, "examples": {"a.py:f": "x"}}) == {"a.py": {"f": ["x"]}}
    assert parse_examples(None) == {}


@pytest.mark.parametrize("table", [{"no_colon": "x"}, {"mod:": "x"}, {"mod:f": 3}, {"mod:f": []}])
def test_parse_examples_rejects_bad_entries(table):
    with pytest.raises(ValueError, match="tool.jaxlint.verify"):
        parse_examples(table)


def test_locate_module_walks_up_packages():
    location = locate_module(FIXTURES / "vpkg" / "model.py", FIXTURES)
    assert location.name == "vpkg.model"
    assert location.search_path[0] == str(FIXTURES.resolve())
    plain = locate_module(FIXTURES / "verify_jax101.py", FIXTURES.parent)
    assert plain.name == "verify_jax101"
    assert plain.search_path == (str(FIXTURES.resolve()), str(FIXTURES.parent.resolve()))
    assert example_keys(location, FIXTURES) == ("vpkg.model", "vpkg/model.py")


def test_findings_that_cannot_be_verified_are_not_run_without_a_child(tmp_path):
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text("{}")
    script = tmp_path / "script.py"
    script.write_text("x = 1\n")
    cases = [
        finding("JAX402", path=str(script)),
        finding(path=str(notebook), cell=2),
        finding(path=str(tmp_path / "gone.py")),
    ]
    report = verify_findings(cases, root=tmp_path)
    assert [report.verdicts[c].verdict for c in cases] == ["NOT_CHECKED", "NOT_RUN", "NOT_RUN"]
    assert report.verdicts[cases[0]].reason == "not checked by tracing (use --run)"
    assert "notebook" in report.verdicts[cases[1]].reason
    assert "not found" in report.verdicts[cases[2]].reason
    assert report.modules == [] and report.should_fail


def test_environment_header_names_backend_and_device():
    cpu = Environment(jax="0.10.2", backend="cpu", device_kind="cpu")
    gpu = Environment(jax="0.11.2", backend="gpu", device_kind="NVIDIA H100 80GB HBM3")
    assert cpu.describe() == "jax 0.10.2, cpu"
    assert gpu.describe() == "jax 0.11.2, gpu: NVIDIA H100 80GB HBM3"


def _report() -> tuple[VerifyReport, list[Finding]]:
    found = [
        finding(line=3),
        finding(line=9, code="JAX201"),
        finding(line=12, code="JAX402"),
        finding(line=15, code="JAX102"),
    ]
    verdicts = {
        found[0]: FindingVerdict(
            "CONFIRMED", "TracerBoolConversionError at line 3", ("x: f32[]",), "jax 0.10.2, cpu"
        ),
        found[1]: FindingVerdict(
            "NOT_REPRODUCED", "traced cleanly with x: f32[]", ("x: f32[]",), "jax 0.10.2, cpu"
        ),
        found[2]: FindingVerdict("NOT_CHECKED", "not checked by tracing (use --run)"),
        found[3]: FindingVerdict(
            "NOT_RUN",
            "no input traced far enough: with x: f32[]: IndexError: Too many indices: array is "
            "0-dimensional, but 1 were indexed (line 15); with x: f32[3]: IndexError: another "
            "failure (line 15); to give inputs, run code that calls it under `jaxlint --verify --run`",
            ("x: f32[]", "x: f32[3]"),
            "jax 0.10.2, cpu",
        ),
    }
    env = Environment(jax="0.10.2", backend="cpu", device_kind="cpu")
    return VerifyReport(verdicts, [env], [ModuleRun("mod.py", "mod", 2, 1.5, "done")]), found


def test_text_report_has_header_and_one_short_verdict_per_finding():
    report, found = _report()
    lines = render_verify(report, found, "text").splitlines()
    assert lines[0] == "verify: jax 0.10.2, cpu"
    assert lines[1] == "mod.py:3:5: JAX101 message [CONFIRMED: TracerBoolConversionError]"
    assert lines[2] == "mod.py:9:5: JAX201 message [NOT REPRODUCED: traced cleanly with x: f32[]]"
    assert lines[3] == "mod.py:12:5: JAX402 message [not checked by tracing (use --run)]"
    # One line, up to the first attempt's error, cut between words; the line number names its file.
    assert lines[4] == (
        "mod.py:15:5: JAX102 message [NOT RUN: no input traced far enough: with x: f32[]: IndexError: "
        "Too many indices: array is 0-dimensional…]"
    )
    assert verify_summary(report, 4) == (
        "verify: 1 confirmed, 1 not reproduced, 1 not run, 1 not checked by tracing, of 4 finding(s)"
    )
    verbose = render_verify(report, found, "text", verbose=True).splitlines()
    assert verbose[1].endswith(
        "[CONFIRMED: TracerBoolConversionError at mod.py:3; inputs tried: x: f32[]; on jax 0.10.2, cpu]"
    )
    assert "(mod.py:15); with x: f32[3]" in verbose[4] and "to give inputs" in verbose[4]


def test_json_and_sarif_carry_verdict_inputs_and_device():
    report, found = _report()
    data = json.loads(render_verify(report, found, "json"))[0]
    assert data["code"] == "JAX101" and data["verdict"] == "CONFIRMED"
    assert data["verdict_reason"] == "TracerBoolConversionError at line 3"
    assert data["inputs"] == ["x: f32[]"] and data["device"] == "jax 0.10.2, cpu"
    counts = {"FOUND_BY_RUNNING": 0, "CONFIRMED": 1, "NOT_REPRODUCED": 1, "NOT_RUN": 1, "NOT_CHECKED": 1}
    assert report.counts() == counts
    results = json.loads(render_verify(report, found, "sarif"))["runs"][0]["results"]
    properties = results[1]["properties"]
    assert properties["verdict"] == "NOT_REPRODUCED" and properties["inputs"] == ["x: f32[]"]
    assert report.any_confirmed and report.should_fail


def test_errors_are_cut_between_words_and_lines_name_their_file():
    assert clip("word " * 30, 40) == "word word word word word word word word…"
    assert clip("x" * 50, 20) == "x" * 19 + "…"  # one long word: cut, still marked
    assert clip("short", 40) == "short"
    assert with_file("at line 12 (line 3); cell 2, line 4", "pkg/model.py") == (
        "at model.py:12 (model.py:3); cell 2, line 4"
    )


def test_the_header_says_what_this_jax_lacks():
    old = Environment(
        jax="0.4.33", backend="cpu", device_kind="cpu", missing=("live calls of top-level code",)
    )
    report = VerifyReport({}, [old])
    assert header(report) == "verify: jax 0.4.33, cpu (this JAX lacks: live calls of top-level code)"
    assert (
        Environment.from_event(
            {"jax": "0.12.0", "backend": "gpu", "device_kind": "H200", "missing": []}
        ).missing
        == ()
    )


# --- how a child's events (or its death) become verdicts ----------------------------------------------


def _child(events, ended="exited", returncode=0, hint="") -> ChildRun:
    return ChildRun(events, ended, returncode, hint, 1.0, 123)


ENV = {"event": "environment", "jax": "0.10.2", "backend": "cpu", "device_kind": "cpu"}


def test_a_crash_mid_module_blames_the_finding_in_progress_and_leaves_the_rest_unreached():
    found = [finding(line=3), finding(line=7, function="g"), finding(line=9, function="h")]
    events = [ENV, {"event": "imported", "seconds": 0.1}]
    events += [
        {"event": "begin", "id": 0},
        {"event": "verdict", "id": 0, "verdict": "CONFIRMED", "reason": "r"},
    ]
    events += [{"event": "begin", "id": 1}]
    reading = read_child(
        found, _child(events, returncode=-11, hint="Fatal Python error: Segmentation fault"), 10, None
    )
    assert reading.verdicts[found[0]].verdict == "CONFIRMED"
    assert reading.verdicts[found[1]].verdict == "NOT_RUN"
    assert "SIGSEGV" in reading.verdicts[found[1]].reason and "'g'" in reading.verdicts[found[1]].reason
    assert reading.unreached == [found[2]] and reading.progressed and reading.status == "crashed"


def test_a_timeout_before_the_import_finished_is_blamed_on_the_import():
    found = [finding()]
    reading = read_child(found, _child([ENV], ended="timeout", returncode=-9), 5, None)
    reason = reading.verdicts[found[0]].reason
    assert reason.startswith("timed out after 5 s while importing the module"), reason
    assert "`--verify-timeout SECONDS`" in reason
    assert reading.status == "timeout" and not reading.progressed


def test_an_exit_code_without_events_is_reported():
    found = [finding()]
    reading = read_child(found, _child([ENV], returncode=7), 5, None)
    assert reading.verdicts[found[0]].reason == "the child exited with code 7 while importing the module"


# --- child-side input planning (imports jax, like the child does) --------------------------------------


def test_jaxtyping_dims_are_shared_between_parameters():
    dims = inputs.DimSizes()
    (x,) = inputs.traced_candidates("x", 'Float[Array, "b n"]', False, dims)
    (w,) = inputs.traced_candidates("w", "Float[Array, 'n d']", False, dims)
    (i,) = inputs.traced_candidates("i", 'Int[Array, ""]', False, dims)
    (s,) = inputs.traced_candidates("s", 'Shaped[Array, "... 4"]', False, dims)
    assert (x.shape, w.shape, i.shape, s.shape) == ((2, 3), (3, 4), (), (4,))
    assert (x.dtype, i.dtype) == ("float32", "int32")


def test_search_candidates_follow_names_and_annotations():
    dims = inputs.DimSizes()
    assert inputs.traced_candidates("x", "", False, dims) == inputs.FLOAT_SEARCH
    assert inputs.traced_candidates("n", "", True, dims) == inputs.INT_SEARCH
    assert inputs.traced_candidates("key", "", False, dims) == inputs.KEY_SEARCH
    assert inputs.traced_candidates("rng", "jax.Array", False, dims) == inputs.KEY_SEARCH
    assert inputs.traced_candidates("k", "PRNGKeyArray", False, dims) == inputs.KEY_SEARCH
    assert inputs.traced_candidates("x", "Optional[jax.Array]", False, dims) == inputs.FLOAT_SEARCH
    assert inputs.traced_candidates("t", "float", False, dims) == (
        inputs.ArraySpec((), "float32", weak=True),
    )
    assert inputs.traced_candidates("fn", "Callable[[int], int]", False, dims) == ()
    assert inputs.traced_candidates("name", "str", False, dims) == ()


def test_static_values_come_from_annotations():
    assert inputs.static_value("int").value == 2
    assert inputs.static_value("bool").value is True
    assert inputs.static_value("tuple[int, ...]").value == (2, 3)
    assert inputs.static_value("Optional[int]").value is None
    assert inputs.static_value("").value == 2
    assert inputs.static_value("str") is None


def _function(text: str) -> ast.FunctionDef:
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_integer_looking_parameters():
    node = _function(
        "def f(x, steps, j, width):\n    for _ in range(width):\n        x = x[j]\n    return x\n"
    )
    assert source.integer_looking(node, "steps") and source.integer_looking(node, "j")
    assert source.integer_looking(node, "width") and not source.integer_looking(node, "x")


def test_jit_statics_are_read_from_decorators():
    node = _function(
        "@partial(jax.jit, static_argnums=(1,), static_argnames='mode')\ndef f(x, n, mode): pass\n"
    )
    assert source.jit_statics_from_decorators(node) == ((1,), ("mode",))
    assert source.jit_statics_from_decorators(_function("@jax.jit\ndef f(x): pass\n")) == ((), ())
    assert source.jit_statics_from_decorators(_function("@other\ndef f(x): pass\n")) is None


def test_self_attributes_read_in_a_method():
    node = _function("def step(self, x):\n    self.cache = x\n    return x * self.w + self.b\n")
    assert source.self_attributes_read(node, "self") == ["w", "b"]


def test_fixture_modules_are_valid_python():
    for path in Path(FIXTURES).rglob("*.py"):
        ast.parse(path.read_text(), filename=str(path))


def test_store_places_of_a_statement():
    text = (
        "def f(self, x):\n"
        "    STORE.append(x)\n"
        "    CACHE['k'] = x\n"
        "    self.cache = x\n"
        "    y = x\n"
        "    self.items[0] += x\n"
    )
    module = source.ModuleSource("m.py", text)
    assert source.store_places(module, 2, "self") == {"global:STORE"}
    assert source.store_places(module, 3, "self") == {"global:CACHE"}
    assert source.store_places(module, 4, "self") == {"self:cache"}
    assert source.store_places(module, 5, "self") == {"global:y"}  # a local: never holds new tracers globally
    assert source.store_places(module, 6, "self") == {"self:items"}
    assert source.store_places(module, 1, "self") is None


def test_progress_is_a_bar_on_a_terminal_and_one_line_per_module_elsewhere():
    import io

    from jaxlint.runtime.verify.results import ModuleRun, VerifyStep
    from jaxlint.runtime_output import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    steps = [
        VerifyStep(0, 2, 0, 3),
        VerifyStep(1, 2, 2, 3, ModuleRun("m.py", "pkg.model", 2, 1.25, "done"), ("CONFIRMED", "NOT_RUN")),
        VerifyStep(2, 2, 3, 3, ModuleRun("d.py", "pkg.data", 1, 0.5, "timeout"), ("NOT_RUN",)),
    ]
    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        progress = Progress(stream)
        for step in steps:
            progress(step)
        progress.close()
    assert "3/3" in tty.getvalue() and "\n" not in tty.getvalue()  # one bar, rewritten in place
    assert pipe.getvalue().splitlines() == [
        "verify: [1/2] pkg.model: 2 findings: 1 confirmed, 1 not run (1.2 s)",
        "verify: [2/2] pkg.data: 1 finding: 1 not run (0.5 s; timeout)",
    ]


@pytest.mark.parametrize(
    "body, keys",
    [
        ("return params['w'] @ x + params['b']", ["b", "w"]),
        ("return helper(params) @ x", []),  # passed on: its structure is unknown
        ("return params[0] @ x", []),  # not a dict of named parameters
        ("params['w'] = x\n    return x", []),  # written, not read
    ],
)
def test_dict_parameters_are_recognised_only_when_read_by_string_keys(body, keys):
    import ast

    node = ast.parse(f"def f(params, x):\n    {body}\n").body[0]
    assert source.dict_keys_read(node, "params") == keys


_METHODS = """
import functools
import jax


def logged(function):
    @functools.wraps(function)
    def wrapper(*args):
        return function(*args)
    return wrapper


@jax.jit
def top(x):
    return x


class Model:
    @logged
    def step(self, x):
        return x

    @staticmethod
    def helper(x):
        return x

    class Inner:
        def run(self, x):
            return x
"""


def test_the_qualname_of_a_code_object_without_co_qualname_is_found_in_its_module():
    """Python 3.10's code objects have no co_qualname: the callers of a target that the module's live calls
    name (by code object) are found through the module's functions and class attributes instead. Called
    directly, so the fallback runs on any Python."""
    import types

    from jaxlint.runtime.verify.child.resolve import code_qualname, qualname_in_module

    module = types.ModuleType("user_model")
    exec(compile(_METHODS, "user_model.py", "exec"), vars(module))
    model = vars(module)["Model"]
    codes = {
        "top": vars(module)["top"].__wrapped__.__code__,
        "Model.step": model.step.__wrapped__.__code__,
        "Model.helper": model.helper.__code__,
        "Model.Inner.run": model.Inner.run.__code__,
    }
    for qualname, code in codes.items():
        assert qualname_in_module(code, module) == qualname
        assert code_qualname(code, module) == qualname
    wrapper = model.step.__code__  # the decorator's own function: not the module's
    assert qualname_in_module(wrapper, module) is None
