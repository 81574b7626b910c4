"""Autofix: rules describe node-level edits; this module applies them and writes files safely.

A rule offers a fix by passing `fix=replace(node, replacement, SAFE or UNSAFE)` to `ctx.report`: `node` is a
node of the tree the engine parsed (matched by identity, never by text) and `replacement` a new node built
mostly from the old one's children, so formatting and comments inside reused nodes survive. `replace`
refuses an edit that would drop a comment. The engine turns each `Fix` into the finding's `fix` text (the
replacement source) and, for `--fix`, hands the `Fix` objects of unsuppressed findings to a `FixCollector`.

`fix_source` lints, applies the non-overlapping fixes allowed by the safety level, re-parses the result and
repeats (a fix that sat inside another one's node gets its turn in the next round) until nothing is left to
fix, so running it twice changes nothing the second time. `fix_file` writes the result atomically (a temp file
in the same folder, the file's mode kept, then `os.replace`); `fix_files` does that for many files at once.
Notebooks are linted but never rewritten.

This module also holds the small builders rules use to write their replacements (string literals, format
templates, the name that `jax.debug.print` has in a module).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import tempfile
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import libcst as cst

if TYPE_CHECKING:
    from .config import Config
    from .finding import Finding

SAFE, UNSAFE = "safe", "unsafe"
_MAX_ROUNDS = 10  # fixes whose nodes overlap are applied one round each


@dataclasses.dataclass(frozen=True, eq=False)
class Fix:
    """Replace `node` (by identity) with `replacement`."""

    node: cst.CSTNode
    replacement: cst.CSTNode
    safety: str = SAFE


def replace(node: cst.CSTNode, replacement: cst.CSTNode, safety: str = SAFE) -> Fix | None:
    """A fix, or None when the replacement would lose a comment of the original."""
    if _count_comments(replacement) < _count_comments(node):
        return None
    return Fix(node, replacement, safety)


def _count_comments(node: cst.CSTNode) -> int:
    count = 0
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Comment):
            count += 1
        stack.extend(current.children)
    return count


def describe(module: cst.Module, fix: Any, default_safety: str | None) -> tuple[str | None, str | None]:
    """The (replacement source, safety) a finding shows for its fix."""
    if fix is None:
        return None, None
    if isinstance(fix, Fix):
        return module.code_for_node(fix.replacement), fix.safety
    return str(fix), default_safety


class FixCollector:
    """Filled by the engine: the module it parsed and the (finding, fix) pairs of unsuppressed findings."""

    def __init__(self) -> None:
        self.module: cst.Module | None = None
        self.items: list[tuple[Finding, Fix]] = []

    def add(self, module: cst.Module, finding: Finding, fix: Any) -> None:
        if isinstance(fix, Fix):
            self.module = module
            self.items.append((finding, fix))


# -- applying ---------------------------------------------------------------------------------------------


class _Replacer(cst.CSTTransformer):
    def __init__(self, edits: dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        replacement = self.edits.get(id(original_node))
        return updated_node if replacement is None else replacement


def _descendants(node: cst.CSTNode) -> set[int]:
    from .analysis.walk import walk

    return {id(n) for n in walk(node)}


def choose(items: Iterable[tuple[Finding, Fix]], unsafe: bool) -> list[tuple[Finding, Fix]]:
    """The fixes to apply this round: allowed by the safety level, first in the file first, none inside another."""
    allowed = [(f, x) for f, x in items if x.safety == SAFE or unsafe]
    allowed.sort(key=lambda pair: pair[0].sort_key())
    chosen: list[tuple[Finding, Fix]] = []
    covered: set[int] = set()
    for finding, fix in allowed:
        inside = _descendants(fix.node)
        if id(fix.node) in covered or inside & {id(x.node) for _, x in chosen}:
            continue
        if any(x.node is fix.node for _, x in chosen):
            continue
        chosen.append((finding, fix))
        covered |= inside
    return chosen


def apply(module: cst.Module, fixes: Iterable[Fix]) -> str:
    edits = {id(fix.node): fix.replacement for fix in fixes}
    if not edits:
        return module.code
    return module.visit(_Replacer(edits)).code


# -- sources and files -------------------------------------------------------------------------------------


@dataclasses.dataclass
class FixResult:
    path: str
    source: str  # as read
    fixed: str  # after every applied fix (== source when nothing applied)
    findings: list[Finding]  # what remains after fixing
    applied: Counter = dataclasses.field(default_factory=Counter)  # code -> fixes applied
    written: bool = False
    error: str | None = None  # why the file could not be written

    @property
    def changed(self) -> bool:
        return self.fixed != self.source

    def diff(self) -> str:
        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            self.source.splitlines(keepends=True),
            self.fixed.splitlines(keepends=True),
            fromfile=f"a/{self.path}",
            tofile=f"b/{self.path}",
        )
        out = []
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)


def fix_source(source: str, path: str, config: Config, unsafe: bool = False) -> FixResult:
    """Fix one source text (nothing is written). Notebooks are linted, not fixed."""
    from .engine import lint_text, parse_error
    from .runner import lint_source_for, settings_for

    if path.endswith(".ipynb"):
        return FixResult(path, source, source, lint_source_for(source, path, config))
    settings = settings_for(config, path)
    current = source
    applied: Counter = Counter()
    for _ in range(_MAX_ROUNDS + 1):
        collector = FixCollector()
        try:
            findings = lint_text(current, path, settings, fixes=collector)
        except RecursionError:
            findings = [parse_error(path, 1, 1, "cannot analyse: nesting too deep")]
            break
        except Exception as error:  # a bug in jaxlint must not cost the other files
            message = f"internal error while linting ({type(error).__name__}: {error})"
            findings = [parse_error(path, 1, 1, message)]
            break
        chosen = choose(collector.items, unsafe) if collector.module is not None else []
        if not chosen:
            break
        new = apply(collector.module, [fix for _, fix in chosen])
        if new == current or not _parses(new):
            break
        current = new
        applied.update(finding.code for finding, _ in chosen)
    if not config.enabled("JAX000") or "JAX000" in config.ignored_for(path):
        findings = [f for f in findings if f.code != "JAX000"]
    return FixResult(path, source, current, findings, applied)


def _parses(source: str) -> bool:
    try:
        cst.parse_module(source)
    except Exception:
        return False
    return True


def fix_file(path: str, config: Config, unsafe: bool = False, write: bool = True) -> FixResult:
    """Fix one file; with `write`, replace it atomically when something changed."""
    import io
    import tokenize

    from .engine import decode
    from .runner import lint_file

    try:
        with open(path, "rb") as handle:
            data = handle.read()
        source = decode(data)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (OSError, UnicodeError, SyntaxError, LookupError):
        return FixResult(path, "", "", lint_file(path, config))  # reports why, as JAX000
    result = fix_source(source, path, config, unsafe)
    if write and result.changed:
        try:
            write_atomic(path, result.fixed.encode(encoding))
            result.written = True
        except (OSError, UnicodeEncodeError) as error:
            result.error = str(error)
    return result


def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temp file in the same folder and `os.replace`, keeping the mode."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    mode = os.stat(target).st_mode & 0o7777
    fd, temp = tempfile.mkstemp(
        dir=folder, prefix="." + os.path.basename(target) + ".", suffix=".jaxlint-tmp"
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _fix_batch(paths: list[str], config: Config, unsafe: bool, write: bool) -> list[FixResult]:
    return [fix_file(path, config, unsafe, write) for path in paths]


def fix_files(
    paths: Iterable[str], config: Config, unsafe: bool = False, write: bool = True, jobs: int | None = None
) -> list[FixResult]:
    """Fix many files, in worker processes like `runner.lint_files`; results in path order."""
    from concurrent.futures import ProcessPoolExecutor

    files = list(paths)
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(files) < 8:
        results = _fix_batch(files, config, unsafe, write)
    else:
        batches = [files[i :: jobs * 4] for i in range(jobs * 4)]
        results = []
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            n = len(batches)
            for batch in pool.map(_fix_batch, batches, [config] * n, [unsafe] * n, [write] * n):
                results.extend(batch)
    results.sort(key=lambda r: r.path)
    return results


# -- builders for rules --------------------------------------------------------------------------------------


def string_literal(value: str, quote: str = '"') -> str:
    """Python source for the str `value`, in `quote` quotes, escaping only what must be escaped."""
    out = []
    for ch in value:
        if ch == "\\":
            out.append("\\\\")
        elif ch == quote:
            out.append("\\" + quote)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif not ch.isprintable():
            out.append(repr(ch)[1:-1])
        else:
            out.append(ch)
    return quote + "".join(out) + quote


def fstring_text(part: cst.FormattedStringText, string: cst.FormattedString) -> str | None:
    """The text a literal part of an f-string stands for (`{{` read as `{`), or None when unsure."""
    import ast

    prefix = "".join(c for c in string.prefix if c in "rRbBuU")
    quote = string.quote
    try:
        value = ast.literal_eval(f"{prefix}{quote}{part.value}{quote}")
    except (SyntaxError, ValueError):
        return None
    if not isinstance(value, str):
        return None
    return value.replace("{{", "{").replace("}}", "}")


_BINDINGS_CACHE: list[tuple[cst.Module, dict[str, str]]] = []


def module_import_bindings(module: cst.Module) -> dict[str, str]:
    """Local name -> dotted module path for the imports at the top level of `module` (not inside functions)."""
    for cached, bindings in _BINDINGS_CACHE:
        if cached is module:
            return bindings
    found = _import_bindings(module)
    _BINDINGS_CACHE[:] = [(module, found)]
    return found


def _import_bindings(module: cst.Module) -> dict[str, str]:
    from .analysis.names import dotted_name

    found: dict[str, str] = {}
    statements: list[cst.CSTNode] = list(module.body)
    while statements:
        statement = statements.pop(0)
        if isinstance(statement, cst.If) and (dotted_name(statement.test) or "").endswith("TYPE_CHECKING"):
            continue  # imports for type checkers only: not bound at run time
        if isinstance(statement, (cst.If, cst.Try)):
            statements.extend(statement.body.body)
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted_name(alias.name)
                    if full is None:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        found[alias.asname.name.value] = full
                    else:
                        found[full.split(".")[0]] = full.split(".")[0]
            elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                if isinstance(small.names, cst.ImportStar):
                    continue
                base = dotted_name(small.module)
                for alias in small.names:
                    name = dotted_name(alias.name)
                    if base is None or name is None:
                        continue
                    local = name
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        local = alias.asname.name.value
                    found[local] = f"{base}.{name}"
    return found


def reference_to(qualname: str, ctx: Any) -> cst.BaseExpression | None:
    """An expression that means `qualname` (e.g. `jax.debug.print`) at `ctx`, through a top-level import."""
    bindings = module_import_bindings(ctx.index.module)
    for local, target in sorted(bindings.items(), key=lambda item: (len(item[1]), item[0])):
        if qualname == target or qualname.startswith(target + "."):
            rest = qualname[len(target) :].lstrip(".")
            text = local + ("." + rest if rest else "")
            expr = cst.parse_expression(text)
            if ctx.qualname(expr) == qualname:
                return expr
    return None


@dataclasses.dataclass
class Piece:
    """A part of a message: literal `text`, or a `value` formatted with `conversion` and `spec`."""

    text: str | None = None
    value: cst.BaseExpression | None = None
    conversion: str | None = None
    spec: str | None = None


def string_pieces(node: cst.BaseExpression) -> list[Piece] | None:
    """The pieces of a str literal, f-string or implicit concatenation of them; None for anything else."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return [Piece(text=value)] if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_pieces(node.left), string_pieces(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, cst.FormattedString):
        if "b" in node.prefix.lower():
            return None
        pieces = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                text = fstring_text(part, node)
                if text is None:
                    return None
                pieces.append(Piece(text=text))
                continue
            assert isinstance(part, cst.FormattedStringExpression)
            spec = None
            if part.format_spec is not None:
                if not all(isinstance(p, cst.FormattedStringText) for p in part.format_spec):
                    return None  # a nested field in the spec (`{x:{width}}`)
                spec = "".join(p.value for p in part.format_spec)  # type: ignore[union-attr]
                if any(c in spec for c in "\\'\"{}"):
                    return None
            conversion = part.conversion
            if part.equal is not None:  # `{x=}` prints `x=` and then the repr
                spaces = (
                    part.whitespace_before_expression,
                    part.whitespace_after_expression,
                    part.equal.whitespace_before,
                    part.equal.whitespace_after,
                )
                if any(not isinstance(s, cst.SimpleWhitespace) or s.value for s in spaces):
                    return None
                source = cst.Module(body=[]).code_for_node(part.expression)
                if "\n" in source:
                    return None
                pieces.append(Piece(text=source + "="))
                if conversion is None and spec is None:
                    conversion = "r"
            pieces.append(Piece(value=part.expression, conversion=conversion, spec=spec))
        return pieces
    return None


def template(pieces: list[Piece]) -> tuple[str, list[cst.BaseExpression]]:
    """A `str.format` template that prints `pieces`, and the values it takes in order."""
    out: list[str] = []
    values: list[cst.BaseExpression] = []
    for piece in pieces:
        if piece.value is None:
            out.append((piece.text or "").replace("{", "{{").replace("}", "}}"))
            continue
        field = (
            "{"
            + (f"!{piece.conversion}" if piece.conversion else "")
            + (f":{piece.spec}" if piece.spec else "")
        )
        out.append(field + "}")
        values.append(as_argument(piece.value))
    return "".join(out), values


def as_argument(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node` made fit to stand alone as a call argument (an unparenthesised tuple gets parentheses)."""
    if isinstance(node, (cst.Tuple, cst.Yield, cst.NamedExpr)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def quote_of(node: cst.BaseExpression | None) -> str:
    """The quote character a string literal uses (`"` when there is none to copy)."""
    while isinstance(node, cst.ConcatenatedString):
        node = node.left
    if isinstance(node, (cst.SimpleString, cst.FormattedString)):
        return node.quote[0]
    return '"'
