"""Builders rules use to write their replacements: string literals, format templates, and the name that a
qualified name (e.g. `jax.debug.print`) has in a module. The fix record itself is in `jaxlint/fix.py`."""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any

import libcst as cst

from ..analysis import ImportTable, dotted_name
from ..syntax import walk

# A backslash escape that names a character by number or name; `\\.` is matched too so that `\\\\x41` (an
# escaped backslash, then text) is not read as an escape.
_NUMERIC_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|.)", re.DOTALL
)


class Spelled(str):
    """A str that remembers how the source spelled some of its characters (`\\u00e9` for `é`), so that
    `string_literal` writes them back the same way: a fix must not turn an escape into a character the
    file's encoding may not hold, nor change text it did not mean to."""

    spellings: dict[str, str]


def _spellings(body: str, prefix: str) -> dict[str, str]:
    """Character -> escape, for the numeric and named escapes in a literal's `body` (none in raw strings)."""
    if "\\" not in body or "r" in prefix.lower():
        return {}
    found = {}
    for match in _NUMERIC_ESCAPE.finditer(body):
        if match.group(1) in ("n", "t", "r", "\\", "'", '"'):
            continue  # string_literal writes these the same way (and a quote as the new quote needs)
        try:
            char = ast.literal_eval(f'"{match.group()}"')
        except (SyntaxError, ValueError):
            continue
        # Printable ASCII is written as itself (as before); the rest keeps its escape.
        if isinstance(char, str) and len(char) == 1 and (ord(char) > 127 or not char.isprintable()):
            found[char] = match.group()
    return found


def string_literal(value: str, quote: str = '"') -> str:
    """Python source for the str `value`, in `quote` quotes, escaping only what must be escaped (and what
    the source escaped, when `value` is `Spelled`)."""
    spellings = getattr(value, "spellings", {})
    out = []
    for ch in value:
        if ch in spellings:
            out.append(spellings[ch])
        elif ch == "\\":
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
    """The names the module-level imports bind, resolved by `ImportTable` (imports inside functions and
    under `if TYPE_CHECKING:` are left out: they are not bound where a fix may use them)."""
    table = ImportTable()
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
                table.add_import(small)
            elif isinstance(small, cst.ImportFrom):
                table.add_import_from(small)
    return table.names


def reference_to(qualname: str, ctx: Any, nearest: bool = False) -> cst.BaseExpression | None:
    """An expression that means `qualname` (e.g. `jax.debug.print`) at `ctx`, through a top-level import: of
    the shortest module path (`jax.debug.print`), or with `nearest` of the longest (`jnp.exp`, not
    `jax.numpy.exp`)."""
    bindings = module_import_bindings(ctx.index.module)
    order = sorted(bindings.items(), key=lambda item: (len(item[1]), item[0]))
    if nearest:
        order.sort(key=lambda item: -len(item[1]))
    for local, target in order:
        if qualname == target or qualname.startswith(target + "."):
            rest = qualname[len(target) :].lstrip(".")
            text = local + ("." + rest if rest else "")
            expr = cst.parse_expression(text)
            if ctx.qualname(expr) == qualname:
                return expr
    return None


_NAMES_CACHE: list[tuple[cst.Module, frozenset[str]]] = []


def name_is_free(name: str, ctx: Any) -> bool:
    """Whether `name` appears nowhere in the module (as a name or an attribute), so an import may bind it."""
    module = ctx.index.module
    for cached, names in _NAMES_CACHE:
        if cached is module:
            return name not in names
    found = frozenset(node.value for node in walk(module) if type(node) is cst.Name)
    _NAMES_CACHE[:] = [(module, found)]
    return name not in found


@dataclasses.dataclass
class Piece:
    """A part of a message: literal `text`, or a `value` formatted with `conversion` and `spec`."""

    text: str | None = None
    value: cst.BaseExpression | None = None
    conversion: str | None = None
    spec: str | None = None
    spellings: dict[str, str] | None = None  # how the source escaped characters of `text`


def string_pieces(node: cst.BaseExpression) -> list[Piece] | None:
    """The pieces of a str literal, f-string or implicit concatenation of them; None for anything else."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if not isinstance(value, str):
            return None
        return [Piece(text=value, spellings=_spellings(node.raw_value, node.prefix))]
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
                pieces.append(Piece(text=text, spellings=_spellings(part.value, node.prefix)))
                continue
            assert isinstance(part, cst.FormattedStringExpression)
            spec = None
            if part.format_spec is not None:
                texts = [p for p in part.format_spec if isinstance(p, cst.FormattedStringText)]
                if len(texts) != len(part.format_spec):
                    return None  # a nested field in the spec (`{x:{width}}`)
                spec = "".join(p.value for p in texts)
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
    spellings: dict[str, str] = {}
    for piece in pieces:
        if piece.value is None:
            out.append((piece.text or "").replace("{", "{{").replace("}", "}}"))
            spellings.update(piece.spellings or {})
            continue
        field = (
            "{"
            + (f"!{piece.conversion}" if piece.conversion else "")
            + (f":{piece.spec}" if piece.spec else "")
        )
        out.append(field + "}")
        values.append(as_argument(piece.value))
    text = Spelled("".join(out))
    text.spellings = spellings
    return text, values


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
