"""Output formats: text, json, sarif (2.1.0), github (workflow commands), and --statistics."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from . import __version__
from .finding import Finding
from .rules import ALL_RULES, PARSE_ERROR_CODE, PARSE_ERROR_NAME

FORMATS = ("text", "json", "sarif", "github")
_DOCS_URL = "https://github.com/jaxlint/jaxlint/blob/main/docs/rules.md#{code}"


def location(f: Finding) -> str:
    cell = f"cell {f.cell}:" if f.cell is not None else ""
    return f"{f.path}:{cell}{f.line}:{f.column}"


def text(findings: list[Finding]) -> str:
    return "".join(f"{location(f)}: {f.code} {f.message}\n" for f in findings)


def as_json(findings: list[Finding], extra: Callable[[Finding], dict] | None = None) -> str:
    rows = []
    for f in findings:
        row = f.to_dict()
        if extra is not None:
            row.update(extra(f))
        rows.append(row)
    return json.dumps(rows, indent=2) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        level = "error" if f.severity == "error" else "warning"
        props = f"file={_escape_property(f.path)},line={f.line},col={f.column},endLine={f.end_line},endColumn={f.end_column}"
        title = _escape_property(f"{f.code} {f.name}")
        message = f.message
        if f.cell is not None:  # a line inside a cell, not of the .ipynb's JSON: annotate the file, say where
            props = f"file={_escape_property(f.path)}"
            message = f"cell {f.cell}:{f.line}:{f.column}: {f.message}"
        lines.append(f"::{level} {props},title={title}::{_escape_data(message)}\n")
    return "".join(lines)


def _rule_descriptors() -> list[dict]:
    descriptors = [
        {
            "id": PARSE_ERROR_CODE,
            "name": PARSE_ERROR_NAME,
            "shortDescription": {"text": "The file cannot be read, decoded or parsed"},
            "defaultConfiguration": {"level": "error"},
        }
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


def sarif(findings: list[Finding], extra: Callable[[Finding], dict] | None = None) -> str:
    rules = _rule_descriptors()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in findings:
        region = {
            "startLine": f.line,
            "startColumn": f.column,
            "endLine": f.end_line,
            "endColumn": f.end_column,
        }
        result = {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, 0),
            "level": "error" if f.severity == "error" else "warning",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": Path(f.path).as_posix(), "uriBaseId": "%SRCROOT%"},
                        "region": region,
                    }
                }
            ],
        }
        properties = {}
        if f.cell is not None:
            properties["cell"] = f.cell
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


def render(findings: list[Finding], fmt: str) -> str:
    if fmt == "json":
        return as_json(findings)
    if fmt == "sarif":
        return sarif(findings)
    if fmt == "github":
        return github(findings)
    return text(findings)


def statistics(findings: list[Finding]) -> str:
    names = {f.code: f.name for f in findings}
    counts = Counter(f.code for f in findings)
    return "".join(
        f"{n:>5}\t{code}\t{names[code]}\n"
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
