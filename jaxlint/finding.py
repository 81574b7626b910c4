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


@dataclasses.dataclass(frozen=True, slots=True)
class Finding:
    """A rule's verdict on one place. Lines and columns are 1-based, as editors show them. Slotted: a run's
    parent holds every finding of every file (no per-instance dict: ~110 bytes less a finding)."""

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
        data = {name: getattr(self, name) for name in _FIELDS}  # (no deep copy: every field is immutable)
        if data["cell"] is None:
            del data["cell"]
        return data

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)


_FIELDS = tuple(field.name for field in dataclasses.fields(Finding))


# -- JAX000: files jaxlint cannot lint -----------------------------------------------------------------


def parse_error(path: str, line: int, column: int, message: str) -> Finding:
    return Finding(path, line, column, line, column, PARSE_ERROR_CODE, PARSE_ERROR_NAME, message)


def internal_error(path: str, error: BaseException | str) -> Finding:
    """The JAX000 that stands for a bug in jaxlint (or a crash) on this file, so the run goes on."""
    what = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return parse_error(path, 1, 1, f"internal error while linting ({what})")


def too_large(path: str, size: int, limit: int) -> Finding:
    return parse_error(path, 1, 1, f"skipped: too large ({size:,} bytes; max-file-size is {limit:,})")


OUT_OF_MEMORY = "cannot analyse: too large to analyse within"


def out_of_memory(path: str, limit: int | None) -> Finding:
    """The JAX000 for a file whose lint ran out of memory: over a worker's memory bound (`limit` bytes), or
    out of the machine's memory (None)."""
    if limit is None:
        return parse_error(path, 1, 1, "cannot analyse: out of memory")
    return parse_error(path, 1, 1, f"{OUT_OF_MEMORY} {limit >> 20:,} MB (a worker's memory bound)")
