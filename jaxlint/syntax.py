"""libcst syntax helpers shared by the analysis and the rules: a cheap walk, names, arguments, literals.

A leaf: it imports nothing from jaxlint, so every layer may use it.

libcst's visitor machinery rebuilds the tree as it goes and costs about as much as the parse itself; reading
the dataclass fields directly (`children`, `walk`, `own_nodes`) costs a quarter of that. Whitespace,
punctuation and comment fields never hold code, so they are skipped.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import queue
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import libcst as cst

T = TypeVar("T")

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# Nodes whose bodies run in a scope of their own (not the enclosing function's statements).
SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)

# -- parsing -------------------------------------------------------------------------------------------------

# libcst checks every node it constructs (`CSTNode.__post_init__` calls `_validate`), its own parser's nodes
# included, although the parser only builds valid ones: that second check is 15-20% of the parse. While
# `parse_module` runs, the hook does nothing; nodes built by code (fixes) are checked as before, except on
# another thread while a parse runs. A count under a lock keeps the hook off until the last of overlapping
# parses ends (the language server lints on a thread).
_CHECK = cst.CSTNode.__dict__.get("__post_init__")
_unchecked_parses = 0
_parse_lock = threading.Lock()


def _no_check(self: cst.CSTNode) -> None:
    pass


class _KeptTrees:
    """The trees of the texts parsed last, up to `limit` characters of text in all (the least recently used go
    first; a tree costs about 23 bytes per character of its text)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.trees: OrderedDict[str, cst.Module] = OrderedDict()

    def get(self, source: str) -> cst.Module | None:
        tree = self.trees.get(source)
        if tree is not None:
            self.trees.move_to_end(source)
        return tree

    def put(self, source: str, tree: cst.Module) -> None:
        if len(source) > self.limit:
            return
        self.trees[source] = tree
        self.size += len(source)
        # A kept tree lives on until it is dropped, holds no cycle, and reference counting frees it then: the
        # cyclic collector need not traverse it after each file (2% of a worker's time). Freezing takes it (and
        # whatever else lives now) out of the collector's reach.
        gc.freeze()
        while self.size > self.limit:
            old, _ = self.trees.popitem(last=False)
            self.size -= len(old)


_kept: _KeptTrees | None = None


def keep_trees(limit: int) -> None:
    """From now on, `parse_module` of a text it parsed lately answers the tree it built then (up to `limit`
    characters of text kept; 0 keeps none). A project's pool workers lint a file again when other modules give
    it new facts; its text has not changed, and nothing changes a tree (libcst nodes are frozen, the analysis
    keeps its facts beside them), so the kept tree is the tree a new parse would build."""
    global _kept
    _kept = _KeptTrees(limit) if limit > 0 else None


def parse_module(source: str) -> cst.Module:
    """`libcst.parse_module` without libcst re-checking the nodes its parser built (and, after `keep_trees`,
    the tree of a text parsed lately)."""
    if _kept is not None:
        tree = _kept.get(source)
        if tree is None:
            tree = _parse_unchecked(source)
            _kept.put(source, tree)
        return tree
    return _parse_unchecked(source)


def _parse_unchecked(source: str) -> cst.Module:
    global _unchecked_parses
    if _CHECK is None:  # a libcst that validates elsewhere: parse as it does
        return cst.parse_module(source)
    with _parse_lock:
        if _unchecked_parses == 0:
            cst.CSTNode.__post_init__ = _no_check  # type: ignore[method-assign]
        _unchecked_parses += 1
    try:
        return cst.parse_module(source)
    finally:
        with _parse_lock:
            _unchecked_parses -= 1
            if _unchecked_parses == 0:
                cst.CSTNode.__post_init__ = _CHECK  # type: ignore[method-assign]


# -- deep trees --------------------------------------------------------------------------------------------

# libcst's native parser recurses once per level of the tree it builds (about 10 KiB of stack a level): a
# chain of 8,000 `and`s, `+`s or `.b`s overflowed the main thread's 8 MiB and killed the process (SIGSEGV).
# Its code generation and jaxlint's own walks recurse per level too, in Python frames. `run_deep` gives such
# work a thread with a large stack (address space: only the pages a run touches cost memory) and a recursion
# limit to match; the engine keeps trees within both (`nesting.MAX_CHAIN_UNITS`). One such thread per process
# serves every run (a new thread per file faulted its stack pages in anew: 8% of a cold run); `fresh=True`
# runs on a thread of its own, whose stack, deep as the run made it, goes when it ends.
DEEP_STACK_BYTES = 1 << 30
DEEP_RECURSION_LIMIT = 60_000
_deep = threading.local()
_deep_lock = threading.Lock()
_stack_lock = threading.Lock()
_deep_runs = 0
_shallow_limit = 0
DEEP_THREAD_NAME = "jaxlint-deep"  # the threads `run_deep` starts (`lint.pool_jobs` does not count them)
_server: tuple[int, queue.SimpleQueue] | None = None  # (pid, requests) of the long-lived deep thread


_one_deep_thread = False  # `one_deep_thread`


def one_deep_thread() -> None:
    """From now on every `run_deep` runs on the one long-lived deep thread, started here: a process under a
    memory bound (`lint.bound_memory`) counts its stack once, and never fails to start a fresh one."""
    global _one_deep_thread
    _one_deep_thread = True
    run_deep(lambda: None)


def run_deep(function: Callable[..., T], *args: object, fresh: bool = False) -> T:
    """`function(*args)` on a thread with a large stack and a high recursion limit (or right here when this
    thread is such a one already, or when no thread can be started); its exception is raised here."""
    if getattr(_deep, "active", False):
        return function(*args)
    results: list[T] = []
    errors: list[BaseException] = []
    done = threading.Event()
    request = (function, args, results, errors, done)
    _enter_deep()
    try:
        if fresh and not _one_deep_thread:
            started = _start_deep(_serve_one, request)
        else:
            requests = _deep_server()
            started = requests is not None
            if requests is not None:
                requests.put(request)
        if started:
            done.wait()
    finally:
        _leave_deep()
    if not started:
        return function(*args)
    if errors:
        raise errors[0]
    return results[0]


def _serve_one(request: tuple) -> None:
    _deep.active = True
    function, args, results, errors, done = request
    try:
        results.append(function(*args))
    except BaseException as error:  # raised again in the caller's thread
        errors.append(error)
    finally:
        done.set()


def _serve(requests: queue.SimpleQueue) -> None:
    while True:
        request = requests.get()
        _serve_one(request)
        del request  # nothing of a finished run (its tree) stays alive here


def _deep_server() -> queue.SimpleQueue | None:
    """The requests queue of this process's long-lived deep thread (a forked child starts its own)."""
    global _server
    with _deep_lock:
        if _server is None or _server[0] != os.getpid():
            requests: queue.SimpleQueue = queue.SimpleQueue()
            if not _start_deep(_serve, requests):
                return None
            _server = (os.getpid(), requests)
        return _server[1]


def _start_deep(target: Callable[[Any], None], argument: object) -> bool:
    with _stack_lock:  # the stack size is the process's setting for the next thread started
        return _start_thread(target, argument)


def _start_thread(target: Callable[[Any], None], argument: object) -> bool:
    old = threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        threading.Thread(target=target, args=(argument,), name=DEEP_THREAD_NAME, daemon=True).start()
    except (RuntimeError, ValueError, MemoryError):  # no address space for such a stack: run shallow
        return False
    finally:
        threading.stack_size(old)
    return True


def _enter_deep() -> None:
    # The limit is the interpreter's, not the thread's: raised while any deep run is under way.
    global _deep_runs, _shallow_limit
    with _deep_lock:
        if _deep_runs == 0:
            _shallow_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_shallow_limit, DEEP_RECURSION_LIMIT))
        _deep_runs += 1


def _leave_deep() -> None:
    global _deep_runs
    with _deep_lock:
        _deep_runs -= 1
        if _deep_runs == 0:
            sys.setrecursionlimit(_shallow_limit)


# -- walking -------------------------------------------------------------------------------------------------

_SKIP_FIELD_PARTS = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after")
_SKIP_FIELDS = frozenset(
    {
        "header",
        "footer",
        "indent",
        "colon",
        "equal",
        "star",
        "dot",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
    }
    | {"operator", "first_colon", "second_colon", "posonly_ind", "start", "end", "asynchronous", "conversion"}
    | {"trailing_whitespace", "newline", "keyword"}
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _code_fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _SKIP_FIELDS
            and not any(part in f.name for part in _SKIP_FIELD_PARTS)
            and f.type is not str  # `Name.value` and the like: never a node, so not worth a look per node
        )
        _FIELDS[cls] = names
    return names


_IS_NODE: dict[type, bool] = {}


class _Leaves(dict):
    """Node type -> whether its nodes hold no code (`children()` is empty): Name, Integer, SimpleString, Pass.
    About 40% of all nodes; hot walks drop them on sight. Filled per type on first sight."""

    def __missing__(self, cls: type) -> bool:
        leaf = self[cls] = not _code_fields(cls)
        return leaf


LEAF: dict[type, bool] = _Leaves()


def _node_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`children()` the slow, general way: look at every code field's value. What `CHILDREN`'s generated
    readers must answer (tests/test_walk_shortcuts.py compares them on every node of the fixtures)."""
    out: list[cst.CSTNode] = []
    for name in _code_fields(type(node)):
        _add_nodes(getattr(node, name), out)
    return out


def _add_nodes(value: object, out: list[cst.CSTNode]) -> None:
    cls = type(value)
    items = value if cls is tuple or cls is list else (value,)
    for item in items:  # type: ignore[attr-defined]
        known = _IS_NODE.get(type(item))
        if known is None:
            known = _IS_NODE[type(item)] = issubclass(type(item), cst.CSTNode)
        if known:
            out.append(item)


def _node_children_reversed(node: cst.CSTNode) -> list[cst.CSTNode]:
    out = _node_children(node)
    out.reverse()
    return out


def _is_node_type(t: object) -> bool:
    return isinstance(t, type) and issubclass(t, cst.CSTNode)


def _nodes_only(t: object) -> bool:
    import typing

    if typing.get_origin(t) is typing.Union:
        return all(_nodes_only(arg) for arg in typing.get_args(t))
    return _is_node_type(t)


def _holds_node(t: object) -> bool:
    import typing

    return _is_node_type(t) or any(_holds_node(arg) for arg in typing.get_args(t))


def _field_shape(hint: object) -> str:
    """How a field's declared type lets a generated reader take its value: "node" (always one node),
    "nodes" (always a sequence of nodes), "optional" (a node, None or libcst's `MaybeSentinel.DEFAULT`),
    "never" (never holds a node: a bool, a str) or "check" (anything else that may hold a node, such as a
    choice between a node and a sequence: looked at per value)."""
    import typing

    if _nodes_only(hint):
        return "node"
    origin = typing.get_origin(hint)
    if origin is typing.Union:  # `Optional[Name]`, `Union[Param, MaybeSentinel]`
        args = typing.get_args(hint)
        nodes = [arg for arg in args if arg is not type(None) and arg is not cst.MaybeSentinel]
        if nodes and len(nodes) < len(args) and all(_nodes_only(arg) for arg in nodes):
            return "optional"
    if origin is not None and origin.__name__ == "Sequence" and _nodes_only(typing.get_args(hint)[0]):
        return "nodes"
    return "check" if _holds_node(hint) else "never"


_SHAPES: dict[type, tuple[tuple[str, str], ...] | None] = {}


def _field_shapes(cls: type) -> tuple[tuple[str, str], ...] | None:
    """(field, `_field_shape`) for each code field of a node type; None when its annotations do not resolve.
    Kept per type: both reader tables need it, and reading the annotations is most of a reader's making."""
    if cls not in _SHAPES:
        import typing

        try:
            hints = typing.get_type_hints(cls)
        except Exception:
            _SHAPES[cls] = None
        else:
            _SHAPES[cls] = tuple((name, _field_shape(hints.get(name))) for name in _code_fields(cls))
    return _SHAPES[cls]


class _Readers(dict):
    """Node type -> a function generated for it that returns its `children()`: one list display over its
    fields (`[node.func, *node.args]`), with a per-value check only where the declared type allows a value
    that is not a node (None, a sentinel). Reading fields by name, with no loop and no per-item type test,
    makes this about twice as fast as the general reader on the hot walks.

    `reverse=True` makes readers that return the children last first, as a depth-first walk pushes them on its
    stack: the display written last field first where every field holds one node (no `reverse()` call per
    node), else the list reversed in place (cheaper than `stack.extend(reversed(children))`)."""

    def __init__(self, reverse: bool = False) -> None:
        super().__init__()
        self.reverse = reverse

    def __missing__(self, cls: type) -> Callable[[cst.CSTNode], list[cst.CSTNode]]:
        fields = _field_shapes(cls)
        if fields is None:  # an annotation that does not resolve: the general reader
            reader = self[cls] = _node_children_reversed if self.reverse else _node_children
            return reader
        lines: list[str] = []
        display: list[str] = []
        for name, shape in fields:
            if shape == "node":
                display.append(f"node.{name}")
            elif shape == "nodes":
                display.append(f"*node.{name}")
            elif shape in ("optional", "check"):
                lines.append(
                    f"    out = [{', '.join(display)}]" if not lines else f"    out += [{', '.join(display)}]"
                )
                if shape == "optional":
                    lines.append(f"    value = node.{name}")
                    lines.append("    if value is not None and value is not DEFAULT:")
                    lines.append("        out.append(value)")
                else:
                    lines.append(f"    add(node.{name}, out)")
                display = []
        if not lines and not self.reverse:
            body = [f"    return [{', '.join(display)}]"]
        elif not lines and not any(item.startswith("*") for item in display):
            body = [f"    return [{', '.join(reversed(display))}]"]  # single nodes only: written last first
        else:
            if not lines:
                lines = [f"    out = [{', '.join(display)}]"]
            elif display:
                lines.append(f"    out += [{', '.join(display)}]")
            body = lines + (["    out.reverse()"] if self.reverse else []) + ["    return out"]
        namespace: dict[str, object] = {"add": _add_nodes, "DEFAULT": cst.MaybeSentinel.DEFAULT}
        exec("def read(node):\n" + "\n".join(body), namespace)  # noqa: S102 -- code built from field names
        reader = self[cls] = namespace["read"]  # type: ignore[assignment]
        return reader


# Node type -> its children reader; hot loops call `CHILDREN[type(node)](node)` directly.
CHILDREN: dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]]] = _Readers()
# The same, last child first: what a depth-first walk pushes (`stack += CHILDREN_REVERSED[type(node)](node)`).
CHILDREN_REVERSED: dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]]] = _Readers(reverse=True)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes of `node` that can hold code, in source order (as far as the fields allow)."""
    return CHILDREN[type(node)](node)


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node` (itself included), depth first, parents before children."""
    stack = [node]
    leaf, read = LEAF, CHILDREN_REVERSED
    while stack:
        current = stack.pop()
        yield current
        kind = type(current)
        if not leaf[kind]:
            stack += read[kind](current)


def unit_body(node: cst.CSTNode) -> list[cst.CSTNode]:
    """What runs when a function, lambda or module runs: the body, not the decorators, defaults or name."""
    if type(node) is cst.FunctionDef or type(node) is cst.Lambda:
        return [node.body]
    return children(node)


def own_nodes(unit_node: cst.CSTNode, skip: tuple[type, ...] = SCOPES) -> Iterator[cst.CSTNode]:
    """The nodes of a function's (or module's) own body, or of any subtree, not of nested defs, lambdas or
    classes: "walk my body, not nested scopes".

    For a def or lambda only the body is walked (not its decorators, defaults or annotations). A nested def,
    lambda or class is yielded itself (its name is bound here) but not entered; pass `skip` to change which
    scopes are not entered. The order is depth first, last child first (not source order).
    """
    stack = unit_body(unit_node)
    if skip is SCOPES:  # type identity (they have no subclasses), not isinstance() on libcst's slow ABCs
        leaf, read = LEAF, CHILDREN
        while stack:
            node = stack.pop()
            yield node
            kind = type(node)
            if (
                kind is not cst.FunctionDef
                and kind is not cst.Lambda
                and kind is not cst.ClassDef
                and not leaf[kind]
            ):
                stack.extend(read[kind](node))
        return
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, skip):
            stack.extend(children(node))


# -- names ---------------------------------------------------------------------------------------------------


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    parts = []
    # Type identity, not isinstance(): libcst's abstract bases make isinstance() slow, and this is hot.
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def root_name(node: cst.BaseExpression) -> cst.Name | None:
    """`a` for `a`, `a.b.c`, `a[k].b`; None when the chain starts elsewhere (a call, a literal)."""
    while type(node) is cst.Attribute or type(node) is cst.Subscript:
        node = node.value
    return node if type(node) is cst.Name else None


def attribute_root(node: cst.BaseExpression) -> str | None:
    """`a` for `a`, `a.b.c` (attributes only, no subscripts); None for anything else."""
    while type(node) is cst.Attribute:
        node = node.value
    return node.value if type(node) is cst.Name else None


def assigned_targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """What an assignment statement writes to: each target of `a = b = v`, the target of `a += v` or `a: T = v`;
    [] for any other node."""
    kind = type(node)  # type identity: isinstance() on libcst's ABC-metaclass types is slow
    if kind is cst.Assign:
        return [t.target for t in node.targets]  # type: ignore[attr-defined]
    if kind is cst.AugAssign or kind is cst.AnnAssign:
        return [node.target]  # type: ignore[attr-defined]
    return []


def bound_names(target: cst.CSTNode) -> list[str]:
    """Names bound by an assignment target (`a`, `a, (b, *c)`)."""
    # Type identity: a failed isinstance() on libcst's ABCs is slow (none of these is subclassed).
    if type(target) is cst.Name:
        return [target.value]
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [n for e in target.elements for n in bound_names(e.value)]
    if type(target) is cst.StarredElement:
        return bound_names(target.value)
    return []


def import_binding(alias: cst.ImportAlias) -> str:
    """The local name an import alias binds: `import a.b` binds `a`, `import a.b as c` binds `c`."""
    return alias.evaluated_alias or alias.evaluated_name.split(".")[0]


def parameter_names(params: cst.Parameters) -> set[str]:
    """Every parameter name, `*args` and `**kwargs` included."""
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    names.update(p.name.value for p in (params.star_arg, params.star_kwarg) if type(p) is cst.Param)
    return names


def source_of(node: cst.CSTNode, limit: int = 40) -> str:
    """Short source text of a node on one line, for messages."""
    text = " ".join(cst.Module(body=[]).code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- calls ---------------------------------------------------------------------------------------------------


def argument(call: cst.Call, position: int | None, keyword: str | None) -> cst.Arg | None:
    """The argument given by `keyword`, else at positional `position`; None when absent or behind a `*args`."""
    for arg in call.args:
        if keyword is not None and arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    if position is None:
        return None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: position + 1]):
        return None
    return positional[position] if position < len(positional) else None


# -- literals ------------------------------------------------------------------------------------------------


_EXPRESSION_TYPES: dict[type, bool] = {}


def is_expression(node: cst.CSTNode) -> bool:
    """`isinstance(node, cst.BaseExpression)`, answered once per node type: an abstract base is slow to test
    against, and the walks ask it of every child of a statement."""
    kind = type(node)
    found = _EXPRESSION_TYPES.get(kind)
    if found is None:
        found = _EXPRESSION_TYPES[kind] = issubclass(kind, cst.BaseExpression)
    return found


def int_literal(node: cst.BaseExpression | None) -> int | None:
    """The value of `3`, `-3`, `0x10`; None for anything else."""
    if type(node) is cst.Integer:
        return int(node.value, 0)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        inner = int_literal(node.expression)
        return None if inner is None else -inner
    return None


def string_value(node: cst.SimpleString) -> str | bytes:
    """`node.evaluated_value`, without libcst's `ast.literal_eval` for the common string with no prefix and no
    escape (or carriage return): its value is then the text between its quotes, as written."""
    text = node.value
    if text[0] in "'\"" and "\\" not in text and "\r" not in text:
        quotes = 3 if len(text) >= 6 and text[1] == text[2] == text[0] else 1
        return text[quotes:-quotes]
    return node.evaluated_value


def str_literal(node: cst.BaseExpression | None) -> str | None:
    """The value of a plain string literal (not bytes, not an f-string); None for anything else."""
    if type(node) is cst.SimpleString:
        value = string_value(node)
        return value if isinstance(value, str) else None
    return None


_CONSTANTS = frozenset({cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.ConcatenatedString})


def is_constant(node: cst.BaseExpression) -> bool:
    """A literal constant: numbers, strings, True/False/None, and tuples of them."""
    if type(node) in _CONSTANTS:
        return True
    if type(node) is cst.Name:
        return node.value in ("True", "False", "None")
    if type(node) is cst.UnaryOperation:
        return is_constant(node.expression)
    if type(node) is cst.Tuple:
        return all(is_constant(e.value) for e in node.elements)
    return False


def none_comparison(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """`name is None` -> (name, True); `name is not None` -> (name, False)."""
    if (
        type(test) is cst.Comparison
        and type(test.left) is cst.Name
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return test.left.value, isinstance(test.comparisons[0].operator, cst.Is)
    return None
