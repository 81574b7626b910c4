"""Split into `fix.py` (the record), `rules/edits.py` (builders) and `autofix.py` (the driver). This shim
stays until the rule modules import from there; it resolves names lazily because the rule modules import it
while `jaxlint.rules` is still initialising."""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    **dict.fromkeys(("SAFE", "UNSAFE", "Fix", "FixCollector", "describe", "replace"), "jaxlint.fix"),
    **dict.fromkeys(
        (
            "Piece",
            "as_argument",
            "fstring_text",
            "module_import_bindings",
            "quote_of",
            "reference_to",
            "string_literal",
            "string_pieces",
            "template",
        ),
        "jaxlint.rules.edits",
    ),
    **dict.fromkeys(
        ("FixResult", "apply", "choose", "fix_file", "fix_files", "fix_source", "write_atomic"),
        "jaxlint.autofix",
    ),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(name)
    return getattr(importlib.import_module(home), name)
