"""The one record every part of jaxlint passes around: a finding at a place in a file."""

from __future__ import annotations

import dataclasses
from typing import Any

# JAX000 is not a rule: files jaxlint cannot read, decode, parse or analyse are reported under this code.
PARSE_ERROR_CODE = "JAX000"
PARSE_ERROR_NAME = "parse-error"
# JAX900 is not a rule either: `--verify` reports under it a JAX error that tracing the user's code raised
# and that no rule's code stands for (runtime/verify/child/raised.py).
RUNTIME_ERROR_CODE = "JAX900"
RUNTIME_ERROR_NAME = "runtime-error"


@dataclasses.dataclass(frozen=True)
class Finding:
    """A rule's verdict on one place. Lines and columns are 1-based, as editors show them."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    severity: str = "error"  # "error" | "warning"
    fix: str | None = None  # the replacement source text, when the rule has a fix
    fix_safety: str | None = None  # "safe" | "unsafe" | None
    function: str | None = None  # qualname of the enclosing function (`Model.step`, `outer.<locals>.inner`)
    cell: int | None = None  # notebook cell, counted from 1; `line` is then the line inside the cell

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        if data["cell"] is None:
            del data["cell"]
        return data

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)


# -- JAX000: files jaxlint cannot lint -----------------------------------------------------------------


def parse_error(path: str, line: int, column: int, message: str) -> Finding:
    return Finding(path, line, column, line, column, PARSE_ERROR_CODE, PARSE_ERROR_NAME, message)


def internal_error(path: str, error: BaseException | str) -> Finding:
    """The JAX000 that stands for a bug in jaxlint (or a crash) on this file, so the run goes on."""
    what = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return parse_error(path, 1, 1, f"internal error while linting ({what})")


def too_large(path: str, size: int, limit: int) -> Finding:
    return parse_error(path, 1, 1, f"skipped: too large ({size:,} bytes; max-file-size is {limit:,})")
