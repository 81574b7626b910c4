"""Edits to names and strings in a changed top-level def or class (the server's per-unit reuse, `unit_reuse.py`):
whether the statement's old and new texts differ only where nothing outside it can tell them apart but through
the names it shares with other statements, which `unit_reuse._component` then walks again (with the old
statement's words as well as the new one's, and the classes defining a method whose name the edit respelled).

What the other statements' walks read of this one besides its names (ARCHITECTURE.md, the server, says why):
module-wide facts built from the whole module: the import table, `callee_names` and the index's passes over
every call site (`_sites`: transformations, control flow, tracing APIs, `applied_module`, `transformed_applies`,
`_sites_naming`, static arguments, tree maps, registrations), the x64 mentions, the attributes assigned
outside constructors. An edit passes (`refusal` returns "") when:
- the two texts have the same tokens (comments and blank lines aside) but for the spelling of names, strings
  and numbers: the same structure, the same keywords;
- no changed token stands on a decorator, import, `global`, `nonlocal` or `class` line, or names a def; in a
  class, every changed token is inside one of its methods (a class body's own lines make its fields);
- no changed name is a word jaxlint's analysis compares names with (`_known`: every dotted-name string in
  `jaxlint/analysis`, `jaxlint/rules` and their data, split at dots, and every word a dotted one's last word
  begins: `jax.random` stands for `jax.randomx` too), a keyword, or a static-argument keyword; no changed name
  or string holds `x64` or `register` (matched as substrings);
- every call the analysis may know (its function's last word or its qualified name is `_known`, a word of
  the settings' jit decorators, or its function is not a dotted name: `jax.jit(f)(x)`) is the same code
  before and after: so every call site a module-wide pass looks up in a table reads the same arguments, and
  the others' qualified names (`jnp.foo` -> `jnp.fo`) are in no table; and no call makes a TrainState
  (`APPLY_FN_FACTORIES`: `instances.applied_module` follows its `model.apply` to the binding of `model`);
- the attribute writes outside constructors count the same (`held_keys.writes_outside_constructors`), and
  (`unit_reuse.plan`, over the whole module) the pytree model holds the same classes and static fields
  (`pytrees`: it reads `tree_flatten` methods and field-making helpers' bodies).
The `_known` words are a generic bound: wider than the tables the module-wide passes read (an edit inside
`jnp.sum(...)` is refused although no such pass reads `jnp.sum`'s sites), so that a table added later is
covered without a change here.
"""

from __future__ import annotations

import functools
import io
import keyword
import re
import tokenize
from pathlib import Path
from typing import Any

import libcst as cst

from .analysis.objects.held import writes_outside_constructors
from .analysis.objects.pytrees import PytreeModel
from .analysis.semantics.library import APPLY_FN_FACTORIES, STATIC_KEYWORDS
from .syntax import CHILDREN, dotted_name

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IGNORED = frozenset({tokenize.COMMENT, tokenize.NL})
_FREE = frozenset(
    {tokenize.NAME, tokenize.STRING, tokenize.NUMBER, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
)
_REFUSED_HEADS = frozenset({"@", "import", "from", "global", "nonlocal", "class"})
_SUBSTRINGS = ("x64", "register")


def refusal(
    old: cst.CSTNode, new: cst.CSTNode, old_code: str, new_code: str, index: Any, code: Any
) -> tuple[str, frozenset[str]]:
    """Why an edit from `old` to `new` (a top-level def or class, its code) may not be reused ("" when it
    may), and the names it respelled (both spellings of each changed name token); `index` is the new
    module's (its import table is the old one's: no import line changed), `code` gives a node of the old
    module its code."""
    respelled: set[str] = set()
    why = _refusal(old, new, old_code, new_code, index, code, respelled)
    return why, frozenset(respelled)


def _refusal(
    old: cst.CSTNode,
    new: cst.CSTNode,
    old_code: str,
    new_code: str,
    index: Any,
    code: Any,
    respelled: set[str],
) -> str:
    if not _known()[2]:
        return "no tables"  # (jaxlint's sources not readable: nothing is known to be unknown)
    old_tokens, new_tokens = _scan(old_code), _scan(new_code)
    if old_tokens is None or new_tokens is None or len(old_tokens) != len(new_tokens):
        return "structure"
    in_class = type(old) is cst.ClassDef
    depth = 0  # of brackets
    for at, ((kind, before, head, in_def), (new_kind, after, _, _)) in enumerate(
        zip(old_tokens, new_tokens, strict=True)
    ):
        if kind != new_kind:
            return "structure"
        if kind == tokenize.OP:
            depth += (before in "([{") - (before in ")]}")
        if before == after:
            continue
        if kind not in _FREE:
            return "structure"
        previous = old_tokens[at - 1][1] if at else ""
        if head in _REFUSED_HEADS or previous in ("def", "class"):
            return "declarations"
        if in_class and not in_def and not _alone(old_tokens, at):  # (a docstring or other bare string)
            return "declarations"
        if kind == tokenize.NAME:
            respelled.update((before, after))
            if _keyword(before) or _keyword(after):
                return "keywords"
            following = old_tokens[at + 1][1] if at + 1 < len(old_tokens) else ""
            # An attribute's or a keyword argument's name: tables name them (`.apply`, `method=`).
            if (previous == "." or following == "=" and depth) and not (_plain(before) and _plain(after)):
                return "known words"
        if kind != tokenize.NUMBER and any(s in t.lower() for t in (before, after) for s in _SUBSTRINGS):
            return "known words"
    if _known_call_changed(old, new, index, code):
        return "known calls"
    if writes_outside_constructors(old) != writes_outside_constructors(new):
        return "attribute writes"
    return ""


def _scan(code: str) -> list[tuple[int, str, str, bool]] | None:
    """The tokens but comments and blank lines: (type, string, the first word of its logical line, whether it
    is in a def: on a def line or in a block a def line opened)."""
    out: list[tuple[int, str, str, bool]] = []
    opened: list[str] = []  # the heads of the lines that opened the enclosing blocks
    head, last_head, start = "", "", True
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            kind, string = token.type, token.string
            if kind in _IGNORED:
                continue
            if kind == tokenize.INDENT:
                opened.append(last_head)
            elif kind == tokenize.DEDENT:
                if opened:
                    opened.pop()
            elif start and kind != tokenize.NEWLINE:
                head, start = string, False
            elif head == "async" and len(out) and out[-1][1] == "async":
                head = string  # `async def`: a def line
            if kind == tokenize.NEWLINE:
                last_head, start = head, True
            out.append((kind, string, head, head == "def" or "def" in opened))
    except (tokenize.TokenError, SyntaxError):
        return None
    return out


def _alone(tokens: list[tuple[int, str, str, bool]], at: int) -> bool:
    """Whether the token at `at` is a string that is a statement of its own."""
    before = tokens[at - 1][0] if at else tokens[at][0]
    after = tokens[at + 1][0] if at + 1 < len(tokens) else tokens[at][0]
    return (
        tokens[at][0] == tokenize.STRING
        and before in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        and after == tokenize.NEWLINE
    )


def pytrees(module: cst.Module, imports: Any) -> tuple:
    """What the module's pytree model (`analysis.objects.pytrees`: a module-wide table of its pytree classes and their
    static fields, read by any statement's walk) holds, comparable."""
    model = PytreeModel(module, imports)
    classes = sorted(
        (c.name, c.how, sorted(c.static), sorted(c.data), sorted(c.field_types.items()))
        for c in model.by_node.values()
    )
    return model.static_names, classes


def _keyword(word: str) -> bool:
    return keyword.iskeyword(word) or keyword.issoftkeyword(word) or word in STATIC_KEYWORDS


def _plain(word: str) -> bool:
    """An attribute or keyword no table of the analysis names (nor a longer word one's prefix test takes)."""
    words, prefixes, _ = _known()
    return word not in words and not word.startswith(prefixes)


def _known_call_changed(old: cst.CSTNode, new: cst.CSTNode, index: Any, code: Any) -> bool:
    """Whether a call the analysis may know changed (or the two trees differ in shape: an f-string's parts)."""
    stack = [(old, new)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return True
        if type(a) is cst.Call and (_significant(a, index) or _significant(b, index)):
            if code(a) != code(b) or index.imports.qualname(a.func) in APPLY_FN_FACTORIES:
                # (`applied_module` follows the factory's `model.apply` to `model`'s binding, anywhere in
                # the statement, and any statement's walk reads it: `state.apply_fn(...)`)
                return True
            continue  # the same call: nothing under it changed
        below_a, below_b = CHILDREN[type(a)](a), CHILDREN[type(b)](b)
        if len(below_a) != len(below_b):
            return True
        stack.extend(zip(below_a, below_b, strict=True))
    return False


def _significant(call: cst.Call, index: Any) -> bool:
    dotted = dotted_name(call.func)
    if dotted is None:
        return True  # `jax.jit(f)(x)`, `fs[0](x)`: what it calls is known only to the analysis
    last = dotted.rpartition(".")[2]
    words, prefixes, strings = _known()
    if last in words or last.startswith(prefixes) or "register" in dotted.lower():
        return True
    if dotted in index.jit_decorators or any(d.rpartition(".")[2] == last for d in index.jit_decorators):
        return True  # the settings' own transformations
    qualname = index.imports.qualname(call.func)
    return qualname is not None and qualname in strings


# A string literal's text up to its end or its first `{` (an f-string's field): a name or a dotted name.
_STRING = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\.?)(?=["'{])""")


@functools.cache
def _known() -> tuple[frozenset[str], tuple[str, ...], frozenset[str]]:
    """The words (split at dots) and whole dotted names of every string in jaxlint's analysis and rules that
    could name something (read from their source text: every quoted name, docstrings' and comments' too, a
    few more than the code holds), and their data files' words; with the last words of the dotted ones,
    which a `startswith` test may match a longer word with."""
    root = Path(__file__).parent
    strings: set[str] = set()
    try:
        for folder in ("analysis", "rules"):
            for path in sorted((root / folder).rglob("*")):
                if path.suffix == ".py":
                    strings.update(_STRING.findall(path.read_text(encoding="utf-8")))
                elif path.is_file() and path.suffix == ".txt":
                    for line in path.read_text(encoding="utf-8").splitlines():
                        if not line.startswith("#"):
                            strings.update(_WORD.findall(line))
    except (OSError, ValueError):
        strings.clear()
    words = {word for string in strings for word in string.split(".") if word}
    prefixes = {string.rstrip(".").rpartition(".")[2] for string in strings if "." in string}
    return frozenset(words), tuple(sorted(p for p in prefixes if p)), frozenset(strings)
