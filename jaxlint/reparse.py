"""Parse an edited text again by re-parsing only the top-level statements the edit touched (the server's
incremental editing): the unchanged statements' nodes are reused, so the module is the one a full parse
builds (libcst's nodes are frozen and compared by structure) at the cost of parsing a few statements.

A text is cut into spans, one per top-level statement (its leading blank and comment lines included), after
the module's header. An edit (the old and new texts' common start and end) damages the statements holding
its changed characters; those, one unchanged statement on each side, are parsed again as a module of their
own (a "chunk") and put in place of the old ones. What could make the chunk's parse differ from a full
parse falls back to a full parse:
- what libcst decides from the start of the file (the default indent: the whitespace of the first INDENT
  token, which opens the first top-level statement holding an indented block; the default newline: the first
  line ending; the coding line, in the first two lines): the edit must start after line 2; the chunk's detected
  newline must be the module's; and either the chunk starts after the first statement holding an indented
  block (the first INDENT is in the unchanged text before it), or the chunk holds an indented block and
  detected the module's indent (the first INDENT of the new text is the chunk's: none before it), or neither
  the chunk nor the statements it replaces hold one (the first INDENT of both texts is in the unchanged text
  after it);
  (`__future__` imports change nothing: libcst's native parser, the only one libcst 1.x has, takes no
  configuration but the encoding; `bench/reparse_equivalence.py --future` checks texts that start with one);
- the chunk's edges: its first statement's leading lines come back as the chunk's header (merged back); its
  first and last statements are the unchanged neighbours, whose text must come out as before (a comment
  line after a block that the edit moves into or out of the block's footer changes them); lines after its
  last statement (a footer) are allowed only at the end of the file;
- a syntax error anywhere in the chunk: the whole text is parsed, whose error is the one to report.
"""

from __future__ import annotations

import bisect
import dataclasses

import libcst as cst

from .syntax import parse_module


@dataclasses.dataclass(frozen=True)
class Parsed:
    """A text, its module, and where each top-level statement's span starts (offsets into the text)."""

    text: str
    module: cst.Module
    starts: tuple[int, ...]
    first_block: int  # index of the first top-level statement holding an indented block (-1: none)


def parse_whole(text: str) -> Parsed:
    """A full parse (raises libcst's errors) and its statements' spans."""
    module = parse_module(text)
    return _with_spans(text, module)


def _with_spans(text: str, module: cst.Module) -> Parsed:
    """`module` with its statements' spans; none (so no splicing) where libcst's code generation does not give
    the text back (a line continuation in indentation is one case)."""
    pieces = [module.code_for_node(line) for line in module.header]
    starts = []
    at = sum(len(piece) for piece in pieces)
    for statement in module.body:
        starts.append(at)
        pieces.append(module.code_for_node(statement))
        at += len(pieces[-1])
    pieces.extend(module.code_for_node(line) for line in module.footer)
    if not _spells(text, pieces, module.has_trailing_newline):
        return Parsed(text, module, (), -1)
    return Parsed(text, module, tuple(starts), _first_block(module.body))


def _spells(text: str, pieces: list[str], trailing_newline: bool) -> bool:
    """Whether the pieces, one after the other, are `text` (the module drops a last newline the text lacks)."""
    at = 0
    for piece in pieces:
        if text[at : at + len(piece)] != piece:
            return not trailing_newline and at + len(piece) == len(text) + 1 and piece.startswith(text[at:])
        at += len(piece)
    return at == len(text)


def _first_block(body: tuple | list) -> int:
    for index, statement in enumerate(body):
        if _holds_block(statement):
            return index
    return -1


def _holds_block(node: cst.CSTNode) -> bool:
    """Whether a statement's text has an INDENT token: an indented block in any of its clauses (`else`,
    `except`, `finally`, `case` included; an indented block nests only inside another)."""
    if isinstance(node, (cst.IndentedBlock, cst.Match)):
        return True
    clauses = [getattr(node, field, None) for field in ("body", "orelse", "finalbody")]
    clauses.extend(getattr(node, "handlers", ()))
    return any(isinstance(clause, cst.CSTNode) and _holds_block(clause) for clause in clauses)


def reparse(old: Parsed | None, text: str) -> Parsed:
    """`text` parsed, reusing `old`'s statements where the edit leaves them alone (see the module's doc);
    raises what a full parse raises."""
    if old is None or old.text == text:
        return parse_whole(text) if old is None else old
    spliced = _splice(old, text)
    return spliced if spliced is not None else parse_whole(text)


def _splice(old: Parsed, text: str) -> Parsed | None:
    starts, body, count = old.starts, old.module.body, len(old.module.body)
    if count < 3:
        return None
    head, tail = _common_ends(old.text, text)
    if text.count("\n", 0, head) < 2:
        return None  # the first two lines (a coding line) changed
    delta = len(text) - len(old.text)
    changed_end = len(old.text) - tail  # first unchanged offset after the change, in the old text
    damaged_first = bisect.bisect_right(starts, head - 1) - 1 if head > 0 else -1
    damaged_last = bisect.bisect_right(starts, changed_end) - 1
    first, last = damaged_first - 1, damaged_last + 1  # one unchanged statement on each side
    if first < 0 or last < first + 1:
        return None
    at_end = last >= count - 1
    last = min(last, count - 1)
    chunk_start = starts[first]
    old_end = starts[last + 1] if not at_end else len(old.text)
    if at_end and changed_end > len(old.text):
        return None
    if not at_end and starts[last] < changed_end:
        return None  # the right neighbour is not untouched
    new_end = old_end + delta
    chunk_text = text[chunk_start:new_end]
    try:
        chunk = parse_module(chunk_text)
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None
    module = old.module
    if _first_block(chunk.body) >= 0:
        if chunk.default_indent != module.default_indent:
            return None  # (where no INDENT precedes the chunk, the new text's first is the chunk's)
    elif first <= old.first_block <= last:
        return None  # the old text's first INDENT is gone: the next one, after the chunk, decides
    if (
        chunk.default_newline != module.default_newline
        or len(chunk.body) < 2
        or (chunk.footer and not at_end)
        or (not at_end and not chunk.has_trailing_newline)
    ):
        return None
    opening = chunk.body[0]
    if chunk.header:
        opening = opening.with_changes(leading_lines=(*chunk.header, *opening.leading_lines))
    old_first_text = old.text[starts[first] : starts[first + 1]]
    if chunk.code_for_node(opening) != old_first_text:
        return None
    pieces = [old_first_text, *(chunk.code_for_node(s) for s in chunk.body[1:])]
    if not _spells(
        chunk_text,
        [*pieces, *(chunk.code_for_node(line) for line in chunk.footer)],
        chunk.has_trailing_newline,
    ):
        return None
    lengths = [len(piece) for piece in pieces]
    if not at_end:
        old_last_text = old.text[starts[last] : old_end]
        if chunk.code_for_node(chunk.body[-1]) != old_last_text:
            return None
    # The neighbours came back with their old text: their old nodes stand for them (the same tree), so that
    # only the damaged statements are new objects (what `unit_reuse.changed` compares by identity).
    middle = chunk.body[1:-1] if not at_end else chunk.body[1:]
    right = (body[last], *body[last + 1 :]) if not at_end else ()
    if (
        at_end
        and damaged_last + 1 == count - 1
        and starts[count - 1] >= changed_end
        and chunk.code_for_node(chunk.body[-1]) == module.code_for_node(body[-1])
    ):
        # An untouched last statement, its text as before (the same text, indent and newline: the same
        # node), keeps its old node too; the footer after it is the chunk's.
        middle, right = chunk.body[1:-1], (body[-1],)
    new_body = (*body[:first], body[first], *middle, *right)
    changes: dict = {"body": new_body}
    if at_end:
        changes["footer"] = chunk.footer
        changes["has_trailing_newline"] = chunk.has_trailing_newline
    new_module = module.with_changes(**changes)
    new_starts = list(starts[:first])
    at = chunk_start
    for length in lengths:
        new_starts.append(at)
        at += length
    if not at_end:
        new_starts.extend(start + delta for start in starts[last + 1 :])
    block = old.first_block if 0 <= old.first_block < first else _first_block(new_body)
    return Parsed(text, new_module, tuple(new_starts), block)


def _common_ends(old: str, new: str) -> tuple[int, int]:
    """How many characters the two texts share at their start, then at their end (not overlapping)."""
    limit = min(len(old), len(new))
    low, high = 0, limit  # binary search on slices: C-speed comparisons of long texts
    while low < high:
        middle = (low + high + 1) // 2
        if old[:middle] == new[:middle]:
            low = middle
        else:
            high = middle - 1
    head = low
    low, high = 0, limit - head
    while low < high:
        middle = (low + high + 1) // 2
        if old[len(old) - middle :] == new[len(new) - middle :]:
            low = middle
        else:
            high = middle - 1
    return head, low
