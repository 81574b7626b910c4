"""`--add-noqa`: suppress every current finding with a `# noqa: CODE` on its line, as ruff's flag does.

A line that already has `# noqa: A1` gets the missing codes appended (`# noqa: A1, JAX101`); a bare `# noqa`
already suppresses everything. A line that ends inside a string (or continues with a backslash) cannot take
a comment there, and is named instead. Notebooks and JAX000 findings are left alone. Files are written as
`--fix` writes them (`autofix`): atomically, keeping the encoding, never a file changed since it was read.
"""

from __future__ import annotations

import io
import tokenize
from collections import defaultdict
from collections.abc import Iterable

from .config import Config
from .finding import PARSE_ERROR_CODE, Finding
from .suppression import noqa_edits
from .text_lines import split_lines


def add_noqa(source: str, wanted: dict[int, set[str]]) -> tuple[str, int, list[tuple[int, str]]]:
    """`source` with `# noqa` for each line -> codes; the number of lines changed, and (line, why) for the
    lines where no comment can go."""
    edits, refused = noqa_edits(source, wanted)
    lines = split_lines(source)
    for number, (start, end, text) in edits.items():
        line = lines[number - 1]
        lines[number - 1] = line[:start] + text + line[end:]
    return "".join(lines), len(edits), sorted(refused.items())


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
