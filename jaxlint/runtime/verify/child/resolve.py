"""Reach the function a finding sits in: module-level functions by name, methods through their class,
nested functions and lambdas through the code object of their enclosing function."""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import types
from collections.abc import Iterator
from typing import Any

from .source import (
    FunctionNode,
    ModuleSource,
    default_nodes,
    first_line,
    jit_statics_from_decorators,
    last_name,
)

FUNCTION, METHOD, CLASSMETHOD = "function", "method", "classmethod"


class Unreachable(Exception):
    """The finding's function cannot be built in the child; the message is the NOT_RUN reason."""


@dataclasses.dataclass
class Target:
    qualname: str
    function: types.FunctionType  # the plain Python function that is traced
    node: FunctionNode | None  # its def in the source, for annotations and `self.x` reads
    binding: str = FUNCTION  # METHOD: first parameter is an instance; CLASSMETHOD: it is `owner`
    owner: type | None = None
    jitted: Any = None  # the user's own jax.jit object, when the name resolves to one
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    rebuilt: bool = False  # made from a code object: no defaults or closure of the real call
    under_jit: bool = False  # the user's jax.jit wraps it (object found at runtime, or decorator in source)

    @property
    def free_vars(self) -> tuple[str, ...]:
        return self.function.__code__.co_freevars if self.rebuilt else ()

    @property
    def parameters(self) -> list[inspect.Parameter]:
        return list(inspect.signature(self.function).parameters.values())

    def is_static(self, index: int, name: str) -> bool:
        count = len(self.parameters)
        numbers = {n % count for n in self.static_argnums} if count else set()
        return index in numbers or name in self.static_argnames


def resolve(module: types.ModuleType, source: ModuleSource, qualname: str | None, line: int) -> Target:
    module_code = source.code
    if qualname is None:
        code = innermost_function_code(module_code, line)
        if code is None:
            raise Unreachable("module-level code: only code inside a function can be traced")
        qualname = _qualname(code)
    if "<locals>" in qualname.split(".") or "<lambda>" in qualname:
        return _rebuild_nested(module, source, module_code, qualname, line)
    try:
        found, owner, binding = lookup(module, qualname)
    except AttributeError:
        # Defined under a condition, deleted or renamed at import: the compiled source still has it.
        return _rebuild_nested(module, source, module_code, qualname, line)
    if isinstance(found, type):  # a finding attributed to a class (a decorator line): its method at the line
        code = innermost_function_code(module_code, line)
        if code is not None and _qualname(code).startswith(qualname + "."):
            return resolve(module, source, _qualname(code), line)
    function, jitted = unwrap(found, qualname)
    function = _spanning_wrapped(function, line)
    node = source.node_for(function.__code__)
    if not (_spans(function.__code__, line) or _node_spans(node, line)):
        code = innermost_function_code(module_code, line)
        if code is None or _qualname(code) == qualname:
            raise Unreachable(f"line {line} is not inside '{qualname}' as imported")
        return resolve(module, source, _qualname(code), line)
    target = Target(qualname, function, node, binding, owner, jitted)
    set_statics(target)
    return target


def lookup(module: types.ModuleType, qualname: str) -> tuple[Any, type | None, str]:
    found: Any = module
    owner: type | None = None
    binding = FUNCTION
    for part in qualname.split("."):
        if isinstance(found, type):
            owner = found
            raw = inspect.getattr_static(found, part)
            if isinstance(raw, staticmethod):
                found, binding = raw.__func__, FUNCTION
            elif isinstance(raw, classmethod):
                found, binding = raw.__func__, CLASSMETHOD
            elif isinstance(raw, property):
                found, binding = raw.fget, METHOD
            else:
                found, binding = raw, (FUNCTION if isinstance(raw, type) else METHOD)
        else:
            found, owner, binding = getattr(found, part), None, FUNCTION
    return found, owner, binding


def _is_jit(obj: Any) -> bool:
    return callable(obj) and hasattr(obj, "trace") and hasattr(obj, "lower") and hasattr(obj, "eval_shape")


def unwrap(obj: Any, qualname: str) -> tuple[types.FunctionType, Any]:
    """Peel jax.jit, functools.wraps-style wrappers, custom_jvp/vjp down to the plain function."""
    jitted = None
    for _ in range(32):
        if isinstance(obj, types.FunctionType):
            return obj, jitted
        if isinstance(obj, type):
            raise Unreachable(f"'{qualname}' is a class, not a function")
        if isinstance(obj, functools.partial):
            raise Unreachable(f"'{qualname}' is a functools.partial object; declare an example for it")
        if _is_jit(obj) and jitted is None:
            jitted = obj
        inner = getattr(obj, "__wrapped__", None) or getattr(obj, "_fun", None) or getattr(obj, "fun", None)
        if inner is None or inner is obj:
            break
        obj = inner
    raise Unreachable(f"'{qualname}' is a {type(obj).__name__} at runtime, not a Python function")


def _spanning_wrapped(function: types.FunctionType, line: int) -> types.FunctionType:
    """The user's function behind a wrapper that is itself a plain function: flax wraps every Module method
    (`wrap_method_once`), equinox and haiku and a user's own `functools.wraps` decorators do the same. Follow
    `__wrapped__` to the first function whose code holds the line; the function itself when none does."""
    inner: Any = function
    for _ in range(32):
        if isinstance(inner, types.FunctionType) and _spans(inner.__code__, line):
            return inner
        inner = getattr(inner, "__wrapped__", None) or getattr(inner, "__func__", None)
        if inner is None:
            break
    return function


def set_statics(target: Target) -> None:
    info = getattr(target.jitted, "_jit_info", None)
    target.under_jit = target.jitted is not None
    if info is not None:
        target.static_argnums = tuple(getattr(info, "static_argnums", ()) or ())
        target.static_argnames = tuple(getattr(info, "static_argnames", ()) or ())
        return
    from_source = jit_statics_from_decorators(target.node)
    if from_source is not None:
        target.under_jit = True
        nums, names = from_source
        if names and not nums:
            params = [p.name for p in target.parameters]
            nums = tuple(params.index(n) for n in names if n in params)
        target.static_argnums, target.static_argnames = nums, names


def _rebuild_nested(
    module: types.ModuleType, source: ModuleSource, module_code: types.CodeType, qualname: str, line: int
) -> Target:
    roots = [module_code]
    outer_name = qualname.split(".<locals>.")[0]
    if outer_name != qualname:
        try:
            outer, _, _ = lookup(module, outer_name)
            roots.insert(0, unwrap(outer, outer_name)[0].__code__)
        except (AttributeError, Unreachable):
            pass
    code = None
    for root in roots:
        code = find_code(root, qualname, line)
        if code is not None:
            break
    if code is None:
        raise Unreachable(f"no function '{qualname}' found in the module")
    cells = tuple(types.CellType() for _ in code.co_freevars)  # empty: reading one raises NameError
    function = types.FunctionType(code, module.__dict__, code.co_name, None, cells)
    node = source.node_for(code)
    _restore_defaults(function, node, module.__dict__)
    target = Target(qualname, function, node, _binding_in_class_body(qualname, node), rebuilt=True)
    set_statics(target)
    return target


def _binding_in_class_body(qualname: str, node: FunctionNode | None) -> str:
    """A function whose qualname's parent is not `<locals>` was defined in a class body: a method, whose
    class we could not reach (defined inside a function), so `self` will be a bare namespace."""
    parts = qualname.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>" or isinstance(node, ast.Lambda):
        return FUNCTION
    decorators = {last_name(d) for d in getattr(node, "decorator_list", [])}
    if "staticmethod" in decorators:
        return FUNCTION
    return CLASSMETHOD if "classmethod" in decorators else METHOD


def _restore_defaults(function: types.FunctionType, node: FunctionNode | None, namespace: dict) -> None:
    """Defaults are evaluated at `def` time, so a rebuilt function lacks them: take those that evaluate in
    the module's namespace (literals, module constants); the others stay required and get built inputs."""
    if node is None:
        return
    values: dict[str, Any] = {}
    for name, expr in default_nodes(node).items():
        try:
            values[name] = eval(compile(ast.Expression(expr), "<default>", "eval"), dict(namespace))
        except Exception:
            continue
    args = node.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    suffix: list[Any] = []
    for name in reversed(positional[len(positional) - len(args.defaults) :]):
        if name not in values:
            break
        suffix.insert(0, values[name])
    function.__defaults__ = tuple(suffix) or None
    function.__kwdefaults__ = {a.arg: values[a.arg] for a in args.kwonlyargs if a.arg in values} or None


def _qualname(code: types.CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)


def code_qualname(code: types.CodeType, module: types.ModuleType) -> str:
    """The qualified name of the module's function that runs `code`: co_qualname (Python 3.11 on); on 3.10
    the `__qualname__` of the module's function or class method that runs it (`qualname_in_module`), else
    the bare name (which reaches module-level functions only)."""
    qualname = getattr(code, "co_qualname", None)
    if isinstance(qualname, str):
        return qualname
    return qualname_in_module(code, module) or code.co_name


def qualname_in_module(code: types.CodeType, module: types.ModuleType) -> str | None:
    """`__qualname__` of the function whose code is `code` among the module's globals and the attributes of
    its classes (nested classes too, jit and other `__wrapped__` wrappers peeled), or None."""
    namespaces = [vars(module)]
    seen: set[int] = set()
    while namespaces:
        for value in list(namespaces.pop().values()):
            if isinstance(value, type):
                if id(value) not in seen and value.__module__ == module.__name__:
                    seen.add(id(value))
                    namespaces.append(dict(vars(value)))
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            elif isinstance(value, property):
                value = value.fget
            try:
                function = inspect.unwrap(value) if callable(value) else None
            except Exception:  # a wrapper chain that loops, or an attribute that raises
                continue
            if getattr(function, "__code__", None) is code:
                qualname = getattr(function, "__qualname__", None)
                return qualname if isinstance(qualname, str) else None
    return None


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _code_objects(const)


def _last_line(code: types.CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    lines += [_last_line(c) for c in _code_objects(code)]
    return max(lines, default=code.co_firstlineno)


def _spans(code: types.CodeType, line: int) -> bool:
    return code.co_firstlineno <= line <= _last_line(code)


def _node_spans(node: FunctionNode | None, line: int) -> bool:
    """The def's source range also holds lines the compiler dropped (code after an endless loop)."""
    return node is not None and first_line(node) <= line <= (node.end_lineno or node.lineno)


def _is_function(code: types.CodeType) -> bool:
    # Class bodies are not optimized; comprehensions and generator expressions are not what users name.
    name = code.co_name
    return bool(code.co_flags & inspect.CO_OPTIMIZED) and (not name.startswith("<") or name == "<lambda>")


def innermost_function_code(module_code: types.CodeType, line: int) -> types.CodeType | None:
    best = None
    for code in _code_objects(module_code):
        if _is_function(code) and _spans(code, line):
            if best is None or code.co_firstlineno >= best.co_firstlineno:
                best = code
    return best


def find_code(root: types.CodeType, qualname: str, line: int) -> types.CodeType | None:
    """The code object called `qualname` (co_qualname, Python >= 3.11; the name chain before that), the one
    spanning `line` when several share it (lambdas)."""
    last = qualname.rsplit(".", 1)[-1]
    matches = [
        c
        for c in _code_objects(root)
        if (_qualname(c) == qualname if hasattr(c, "co_qualname") else c.co_name == last)
    ]
    for code in matches:
        if _spans(code, line):
            return code
    return matches[0] if matches else None
