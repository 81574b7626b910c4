"""Reaching functions that are not importable by name, building inputs from annotations, and the
examples users declare."""

from __future__ import annotations

import dataclasses

import pytest
from test_verify_support import FIXTURES, marked

from jaxlint.runtime.verify import verify_findings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reached():
    cases = marked("verify_reach.py") + marked("vpkg/model.py") + marked("verify_annotations.py")
    report = verify_findings([c.finding for c in cases], root=FIXTURES, timeout=120, jobs=2)
    return {
        (c.finding.path.rsplit("/", 1)[-1], c.finding.function): report.verdicts[c.finding] for c in cases
    }


@pytest.mark.parametrize(
    "function",
    [
        "Model.forward",  # a method, with `self.w` set on an instance made without __init__
        "Model.helper",  # staticmethod
        "Model.build",  # classmethod
        "Model.Inner.run",  # a class inside a class
        "make_step.<locals>.step",  # nested, through the enclosing function's code object
        "make_early.<locals>.early",  # nested with a closure it does not reach before the error
        "make_jitted.<locals>.inner",  # nested partial(jax.jit, static_argnums=1): static n from the source
        "partial_jit",  # partial(jax.jit, static_argnums=(1,)) at module level
        "with_mode",  # static_argnames with a default
        "with_lambda.<locals>.<lambda>",  # a lambda needing its closure: traced through its function
        "<lambda>",  # a module-level lambda handed to jax.jit
    ],
)
def test_function_is_reached_and_confirmed(reached, function):
    result = reached[("verify_reach.py", function)]
    assert result.verdict == "CONFIRMED", result.reason


def test_static_argument_gets_a_concrete_value(reached):
    assert reached[("verify_reach.py", "partial_jit")].inputs[0] == "x: f32[], n=2"
    assert reached[("verify_reach.py", "make_jitted.<locals>.inner")].inputs[0] == "x: f32[], n=2"


def test_method_inputs_name_the_attributes_set_on_self(reached):
    assert reached[("verify_reach.py", "Model.forward")].inputs[0] == "x: f32[], self.w=f32[]"


def test_nested_function_needing_its_closure_is_not_run(reached):
    result = reached[("verify_reach.py", "make_scaled.<locals>.scaled")]
    assert result.verdict == "NOT_RUN"
    assert "closure variable(s) 'scale'" in result.reason


def test_package_module_with_relative_imports_is_imported_without_its_main_block(reached):
    result = reached[("model.py", "gate")]
    assert result.verdict == "CONFIRMED", result.reason


def test_annotations_give_shapes_dtypes_and_keys(reached):
    assert reached[("verify_annotations.py", "project")].inputs == ("x: f32[2,3], w: f32[3,4]",)
    assert reached[("verify_annotations.py", "pick")].inputs[0] == "x: f32[], index: i32[]"
    assert reached[("verify_annotations.py", "scaled")].verdict == "CONFIRMED"
    assert reached[("verify_annotations.py", "keyed")].inputs[0] == "key: key(0), x: f32[]"
    assert reached[("verify_annotations.py", "keyed")].verdict == "CONFIRMED"


def test_parameter_without_buildable_input_is_not_run(reached):
    result = reached[("verify_annotations.py", "callback")]
    assert result.verdict == "NOT_RUN" and "'fn: Callable'" in result.reason


def test_integer_annotation_is_traced_as_int32(reached):
    result = reached[("verify_annotations.py", "zeros_like_n")]
    assert result.verdict == "NOT_REPRODUCED" and "n: i32[]" in result.inputs[0]


# --- declared examples -----------------------------------------------------------------------------------

EXAMPLES = {c.finding.function: c.finding for c in marked("verify_examples.py")}
NEEDS, CLEAN = EXAMPLES["needs_params"], EXAMPLES["clean_with_params"]


def test_without_examples_a_dict_of_params_is_built_from_the_keys_the_function_reads():
    report = verify_findings([NEEDS, CLEAN], root=FIXTURES, timeout=120)
    needs, clean = report.verdicts[NEEDS], report.verdicts[CLEAN]
    assert needs.verdict == "CONFIRMED", needs.reason
    assert "params: {'w': f32[3]}" in needs.reason
    assert clean.verdict == "NOT_REPRODUCED", clean.reason


def test_declared_examples_are_used_first_and_only():
    examples = {
        "verify_examples:needs_params": ["{'w': jnp.ones((2, 3))}, jnp.ones(3)"],
        "verify_examples.py:clean_with_params": "{'w': sds((2, 3), jnp.float32)}, x=jnp.ones(3)",
    }
    report = verify_findings([NEEDS, CLEAN], root=FIXTURES, timeout=120, examples=examples)
    needs, clean = report.verdicts[NEEDS], report.verdicts[CLEAN]
    assert needs.verdict == "CONFIRMED", needs.reason
    assert needs.inputs == ("example: {'w': jnp.ones((2, 3))}, jnp.ones(3)",)
    assert clean.verdict == "NOT_REPRODUCED", clean.reason
    assert clean.inputs == ("example: {'w': sds((2, 3), jnp.float32)}, x=jnp.ones(3)",)


def test_an_example_that_does_not_evaluate_is_not_run_with_its_error():
    report = verify_findings(
        [NEEDS], root=FIXTURES, timeout=120, examples={"verify_examples:needs_params": "nope("}
    )
    result = report.verdicts[NEEDS]
    assert result.verdict == "NOT_RUN" and "example 'nope(' failed: SyntaxError" in result.reason


def test_an_example_may_pass_self_to_a_method():
    lookup = EXAMPLES["Lookup.get"]
    searched = verify_findings([lookup], root=FIXTURES, timeout=120)
    assert searched.verdicts[lookup].verdict == "NOT_REPRODUCED"  # a bare instance has an array, not a list
    examples = {"verify_examples:Lookup.get": "self=Lookup([1.0, 2.0]), i=jnp.int32(0)"}
    report = verify_findings([lookup], root=FIXTURES, timeout=120, examples=examples)
    assert report.verdicts[lookup].verdict == "CONFIRMED", report.verdicts[lookup].reason


def test_legacy_keys_made_by_an_example_are_checked_for_reuse():
    draw = EXAMPLES["draw"]
    report = verify_findings(
        [draw], root=FIXTURES, timeout=120, examples={"verify_examples:draw": "jax.random.PRNGKey(0), 3"}
    )
    result = report.verdicts[draw]
    assert result.verdict == "CONFIRMED", result.reason
    assert result.reason.startswith("KeyReuseError at line")


def test_a_count_used_as_a_shape_outside_jit_is_tried_as_a_python_int():
    draw = EXAMPLES["draw"]
    report = verify_findings([draw], root=FIXTURES, timeout=120)
    result = report.verdicts[draw]
    assert result.verdict == "CONFIRMED", result.reason
    assert result.inputs[-1] == "key: PRNGKey(0), n=3"


@pytest.mark.parametrize("function", ["Counter", None])
def test_a_finding_attributed_to_the_class_or_to_no_function_finds_the_method_at_its_line(function):
    case = next(m for m in marked("verify_jax405.py") if m.expect == "confirmed")  # Counter.step
    finding = dataclasses.replace(case.finding, function=function)
    result = verify_findings([finding], root=FIXTURES, timeout=120).verdicts[finding]
    assert result.verdict == "CONFIRMED", result.reason
