"""Hostile but valid Python: long operator chains and very long files, for the fault tests and `bench/`.

Every text here is code CPython compiles; each once crashed or stalled jaxlint (issue 30). Used by
`tests/test_hostile_inputs.py` and `bench/file_size.py`; run by hand to write one to a file:

    python tools/hostile_inputs.py and 8000 > chain.py
    python tools/hostile_inputs.py --lines 50000 > long.py
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

HEADER = "import jax\nimport jax.numpy as jnp\n\n"


def _operator(word: str) -> Callable[[int], str]:
    return lambda n: "x = " + f" {word} ".join(["a"] * n) + "\n"


def _prefix(word: str) -> Callable[[int], str]:
    return lambda n: "x = " + word * n + "a\n"


def _elif(n: int) -> str:
    return "if a:\n    pass\n" + "elif a:\n    pass\n" * (n - 1)


# Chain kind -> text of one statement with `n` operands (or links). libcst nests each kind one node per
# link (a left- or right-leaning tree), so its recursion, and jaxlint's walks over it, go `n` deep.
CHAINS: dict[str, Callable[[int], str]] = {
    "and": _operator("and"),
    "or": _operator("or"),
    "plus": _operator("+"),
    "power": _operator("**"),
    "compare": _operator("<"),
    "attribute": lambda n: "x = a" + ".b" * n + "\n",
    "call": lambda n: "x = a" + "()" * n + "\n",
    "subscript": lambda n: "x = a" + "[0]" * n + "\n",
    "lambda": _prefix("lambda: "),
    "not": _prefix("not "),
    "minus": _prefix("- "),
    "ternary": lambda n: "x = " + "a if a else " * n + "a\n",
    "elif": _elif,
    "strings": lambda n: "x = " + " ".join(['"a"'] * n) + "\n",
    # The same `+` chain spread over lines, which a scan of the text by lines must not miss.
    "plus_in_brackets": lambda n: "x = (a\n" + "    + a\n" * (n - 1) + ")\n",
    "plus_across_brackets": lambda n: "x = (a\n)" + " + (a\n)" * (n - 1) + "\n",
    "plus_backslashes": lambda n: "x = a \\\n" + "    + a \\\n" * (n - 2) + "    + a\n",
}

# A function with a finding that every file of a hostile test also holds: the chain must not cost the rest
# of the file its findings (JAX101: Python `if` on a traced value inside `jax.jit`).
TRACED_IF = "\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
TRACED_IF_LINE = 5  # lines from the chain statement's last line to the `if`


def chain(kind: str, n: int, *, with_finding: bool = True) -> str:
    """A module holding one `kind` chain of `n` links (after the JAX imports), then `TRACED_IF`."""
    return HEADER + CHAINS[kind](n) + (TRACED_IF if with_finding else "")


_BLOCK = '''
@jax.jit
def step_{i}(params, x):
    """One block of an ordinary training module."""
    y = jnp.dot(params["w"], x) + params["b"]
    if y.shape[0] > 1:
        y = jnp.tanh(y)
    for k in range(3):
        y = y * 0.5 + k
    return y.sum()


def noise_{i}(shape):
    key = jax.random.PRNGKey({i})
    a = jax.random.normal(key, shape)
    b = jax.random.normal(key, shape)
    return a + b


def loss_{i}(params, batch):
    total = 0.0
    for x in batch:
        total = total + step_{i}(params, x)
    return total
'''
_BLOCK_LINES = _BLOCK.count("\n")


def long_module(lines: int) -> str:
    """An ordinary JAX module of about `lines` lines: the same block of three functions again and again, each
    block with one finding (JAX301: `noise_i` draws twice from one key), whose rule asks for lines per
    function."""
    blocks = max(1, lines // _BLOCK_LINES)
    return HEADER + "".join(_BLOCK.format(i=i) for i in range(blocks))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", nargs="?", choices=sorted(CHAINS), help="chain kind")
    parser.add_argument("n", nargs="?", type=int, default=8000, help="links in the chain")
    parser.add_argument("--lines", type=int, help="write an ordinary module of about this many lines instead")
    args = parser.parse_args(argv)
    if args.lines is not None:
        sys.stdout.write(long_module(args.lines))
    elif args.kind is not None:
        sys.stdout.write(chain(args.kind, args.n))
    else:
        parser.error("give a chain kind or --lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
