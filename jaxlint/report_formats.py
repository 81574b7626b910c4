"""Every `--output-format` by name (`render`), and the ones ruff has beside text, json, sarif and github
(those are in `report.py`, which `runtime_output` shares): json-lines, pylint, azure, gitlab, junit, rdjson.

Each has ruff's shape for the same format, with jaxlint's names in place of ruff's. The formats that annotate
files (azure, gitlab, rdjson) place a notebook finding in the `.ipynb`'s own text, as github and sarif do."""

from __future__ import annotations

import json
import os

from .finding import Finding
from .report import _CONTROL, _DOCS_URL, RawPositions, as_json, clean, github, location, sarif, text

_HOME = "https://github.com/jaxlint/jaxlint"


def render(findings: list[Finding], fmt: str, unsafe: bool = False) -> str:
    """The findings in `fmt` ("full" is `snippets.full`: it reads the sources)."""
    if fmt == "json":
        return as_json(findings)
    if fmt == "sarif":
        return sarif(findings)
    if fmt == "github":
        return github(findings)
    if fmt in _RENDERERS:
        return _RENDERERS[fmt](findings)
    return text(findings, unsafe)  # text, concise


def json_lines(findings: list[Finding]) -> str:
    """`--output-format json`'s rows, one a line (ruff's json-lines)."""
    return "".join(json.dumps(f.to_dict(), separators=(",", ":")) + "\n" for f in findings)


def pylint(findings: list[Finding]) -> str:
    """ruff's pylint lines: `path:line: [CODE] message` (a notebook's: `path:cell N:line: ...`)."""
    lines = []
    for f in findings:
        where = location(f).rsplit(":", 1)[0]  # no column, as pylint's parseable format
        lines.append(f"{where}: [{clean(f.code)}] {clean(f.message)}\n")
    return "".join(lines)


def _azure_data(value: str) -> str:
    """Azure Pipelines' escapes for a logging command's message (`%AZP25` first); other controls shown as
    escapes."""
    return clean(value.replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A"))


def _azure_property(value: str) -> str:
    return _azure_data(value).replace(";", "%3B").replace("]", "%5D")


def azure(findings: list[Finding]) -> str:
    """ruff's Azure Pipelines logging commands: `##vso[task.logissue type=...;sourcepath=...;...]message`."""
    raw = RawPositions()
    lines = []
    for f in findings:
        (line, column), _ = raw.span(f)
        kind = "error" if f.severity == "error" else "warning"
        message = _cell_prefix(f) + f.message
        lines.append(
            f"##vso[task.logissue type={kind};sourcepath={_azure_property(f.path)};linenumber={line};"
            f"columnnumber={column};code={_azure_property(f.code)};]{_azure_data(message)}\n"
        )
    return "".join(lines)


def _cell_prefix(f: Finding) -> str:
    """What a file annotation says of a notebook finding's place in its cell (the position is the file's)."""
    return f"cell {f.cell}:{f.line}:{f.column}: " if f.cell is not None else ""


def _project_path(path: str) -> str:
    """GitLab wants paths relative to the project: $CI_PROJECT_DIR in a pipeline, else the current folder."""
    base = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    try:
        relative = os.path.relpath(os.path.abspath(path), base)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative.replace(os.sep, "/")


def gitlab(findings: list[Finding]) -> str:
    """ruff's GitLab Code Quality report: a JSON array of issues with `check_name`, `description`,
    `severity`, `fingerprint` and `location.positions`. The fingerprint hashes the path, code, message and
    function (not the line), so an issue keeps it when code above it moves; repeats are numbered."""
    from hashlib import sha256  # here, not at start-up: only this format hashes

    raw = RawPositions()
    seen: dict[str, int] = {}
    issues = []
    for f in findings:
        (line, column), (end_line, end_column) = raw.span(f)
        path = _project_path(f.path)
        identity = "\0".join((path, f.code, f.message, f.function or ""))
        repeat = seen[identity] = seen.get(identity, -1) + 1
        fingerprint = sha256(f"{identity}\0{repeat}".encode("utf-8", "surrogatepass")).hexdigest()
        issues.append(
            {
                "check_name": f.code,
                "description": f"{f.code}: {_cell_prefix(f)}{f.message}",
                "severity": "major" if f.severity == "error" else "minor",
                "fingerprint": fingerprint[:16],
                "location": {
                    "path": path,
                    "positions": {
                        "begin": {"line": line, "column": column},
                        "end": {"line": end_line, "column": end_column},
                    },
                },
            }
        )
    return json.dumps(issues, indent=2) + "\n"


def rdjson(findings: list[Finding]) -> str:
    """ruff's Reviewdog Diagnostic Format document: `source`, `severity`, and `diagnostics` with `message`,
    `location.path`, `location.range` and `code` (value, url); each diagnostic also carries its own severity."""
    raw = RawPositions()
    diagnostics = []
    for f in findings:
        (line, column), (end_line, end_column) = raw.span(f)
        diagnostics.append(
            {
                "code": {"url": _DOCS_URL.format(code=f.code.lower()), "value": f.code},
                "location": {
                    "path": f.path,
                    "range": {
                        "end": {"column": end_column, "line": end_line},
                        "start": {"column": column, "line": line},
                    },
                },
                "message": _cell_prefix(f) + f.message,
                "severity": "ERROR" if f.severity == "error" else "WARNING",
            }
        )
    document = {
        "diagnostics": diagnostics,
        "severity": "WARNING",
        "source": {"name": "jaxlint", "url": _HOME},
    }
    return json.dumps(document, indent=2) + "\n"


def _xml_text(value: str) -> str:
    """XML 1.0 cannot hold most control characters even as references: they are shown as escapes."""
    from xml.sax.saxutils import escape as xml_escape  # not at start-up: it imports urllib, http, email, ssl

    return xml_escape(_CONTROL.sub(lambda m: m.group() if m.group() in "\t\n\r" else clean(m.group()), value))


def _xml_attr(value: str) -> str:
    from xml.sax.saxutils import quoteattr

    return quoteattr(clean(value))


def junit(findings: list[Finding]) -> str:
    """ruff's JUnit XML: a test suite per file, a failed test case per finding (`org.jaxlint.CODE`); a clean
    run is one passing case, "No errors found"."""
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        by_file.setdefault(f.path, []).append(f)
    total = len(findings)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<testsuites name="jaxlint" tests="{total or 1}" skipped="0" failures="{total}" errors="0">\n',
    ]
    if not findings:
        out.append(
            '    <testsuite name="jaxlint" tests="1" skipped="0" errors="0" failures="0" package="org.jaxlint">\n'
        )
        out.append('        <testcase name="No errors found" classname="jaxlint"/>\n')
        out.append("    </testsuite>\n")
    for path, found in by_file.items():
        n = len(found)
        out.append(
            f'    <testsuite name={_xml_attr(path)} tests="{n}" skipped="0" errors="0" failures="{n}" '
            'package="org.jaxlint">\n'
        )
        classname = path[: -len(".py")] if path.endswith(".py") else path
        for f in found:
            where = f"cell {f.cell}, " if f.cell is not None else ""
            out.append(
                f"        <testcase name={_xml_attr('org.jaxlint.' + f.code)} classname={_xml_attr(classname)} "
                f'line="{f.line}" column="{f.column}">\n'
                "            <properties>\n"
                f'                <property name="severity" value={_xml_attr(f.severity)}/>\n'
                "            </properties>\n"
                f"            <failure message={_xml_attr(f.message)}>"
                f"{_xml_text(f'{where}line {f.line}, col {f.column}, {f.message}')}</failure>\n"
                "        </testcase>\n"
            )
        out.append("    </testsuite>\n")
    out.append("</testsuites>\n")
    return "".join(out)


_RENDERERS = {
    "json-lines": json_lines,
    "pylint": pylint,
    "azure": azure,
    "gitlab": gitlab,
    "junit": junit,
    "rdjson": rdjson,
}
