"""The hot walks' shortcuts answer what the plain code answers, on every node of the fixtures and examples.

- `syntax.LEAF` (nodes the walks drop on sight) holds only types whose nodes never have children;
- `syntax.children` (a reader generated per node type from its declared field types) answers what reading
  every field's value answers (`_node_children`), the same nodes in the same order, and
  `syntax.CHILDREN_REVERSED` the same nodes last first;
- `own_nodes` with the default scopes (type identity) yields what the isinstance() path yields;
- `ModuleIndex.qualname` (answered once per node and unit) equals the import table's own answer, and so do
  the callees the index pass keeps per call (`site_callees`); `uses_keys` (kept per index) the fresh answer;
- the classes the hot paths compare by type identity instead of isinstance() (every concrete node class)
  have no subclasses in the installed libcst (a new subclass would make the identity test miss it);
- the walks' hook tables, shared across modules, follow each selection of rules;
- `syntax.parse_module` (libcst's parse without libcst re-checking its parser's nodes) builds the same trees,
  skips the check only while it parses, and leaves it on after errors and overlapping parses.
"""

from __future__ import annotations

import inspect
import threading

import libcst as cst
import pytest

from jaxlint import syntax
from jaxlint.analysis import ModuleIndex
from jaxlint.analysis.keys.relevance import _uses_keys, uses_keys
from jaxlint.analysis.module_facts import ModuleFacts
from jaxlint.analysis.project import Export
from jaxlint.syntax import (
    CHILDREN_REVERSED,
    LEAF,
    SCOPES,
    _node_children,
    children,
    own_nodes,
    parse_module,
    walk,
)
from tests.conftest import LINTED_SOURCES as SOURCES

# The hot paths compare node types by identity (`type(node) is cst.Call`) wherever the class is concrete: exact
# only while no concrete libcst class has a subclass.
_CONCRETE = sorted(
    name
    for name, cls in vars(cst).items()
    if isinstance(cls, type) and issubclass(cls, cst.CSTNode) and not inspect.isabstract(cls)
)


def _modules() -> list[cst.Module]:
    return [cst.parse_module(path.read_text(encoding="utf-8")) for path in SOURCES]


MODULES = _modules()


def test_sources_exist() -> None:
    assert len(MODULES) > 20


def test_concrete_node_classes_are_not_subclassed() -> None:
    assert len(_CONCRETE) > 150 and "Call" in _CONCRETE and "BaseExpression" not in _CONCRETE
    assert [name for name in _CONCRETE if getattr(cst, name).__subclasses__()] == []


def test_generated_readers_equal_the_general_reader() -> None:
    seen = 0
    for module in MODULES:
        for node in walk(module):
            fast, general = children(node), _node_children(node)
            assert len(fast) == len(general), type(node).__name__
            assert all(a is b for a, b in zip(fast, general, strict=True)), type(node).__name__
            backwards = CHILDREN_REVERSED[type(node)](node)
            assert [id(n) for n in backwards] == [id(n) for n in reversed(general)], type(node).__name__
            seen += 1
    assert seen > 10_000


def test_generated_readers_on_every_node_type() -> None:
    """Optional fields, sentinels and node-or-sequence fields on hand-picked code the fixtures may lack."""
    source = (
        "from . import a as b\nfrom x import *\nimport a.b as c\n"
        "def f(a, /, b: int = 1, *args, c, d=2, **kw) -> int:\n"
        "    global g\n    x: int\n    y = lambda: (yield)\n    del x\n"
        "    async with a as (b, c), d: pass\n"
        "    try:\n        pass\n    except* E as e:\n        raise X from e\n    else:\n        pass\n"
        "    finally:\n        return\n"
        "    match p:\n        case [1, *r] | {'k': v, **kw} | C(a, b=c) if v: pass\n"
        "    print(f'{x!r:>{w}}', t'{x}' if 0 else 1, x[1:2:3], *a, **k, sep='')\n"
        "class C[T](B, metaclass=M):\n    type A[U] = list[U]\n"
    )
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:  # an older libcst without template strings
        module = cst.parse_module(source.replace("t'{x}'", "'x'"))
    seen = 0
    for node in walk(module):
        fast, general = children(node), _node_children(node)
        assert [id(n) for n in fast] == [id(n) for n in general], type(node).__name__
        backwards = CHILDREN_REVERSED[type(node)](node)
        assert [id(n) for n in backwards] == [id(n) for n in reversed(general)], type(node).__name__
        seen += 1
    assert seen > 100


def test_leaf_nodes_have_no_children() -> None:
    seen = 0
    for module in MODULES:
        for node in walk(module):
            assert not LEAF[type(node)] or children(node) == [], type(node).__name__
            seen += 1
    assert seen > 10_000
    assert LEAF[cst.Name] and LEAF[cst.Integer] and not LEAF[cst.Call] and not LEAF[cst.Attribute]


def test_own_nodes_shortcut_matches_isinstance_path() -> None:
    generic = tuple(list(SCOPES))  # an equal tuple that is not SCOPES itself takes the isinstance() path
    assert generic is not SCOPES
    for module in MODULES:
        index = ModuleIndex(module)
        for unit in [index.root, *index.units.values()]:
            fast = list(own_nodes(unit.node))
            slow = list(own_nodes(unit.node, generic))
            assert len(fast) == len(slow) and all(a is b for a, b in zip(fast, slow, strict=True))


def test_memoised_qualname_matches_import_table() -> None:
    asked = 0
    for module in MODULES:
        index = ModuleIndex(module)
        nodes = [n for n in walk(module) if type(n) in (cst.Name, cst.Attribute)]
        for unit in [None, index.root, *index.units.values()]:
            local = unit.local_names if unit is not None and unit is not index.root else frozenset()
            for node in nodes:
                expected = index.imports.qualname(node, local)
                assert index.qualname(node, unit) == expected
                assert index.qualname(node, unit) == expected  # the second answer comes from the memo
                asked += 1
    assert asked > 10_000


def test_memoised_resolution_matches_a_fresh_answer() -> None:
    """`resolve_function` and `transform_of` (kept by node, with the first asker's unit and point, the others'
    apart, once the index pass is over) answer what computing afresh answers, asked twice, for every call's
    function and first argument in every unit, with no point and at the call's own."""
    asked = 0
    for module in MODULES:
        index = ModuleIndex(module)
        calls = [n for n in walk(module) if type(n) is cst.Call]
        for unit in [index.root, *index.units.values()]:
            for call in calls:
                for node in [call.func, *(a.value for a in call.args[:1])]:
                    for before in (None, index.call_order(call), None):
                        fresh = index._resolve_function(node, unit, before)
                        assert index.resolve_function(node, unit, before) == fresh
                        assert index.transform_of(node, unit) == index._transform_of(node, unit)
                    asked += 1
    assert asked > 10_000


def test_kept_site_callees_and_key_relevance_match_fresh_answers() -> None:
    """`ModuleIndex.site_callees` (each call's callee, named once by the index pass) is what the import table
    names in the call's unit; `uses_keys` (kept per index and project facts) is what asking afresh answers, and
    follows a change of the project facts."""
    sites = 0
    for module in MODULES:
        index = ModuleIndex(module)
        for (call, unit, _), callee in zip(index._sites, index.site_callees, strict=True):
            local = unit.local_names if unit is not index.root else frozenset()
            assert callee == index.imports.qualname(call.func, local)
            sites += 1
        assert uses_keys(index) == _uses_keys(index, None)
        assert uses_keys(index) == _uses_keys(index, None)  # the second answer is the kept one
        consuming = ModuleFacts(exports={"other.draw": Export(("key",), (), keys=(("key", ()),))})
        index.project = consuming
        assert uses_keys(index) is True
        index.project = ModuleFacts()
        assert uses_keys(index) == _uses_keys(index, index.project)
    assert sites > 1_000


# Plain literals, escapes, prefixes, triple quotes and empty strings.
_STRING_EDGES = [
    '""',
    "''",
    '""""""',
    "''''''",
    "'\"'",
    '"""a\nb"""',
    "'''x'''",
    'b"x"',
    'r"a\\b"',
    '"a\\nb"',
    'u"x"',
]


def test_string_value_matches_libcst() -> None:
    """`syntax.string_value` (no `ast.literal_eval` for a plain literal) equals libcst's `evaluated_value`."""
    strings = [n for module in MODULES for n in walk(module) if type(n) is cst.SimpleString]
    strings += [cst.ensure_type(cst.parse_expression(text), cst.SimpleString) for text in _STRING_EDGES]
    for node in strings:
        fast, slow = syntax.string_value(node), node.evaluated_value
        assert fast == slow and type(fast) is type(slow), node.value
    assert len(strings) > 300


def test_is_expression_matches_isinstance() -> None:
    for module in MODULES:
        for node in walk(module):
            assert syntax.is_expression(node) == isinstance(node, cst.BaseExpression)


def _checks_nodes() -> bool:
    try:
        cst.Name("not a name")
    except cst.CSTValidationError:
        return True
    return False


def test_unchecked_parse_builds_the_same_trees() -> None:
    for path, module in zip(SOURCES, MODULES, strict=True):
        source = path.read_text(encoding="utf-8")
        fast = parse_module(source)
        assert fast.deep_equals(module), path.name
        assert fast.code == source, path.name
    assert _checks_nodes()


def test_the_check_is_off_only_while_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    real = cst.parse_module

    def spy(source: str) -> cst.Module:
        seen.append(_checks_nodes())
        return real(source)

    monkeypatch.setattr(syntax.cst, "parse_module", spy)
    parse_module("x = 1\n")
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    assert seen == [False, False]
    monkeypatch.undo()
    assert _checks_nodes()


def test_overlapping_parses_leave_the_check_on() -> None:
    source = SOURCES[-1].read_text(encoding="utf-8")
    errors: list[BaseException] = []

    def parse_many() -> None:
        try:
            for _ in range(20):
                parse_module(source)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=parse_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert _checks_nodes()


def test_hook_tables_follow_each_walks_rules() -> None:
    """The walks share what they learn about node types across modules (`flow._STEPS`, `flow._NONE`): a type
    that one selection of rules leaves unhooked is still dispatched under a selection that hooks it."""
    from jaxlint.engine import lint_text
    from jaxlint.selection import LintSettings

    source = "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
    # JAX106 hooks expression statements only: `If` and `Comparison` are met unhooked first.
    assert lint_text(source, "a.py", LintSettings(rules=("JAX106",))) == []
    found = lint_text(source, "b.py", LintSettings(rules=("JAX101",)))
    assert [(f.code, f.line) for f in found] == [("JAX101", 5)]
    assert lint_text(source, "c.py", LintSettings(rules=("JAX106",))) == []
