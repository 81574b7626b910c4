"""Whether a module runs with 64-bit types: does it mention enabling x64, and is it a program (where enabling
x64 is its own choice) or library code (where it is the application's). JAX501 and JAX503 judge only programs
that never mention x64: with x64 off, JAX makes `float64` `float32` and computes integers in int32.
"""

from __future__ import annotations

import libcst as cst

from ...syntax import walk
from ..context import RuleContext
from ..semantics.library import COMPUTING, PROGRAM_CALLS, STATIC_QUERIES, TEST_RUNNERS


def mentions_x64(module: cst.CSTNode) -> bool:
    """Whether the module (or one of its statements) mentions enabling x64: a name, attribute or keyword such as `enable_x64`,
    `jax_enable_x64` or `x64_enabled`, or a string with `enable_x64` in it (`"jax_enable_x64"`,
    `"JAX_ENABLE_X64"`). A variable merely called `x64` does not count."""
    for node in walk(module):
        if type(node) is cst.SimpleString:
            text = node.value.lower()
        elif type(node) is cst.Name:
            text = node.value.lower()
        elif type(node) is cst.Arg and node.keyword is not None:
            text = node.keyword.value.lower()
        else:
            continue
        if "enable_x64" in text or "x64_enabled" in text:
            return True
    return False


def enables_x64(ctx: RuleContext) -> bool:
    """Whether the module runs with x64 enabled as far as its text and its imports say: it mentions x64, or an
    `__init__.py` of a package enclosing it, or a project module it imports, enables it (`ModuleFacts.x64_package`,
    `imported_x64.x64_on_import`)."""
    project = ctx.index.project
    return (project is not None and project.x64_package) or mentions_x64(ctx.index.module)


# -- programs and library code -----------------------------------------------------------------------------


def is_main_guard(node: cst.CSTNode) -> bool:
    if type(node) is not cst.If or type(node.test) is not cst.Comparison:
        return False
    parts = [node.test.left, *(c.comparator for c in node.test.comparisons)]
    names = {p.value for p in parts if type(p) is cst.Name}
    strings = {p.evaluated_value for p in parts if type(p) is cst.SimpleString}
    return "__name__" in names and "__main__" in strings


def _runs_tests_only(guard: cst.If) -> bool:
    """`if __name__ == "__main__": absltest.main()`: a test module's runner, not a program."""
    calls = [n for n in walk(guard.body) if type(n) is cst.Call]
    return bool(calls) and all(
        type(c.func) is cst.Attribute
        and c.func.attr.value == "main"
        and type(c.func.value) is cst.Name
        and c.func.value.value in TEST_RUNNERS
        for c in calls
    )


def is_program(module: cst.Module, ctx: RuleContext) -> bool:
    """Whether the module is a program (script, notebook, `__main__` module) rather than library code."""
    if ctx.index.notebook:
        return True
    functions = {s.name.value for s in module.body if type(s) is cst.FunctionDef}
    for statement in module.body:
        if type(statement) is cst.FunctionDef or type(statement) is cst.ClassDef:
            continue
        if is_main_guard(statement):
            if not _runs_tests_only(statement):  # type: ignore[arg-type]
                return True
            continue
        smalls = statement.body if type(statement) is cst.SimpleStatementLine else ()
        bare = {  # `main()` as a statement of its own
            id(small.value) for small in smalls if type(small) is cst.Expr and type(small.value) is cst.Call
        }
        for node in walk(statement):
            if type(node) is not cst.Call:
                continue
            name = ctx.qualname(node.func)
            if name is not None and name.startswith(COMPUTING) and name not in STATIC_QUERIES:
                return True
            if name in PROGRAM_CALLS:
                return True
            if id(node) in bare and type(node.func) is cst.Name and node.func.value in functions:
                return True
    return False
