"""Per-function facts the index records in its one pass: bindings, declarations, loops, module classes."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst

from jaxlint.analysis import ModuleIndex
from jaxlint.syntax import own_nodes

SOURCE = textwrap.dedent(
    """
    import jax
    from functools import partial as p

    class Config:
        size = 3

    class Config:
        pass

    def f(a):
        global counter
        x = 1
        x += a
        y = z = [0]
        t, u = a, a
        step = jax.jit(g)
        for i in range(3):
            w = i
            def inner():
                nonlocal_value = 1
            while (n := i):
                pass
        squares = [k * k for k in range(3)]
        with open("f") as handle:
            pass

        class Local:
            attribute = 1

        def g(b):
            nonlocal x
            return b
    """
)


def _unit(index: ModuleIndex, name: str):
    return next(u for u in index.units.values() if u.qualname == name)


def test_bindings_of_own_statements_only() -> None:
    index = ModuleIndex(cst.parse_module(SOURCE))
    f = _unit(index, "f")
    bound = set(f.bindings)
    assert {
        "x",
        "y",
        "z",
        "t",
        "u",
        "step",
        "i",
        "w",
        "inner",
        "n",
        "squares",
        "handle",
        "Local",
        "g",
    } <= bound
    assert "attribute" not in bound and "nonlocal_value" not in bound and "k" not in bound
    assert f.single_assignment("step") is not None and f.single_assignment("x") is None  # `x += a` too
    assert f.single_assignment("y") is None  # `y = z = [0]`: two targets
    assert f.assigned_names() >= {"x", "y", "z", "t", "u", "step", "i", "w", "squares"}
    assert "handle" not in f.assigned_names() and "inner" not in f.assigned_names()
    assert f.declared_globals == {"counter"} and f.declared_nonlocals == set()
    assert _unit(index, "f.<locals>.g").declared_nonlocals == {"x"}
    root = index.root
    assert set(root.bindings) == {"jax", "p", "Config", "f"}
    assert index.classes == {"Config": None}  # defined twice: unknown


def test_loops_and_what_varies() -> None:
    index = ModuleIndex(cst.parse_module(SOURCE))
    f = _unit(index, "f")
    loop = next(n for n in own_nodes(f.node) if isinstance(n, cst.For))
    body_assign = next(n for n in own_nodes(loop.body) if isinstance(n, cst.Assign))
    assert f.loops_of(body_assign) == (loop,)
    assert f.loops_of(loop) == ()
    assert f.varying(loop) == {"i", "w", "inner", "n"}
    inner_while = next(n for n in own_nodes(loop.body) if isinstance(n, cst.While))
    assert f.varying(inner_while) == set()  # its body binds nothing; `n` is bound by its test
    comprehension = next(n for n in own_nodes(f.node) if isinstance(n, cst.ListComp))
    assert f.varying(comprehension) == {"k"}


def test_rule_modules_import_no_sibling_rule() -> None:
    rules = Path(__file__).resolve().parents[2] / "jaxlint" / "rules"
    allowed = {"base", "common", "edits"}
    offenders = []
    for path in sorted(rules.glob("*.py")):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                module = (node.module or "").split(".")[0]
                names = [module] if module else [a.name for a in node.names]
                offenders += [f"{path.name}: .{n}" for n in names if n not in allowed]
    assert not offenders, offenders
