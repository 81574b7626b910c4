"""An LSP notebook document (3.17 notebook sync) as the .ipynb JSON the CLI lints.

Cells keep their places, markdown included, so the CLI's cell numbers (counted from 1 over all cells) index
straight into the notebook's cell list, and each finding goes to the text document of its cell.
"""

from __future__ import annotations

import json
from typing import Any

from .textdiff import split_lines

PYTHON_LANGUAGES = frozenset({"python", "python3", "ipython", "ipython3"})


def notebook_json(cells: list[tuple[str, str]], metadata: Any) -> str:
    """`cells` as (cell_type, text) in notebook order: "code" cells are linted, any other type is not."""
    notebook = {
        "cells": [{"cell_type": kind, "metadata": {}, "source": text} for kind, text in cells],
        "metadata": metadata if isinstance(metadata, dict) else {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook)


def cell_type(is_code: bool, language_id: str | None) -> str:
    """A code cell in another language (`%%sql` kernels, R cells in a polyglot notebook) is not linted."""
    if not is_code:
        return "markdown"
    if language_id and language_id.lower() not in PYTHON_LANGUAGES:
        return "raw"
    return "code"


def with_cell_edits(text: str, edits: list[Any]) -> str:
    """A cell's text with line edits (`linting.CellEdit`: replace `count` lines from `first` by `lines`)."""
    lines = split_lines(text)
    new_lines = list(lines)
    for edit in reversed(edits):  # bottom up, so earlier line numbers stay valid
        ending = "\n" if edit.first + edit.count < len(lines) or text.endswith("\n") else ""
        replacement = [line + "\n" for line in edit.lines]
        if replacement and not ending:
            replacement[-1] = replacement[-1][:-1]
        new_lines[edit.first : edit.first + edit.count] = replacement
    return "".join(new_lines)
