"""`--add-noqa`: suppress every current finding with a `# noqa: CODE` on its line, as ruff's flag does.

A line that already has `# noqa: A1` gets the missing codes appended (`# noqa: A1, JAX101`); a bare `# noqa`
already suppresses everything. A line that ends inside a string (or continues with a backslash) cannot take
a comment there, and is named instead. Notebooks and JAX000 findings are left alone. Files are written as
`--fix` writes them (`autofix`): atomically, keeping the encoding, never a file changed since it was read.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from collections.abc import Iterable

from .config import Config
from .finding import PARSE_ERROR_CODE, Finding
from .text_lines import split_lines

_NOQA_CODES = re.compile(r"#\s*noqa:\s?[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*", re.IGNORECASE)
_BARE_NOQA = re.compile(r"#\s*noqa(?!:)", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


def add_noqa(source: str, wanted: dict[int, set[str]]) -> tuple[str, int, list[tuple[int, str]]]:
    """`source` with `# noqa` for each line -> codes; the number of lines changed, and (line, why) for the
    lines where no comment can go."""
    comments: dict[int, tokenize.TokenInfo] = {}
    closed: set[int] = set()  # lines that end inside a multi-line token
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token
            elif token.start[0] < token.end[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                closed.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return source, 0, [(line, "the file does not tokenize") for line in sorted(wanted)]
    lines = split_lines(source)
    refused: list[tuple[int, str]] = []
    changed = 0
    for number, codes in sorted(wanted.items()):
        if not 1 <= number <= len(lines):
            continue
        text = lines[number - 1]
        body = text.rstrip("\r\n")
        ending = text[len(body) :]
        if number in closed or body.rstrip().endswith("\\"):
            refused.append((number, "the line ends inside a string or continues on the next"))
            continue
        comment = comments.get(number)
        new = None
        if comment is not None and _NOQA_CODES.search(comment.string):
            found = _NOQA_CODES.search(comment.string)
            assert found is not None
            present = set(_CODE.findall(found.group()[found.group().index(":") + 1 :]))
            missing = sorted(codes - present)
            if missing:
                at = comment.start[1] + found.end()
                new = body[:at] + "".join(f", {code}" for code in missing) + body[at:]
        elif comment is None or not _BARE_NOQA.search(comment.string):
            new = f"{body.rstrip()}  # noqa: {', '.join(sorted(codes))}"
        if new is not None and new != body:
            lines[number - 1] = new + ending
            changed += 1
    return "".join(lines), changed, refused


def add_noqa_to_files(findings: Iterable[Finding], config: Config) -> tuple[int, list[tuple[str, int, str]]]:
    """Add the comments to the files the findings are in; (directives added, [(path, line, why not)])."""
    from .autofix import write_checked
    from .lint import read_source
    from .selection import settings_for

    by_file: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for f in findings:
        if f.code != PARSE_ERROR_CODE and f.cell is None and f.path != "-":
            by_file[f.path][f.line].add(f.code)
    added = 0
    refused: list[tuple[str, int, str]] = []
    for path, wanted in sorted(by_file.items()):
        read = read_source(path, settings_for(config, path))
        if isinstance(read, list):
            refused.append((path, 1, "cannot write: the file cannot be read"))
            continue
        data, source = read
        new, changed, problems = add_noqa(source, wanted)
        refused += [(path, line, why) for line, why in problems]
        if not changed:
            continue
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            error = write_checked(path, new.encode(encoding), data, config)
        except (OSError, UnicodeEncodeError) as failure:
            error = str(failure)
        if error is not None:
            refused.append((path, 1, f"cannot write: {error}"))
            continue
        added += changed
    return added, refused
