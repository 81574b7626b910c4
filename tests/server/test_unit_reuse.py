"""Per-unit reuse (`jaxlint/unit_reuse.py`): after every random edit, the server's lint (reusing the last
lint's findings where it may) gives a full lint's findings. The module ties its functions together the ways
reuse could go wrong: a callee's marks from a jitted caller, a module-wide x64 flag written in a body, a key
passed between two functions, an array argument JAX103 reads in the callee, a message quoting another line,
and isolated functions and classes whose numbers, comments and blank lines change (where reuse applies)."""

from __future__ import annotations

import copy
import dataclasses
import io
import keyword
import random
import re
import tokenize

from jaxlint.engine import lint_text
from jaxlint.lint import keep_selected
from jaxlint.selection import settings_for
from jaxlint.server.linting import config_for, lint_document, project_facts

from .conftest import run
from .test_server_project import _change, _position, cli_rows, server_rows

MODULE = """import jax
import jax.numpy as jnp
from util import double


@jax.jit
def step(params, x, key):
    y = helper(x, 2.0)
    if y.sum() > 1.0:
        y = y * 2.0
    noise = jax.random.normal(key, y.shape)
    more = jax.random.normal(key, (3,))
    return y + noise + more[0]


def helper(a, b):
    c = a + b
    if c > 0:
        return c * 3
    return c


def setup():
    jax.config.update("jax_enable_x64", False)


def consume(key):
    return jax.random.uniform(key, (2,))


def pair(key):
    a = consume(key)
    b = consume(key)
    return a + b


def fill(arr):
    arr[0] = 1.0
    return arr


def caller():
    return fill(jnp.zeros(3))


@jax.jit
def alone(x, key):
    z = x * 2.0 + 1
    if z > 0:
        print("z", z)
    k = jax.random.normal(key, (4,))
    j = jax.random.normal(key, (4,))
    w = jnp.array(2**40)
    for i in range(3):
        z = z + i * 0.5
    return double(z) + k + j + w


def quiet(a):
    b = a * 4
    return [b, b + 1.5]


class Scaler:
    factor = 2.5

    def apply(self, x):
        return x * self.factor + 0.5

    @jax.jit
    def jitted(self, x):
        if x > 0.0:
            return x * 3.25
        return self.apply(x)


EPS = 1e-6
Vector = jnp.ndarray


def scaled(v: Vector, k):
    if k > 2:
        return v * EPS
    return jax.random.split(v, 2)[0]


def uses_scaled(key, x):
    a = scaled(x, 3)
    b = jax.random.normal(key, (2,))
    c = jax.random.normal(scaled(key, 1), (2,))
    return a + b + c


fast_scaled = jax.jit(scaled, static_argnums=1)
halve = lambda v: v / 2.0 if v > 0 else -v


def halver(x):
    if x > 1:
        return halve(x)
    return x


@jax.jit
def halved(x):
    return halve(x) * 3


@jax.jit
def traced_user(x, key):
    y = scaled(x, 1.0)
    if y.sum() > 0:
        return fast_scaled(x, 2)
    return consume(key) + consume(key)


def named(x, n):
    label = "plain"
    if n > 0:
        return x * 2.0, label
    return jnp.sum(x), label


fast_named = jax.jit(named, static_argnames="n")


class Holder:
    def __init__(self, key):
        self.pool = key

    def draw(self):
        return jax.random.normal(self.pool, (2,))


def twice(key):
    holder = Holder(key)
    return holder.draw() + holder.draw()


def poke(obj, value):
    obj.other = value
    text = "a string"
    mixed = jnp.frobnicate(value)
    return obj, text, mixed


@jax.tree_util.register_pytree_node_class
class Config:
    def __init__(self, width, flag):
        self.width = width
        self.flag = flag

    def tree_flatten(self):
        return (self.width,), (self.flag,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)


@jax.jit
def configured(cfg, x):
    if cfg.width > 0:
        return x
    return x * 2


def tail():
    return 0
"""

# Edits: a number changed (what reuse takes), and edits across the hazards (what it must refuse).
EDITS = [
    (r"2\.0", ["3.0", "2.5", "0"]),
    (r"\b1\.0\b", ["0.0", "7.0"]),
    (r"\b3\b", ["0", "5"]),
    (r"2\*\*40", ["2**20", "2**40"]),
    (r"0\.5", ["0.25", "1"]),
    (r"\(4,\)", ["(5,)"]),
    (r"False", ["True"]),
    (r"c \* 3", ["c * 3.5", "3"]),
    (r"b = consume\(key\)", ["b = consume(jax.random.split(key)[0])"]),
    (r"fill\(jnp\.zeros\(3\)\)", ["fill([0.0, 1.0])", "fill(jnp.ones(2))"]),
    (r"helper\(x, 2\.0\)", ["helper(x, x)", "x"]),
    (r"\n    j = jax\.random\.normal\(key, \(4,\)\)", ["", "\n    j = jax.random.normal(key, (6,))\n"]),
    (r"return \[b, b \+ 1\.5\]", ["return [b, quiet(b)]", "return [b, helper(b, 1)]"]),
    (r"factor = 2\.5", ["factor = 4.5", "factor = 2"]),
    (r"x > 0\.0", ["x > 1.0"]),
    (r"x \* 3\.25", ["x * 7.25", "x * 3.25  # x"]),
    (r"return c\n", ["return Scaler().apply(c)\n"]),  # a use elsewhere: the class is no longer reused
    # Comments and blank lines (reuse takes them; the findings below move with the lines).
    (
        r"\n    b = a \* 4",
        ["\n\n    b = a * 4", "  # four\n    b = a * 4", "\n    # a comment\n    b = a * 4"],
    ),
    (r"\n    w = jnp", ["\n\n    w = jnp", "\n    # w\n    w = jnp"]),
    (r"\n\n\n(?=def|@)", ["\n\n\n", "\n\n\n\n", "\n\n# between\n"]),
    (r"\n    y = helper", ["\n\n    y = helper"]),
    (r"\n\n    ", ["\n    "]),
    # Edits in defs that others call or that call others (reuse walks them with what they are tied to), in
    # a callee whose return, key use and traced marks change, and in the lines tied to them.
    (r"k > 2", ["k > 0", "k > 5"]),
    (r"split\(v, 2\)\[0\]", ["split(v, 2)[1]", "split(v, 3)[0]"]),
    (r"scaled\(x, 3\)", ["scaled(x, 1)", "scaled(x, 3)"]),
    (r"scaled\(x, 1\.0\)", ["scaled(x, 2.0)", "scaled(x, 1.0)"]),
    (r"scaled\(key, 1\)", ["scaled(key, 4)", "scaled(key, 1)"]),
    (r"fast_scaled\(x, 2\)", ["fast_scaled(x, 0)", "fast_scaled(x, 2)"]),
    (r"\(2,\)", ["(3,)", "(2,)"]),
    (r"static_argnums=1", ["static_argnums=0", "static_argnums=1"]),
    (r"1e-6", ["1e-3", "0"]),
    (r"consume\(key\) \+ consume\(key\)", ["consume(key) + 1.0"]),
    (r"x > 1\b", ["x > 2", "x > 1"]),
    (r"halve\(x\) \* 3", ["halve(x) * 4", "halve(x) * 3"]),
    (r"\nEPS = ", ["\nif jnp is None:\n    raise ImportError\nEPS = "]),  # code that narrows an import
    (r"\nif jnp is None:\n    raise ImportError\n", ["\n"]),  # (and gone again)
    # Names and strings (reuse takes those no module-wide fact reads; the others walk more or lint whole):
    # local names and parameters renamed in one place, names that collide with module-level names, x64 and
    # jitted names, static_argnames strings, attribute writes, calls of imported functions.
    (r"\blabel\b", ["tag", "helper", "EPS", "enable_x64", "named", "consume", "fast_named", "label"]),
    (r'"plain"', ['"plainx"', '"jax_enable_x64"', '"n"', '"float64"', '"plain"']),
    (r'static_argnames="n"', ['static_argnames="x"', 'static_argnames="n"']),
    (r"\bz\b", ["zz", "z", "alone", "halve"]),
    (r"\bc\b", ["cc", "c", "quiet", "Scaler"]),
    (r"\bb\b", ["bb", "b", "tail"]),
    (r"jnp\.array", ["jnp.arra", "jnp.array"]),
    (r"jnp\.sum\(x\)", ["jnp.su(x)", "jnp.sum(xx)", "jnp.sum(x)"]),
    (r'print\("z"', ['print("zz"', 'print("z"']),
    (r"\bkey\b", ["k2", "key", "pool"]),
    (r"self\.factor", ["self.factr", "self.factor"]),
    (r"self\.pool", ["self.pol", "self.pool"]),
    (r"obj\.other", ["obj.pool", "obj.other", "obj.draw"]),
    (r"\bvalue\b", ["val", "value"]),
    (r'"a string"', ['"a strings"', '"register"', '"a string"']),
    (r"return v \* EPS", ["return v * EP", "return v * EPS"]),
    (r"\bx\b", ["x", "xs", "scaled", "fast_scaled", "named"]),
    (r"double\(z\)", ["doubl(z)", "double(z)"]),
    (r"\.apply\(x\)", [".aply(x)", ".apply(x)", ".draw(x)"]),
    # A pytree's static fields (a module-wide table: `configured` reads `cfg.width` of an unknown class).
    (r"\(self\.width,\), \(self\.flag,\)", ["(self.flag,), (self.width,)", "(self.width,), (self.flag,)"]),
]


UTIL = """import jax.numpy as jnp


def double(v):
    return jnp.asarray(v) * 2
"""

CALLER = """import jax
from module import helper, quiet


@jax.jit
def go(x):
    return helper(x, 1.0) + quiet(x)[0]
"""


# What typing may make a name or a string in a body: a module-level name, an x64 name, a jitted function, a
# parameter named by static_argnames, a method, an attribute another method writes, an imported module.
_COLLIDING = ["helper", "EPS", "consume", "enable_x64", "fast_scaled", "n", "step", "double", "Scaler"]
_COLLIDING += ["apply", "pool", "draw", "jnp", "jax", "register", "static_argnums", "Vector", "halve"]


def _typed(text: str, rng: random.Random) -> str:
    """One keystroke's worth in a name or a string inside an indented body: a character typed or deleted, or
    the whole word replaced by a colliding one."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    words = [
        t
        for t in tokens
        if (t.type == tokenize.NAME and not keyword.iskeyword(t.string) or t.type == tokenize.STRING)
        and t.start[1] > 0
        and lines[t.start[0] - 1][:1] == " "
    ]
    if not words:
        return text
    token = rng.choice(words)
    start = starts[token.start[0] - 1] + token.start[1]
    end = starts[token.end[0] - 1] + token.end[1]
    word = token.string
    choice = rng.random()
    if token.type == tokenize.STRING:
        if choice < 0.6:
            new = word[:-1] + rng.choice("xyz _") + word[-1]
        else:
            new = '"' + rng.choice(_COLLIDING) + '"'
    elif choice < 0.4:
        new = word + rng.choice("xyz_2")
    elif choice < 0.6 and len(word) > 1:
        new = word[:-1]
    else:
        new = rng.choice(_COLLIDING)
    return text[:start] + new + text[end:]


def _replay(path: str, facts, seed: int) -> int:
    """Random edits; after each, the server's lint against a full lint (findings and, with facts, the
    summary the module leaves the others). Returns how many lints reused."""
    config = config_for(path)
    rng = random.Random(seed)
    text = MODULE
    linted = lint_document(text, path, config, None, facts)
    reused = tied = 0
    for _ in range(240):
        if rng.random() < 0.35:
            text = _typed(text, rng)
        else:
            pattern, replacements = rng.choice(EDITS)
            matches = list(re.finditer(pattern, text))
            if not matches:
                continue
            match = rng.choice(matches)
            text = text[: match.start()] + rng.choice(replacements) + text[match.end() :]
        linted = lint_document(text, path, config, linted, facts)
        full = lint_document(text, path, config, None, facts)
        assert linted.findings == full.findings, text
        assert linted.summary == full.summary, text
        if facts is None:  # as the command lints the text alone
            settings = settings_for(config, path)
            assert linted.findings == keep_selected(lint_text(text, path, settings), settings), text
        reused += linted.units is not None and linted.units.reused > 0
        tied += linted.units is not None and linted.units.tied > 0
    assert tied >= 3  # reuse walked changed defs with the defs tied to them: those comparisons ran too
    return reused


def test_reuse_gives_a_full_lints_findings_after_every_random_edit(tmp_path):
    reused = _replay(str(tmp_path / "nofile" / "module.py"), None, 28)  # no file on disk: linted alone
    assert reused >= 5  # the reuse ran: the comparison above is of reused findings too
    assert 240 - reused > 20  # and so did full lints after the edits it must refuse


def test_reuse_in_a_project_gives_a_full_lints_findings_and_summary(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "util.py").write_text(UTIL)
    (tmp_path / "caller.py").write_text(CALLER)
    module = tmp_path / "module.py"
    module.write_text(MODULE)
    facts, _ = project_facts(str(module), config_for(str(module)), {})
    assert facts is not None and facts.module_facts(str(module)).incoming  # caller.py's calls reach it
    reused = _replay(str(module), facts, 29)
    assert reused >= 5


# Edits of the isolated defs (`alone`, `quiet`) that reuse takes, then one that makes `quiet` call `helper`;
# then edits of names and strings.
_CLIENT_EDITS = [
    ("z = x * 2.0", "z = x * 5.0"),
    ("(4,))\n    w", "(4,))\n\n    # spaced\n    w"),
    ("2**40", "2**41"),
    ("b = a * 4", "b = a * 9  # nine"),
    ("i * 0.5", "i * 0.75"),
    ("return [b, b + 1.5]", "return [b, helper(b, 1.5)]"),
    ("z = x * 5.0", "z = x * 2.0"),
    # Names and strings: a local renamed, a string typed into, an imported module's function typed.
    ('    label = "plain"', '    tag = "plain"'),
    ('text = "a string"', 'text = "a strung"'),
    ("jnp.frobnicate(value)", "jnp.frobnicat(value)"),
    ("obj.other = value", "obj.pool = value"),  # (an attribute Holder keeps: linted whole)
]


def test_reuse_through_the_language_server(session_factory, tmp_path):
    """The same kinds of edits sent to the real server in a project: after each, the published diagnostics
    are what `jaxlint` gives the text."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "util.py").write_text(UTIL)
    (tmp_path / "caller.py").write_text(CALLER)
    path = tmp_path / "module.py"
    path.write_text(MODULE)

    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(path, MODULE)
        await session.diagnostics(uri, 1)
        text = MODULE
        for version, (old, new) in enumerate(_CLIENT_EDITS, start=2):
            start = text.index(old)
            _change(session, uri, version, _position(text, start), _position(text, start + len(old)), new)
            text = text[:start] + new + text[start + len(old) :]
            diagnostics = await session.diagnostics(uri, version)
            path.write_text(text)
            assert server_rows(diagnostics) == cli_rows(path, tmp_path), text
        assert await session.stop() == 0

    run(scenario)


# Single edits of names and strings from the module as written: (old, new, whether reuse takes it). Each is
# compared with a full lint whatever the gate decides; the gate's decision is checked too, so that a gate
# letting through what it must refuse fails here even where the findings happen to agree.
_WORD_EDITS = [
    ('    label = "plain"', '    tag = "plain"', True),  # a local renamed (its use now unbound)
    ('"plain"', '"plainer"', True),  # a string in a body
    ("jnp.frobnicate(value)", "jnp.frobnicat(value)", True),  # an imported module's function, typed
    ("double(z)", "doubl(z)", False),  # `double`: a dtype's name too
    ("jnp.array(2**40)", "jnp.arra(2**40)", False),  # a function jaxlint's tables name
    ("    b = a * 4", "    bb = a * 4", True),  # typing a new name
    ("def quiet(a):\n    b = a", "def quiet(q):\n    b = q", True),  # a parameter renamed
    ('    text = "a string"', '    text = "a strings"', True),
    ("obj.other = value", "obj.pool = value", False),  # an attribute Holder keeps: JAX301 in twice()
    ('    label = "plain"', '    label = "jax_enable_x64"', False),  # x64 mentioned
    ('    label = "plain"', '    enable_x64 = "plain"', False),
    ("jnp.sum(x)", "jnp.sum(xx)", False),  # inside a call the analysis knows
    ("def named(x, n):", "def name(x, n):", False),  # a def's name
    ("(self.width,), (self.flag,)", "(self.flag,), (self.width,)", False),  # pytree fields: JAX101 goes
]


def test_word_edits_reuse_what_they_may_and_match_a_full_lint(tmp_path):
    path = str(tmp_path / "nofile" / "module.py")
    config = config_for(path)
    base = lint_document(MODULE, path, config)
    for old, new, reuses in _WORD_EDITS:
        assert MODULE.count(old) == 1, old
        text = MODULE.replace(old, new)
        previous = dataclasses.replace(base, units=copy.copy(base.units))
        linted = lint_document(text, path, config, previous)
        assert linted.findings == lint_document(text, path, config).findings, new
        assert linted.units is not None and bool(linted.units.reused) == reuses, (new, linted.units.refused)


METHODS = """import jax


class Net:
    def __call__(self, x):
        if x > 0:
            return x
        return -x


class Runner:
    def go(self, model, x):
        return model(x)

    def run(self, x):
        return jax.jit(self.step)(x)

    def step(self, x):
        return self.go(Net(), x)


def other(r, x):
    return r.gone(5, x)


def unrelated(v):
    return v * 2
"""


def test_a_respelled_method_name_walks_the_classes_defining_it(tmp_path):
    """`r.gone(...)` -> `r.go(...)`: a call of `go` on an unknown object makes what `Runner.go` receives
    unknown, so `Net()` no longer reaches `model(x)` and JAX101 in `Net.__call__` goes; `other` names neither
    class, so only the respelled method name ties them (without that tie the reuse kept the stale JAX101)."""
    path = str(tmp_path / "nofile" / "methods.py")
    config = config_for(path)
    base = lint_document(METHODS, path, config)
    assert any(f.code == "JAX101" for f in base.findings)  # the finding the edit takes away
    text = METHODS.replace("r.gone(5, x)", "r.go(5, x)")
    linted = lint_document(text, path, config, base)
    assert linted.findings == lint_document(text, path, config).findings
    assert not any(f.code == "JAX101" for f in linted.findings)
    assert linted.units is not None and linted.units.reused and linted.units.tied >= 2  # Runner and Net
