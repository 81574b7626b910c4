"""How much an exact file-level pre-screen could save at most (issue 17, item 3), before anyone builds one.

A file can skip the parse only when no selected rule can fire in it, which needs, for each rule, a word
the file must contain. This counts the files (and bytes) of the corpus that pass jaxlint's own prefilter
but contain none of an *optimistic* set of such words:
- tracing: the last part of every transformation and lax body the index knows (`analysis.binding.transforms`)
  and of the aliases names.py maps onto them (`pjit`, `remat`);
- JAX502: every jnp function of its table (the commonest English-like names dropped: optimistic);
- the untraced rules' words: `random`, `PRNGKey`, `key`, `time`, `perf_counter`, `float64`, `x64`, `map`.
Optimistic: JAX106 (`.at[...]` anywhere), JAX103 (any array subscript store) and table names such as
`copy`, `any`, `all` are left out of the set, so a real exact screen would skip fewer files than printed.

    python bench/prescreen_potential.py --libs flax,optax,equinox
    python bench/prescreen_potential.py --libs all
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from corpus import python_files  # noqa: E402

from jaxlint.analysis.binding.names import _CANONICAL_PREFIXES  # noqa: E402
from jaxlint.analysis.semantics.library import CONTROL_FLOW, TRANSFORMATIONS  # noqa: E402
from jaxlint.engine import _PREFILTER  # noqa: E402
from jaxlint.rules import python_sequence_input  # noqa: E402

_UNTRACED = {"random", "PRNGKey", "key", "time", "perf_counter", "float64", "x64", "map"}
_DROPPED = {"copy", "any", "all", "append", "at"}  # optimistic: words too common to screen on


def triggers() -> set[str]:
    tracing = {name.rsplit(".", 1)[1] for name in [*TRANSFORMATIONS, *CONTROL_FLOW]}
    tracing |= {prefix.rsplit(".", 1)[1] for prefix, _ in _CANONICAL_PREFIXES}
    table = python_sequence_input
    jnp = {name.rsplit(".", 1)[1] for name in [*table._REJECTS, *table._NESTED, *table._VARIADIC]}
    return (tracing | jnp | _UNTRACED) - _DROPPED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--libs", default="flax,optax,equinox")
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    alternatives = "|".join(sorted(map(re.escape, triggers())))
    words = re.compile(rf"\b(?:{alternatives})\b")
    files = linted = screened = 0
    linted_bytes = screened_bytes = 0
    for path in python_files(args.libs, args.cache):
        files += 1
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        if not any(word in text for word in _PREFILTER):
            continue
        linted += 1
        linted_bytes += len(text)
        if words.search(text) is None:
            screened += 1
            screened_bytes += len(text)
    share = screened_bytes / linted_bytes if linted_bytes else 0.0
    print(f"{files} files; {linted} pass the prefilter ({linted_bytes:,} characters)")
    print(
        f"at most {screened} could skip the parse: {screened_bytes:,} characters, {share:.2%} of the parsed text"
    )


if __name__ == "__main__":
    main()
