"""Definitions, not names: which defs a name means at a point (`resolve_function`, `analysis/binding/definitions.py`)."""

from __future__ import annotations

import textwrap

import libcst as cst

from jaxlint import lint_source
from jaxlint.analysis import ModuleIndex


def callees(source: str) -> dict[int, list[int]]:
    """For each call of a same-module function, by line: the lines of the defs it may run."""
    module = cst.parse_module(textwrap.dedent(source))
    index = ModuleIndex(module)
    positions = index.positions()
    out: dict[int, list[int]] = {}
    for call, unit, _ in index._sites:
        if type(call.func) is cst.Name:
            found = index.resolve_function(call.func, unit)
            if found:
                line = positions[call].start.line
                out[line] = sorted(positions[u.node.name].start.line for u, _ in found)  # type: ignore[attr-defined]
    return out


def test_a_call_runs_the_def_live_before_it() -> None:
    source = """
        def f(x):
            return x
        f(1)
        def f(x):
            return -x
        f(2)
    """
    assert callees(source) == {4: [2], 7: [5]}


def test_defs_in_branches_are_joined_and_an_unconditional_def_ends_the_join() -> None:
    source = """
        def f(x):
            return x
        if cond:
            def f(x):
                return -x
        else:
            def f(x):
                return 2 * x
        f(1)
        def f(x):
            return 0
        f(2)
    """
    assert callees(source) == {10: [2, 5, 8], 13: [11]}


def test_a_body_sees_the_defs_live_where_it_is_defined() -> None:
    source = """
        def helper(x):
            return x
        def main(x):
            return helper(x)
        def helper(x):
            return -x
        def later(x):
            return helper(x)
    """
    assert callees(source) == {5: [2], 9: [6]}


def test_an_import_or_assignment_hides_the_def_and_a_jit_of_it_does_not() -> None:
    source = """
        import jax
        from fast import g
        def f(x):
            return x
        f = jax.jit(f)
        f(1)
        def g(x):
            return x
        g(1)
        from fast import g
        g(2)
        f = other
        f(2)
    """
    assert callees(source) == {7: [4], 10: [8]}


def test_a_join_with_an_import_is_unknown() -> None:
    source = """
        try:
            from fast import f
        except ImportError:
            def f(x):
                return x
        f(1)
    """
    assert callees(source) == {}


def test_defs_in_a_class_body_branch_do_not_break_the_lookup() -> None:
    """A def in an `if` of a class body is listed with the module's defs but binds no module name (it crashed
    the lookup once: KeyError in flax and equinox)."""
    source = """
        import jax

        def __init__(self):
            return None

        class A:
            if jax.config.jax_enable_x64:
                def __init__(self):
                    pass
            else:
                def __init__(self):
                    pass

        __init__(A)
    """
    assert not [f for f in lint_source(textwrap.dedent(source), "a.py") if f.code == "JAX000"]
    assert callees(source)[15] == [4]
