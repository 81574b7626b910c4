"""Edits inside function bodies (the statements the server's incremental re-parse reuses around, and what any
reuse of per-unit analysis would target): after every edit the incremental lint gives a full lint's findings.

The module ties its functions together the ways a unit's findings depend on other units: a helper traced
through its jitted caller, a key passed between functions, module-wide facts (x64) written in a body."""

from __future__ import annotations

import random
import re

from jaxlint.engine import lint_text
from jaxlint.lint import keep_selected
from jaxlint.selection import settings_for
from jaxlint.server.linting import config_for, lint_document

from .conftest import run
from .test_server_project import _change, _parses, _position, cli_rows, server_rows

MODULE = '''import jax
import jax.numpy as jnp


@jax.jit
def step(params, x, key):
    """A jitted step calling helpers with traced values."""
    y = jnp.tanh(params["w"] @ x)
    y = helper(y, 2.0)
    noise = jax.random.normal(key, y.shape)
    total = scale(y, 3)
    return total + noise


def helper(a, b):
    c = a + b
    return [c, c * 2]


def scale(v, n):
    for i in range(n):
        v = v * 2
    return v


def draw(key):
    first = jax.random.normal(key, (2,))
    second = jax.random.normal(key, (2,))
    return first + second


def update(arr, value):
    arr = jnp.asarray(arr)
    out = arr.at[0].set(value)
    return out
'''

# Statements put into a body (at the indent of the line they go before or replace): each changes a fact
# some other unit's findings read (a traced branch in a helper, a call that traces a parameter, a key use,
# an x64 switch, an in-place update, an early return that makes the rest dead).
_SNIPPETS = [
    "if a > 0:\n{indent}    a = a + 1",
    "if n > 2:\n{indent}    v = v + 1",
    "print('value', a)",
    "y = helper(y, True)",
    "total = scale(total, y)",
    "extra = jax.random.uniform(key)",
    "jax.config.update('jax_enable_x64', True)",
    "big = jnp.int32(2 ** 40)",
    "arr[0] = value",
    "return a",
    "pass",
    "draw(key)",
]


def _body_lines(text: str) -> list[tuple[int, int, str]]:
    """(start offset, end offset, indent) of each line inside a def body (indented, not a docstring)."""
    found, at = [], 0
    for line in text.splitlines(keepends=True):
        indent = re.match(r"[ ]*", line).group()
        if indent and line.strip() and not line.strip().startswith('"""'):
            found.append((at, at + len(line), indent))
        at += len(line)
    return found


def _body_edit(rng: random.Random, text: str) -> tuple[int, int, str]:
    """A random body edit after which the text still parses (the syntax-error path is the random-edit
    replay's, in test_server_project.py)."""
    while True:
        start, end, new = _any_body_edit(rng, text)
        if _parses(text[:start] + new + text[end:]):
            return start, end, new


def _any_body_edit(rng: random.Random, text: str) -> tuple[int, int, str]:
    """(start, end, new text): a body line replaced, deleted, preceded by a snippet, or one character of it
    changed (a digit or a name's letter)."""
    start, end, indent = rng.choice(_body_lines(text))
    kind = rng.random()
    snippet = indent + rng.choice(_SNIPPETS).format(indent=indent) + "\n"
    if kind < 0.3:
        return start, start, snippet
    if kind < 0.5:
        return start, end, snippet
    if kind < 0.65:
        return start, end, ""
    line = text[start:end]
    spots = [i for i, c in enumerate(line) if c.isalnum() and i >= len(indent)]
    at = start + rng.choice(spots)
    return at, at + 1, rng.choice("0123xyab")


def _full(text: str, path: str, config) -> list:
    settings = settings_for(config, path)
    return keep_selected(lint_text(text, path, settings), settings)


def test_incremental_lints_of_body_edits_equal_full_lints(tmp_path):
    """300 seeded body edits (runs of six from the module), each linted the server's way (the previous lint's parse and positions reused)
    and compared with a full lint of the same text, findings, messages and fixes included."""
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    config = config_for(str(path))
    text = MODULE
    linted = lint_document(text, str(path), config)
    assert linted.findings == _full(text, str(path), config)
    rng = random.Random(2028)
    seen_codes, changed = set(), 0
    for step in range(300):
        if step % 6 == 0:  # back to the module (as one edit), so that edits keep meeting its cross-unit facts
            text = MODULE
        start, end, new = _body_edit(rng, text)
        text = text[:start] + new + text[end:]
        before = linted.findings
        linted = lint_document(text, str(path), config, linted)
        assert linted.findings == _full(text, str(path), config), text
        seen_codes.update(f.code for f in linted.findings)
        changed += linted.findings != before
    # The edits moved findings in and out, across units, not only in the line they touched.
    assert changed >= 30 and len(seen_codes) >= 4, (changed, seen_codes)


def test_body_edits_through_the_language_server(session_factory, tmp_path):
    """Body edits sent to the real server as incremental changes: after each, the published diagnostics are
    what `jaxlint` gives the text."""
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    (tmp_path / ".git").mkdir()

    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(path, MODULE)
        await session.diagnostics(uri, 1)
        rng = random.Random(7)
        text, compared = MODULE, 0
        for version in range(2, 14):
            start, end, new = _body_edit(rng, text)
            _change(session, uri, version, _position(text, start), _position(text, end), new)
            text = text[:start] + new + text[end:]
            diagnostics = await session.diagnostics(uri, version)
            if version % 3 == 1:
                path.write_text(text)
                assert server_rows(diagnostics) == cli_rows(path, tmp_path), text
                compared += 1
        assert compared == 4
        assert await session.stop() == 0

    run(scenario)
