"""Issue 39: ruff's output formats and options in jaxlint, each through the real `jaxlint` command, and where
the two can be compared, next to what the real `ruff` prints for the same format or flag."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

SOURCE = """\
import jax
import jax.numpy as jnp

x = jnp.zeros(3)
x[0] = 1


@jax.jit
def f(x):
    if x > 0:
        return x
    return -x


@jax.jit
def g(x):
    if x > 1:  # noqa: JAX101
        return x
    return -x
"""
FIXED_LINE = "x = x.at[0].set(1)\n"
CLEAN = "import jax\n\nprint(jax.__version__)\n"  # clean for ruff too
# For ruff: one finding with a safe fix (F401) and one without (E741).
RUFF_SOURCE = "import os\nl = 1\n"
RUFF_RULES = ("--isolated", "--no-cache", "--select", "F401,E741")


def run(*args: str, cwd: Path, stdin: str | None = None, cache: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args, *(() if cache else ("--no-cache",))],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )


def ruff(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    found = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(found).exists():
        pytest.skip("ruff is not installed")
    return subprocess.run([found, "check", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "m.py").write_text(SOURCE)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "r.py").write_text(RUFF_SOURCE)
    return tmp_path


def _key_paths(value: object, prefix: str = "") -> set[str]:
    """The shape of a JSON value: every key's dotted path (a list's items under `[]`)."""
    if isinstance(value, dict):
        paths = set()
        for key, item in value.items():
            paths.add(prefix + key)
            paths |= _key_paths(item, f"{prefix}{key}.")
        return paths
    if isinstance(value, list):
        return set().union(*(_key_paths(item, f"{prefix}[].") for item in value))
    return set()


# -- --statistics and the clean run ------------------------------------------------------------------------

TABLE_LINE = re.compile(r"^ *\d+\t[A-Z]+\d+ *\t(\[[* ]\] )?[a-z0-9-]+$")


def test_statistics_prints_the_table_in_place_of_the_findings_as_ruff(project: Path) -> None:
    for fmt in ("text", "full"):
        ours = run("--statistics", "--output-format", fmt, "m.py", cwd=project)
        assert ours.returncode == 1
        lines = ours.stdout.splitlines()
        assert lines == [
            "1\tJAX101\t[ ] traced-control-flow",
            "1\tJAX103\t[*] inplace-array-update",
            "Found 2 findings.",
            "[*] 1 fixable with `jaxlint --fix`.",
        ], ours.stdout
    theirs = ruff(*RUFF_RULES, "--statistics", "--output-format", "concise", "r.py", cwd=project).stdout
    table = [line for line in theirs.splitlines() if not line.startswith(("Found ", "[*] "))]
    assert len(table) == 2 and all(TABLE_LINE.match(line) for line in table), theirs
    assert all(TABLE_LINE.match(line) for line in lines[:2])


def test_statistics_json_fixable_is_a_boolean_beside_ruffs_fixable_count(project: Path) -> None:
    ours = json.loads(run("--statistics", "--output-format", "json", "m.py", cwd=project).stdout)
    assert ours == [
        {"code": "JAX101", "name": "traced-control-flow", "count": 1, "fixable": False, "fixable_count": 0},
        {"code": "JAX103", "name": "inplace-array-update", "count": 1, "fixable": True, "fixable_count": 1},
    ]
    theirs = json.loads(
        ruff(*RUFF_RULES, "--statistics", "--output-format", "json", "r.py", cwd=project).stdout
    )
    assert {key for row in theirs for key in row} == {key for row in ours for key in row}
    assert {type(row["fixable"]) for row in theirs} == {bool}


def test_a_clean_run_says_all_checks_passed_as_ruff_except_quiet_and_machine_formats(project: Path) -> None:
    theirs = ruff("--isolated", "--no-cache", "--output-format", "concise", "clean.py", cwd=project)
    for fmt in ("text", "concise", "full"):
        ours = run("--output-format", fmt, "clean.py", cwd=project)
        assert (ours.returncode, ours.stdout) == (0, theirs.stdout) == (0, "All checks passed!\n")
    assert (
        run("-q", "clean.py", cwd=project).stdout
        == ""
        == ruff("--isolated", "-q", "clean.py", cwd=project).stdout
    )
    assert run("--output-format", "json", "clean.py", cwd=project).stdout == "[]\n"
    assert run("--output-format", "pylint", "clean.py", cwd=project).stdout == ""
    assert "All checks passed!" not in run("m.py", cwd=project).stdout


# -- the formats ---------------------------------------------------------------------------------------------


def test_json_lines_holds_the_json_rows_one_a_line(project: Path) -> None:
    rows = json.loads(run("--output-format", "json", "m.py", cwd=project).stdout)
    ours = run("--output-format", "json-lines", "m.py", cwd=project)
    assert ours.returncode == 1
    assert [json.loads(line) for line in ours.stdout.splitlines()] == rows and len(rows) == 2
    theirs = ruff(*RUFF_RULES, "--output-format", "json-lines", "r.py", cwd=project).stdout.splitlines()
    assert theirs and [json.loads(line) for line in theirs] == json.loads(
        ruff(*RUFF_RULES, "--output-format", "json", "r.py", cwd=project).stdout
    )


def test_pylint_and_azure_lines_have_ruffs_shape(project: Path) -> None:
    shapes = {
        "pylint": re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): \[(?P<code>[A-Z]+\d+)\] .+$"),
        "azure": re.compile(
            r"^##vso\[task\.logissue type=(error|warning);sourcepath=(?P<path>[^;]+);linenumber=(?P<line>\d+);"
            r"columnnumber=\d+;code=(?P<code>[A-Z]+\d+);\].+$"
        ),
    }
    for fmt, shape in shapes.items():
        ours = run("--output-format", fmt, "m.py", cwd=project)
        assert ours.returncode == 1
        matches = [shape.match(line) for line in ours.stdout.splitlines()]
        assert all(matches) and [(m["path"], m["line"], m["code"]) for m in matches if m] == [
            ("m.py", "5", "JAX103"),
            ("m.py", "10", "JAX101"),
        ], ours.stdout
        theirs = ruff(*RUFF_RULES, "--output-format", fmt, "r.py", cwd=project).stdout.splitlines()
        assert len(theirs) == 2 and all(shape.match(line) for line in theirs), theirs


def test_azure_escapes_what_would_end_a_property_or_a_line(tmp_path: Path) -> None:
    (tmp_path / "a;b].py").write_text("import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1\n")
    line = run("--output-format", "azure", ".", cwd=tmp_path).stdout
    assert line.count("\n") == 1 and "sourcepath=a%3Bb%5D.py;" in line, line
    assert line.split(";]", 1)[1].startswith("In-place update")  # the message keeps its own `;` and `]`


def test_gitlab_has_the_code_quality_required_keys_and_ruffs_shape(project: Path) -> None:
    ours = run("--output-format", "gitlab", "m.py", cwd=project)
    assert ours.returncode == 1
    issues = json.loads(ours.stdout)
    # GitLab's Code Quality schema: these are required (positions.begin.line, or lines.begin).
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= issue.keys()
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["path"] == "m.py"
        assert isinstance(issue["location"]["positions"]["begin"]["line"], int)
    assert [i["check_name"] for i in issues] == ["JAX103", "JAX101"]
    assert len({i["fingerprint"] for i in issues}) == 2
    theirs = json.loads(ruff(*RUFF_RULES, "--output-format", "gitlab", "r.py", cwd=project).stdout)
    assert _key_paths(issues) == _key_paths(theirs)
    # The fingerprint follows the finding, not its line: code moved down keeps it.
    (project / "m.py").write_text("\n\n" + SOURCE)
    moved = json.loads(run("--output-format", "gitlab", "m.py", cwd=project).stdout)
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in issues]
    assert moved[0]["location"]["positions"]["begin"]["line"] == 7


def test_rdjson_has_reviewdogs_required_keys_and_ruffs_shape(project: Path) -> None:
    ours = run("--output-format", "rdjson", "m.py", cwd=project)
    assert ours.returncode == 1
    document = json.loads(ours.stdout)
    assert document["source"]["name"] == "jaxlint"
    for diagnostic in document["diagnostics"]:  # reviewdog's DiagnosticResult: message and location
        assert diagnostic["message"] and diagnostic["location"]["path"] == "m.py"
        assert isinstance(diagnostic["location"]["range"]["start"]["line"], int)
    assert [d["code"]["value"] for d in document["diagnostics"]] == ["JAX103", "JAX101"]
    theirs = json.loads(ruff("--isolated", "--no-cache", "--select", "E741", "--output-format", "rdjson", "r.py",
                             cwd=project).stdout)  # fmt: skip
    assert _key_paths(theirs) <= _key_paths(document)  # a diagnostic's own severity besides


def _junit_shape(root: ElementTree.Element) -> dict[str, set[str]]:
    shape: dict[str, set[str]] = {}
    for element in root.iter():
        shape.setdefault(element.tag, set()).update(element.attrib)
    return shape


def test_junit_parses_as_xml_with_ruffs_shape(tmp_path: Path) -> None:
    (tmp_path / "a&b<c>.py").write_text(SOURCE)  # the path must be escaped
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "r.py").write_text(RUFF_SOURCE)
    ours = run("--output-format", "junit", "a&b<c>.py", "clean.py", cwd=tmp_path)
    assert ours.returncode == 1
    root = ElementTree.fromstring(ours.stdout)
    assert root.tag == "testsuites" and root.attrib["failures"] == "2"
    (suite,) = root.findall("testsuite")
    assert suite.attrib["name"] == "a&b<c>.py"
    cases = suite.findall("testcase")
    assert [(c.attrib["name"], c.attrib["line"]) for c in cases] == [
        ("org.jaxlint.JAX103", "5"),
        ("org.jaxlint.JAX101", "10"),
    ]
    failure = cases[0].find("failure")
    assert failure is not None and failure.text and failure.text.startswith("line 5, col 1, In-place update")
    theirs = ElementTree.fromstring(
        ruff(*RUFF_RULES, "--output-format", "junit", "r.py", cwd=tmp_path).stdout
    )
    assert _junit_shape(root) == _junit_shape(theirs)
    clean = ElementTree.fromstring(run("--output-format", "junit", "clean.py", cwd=tmp_path).stdout)
    ruff_clean = ElementTree.fromstring(
        ruff("--isolated", "--output-format", "junit", "clean.py", cwd=tmp_path).stdout
    )
    assert [c.attrib["name"] for c in clean.iter("testcase")] == ["No errors found"]
    assert _junit_shape(clean) == _junit_shape(ruff_clean)


def test_verify_refuses_the_formats_it_does_not_write(project: Path) -> None:
    result = run("--verify", "--output-format", "junit", "m.py", cwd=project)
    assert result.returncode == 2 and "jaxlint: error: --verify writes" in result.stderr


# -- exit codes, --output-file, --quiet, --silent -------------------------------------------------------------


def test_exit_codes_as_ruffs(project: Path) -> None:
    assert run("clean.py", cwd=project).returncode == 0
    assert run("m.py", cwd=project).returncode == 1
    assert run("--exit-zero", "m.py", cwd=project).returncode == 0
    assert run("-e", "m.py", cwd=project).returncode == 0
    assert run("nope.py", cwd=project).returncode == 2
    assert run("--output-format", "nope", "m.py", cwd=project).returncode == 2
    both = ("--fix", "--exit-zero", "--exit-non-zero-on-fix")
    ours = run(*both, "m.py", cwd=project)
    assert ours.returncode == 2 == ruff(*both, "r.py", cwd=project).returncode
    assert "jaxlint: error: --exit-zero cannot be combined with --exit-non-zero-on-fix" in ours.stderr
    assert (project / "m.py").read_text() == SOURCE  # refused before anything was written


def test_output_file_holds_the_report_and_its_folders_are_made(project: Path) -> None:
    result = run("-o", "reports/out.txt", "m.py", cwd=project)
    assert result.returncode == 1 and result.stdout == ""
    written = (project / "reports" / "out.txt").read_text()
    assert written == run("m.py", cwd=project).stdout and written.endswith(
        "Found 2 findings.\n[*] 1 fixable with `jaxlint --fix`.\n"
    )
    run("--output-file", "reports/out.json", "--output-format", "json", "m.py", cwd=project)
    assert len(json.loads((project / "reports" / "out.json").read_text())) == 2
    (project / "blocked").write_text("")
    refused = run("-o", "blocked/out.txt", "m.py", cwd=project)
    assert refused.returncode == 2 and "jaxlint: error: cannot write blocked/out.txt" in refused.stderr


def test_quiet_prints_the_findings_only_and_silent_nothing(project: Path) -> None:
    quiet = run("-q", "m.py", cwd=project)
    assert quiet.returncode == 1
    assert [line.split(" ", 2)[:2] for line in quiet.stdout.splitlines()] == [
        ["m.py:5:1:", "JAX103"],
        ["m.py:10:8:", "JAX101"],
    ]
    assert run("--quiet", "--statistics", "m.py", cwd=project).stdout.splitlines() == [
        "1\tJAX101\t[ ] traced-control-flow",
        "1\tJAX103\t[*] inplace-array-update",
    ]
    theirs = ruff(*RUFF_RULES, "-q", "--output-format", "concise", "r.py", cwd=project).stdout.splitlines()
    assert len(theirs) == 2 and all(line.startswith("r.py:") for line in theirs)  # no summary either
    for flag in ("-s", "--silent"):
        silent = run(flag, "m.py", cwd=project)
        assert (silent.returncode, silent.stdout, silent.stderr) == (1, "", "")
    theirs_silent = ruff(*RUFF_RULES, "-s", "r.py", cwd=project)
    assert (theirs_silent.returncode, theirs_silent.stdout) == (1, "")
    fixed = run("-q", "--fix", "m.py", cwd=project)
    assert fixed.stderr == "" and fixed.stdout.splitlines()[0].startswith("m.py:10:8: JAX101")
    assert FIXED_LINE in (project / "m.py").read_text()


# -- fixing -------------------------------------------------------------------------------------------------


def test_show_fixes_lists_the_fixes_applied_as_ruff(project: Path) -> None:
    ours = run("--fix", "--show-fixes", "m.py", cwd=project)
    assert ours.returncode == 1
    assert (
        "\nFixed 1 finding:\n- m.py:\n    1 × JAX103 (inplace-array-update)\n\nFound 1 finding.\n"
        in ours.stdout
    )
    assert ours.stdout.startswith("m.py:10:8: JAX101")  # what remains, then the list, then the summary
    theirs = ruff(
        *RUFF_RULES, "--fix", "--show-fixes", "--output-format", "concise", "r.py", cwd=project
    ).stdout
    assert "\nFixed 1 error:\n- r.py:\n    1 × F401 (unused-import)\n\n" in theirs, theirs
    # Nothing fixed: no list.
    assert "Fixed" not in run("--fix", "--show-fixes", "m.py", cwd=project).stdout


def test_fix_only_fixes_and_neither_reports_nor_fails_for_what_remains(project: Path) -> None:
    ours = run("--fix-only", "m.py", cwd=project)
    assert (ours.returncode, ours.stdout) == (0, "")  # JAX101 remains
    assert "Fixed 1 finding in 1 file." in ours.stderr
    assert FIXED_LINE in (project / "m.py").read_text()
    again = run("--fix-only", "m.py", cwd=project)
    assert (again.returncode, again.stdout) == (0, "") and "No findings fixed." in again.stderr
    theirs = ruff(*RUFF_RULES, "--fix-only", "r.py", cwd=project)
    assert (theirs.returncode, theirs.stdout.startswith("Fixed 1 error")) == (0, True)
    piped = run("--fix-only", "-", "--stdin-filename", "m.py", stdin=SOURCE, cwd=project)
    assert piped.returncode == 0 and piped.stdout == SOURCE.replace("x[0] = 1\n", FIXED_LINE)


def test_exit_non_zero_on_fix(project: Path) -> None:
    (project / "fixable.py").write_text("import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1\n")
    (project / "fixable2.py").write_text("import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1\n")
    assert run("--fix", "fixable.py", cwd=project).returncode == 0  # nothing remains
    assert run("--fix", "--exit-non-zero-on-fix", "fixable2.py", cwd=project).returncode == 1
    assert run("--fix", "--exit-non-zero-on-fix", "fixable2.py", cwd=project).returncode == 0  # nothing fixed
    (project / "r2.py").write_text("import os\n")
    assert ruff("--isolated", "--no-cache", "--select", "F401", "--fix", "--exit-non-zero-on-fix", "r2.py",
                cwd=project).returncode == 1  # fmt: skip
    assert run("--fix-only", "--exit-non-zero-on-fix", "m.py", cwd=project).returncode == 1
    assert run("--fix-only", "--exit-non-zero-on-fix", "m.py", cwd=project).returncode == 0


def test_ignore_noqa_reports_and_fixes_what_noqa_suppresses_even_with_a_cache(project: Path) -> None:
    (project / "n.py").write_text(
        "import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1  # noqa: JAX103\n# jaxlint: noqa\n"
    )
    assert run("m.py", "n.py", "--format", "json", cwd=project, cache=True).stdout.count('"code"') == 2
    shown = json.loads(
        run("--ignore-noqa", "m.py", "n.py", "--format", "json", cwd=project, cache=True).stdout
    )
    assert [(r["path"], r["line"], r["code"]) for r in shown] == [
        ("m.py", 5, "JAX103"), ("m.py", 10, "JAX101"), ("m.py", 17, "JAX101"), ("n.py", 4, "JAX103")
    ]  # fmt: skip
    (project / "r3.py").write_text("import os  # noqa: F401\n")
    for flags, code in (((), 0), (("--ignore-noqa",), 1)):
        assert (
            ruff("--isolated", "--no-cache", "--select", "F401", *flags, "r3.py", cwd=project).returncode
            == code
        )
    run("--ignore-noqa", "--fix", "n.py", cwd=project)
    assert "x = x.at[0].set(1)  # noqa: JAX103\n" in (project / "n.py").read_text()
    refused = run("--ignore-noqa", "--add-noqa", "m.py", cwd=project)
    assert refused.returncode == 2 and "cannot be combined" in refused.stderr


def test_notebook_findings_annotate_the_ipynb_text_as_sarif_and_name_the_cell(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# notes\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["import jax\n", "\n", "@jax.jit\n", "def f(x):\n", "    return float(x)\n"]},
    ]  # fmt: skip
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}, indent=1))
    sarif = json.loads(run("--output-format", "sarif", "nb.ipynb", cwd=tmp_path).stdout)
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    (issue,) = json.loads(run("--output-format", "gitlab", "nb.ipynb", cwd=tmp_path).stdout)
    assert issue["location"]["positions"]["begin"] == {
        "line": region["startLine"],
        "column": region["startColumn"],
    }
    assert issue["description"].startswith("JAX102: cell 2:5:12: ")
    azure = run("--output-format", "azure", "nb.ipynb", cwd=tmp_path).stdout
    assert f";linenumber={region['startLine']};" in azure and ";]cell 2:5:12: " in azure
    assert run("--output-format", "pylint", "nb.ipynb", cwd=tmp_path).stdout.startswith(
        "nb.ipynb:cell 2:5: [JAX102] "
    )
