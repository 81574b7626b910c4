"""The library table's `jax.numpy` sequence arguments (library.py re-exports them): which arguments of which
functions refuse a Python list or tuple. Measured on JAX by tools/measure_jnp_sequence_args.py into
`data/jnp_sequence_args.txt` (running the linter never imports jax); every row is run again by
tests/analysis/test_library_sequences.py.
"""

from __future__ import annotations

import pkgutil

SEQUENCES_CHECKED = "jax 0.10.2"

# qualified name -> {position: parameter name (None: positional only)}
Slots = dict[str, dict[int, str | None]]


def _parse(table: str) -> tuple[Slots, Slots, frozenset[str]]:
    rejects: Slots = {}
    nested: Slots = {}
    variadic: set[str] = set()
    for line in table.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, *slots = line.split()
        qualname = "jax.numpy." + name
        for slot in slots:
            if slot == "*":
                variadic.add(qualname)
                continue
            target = nested if slot.startswith("~") else rejects
            position, _, parameter = slot.lstrip("~").partition(":")
            target.setdefault(qualname, {})[int(position)] = parameter or None
    return rejects, nested, frozenset(variadic)


_TABLE = pkgutil.get_data(
    "jaxlint.analysis.semantics", "data/jnp_sequence_args.txt"
)  # not importlib.resources: start-up
if _TABLE is None:
    raise ImportError("jaxlint.analysis.semantics: data/jnp_sequence_args.txt cannot be read")
# Arguments that refuse a Python sequence (a list of arrays or of scalars raises TypeError); arguments that take a
# sequence of arrays but refuse a nested list in it (`jnp.stack([[1, 2], [3, 4]])`); functions whose every
# positional argument refuses one.
SEQUENCE_REJECTS, SEQUENCE_NESTED, SEQUENCE_VARIADIC = _parse(_TABLE.decode("utf-8"))
