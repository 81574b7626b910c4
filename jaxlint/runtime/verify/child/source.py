"""What the child reads from the module's source text: the `def` of a code object, its annotations as
written, literal defaults, the `self.x` it reads, and how its parameters are used."""

from __future__ import annotations

import ast
import functools
import re
import types
from collections.abc import Iterator

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


class ModuleSource:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.tree = ast.parse(text, filename=path)
        self._nodes = [n for n in ast.walk(self.tree) if isinstance(n, FUNCTION_NODES)]

    @functools.cached_property
    def code(self) -> types.CodeType:
        """The module compiled again: the same code objects (names, lines) as the imported module's."""
        return compile(self.text, self.path, "exec", dont_inherit=True)

    def node_for(self, code: types.CodeType) -> FunctionNode | None:
        """The def (or lambda) that compiled to `code`: same name, same first line (the first decorator's)."""
        for node in self._nodes:
            name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
            if name == code.co_name and first_line(node) == code.co_firstlineno:
                return node
        return None

    def inside_function(self, line: int) -> bool:
        """True when the line belongs to a function: its body (code that runs when called, not when the
        module is imported), or its decorators and `def` line (what a finding about the function is on)."""
        for node in self._nodes:
            start = node.body.lineno if isinstance(node, ast.Lambda) else first_line(node)
            if start <= line <= (node.end_lineno or node.lineno):
                return True
        return False

    def segment(self, node: ast.AST | None) -> str:
        if node is None:
            return ""
        return ast.get_source_segment(self.text, node) or ast.unparse(node)


Span = tuple[int, int]


def statement_span(tree: ast.AST, line: int, end_line: int | None = None) -> Span:
    """The lines of the innermost statement holding the flagged line: JAX (and Python's traceback)
    name the first line of a multi-line call while the finding may sit on another line of it. For a
    compound statement (`if`, `for`, `with`, ...) only its header counts, never its body."""
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if (
                best is None
                or node.lineno >= best.lineno
                and (node.end_lineno or 0) <= (best.end_lineno or 0)
            ):
                best = node
    if best is None:
        return (line, max(line, end_line or line))
    start, end = best.lineno, best.end_lineno or best.lineno
    body = getattr(best, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        header_end = first_line(body[0]) - 1 if isinstance(body[0], FUNCTION_NODES) else body[0].lineno - 1
        end = max(start, min(end, header_end))
        if line > end:  # a line between the header and the body (a comment): the line alone
            return (line, line)
    return (start, end)


def first_line(node: FunctionNode) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([d.lineno for d in decorators] + [node.lineno])


def parameters(node: FunctionNode) -> list[ast.arg]:
    args = node.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def annotation_text(source: ModuleSource, node: FunctionNode | None, name: str) -> str:
    if node is None:
        return ""
    for arg in parameters(node):
        if arg.arg == name and arg.annotation is not None:
            text = source.segment(arg.annotation)
            # `from __future__ import annotations` or a string annotation: look inside the string.
            if isinstance(arg.annotation, ast.Constant) and isinstance(arg.annotation.value, str):
                return arg.annotation.value
            return text
    return ""


def default_nodes(node: FunctionNode) -> dict[str, ast.expr]:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    found = dict(
        zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults, strict=True)
    )
    found.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    return found


def _names_in(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield sub.id


def _body(node: FunctionNode) -> list[ast.AST]:
    return [node.body] if isinstance(node, ast.Lambda) else list(node.body)


def _walk_body(node: FunctionNode) -> Iterator[ast.AST]:
    for statement in _body(node):
        yield from ast.walk(statement)


def dict_keys_read(node: FunctionNode | None, name: str) -> list[str]:
    """The string keys the body reads from parameter `name` (`params["w"]`), when that is the only way it
    is used (not passed on, iterated or written): then a dict of arrays with those keys is an input the
    function accepts. [] otherwise."""
    if node is None:
        return []
    keys: list[str] = []
    subscripted: set[int] = set()
    for sub in _walk_body(node):
        if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id == name:
            key = sub.slice
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return []
            if not isinstance(sub.ctx, ast.Load):
                return []
            subscripted.add(id(sub.value))
            if key.value not in keys:
                keys.append(key.value)
    for sub in _walk_body(node):
        if isinstance(sub, ast.Name) and sub.id == name and id(sub) not in subscripted:
            return []  # used some other way: a dict of arrays is a guess too far
    return sorted(keys)


def self_attributes_read(node: FunctionNode | None, self_name: str) -> list[str]:
    """Attributes read as `self.name` in the body (including nested functions), in order of first use."""
    if node is None:
        return []
    reads = [
        sub
        for sub in _walk_body(node)
        if isinstance(sub, ast.Attribute)
        and isinstance(sub.ctx, ast.Load)
        and isinstance(sub.value, ast.Name)
        and sub.value.id == self_name
    ]
    reads.sort(key=lambda a: (a.lineno, a.col_offset))
    return list(dict.fromkeys(a.attr for a in reads))


_SETUP_METHODS = frozenset({"__init__", "__post_init__", "__new__", "__setstate__", "setup"})


def reassigned_self_attributes(tree: ast.AST, method: FunctionNode | None, self_name: str) -> list[str]:
    """Attributes the method reads that another (non-setup) method of its class assigns (`self.w = ...`):
    the state a static `self` bakes into the compiled code and that changes afterwards."""
    read = self_attributes_read(method, self_name)
    if not read or method is None:
        return []
    owner = next(
        (c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and method in c.body),
        None,
    )
    if owner is None:
        return []
    assigned: set[str] = set()
    for other in owner.body:
        if not isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef)) or other is method:
            continue
        if other.name in _SETUP_METHODS or not other.args.args:
            continue
        mine = other.args.args[0].arg
        for node in ast.walk(other):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    if target.value.id == mine:
                        assigned.add(target.attr)
    return [name for name in read if name in assigned]


_INTEGER_NAME = re.compile(
    r"^(n|i|j|idx|index|count|step|steps|num|length|size|n_\w+|num_\w+|\w+_(idx|index|count))$"
)
_INTEGER_CALLS = {"range", "arange", "fori_loop", "randint", "one_hot", "repeat", "tile"}


def integer_looking(node: FunctionNode | None, name: str) -> bool:
    """A parameter named like a count or index, or used as one: in range(), as a subscript, in arange()."""
    if _INTEGER_NAME.match(name):
        return True
    if node is None:
        return False
    for sub in _walk_body(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in _INTEGER_CALLS and any(name in _names_in(a) for a in sub.args[:2]):
                return True
        if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Name) and sub.slice.id == name:
            return True
    return False


_JIT_NAMES = {"jit", "pjit", "filter_jit"}


def jit_statics_from_decorators(node: FunctionNode | None) -> tuple[tuple[int, ...], tuple[str, ...]] | None:
    """static_argnums/argnames of `@jax.jit(...)`/`@partial(jax.jit, ...)` as written; None if not jitted.

    Used where only the code object is at hand (nested functions), so the runtime PjitFunction is not."""
    if node is None or isinstance(node, ast.Lambda):
        return None
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call else decorator
        keywords = call.keywords if call else []
        if call and last_name(target) == "partial" and call.args:
            target = call.args[0]
        if last_name(target) not in _JIT_NAMES:
            continue
        nums: tuple[int, ...] = ()
        names: tuple[str, ...] = ()
        for keyword in keywords:
            try:
                value = ast.literal_eval(keyword.value)
            except ValueError:
                continue
            if keyword.arg == "static_argnums":
                nums = (value,) if isinstance(value, int) else tuple(value)
            elif keyword.arg == "static_argnames":
                names = (value,) if isinstance(value, str) else tuple(value)
        return nums, names
    return None


def last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


_STORING_METHODS = {"append", "extend", "insert", "add", "update", "setdefault", "__setitem__", "appendleft"}


def _place(node: ast.expr, self_name: str | None) -> str | None:
    """`global:NAME` for a module-level name, `self:ATTR` for an attribute of the method's instance."""
    if isinstance(node, ast.Name):
        return f"global:{node.id}"
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.value.id == self_name:
            return f"self:{node.attr}"
        return f"global:{node.value.id}"  # an attribute of a module-level object
    return None


def store_places(source: ModuleSource, line: int, self_name: str | None) -> set[str] | None:
    """Where the statement at `line` stores values outside its function: names assigned or augmented,
    containers appended to or assigned into, attributes set. None when the statement stores nothing
    we can name (then a leak cannot be tied to the line)."""
    statements = [
        n
        for n in ast.walk(source.tree)
        if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    statements = [n for n in statements if not isinstance(n, (*FUNCTION_NODES, ast.ClassDef))]
    if not statements:
        return None
    statement = max(statements, key=lambda n: n.lineno)
    places: set[str | None] = set()
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Subscript):
                    places.add(_place(sub.value, self_name))
                elif isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Store):
                    places.add(_place(sub, self_name))
    for sub in ast.walk(statement):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr in _STORING_METHODS
        ):
            places.add(_place(sub.func.value, self_name))
    places.discard(None)
    return {p for p in places if p is not None} or None
