"""The library table's `jax.numpy` sequence arguments (analysis/semantics/sequences.py), run again on jax 0.10.2:
every rejecting slot raises TypeError for a Python list, every nested slot for a list of lists (a sample of the
rows is enough to catch a table measured on another JAX: every tenth row, all of them with JAXLINT_ALL_ROWS)."""

from __future__ import annotations

import inspect
import os

import pytest

from jaxlint.analysis.semantics.library import (
    SEQUENCE_NESTED,
    SEQUENCE_REJECTS,
    SEQUENCE_VARIADIC,
    SEQUENCES_CHECKED,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from tests.analysis.test_library_semantics import resolve  # noqa: E402

_EVERY = 1 if os.environ.get("JAXLINT_ALL_ROWS") else 10
_FILLERS = (lambda: jnp.ones((2, 2)), lambda: jnp.ones((2,)), lambda: 1, lambda: 0.5)


def _outcome(function, args) -> str:
    try:
        function(*args)
    except TypeError:
        return "TypeError"
    except Exception:
        return "other"
    return "ok"


def _rejects(name: str, position: int, sequences: tuple[list, ...]) -> bool | None:
    """Whether, with the other slots filled alike (as tools/measure_jnp_sequence_args.py fills them), one of
    `sequences` at `position` raises TypeError where the same values as an array do not (they run, or fail
    otherwise: `where(c, x)` without `y` checks its arguments' types first). None: no filling decides (the
    array raises TypeError too, or fails otherwise while the sequence does not raise TypeError)."""
    function = resolve(name)
    parameters = inspect.signature(function).parameters.values()
    required = sum(
        1
        for p in parameters
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )
    count = max(required, position + 1, getattr(function, "nin", None) or 0)
    decided = False
    for filler in _FILLERS:
        for sequence in sequences:
            args = [filler() for _ in range(count)]
            args[position] = jnp.asarray(sequence)
            control = _outcome(function, args)
            if control == "TypeError":
                continue  # the array raises TypeError too: this filling says nothing
            args[position] = sequence
            if _outcome(function, args) == "TypeError":
                return True
            decided = decided or control == "ok"
    return False if decided else None


def _check(name: str, position: int, sequences: tuple[list, ...]) -> None:
    found = _rejects(name, position, sequences)
    if found is None:  # (8 of the 454 rows: `reshape`'s shape, `where` without `y`, ...)
        pytest.skip(f"{name}: no filling tells a sequence at {position} from an array by exception class")
    assert found, f"{name}: a Python sequence at {position} is accepted"


def test_checked_on_the_running_jax() -> None:
    assert SEQUENCES_CHECKED == f"jax {jax.__version__}"
    assert SEQUENCE_REJECTS and SEQUENCE_NESTED and SEQUENCE_VARIADIC


_REJECT_ROWS = sorted((n, p) for n, slots in SEQUENCE_REJECTS.items() for p in slots)[::_EVERY]
_NESTED_ROWS = sorted((n, p) for n, slots in SEQUENCE_NESTED.items() for p in slots)[::_EVERY]


@pytest.mark.parametrize(("name", "position"), _REJECT_ROWS)
def test_slot_rejects_a_list(name: str, position: int) -> None:
    _check(name, position, ([1.0, 2.0], [1, 2], [jnp.ones((2, 2))] * 2))


@pytest.mark.parametrize(("name", "position"), _NESTED_ROWS)
def test_slot_rejects_a_nested_list(name: str, position: int) -> None:
    _check(name, position, ([[1.0, 2.0], [3.0, 4.0]], [[1, 2], [3, 4]]))
