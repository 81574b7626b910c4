"""Valid Python that libcst cannot take: brackets nested deeper than CPython allows, and chains too long.

libcst's native parser recurses once per level of the tree it builds, and takes superlinear time in the length
of some chains (`a()()()…`: 1,000 calls 0.3 s, 3,000 calls 4.9 s; `a[0][0]…` worse). The engine parses on a
deep stack (`syntax.run_deep`), which gives room to thousands of levels, and sends here first the texts that
could exceed what that stack and a few seconds allow, so that they get a JAX000 instead of a crash or a
stall. A cheap scan of every text finds the few that could (a logical line of thousands of characters, or
thousands of `elif`s); CPython's own parser then measures their chains exactly.
"""

from __future__ import annotations

import ast
import re

from .finding import Finding, parse_error

# CPython refuses more than 200 nested brackets ("too many nested parentheses", MAXLEVEL in its tokenizer);
# libcst's native parser crashes the process (SIGSEGV) somewhere above 1,000, so deeper text never reaches it.
_MAX_BRACKET_DEPTH = 200
# Brackets, and line ends that may end a statement (a backslash before one continues it).
_SCAN = re.compile(r"[()\[\]{}]|\\?(?:\r\n?|\n)")

# The cost of a chain is counted in units per link, by what a link costs libcst. Its parse time grows with
# the square of a `+` or `.b` chain's length (3,000 `+`: 2.4 s) and faster for calls and subscripts; its
# memory with the square of a right-leaning chain's (1,000 lambdas: 220 MB, 2,500: 1.2 GB); `and`/`or` and
# `elif` chains cost time and memory in proportion and need only stack. At most `MAX_CHAIN_UNITS` along any
# path of the tree: 10,000 `and`s or `elif`s, 3,333 `+`s or `.b`s, 2,500 calls or `not`s, 1,666 subscripts
# or `**`s, 1,250 lambdas or ternaries: each parsed in under 5 s and 400 MB, within `syntax.DEEP_STACK_BYTES`.
MAX_CHAIN_UNITS = 10_000
_UNITS: dict[type, int] = {
    ast.BoolOp: 1,  # per operand after the first: libcst nests `a and b and c` one level per operator
    ast.If: 1,  # an `elif` (or `else: if`) nests inside the `if` before it
    ast.BinOp: 3,  # `**`: 6 (`_POWER_UNITS`)
    ast.Attribute: 3,
    ast.Await: 3,
    ast.Starred: 3,
    ast.NamedExpr: 3,
    ast.UnaryOp: 4,
    ast.Call: 4,
    ast.Subscript: 6,
    ast.Lambda: 8,
    ast.IfExp: 8,
}
_POWER_UNITS = 6
# A path of `MAX_CHAIN_UNITS` needs a logical line of at least this many characters (a link takes at least a
# quarter of a character per unit: `-` is one character for four units) or this many `elif`s, beside the
# 100 levels of blocks CPython allows.
_SUSPECT_LINE_CHARS = 1_000
_SUSPECT_ELIFS = 4_000


def too_deep(source: str, path: str) -> Finding | None:
    """The JAX000 for a text libcst cannot take (brackets nested deeper than CPython allows, a chain longer
    than `MAX_CHAIN_UNITS`), or None. Brackets, line ends and backslashes inside strings and comments count
    too, so what the scan suspects is confirmed by CPython's own parser before it is reported."""
    deepest, longest = _scan(source)
    if deepest > _MAX_BRACKET_DEPTH:
        refused = _cpython_refuses(source, path)
        if refused is not None:
            return refused
    if longest < _SUSPECT_LINE_CHARS and source.count("elif") < _SUSPECT_ELIFS:
        return None
    try:
        tree = ast.parse(source, path)
    except SyntaxError:
        return None  # libcst's parse reports it, with CPython's message (engine._syntax_error)
    except (ValueError, RecursionError, MemoryError) as error:
        return _refused(path, error)
    return _long_chain(tree, path)


def _scan(source: str) -> tuple[int, int]:
    """(deepest bracket nesting, characters in the longest logical line) as far as brackets and line ends
    tell, wherever they are."""
    depth = deepest = 0
    start = longest = 0
    for match in _SCAN.finditer(source):
        char = match.group()[0]
        if char in "([{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif char in ")]}":
            if depth:
                depth -= 1
        elif char != "\\" and not depth:  # a line end outside brackets, not after a backslash
            end = match.start()
            if end - start > longest:
                longest = end - start
            start = match.end()
    return deepest, max(longest, len(source) - start)


def _cpython_refuses(source: str, path: str) -> Finding | None:
    try:
        compile(source, path, "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except SyntaxError as error:
        return parse_error(path, error.lineno or 1, error.offset or 1, f"cannot parse: {error.msg}")
    except (ValueError, RecursionError, MemoryError) as error:
        return _refused(path, error)
    return None


def _refused(path: str, error: Exception) -> Finding:
    """CPython's parser refuses text nested deeper than its own stack allows with a bare MemoryError."""
    if isinstance(error, ValueError):
        return parse_error(path, 1, 1, f"cannot parse: {error}")
    return parse_error(
        path, 1, 1, f"cannot parse: nested too deep for CPython's parser ({type(error).__name__})"
    )


def _long_chain(tree: ast.AST, path: str) -> Finding | None:
    """The JAX000 for the path from the root that costs most, when it costs more than `MAX_CHAIN_UNITS`."""
    worst: tuple[int, int, ast.AST] = (0, 0, tree)  # units, links, the node at its end
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 0)]  # node, units and links above it
    while stack:
        node, units, links = stack.pop()
        kind = type(node)
        cost = _UNITS.get(kind)
        if cost is not None:
            count = len(node.values) - 1 if kind is ast.BoolOp else 1  # type: ignore[attr-defined]
            if kind is ast.BinOp and type(node.op) is ast.Pow:  # type: ignore[attr-defined]
                cost = _POWER_UNITS
            units += cost * count
            links += count
            if units > worst[0]:
                worst = (units, links, node)
        stack.extend((child, units, links) for child in ast.iter_child_nodes(node))
    units, links, node = worst
    if units <= MAX_CHAIN_UNITS:
        return None
    # The deepest node of a left-leaning chain (`a + a + …`) is where its text starts.
    line, column = getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1
    message = (
        f"cannot analyse: a chain of {links:,} operators, calls or elifs is longer than libcst's parser takes"
    )
    return parse_error(path, line, column, message)
