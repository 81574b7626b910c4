"""Every rule's fixture file, checked line by line.

A fixture is `tests/fixtures/rules/<CODE>.py`. Each line that must be flagged ends with a comment
`# expect: <CODE>:<column>` (several separated by commas); every other line must stay clean. An expectation
may carry a fragment of the message, `# expect: JAX101:8 "traced value 'x'"`, which the finding's message must
contain. Only the file's own rule is run on it, so fixtures of one rule are not disturbed by another.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint import lint_source
from jaxlint.rules import RULES_BY_CODE

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
_EXPECT = re.compile(r"#\s*expect:\s*(.+)$")
_ITEM = re.compile(r'\s*(JAX\d{3}):(\d+)(?:\s+"([^"]*)")?\s*(?:,|$)')


def expectations(source: str) -> dict[tuple[int, str, int], str | None]:
    """(line, code, column) -> the message fragment expected there (None: any message)."""
    expected: dict[tuple[int, str, int], str | None] = {}
    for number, line in enumerate(source.splitlines(), 1):
        match = _EXPECT.search(line)
        if match:
            text, position = match.group(1), 0
            while position < len(text):
                item = _ITEM.match(text, position)
                assert item is not None, f"line {number}: cannot read expectation {text[position:]!r}"
                expected[(number, item.group(1), int(item.group(2)))] = item.group(3)
                position = item.end()
    return expected


FIXTURE_FILES = sorted(FIXTURES.glob("JAX*.py"))


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_fixture(fixture: Path) -> None:
    code = fixture.stem.split("_")[0]
    assert code in RULES_BY_CODE, f"fixture for unknown rule {code}"
    source = fixture.read_text(encoding="utf-8")
    messages = {
        (f.line, f.code, f.column): f.message for f in lint_source(source, str(fixture), select=[code])
    }
    expected = expectations(source)
    # `<CODE>_<case>_valid.py`: negative fixtures only (a case the rule must stay silent on, file-wide).
    assert expected or fixture.stem.endswith("_valid"), "a fixture must have at least one INVALID line"
    missing = sorted(set(expected) - set(messages))
    unexpected = sorted(set(messages) - set(expected))
    assert not missing and not unexpected, f"missing: {missing}\nunexpected (false positives): {unexpected}"
    wrong = [
        f"line {key[0]}: expected {fragment!r} in {messages[key]!r}"
        for key, fragment in sorted(expected.items())
        if fragment is not None and fragment not in messages[key]
    ]
    assert not wrong, "\n".join(wrong)


def test_expectation_fragments_are_read() -> None:
    source = "x = 1  # expect: JAX101:8 \"traced value 'x', here\", JAX102:3\n"
    assert expectations(source) == {(1, "JAX101", 8): "traced value 'x', here", (1, "JAX102", 3): None}


def test_every_rule_has_a_fixture() -> None:
    covered = {p.stem.split("_")[0] for p in FIXTURE_FILES}
    assert set(RULES_BY_CODE) <= covered, f"rules without fixtures: {sorted(set(RULES_BY_CODE) - covered)}"


# -- fixtures as notebooks ------------------------------------------------------------------------------------
# The same code cut into cells (the imports, then one cell per top-level definition) gives the same findings
# through the real command, at the same places within each cell: fixtures about values inside one function.
NOTEBOOK_FIXTURES = [
    "JAX101_dict_entries",
    "JAX101_keyword_only_params",
    "JAX101_pytree_redefined",
    "JAX101_record_fields",
    "JAX102_dict_entries",
    "JAX102_local_import",
    "JAX102_pytree_aux_data",
    "JAX102_tuple_structure",
    "JAX103_dict_entries",
    "JAX103_record_fields",
    "JAX103_tuple_index",
    "JAX103_tuple_structure",
    "JAX301_loop_hops",
    "JAX401_helper_in_loop",
    "JAX403_hops",
    "JAX404_hops",
]


def _cells(source: str) -> list[tuple[int, str]]:
    """(first line in the file, text) of each cell: a new cell at each top-level decorator or def."""
    lines = source.splitlines()
    starts = [0]
    for number, line in enumerate(lines):
        starts_def = line.startswith(("@", "def ", "class "))
        if starts_def and number > 0 and not lines[number - 1].startswith("@"):
            starts.append(number)
    starts.append(len(lines))
    return [(begin + 1, "\n".join(lines[begin:end])) for begin, end in zip(starts, starts[1:], strict=False)]


@pytest.mark.parametrize("stem", NOTEBOOK_FIXTURES)
def test_fixture_as_notebook_cells(stem: str, tmp_path: Path) -> None:
    source = (FIXTURES / f"{stem}.py").read_text(encoding="utf-8")
    cells = _cells(source)
    assert len(cells) > 2
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": text, "outputs": [], "execution_count": None}
            for _, text in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / f"{stem}.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    code = stem.split("_")[0]
    run = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--select", code, "--format", "json", str(path)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
    )
    assert run.returncode in (0, 1), run.stderr
    found = {
        (cells[f["cell"] - 1][0] + f["line"] - 1, f["code"], f["column"]) for f in json.loads(run.stdout)
    }
    assert found == set(expectations(source))
