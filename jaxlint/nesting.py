"""Valid Python that libcst cannot take: brackets nested deeper than CPython allows, and chains too long.

libcst's native parser recurses once per level of the tree it builds, and takes superlinear time in the length
of some chains (`a()()()…`: 1,000 calls 0.3 s, 3,000 calls 4.9 s; `a[0][0]…` worse). The engine parses on a
deep stack (`syntax.run_deep`), which gives room to thousands of levels, and sends here first the texts that
could exceed what that stack and a few seconds allow, so that they get a JAX000 instead of a crash or a
stall. A cheap scan of every text finds the few that could (a long logical line dense in operators, brackets
and dots, or thousands of `elif`s; 5 files of 2,500 in the benchmark corpus); CPython's own parser then
measures their chains exactly.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from .finding import Finding, parse_error

# CPython refuses more than 200 nested brackets ("too many nested parentheses", MAXLEVEL in its tokenizer);
# libcst's native parser crashes the process (SIGSEGV) somewhere above 1,000, so deeper text never reaches it.
_MAX_BRACKET_DEPTH = 200
_BRACKETS = re.compile(r"[()\[\]{}]")

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
# Each link shows in the text as one of these (and more often, inside names, strings and comments): the
# units of a stretch of text bound those of any path through the code in it. A character is at most 6 units.
_TOKEN_UNITS = {
    **dict.fromkeys(("and", "or"), 1),
    **dict.fromkeys((".", "*", "/", "%", "@", "|", "&", "^", "<", ">", "await", ":="), 3),
    **dict.fromkeys(("(", "+", "-", "~", "not"), 4),
    "[": 6,
    **dict.fromkeys(("if", "lambda"), 8),
}
_UNITS_PER_CHAR = 6
# Beside the chain in one logical line, a path holds the `if`s and `elif`s it is nested in (CPython allows
# 100 levels of blocks). Logical lines shorter than this hold too few characters to matter.
_LONG_LINE = 1_000


class Shape(NamedTuple):
    """What the cheap scan of a text found (`scan`)."""

    deepest: int  # bracket nesting
    line_units: int  # the most units the link tokens of one long logical line add up to (0: no long line)
    elifs: int

    @property
    def most_units(self) -> int:
        """A bound on the units of any path through the tree."""
        return max(self.line_units, _UNITS_PER_CHAR * _LONG_LINE) + self.elifs + 100

    @property
    def shallow(self) -> bool:
        """Whether the tree is surely no deeper than short lines and a few `elif`s make it (a few thousand
        levels at most)."""
        return (
            self.line_units <= _UNITS_PER_CHAR * _LONG_LINE
            and self.elifs < _LONG_LINE
            and self.deepest <= _MAX_BRACKET_DEPTH
        )


def scan(source: str) -> Shape:
    deepest, long_lines = _scan(source)
    line_units = max((_units(source[start:end]) for start, end in long_lines), default=0)
    return Shape(deepest, line_units, source.count("elif"))


def too_deep(source: str, path: str, shape: Shape) -> Finding | None:
    """The JAX000 for a text libcst cannot take (brackets nested deeper than CPython allows, a chain longer
    than `MAX_CHAIN_UNITS`), or None. Brackets and line ends inside strings and comments count too, so what
    the scan suspects is confirmed by CPython's own parser (for a few files in a thousand) before it is
    reported."""
    if shape.deepest > _MAX_BRACKET_DEPTH:
        refused = _cpython_refuses(source, path)
        if refused is not None:
            return refused
    if shape.most_units <= MAX_CHAIN_UNITS:
        return None
    try:
        tree = ast.parse(source, path)
    except SyntaxError:
        return None  # libcst's parse reports it, with CPython's message (engine._syntax_error)
    except (ValueError, RecursionError, MemoryError) as error:
        return _refused(path, error)
    return _long_chain(tree, path)


def _units(text: str) -> int:
    return sum(units * text.count(token) for token, units in _TOKEN_UNITS.items())


def _scan(source: str) -> tuple[int, list[tuple[int, int]]]:
    """The deepest bracket nesting, and (start, end) of each stretch of text that may be one logical line of
    `_LONG_LINE` characters or more, as far as brackets and line ends tell, wherever they are. Only brackets
    are visited one by one; line ends are looked for between groups of brackets and within long lines."""
    text = source
    if "\\" in text:  # a backslash before a line end continues the line: blank both, keeping offsets
        text = text.replace("\\\r\n", "   ").replace("\\\n", "  ").replace("\\\r", "  ")
    if "\r" in text:
        text = text.replace("\r\n", " \n").replace("\r", "\n")
    found: list[tuple[int, int]] = []
    depth = deepest = 0
    line = -1  # where the logical line of the current group of brackets starts, -1 before the first group
    after = 0  # where the last group at depth 0 ended
    for match in _BRACKETS.finditer(text):
        if match.group() in "([{":
            if not depth:
                at = match.start()
                if line < 0 or text.find("\n", after, at) >= 0:  # a new logical line
                    _add_long(found, text, line, after)
                    line = text.rfind("\n", 0, at) + 1
            depth += 1
            if depth > deepest:
                deepest = depth
        elif depth:
            depth -= 1
            if not depth:
                after = match.end()
    _add_long(found, text, line, len(text) if depth else after)
    if len(text) >= _LONG_LINE and max(map(len, text.split("\n"))) >= _LONG_LINE:  # long without brackets
        start = 0
        for piece in text.split("\n"):
            if len(piece) >= _LONG_LINE:
                found.append((start, start + len(piece)))
            start += len(piece) + 1
    return deepest, found


def _add_long(found: list[tuple[int, int]], text: str, start: int, after: int) -> None:
    """Add the logical line from `start` through the line end after `after`, when it is long."""
    if start < 0:
        return
    end = text.find("\n", after)
    end = len(text) if end < 0 else end
    if end - start >= _LONG_LINE:
        found.append((start, end))


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


# libcst's native parser refuses, as a syntax error, more than this many adjacent string literals in one
# concatenation ("shorter concatenated string") and more than this many `for` clauses in one comprehension
# ("shallower comprehension"): its grammar's MAX_RECURSION_DEPTH (libcst 1.x). CPython takes both.
LIBCST_MAX_PARTS = 3000


def refused_by_libcst(source: str, path: str, line: int, column: int, message: str) -> Finding:
    """The JAX000 for valid Python (CPython's parser took `source`) on which libcst's parser raised a syntax
    error (`message` at `line`:`column`): not a syntax error in the file, so it says jaxlint could not
    analyse it, naming the limit where it is a known one."""
    try:
        limit = _known_limit(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        limit = None
    if limit is not None:
        return parse_error(path, *limit)
    detail = message.strip().splitlines()[-1] if message.strip() else "no message"
    return parse_error(
        path, line, column, f"cannot analyse: valid Python that libcst's parser does not take ({detail})"
    )


def _known_limit(source: str) -> tuple[int, int, str] | None:
    run = _longest_string_run(source)
    if run is not None:
        count, line, column = run
        return (
            line,
            column,
            f"cannot analyse: {count:,} adjacent string literals, more than libcst's parser takes "
            f"({LIBCST_MAX_PARTS:,})",
        )
    for node in ast.walk(ast.parse(source)):
        generators = getattr(node, "generators", None)
        if generators is not None and len(generators) > LIBCST_MAX_PARTS:
            return (
                node.lineno,  # type: ignore[attr-defined]
                node.col_offset + 1,  # type: ignore[attr-defined]
                f"cannot analyse: a comprehension of {len(generators):,} `for` clauses, more than "
                f"libcst's parser takes ({LIBCST_MAX_PARTS:,})",
            )
    return None


def _longest_string_run(source: str) -> tuple[int, int, int] | None:
    """(literals, line, column) of the longest run of adjacent string literals (f-strings count as one each),
    when it is longer than `LIBCST_MAX_PARTS`."""
    import io
    import tokenize

    # Python 3.12 splits an f-string into FSTRING_START … FSTRING_END; older ones give one STRING.
    start, end = getattr(tokenize, "FSTRING_START", -1), getattr(tokenize, "FSTRING_END", -1)
    between = {tokenize.NL, tokenize.COMMENT}
    best: tuple[int, int, int] | None = None
    count, first, inside = 0, (1, 1), 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = token.type
        if inside:
            inside += (kind == start) - (kind == end)
            continue
        if kind in (tokenize.STRING, start):
            if not count:
                first = (token.start[0], token.start[1] + 1)
            count += 1
            inside = int(kind == start)
        elif kind not in between:
            if count > LIBCST_MAX_PARTS and (best is None or count > best[0]):
                best = (count, *first)
            count = 0
    return best
