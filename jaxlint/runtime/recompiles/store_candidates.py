"""The statements of the project that could leak a tracer into a module global, watched by `--run`
(line_watch.py) so that a leak no static finding names is found by running (JAX105).

A candidate is a statement inside a function that stores into a module-level name: an assignment to a name
the function declares `global`, or a storing call (`append`, `extend`, `insert`, `add`, `update`,
`setdefault`) or item assignment on a name bound at the module's top level and neither a parameter nor
assigned in the function. `self.attr` stores are left out: an object made inside the trace (a flax NNX
module merged in `nnx.jit`) holds tracers that nothing outside reaches.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from typing import Any

from .evidence import LEAK

_STORING = frozenset(
    {"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "extendleft"}
)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
MAX_CANDIDATES = 2000  # over the whole project: a watch list is read by every process of the command


def store_candidates(paths: Iterable[str], skip: set[tuple[str, int]]) -> list[dict[str, Any]]:
    """Watch-list entries (line_watch.write_watch) of every candidate, but those at `skip` (path, line):
    the flagged statements watched already."""
    statements: list[dict[str, Any]] = []
    for path in paths:
        real = os.path.realpath(path)
        try:
            with open(real, encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
        except (OSError, SyntaxError, ValueError, RecursionError):
            continue
        top = _module_names(tree)
        for function in (n for n in ast.walk(tree) if isinstance(n, _FUNCTIONS)):
            for statement, name in _stores(function, top):
                if (real, statement.lineno) in skip:
                    continue
                statements.append(
                    {
                        "code": "JAX105",
                        "kind": LEAK,
                        "path": real,
                        "span": [statement.lineno, statement.end_lineno or statement.lineno],
                        "stores": [f"global:{name}"],
                        "unflagged": True,
                    }
                )
                if len(statements) >= MAX_CANDIDATES:
                    return statements
    return statements


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        for target in targets:
            names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _own_statements(function: ast.AST) -> list[ast.stmt]:
    """The statements of `function`, not of the functions and classes it defines."""
    found: list[ast.stmt] = []
    stack = list(getattr(function, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            continue
        found.append(node)
        for field in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(getattr(node, field, None) or [])
        stack.extend(case for case in getattr(node, "cases", None) or [])
    return found


def _stores(function: ast.AST, top: set[str]) -> list[tuple[ast.stmt, str]]:
    own = _own_statements(function)
    declared = {n for s in own if isinstance(s, ast.Global) for n in s.names}
    args = getattr(function, "args", None)
    local = (
        {a.arg for a in ast.walk(args) if isinstance(a, ast.arg)}
        if isinstance(args, ast.arguments)
        else set()
    )
    for statement in own:
        if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
            local.update(
                n.id
                for n in ast.walk(statement)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in declared
            )
    outer = (top - local) | declared
    stores: list[tuple[ast.stmt, str]] = []
    for statement in own:
        if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in declared:
                    stores.append((statement, target.id))
                elif (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id in outer
                ):
                    stores.append((statement, target.value.id))
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            func = statement.value.func
            if isinstance(func, ast.Attribute) and func.attr in _STORING and isinstance(func.value, ast.Name):
                if func.value.id in outer:
                    stores.append((statement, func.value.id))
    return stores
