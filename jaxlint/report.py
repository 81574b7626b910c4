"""Output formats: text, json, sarif (2.1.0), github (workflow commands), and --statistics; the others ruff
has, and `render` by name, are in `report_formats.py`."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ._version import __version__
from .finding import PARSE_ERROR_CODE, PARSE_ERROR_NAME, RUNTIME_ERROR_CODE, RUNTIME_ERROR_NAME, Finding

_DOCS_URL = "https://github.com/jaxlint/jaxlint/blob/main/docs/rules.md#{code}"


# C0 and C1 controls and DEL: a path, a message or a (cached, hence writable by anyone who can write the
# project) finding must not move the cursor, recolour or retitle the terminal, or forge extra output lines.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(value: str) -> str:
    """`value` safe to print to a terminal: control characters shown as escapes (`\\x1b`, `\\n`)."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), value)


def location(f: Finding) -> str:
    cell = f"cell {f.cell}:" if f.cell is not None else ""
    return f"{clean(f.path)}:{cell}{f.line}:{f.column}"


def fixable(f: Finding, unsafe: bool = False) -> bool:
    """Whether `--fix` (with `unsafe`: `--unsafe-fixes`) would apply this finding's fix."""
    return f.fix is not None and (f.fix_safety != "unsafe" or unsafe) and not f.path.endswith(".ipynb")


def text(findings: list[Finding], unsafe: bool = False) -> str:
    """`path:line:col: CODE message`, with ruff's `[*]` before the message when `--fix` would fix it."""
    return "".join(
        f"{location(f)}: {clean(f.code)} {'[*] ' if fixable(f, unsafe) else ''}{clean(f.message)}\n"
        for f in findings
    )


def summary(findings: list[Finding], unsafe: bool = False, hints: bool = True, fixed: int = 0) -> str:
    """The closing lines of text output: the count, and (`hints`) how many `--fix` would fix; ruff's "All
    checks passed!" when nothing was found (and nothing was `fixed` on the way)."""
    if not findings:
        return "" if fixed else "All checks passed!\n"
    lines = [f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}."]
    if not hints:
        return f"{lines[0]}\n"
    fixes = sum(1 for f in findings if fixable(f, unsafe))
    hidden = 0 if unsafe else sum(1 for f in findings if fixable(f, True)) - fixes
    flag = "--unsafe-fixes" if unsafe else "--fix"
    if fixes:
        more = f" ({hidden} more with `--unsafe-fixes`)" if hidden else ""
        lines.append(f"[*] {fixes} fixable with `jaxlint {flag}`{more}.")
    elif hidden:
        lines.append(f"No fixes with `--fix`; {hidden} with `--unsafe-fixes`.")
    return "".join(f"{line}\n" for line in lines)


def as_json(findings: list[Finding], extra: Callable[[Finding], dict] | None = None) -> str:
    """`json.dumps(rows, indent=2)`, encoded row by row: the whole list at once held ~30 small strings per
    finding until the end (2.6 KB a finding in the parent, issue 39)."""
    rows = []
    for f in findings:
        row = f.to_dict()
        if extra is not None:
            row.update(extra(f))
        rows.append("  " + json.dumps(row, indent=2).replace("\n", "\n  "))  # strings hold no raw newline
    return "[\n" + ",\n".join(rows) + "\n]\n" if rows else "[]\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(findings: list[Finding]) -> str:
    raw = RawPositions()
    lines = []
    for f in findings:
        level = "error" if f.severity == "error" else "warning"
        start, end = raw.span(f)
        props = f"file={_escape_property(clean(f.path))},line={start[0]},col={start[1]},endLine={end[0]},endColumn={end[1]}"
        title = _escape_property(clean(f"{f.code} {f.name}"))
        message = f.message
        if f.cell is not None:  # the annotation marks the .ipynb's own line; the message says cell:line:col
            message = f"cell {f.cell}:{f.line}:{f.column}: {f.message}"
        # %0A and %0D (from _escape_data) are GitHub's own line breaks; other controls are removed.
        message = _CONTROL.sub(lambda m: m.group() if m.group() in "\r\n" else clean(m.group()), message)
        lines.append(f"::{level} {props},title={title}::{_escape_data(message)}\n")
    return "".join(lines)


class RawPositions:
    """Where findings sit in their files as stored: a notebook finding's (cell, line, column) becomes the
    line and column of the `.ipynb`'s JSON text that holds that code (`notebook_positions`), which is what
    GitHub annotates and code scanning shows; other findings keep theirs. Each notebook is read once."""

    def __init__(self) -> None:
        self._texts: dict[str, Any] = {}

    def notebook(self, path: str) -> Any:
        if path not in self._texts:
            from .notebook_positions import NotebookText

            try:
                with open(path, encoding="utf-8") as handle:
                    self._texts[path] = NotebookText(handle.read())
            except (OSError, UnicodeDecodeError):
                self._texts[path] = None
        return self._texts[path]

    def span(self, f: Finding) -> tuple[tuple[int, int], tuple[int, int]]:
        if f.cell is None:
            return (f.line, f.column), (f.end_line, f.end_column)
        text = self.notebook(f.path)
        start = text.raw_position(f.cell, f.line, f.column) if text is not None else None
        end = text.raw_position(f.cell, f.end_line, f.end_column) if text is not None else None
        if start is None or end is None or end < start:
            return (1, 1), (1, 1)  # the file as a whole; the cell is in the message and the properties
        return start, end


def _rule_descriptors() -> list[dict]:
    from .rules import ALL_RULES  # the rule modules (and libcst): only SARIF describes every rule

    descriptors = [
        {
            "id": PARSE_ERROR_CODE,
            "name": PARSE_ERROR_NAME,
            "shortDescription": {"text": "The file cannot be read, decoded or parsed"},
            "defaultConfiguration": {"level": "error"},
        },
        {
            "id": RUNTIME_ERROR_CODE,
            "name": RUNTIME_ERROR_NAME,
            "shortDescription": {"text": "A JAX error raised in the project's code while --verify traced it"},
            "defaultConfiguration": {"level": "error"},
        },
    ]
    for rule in ALL_RULES:
        descriptors.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.summary},
                "help": {"text": rule.doc.strip(), "markdown": rule.doc.strip()},
                "helpUri": _DOCS_URL.format(code=rule.code.lower()),
                "defaultConfiguration": {"level": "error" if rule.severity == "error" else "warning"},
                "properties": {"tags": ["jax"], "confirmable": rule.confirmable},
            }
        )
    return descriptors


def artifact_location(path: str) -> dict[str, str]:
    """SARIF wants URIs (RFC 3986): percent-encoded; relative to %SRCROOT%, or `file://` when absolute."""
    posix = Path(path)
    if posix.is_absolute():
        return {"uri": posix.as_uri()}
    return {"uri": quote(posix.as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


def sarif(findings: list[Finding], extra: Callable[[Finding], dict] | None = None) -> str:
    rules = _rule_descriptors()
    index = {r["id"]: i for i, r in enumerate(rules)}
    raw = RawPositions()
    results = []
    for f in findings:
        (line, column), (end_line, end_column) = raw.span(f)
        region = {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}
        result = {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, 0),
            "level": "error" if f.severity == "error" else "warning",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact_location(f.path),
                        "region": region,
                    }
                }
            ],
        }
        properties = {}
        if f.cell is not None:  # the region is in the .ipynb's text; where it is in the notebook's cell:
            properties.update(cell=f.cell, cellLine=f.line, cellColumn=f.column)
        if extra is not None:
            properties.update(extra(f))
        if properties:
            result["properties"] = properties
        results.append(result)
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jaxlint",
                        "version": __version__,
                        "informationUri": "https://github.com/jaxlint/jaxlint",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"


def show_settings(config: Any, pyproject: Path | None, path: str) -> str:
    """`--show-settings`: where the settings come from and what they are for `path`, one `key = value` a
    line (the rules after per-file-ignores)."""
    import dataclasses

    from .selection import settings_for

    lines = [
        f"Resolved settings for: {clean(path)}",
        f"Settings path: {clean(str(pyproject or '(defaults)'))}",
    ]
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        lines.append(f"{field.name.replace('_', '-')} = {clean(repr(value))}")
    settings = settings_for(config, path)
    lines.append(f"rules = {list(settings.rules)!r}")
    lines.append(f"parse-errors = {settings.parse_errors!r}")
    return "\n".join(lines) + "\n"


TEXT_FORMATS = ("text", "concise", "full")  # for people: ruff's closing summary follows them
STATISTICS_FORMATS = (*TEXT_FORMATS, "json")


def statistics(findings: list[Finding], fmt: str = "text", unsafe: bool = False) -> str:
    """Findings per rule, most frequent first, in place of the findings: ruff's `count<TAB>code<TAB>[*] name`
    lines (counts and codes padded to the widest; `[ ] ` marks the unfixable when any is fixable), or (json)
    ruff's `[{"code", "name", "count", "fixable", "fixable_count"}]` array (`fixable`: whether `--fix`, with
    `unsafe` `--unsafe-fixes`, would fix any of them; `fixable_count`: how many)."""
    names = {f.code: f.name for f in findings}
    counts = Counter(f.code for f in findings)
    fixes = Counter(f.code for f in findings if fixable(f, unsafe))
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt == "json":
        rows = [
            {
                "code": code,
                "name": names[code],
                "count": n,
                "fixable": fixes[code] > 0,
                "fixable_count": fixes[code],
            }
            for code, n in ordered
        ]
        return json.dumps(rows, indent=2) + "\n"
    if not ordered:
        return ""
    count_width = len(str(ordered[0][1]))
    code_width = max(len(clean(code)) for code in counts)
    marks = ("[ ] ", "[*] ") if fixes else ("", "")
    return "".join(
        f"{n:>{count_width}}\t{clean(code):<{code_width}}\t{marks[fixes[code] > 0]}{clean(names[code])}\n"
        for code, n in ordered
    )
