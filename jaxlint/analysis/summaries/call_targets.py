"""What a call runs, through every way code hands work on, and with which arguments: one resolver that the
function summaries (keys consumed, JAX work dispatched, a jit built per call) are applied through, so that a
fact computed once from a def's body holds at every call of it, to any depth.

A call `f(args)` runs the same-module defs of:
- a name (a def, a lambda bound once, a nested def), a method of `self` (`index.resolve_function`);
- a method of an instance of a module class (`OBJ.m(x)`, `objects.instances.method_call`);
- `self._f(x)` where the class's constructor binds `self._f` once to a function, a method or a transformation
  of one (`self._f = jax.jit(self._g)`; `objects.held.held_value`);
- `partial(f, a)(x)`, a name bound once to such a partial, `OPS["f"](x)`, `OPS[0](x)`, `Ops.run(x)`
  (`summaries.function_values.called_value`);
- `jax.checkpoint(f)(x)`, `jax.jit(f)(x)`: a transformation that calls the function with the arguments;
- `fn(x)` where `fn` is a parameter that a call in the module passes a function (higher-order: read from the
  module's calls here, the flow walk's record in `function_values`);
and a def under a decorator of the module that wraps with `functools.wraps` and calls the function with the
arguments it is given (`transparent_decorator`) runs as the def.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import positional_params
from ..objects.held import held_value
from ..objects.instances import method_call
from ..semantics.library import WRAPS
from .function_values import called_value

Targets = tuple[list[tuple[Unit, bool]], list[cst.Arg]]
_PASSED = "passed_functions"  # root memo: (id(unit), parameter) -> the functions the module's calls pass it


def call_targets(index: ModuleIndex, call: cst.Call, unit: Unit) -> Targets:
    """([(def, bound_self)], the arguments they receive) for `call` read in `unit`; no defs when unknown."""
    func = call.func
    args = list(call.args)
    if type(func) is not cst.Call:
        found = index.resolve_function(func, unit)
        if found:
            return list(found), args
    value = called_value(index, call, unit)
    if value is not None and value[0]:
        return value
    if type(func) is cst.Call and func.args and func.args[0].keyword is None and not func.args[0].star:
        if index.transform_of(func.func, unit) is not None:
            return list(index.resolve_function(func.args[0].value, unit)), args
        return [], args
    if type(func) is cst.Attribute:
        method = method_call(index, func, unit)
        if method is not None and method.units:
            return [(u, True) for u in method.units], args
        held = held_value(index, func, unit)
        if held is not None:  # `self._f(x)` with `self._f = jax.jit(self._g)` (or `= g`) in the constructor
            function, owner = held
            if type(function) is cst.Call and function.args and not function.args[0].star:
                if function.args[0].keyword is None and index.transform_of(function.func, owner) is not None:
                    function = function.args[0].value
            return list(index.resolve_function(function, owner)), args
    if type(func) is cst.Name and unit is not index.root and func.value not in unit.bindings:
        passed = passed_functions(index, unit, func.value)
        if passed:
            return passed, args
    return [], args


def passed_functions(index: ModuleIndex, unit: Unit, name: str) -> list[tuple[Unit, bool]]:
    """The module's functions that the module's calls of `unit` pass its parameter `name` (`call_with(f, x)`
    makes `fn` of `def call_with(fn, value)` run `f`)."""
    memo = index.root.memo.setdefault(_PASSED, {})
    key = (id(unit), name)
    if key in memo:
        return memo[key]
    memo[key] = []  # a recursive question meanwhile: none yet
    node = unit.node
    if type(node) is not cst.FunctionDef and type(node) is not cst.Lambda:
        return []
    params = [p.name.value for p in positional_params(node.params)]
    if name not in params and name not in {p.name.value for p in node.params.kwonly_params}:
        return []
    found: list[tuple[Unit, bool]] = []
    for call, caller, bound_self in _calls_of(index).get(id(unit), ()):
        arg = _argument_for(call.args, params[1:] if unit.is_method and bound_self else params, name)
        if arg is None:
            continue
        for target in index.resolve_function(arg.value, caller):
            if all(target[0] is not f[0] for f in found):
                found.append(target)
    memo[key] = found
    return found


def _calls_of(index: ModuleIndex) -> dict[int, list[tuple[cst.Call, Unit, bool]]]:
    """id(def) -> the module's calls with arguments that run it: (call, the unit it is read in, bound self).
    Resolved once per module: `passed_functions` asks it for many parameters of many defs."""
    memo = index.root.memo
    if "calls_of" not in memo:
        table: dict[int, list[tuple[cst.Call, Unit, bool]]] = {}
        for call, caller, _ in index._sites:
            if type(call.func) is cst.Call or not call.args:
                continue
            for callee, bound_self in index.resolve_function(call.func, caller):
                table.setdefault(id(callee), []).append((call, caller, bound_self))
        memo["calls_of"] = table
    return memo["calls_of"]


def _argument_for(args: Sequence[cst.Arg], params: list[str], name: str) -> cst.Arg | None:
    position = 0
    for arg in args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg
            continue
        if position < len(params) and params[position] == name:
            return arg
        position += 1
    return None


def transparent_decorator(index: ModuleIndex, decorator: cst.BaseExpression, scope: Unit) -> bool:
    """A decorator of the module that returns a wrapper made with `functools.wraps(fn)` whose body ends in
    `return fn(*args, **kwargs)`: the decorated def runs with the arguments its callers give."""
    if type(decorator) is not cst.Name:
        return False
    defs = index.resolve_function(decorator, scope)
    if len(defs) != 1 or type(defs[0][0].node) is not cst.FunctionDef:
        return False
    outer = defs[0][0].node
    params = positional_params(outer.params)
    if len(params) != 1 or not isinstance(outer.body, cst.IndentedBlock):
        return False
    fn = params[0].name.value
    wrappers = {
        s.name.value: s
        for s in outer.body.body
        if type(s) is cst.FunctionDef
        and any(
            type(d.decorator) is cst.Call
            and index.qualname(d.decorator.func, defs[0][0]) in WRAPS
            and d.decorator.args
            and type(d.decorator.args[0].value) is cst.Name
            and d.decorator.args[0].value.value == fn
            for d in s.decorators
        )
    }
    last = outer.body.body[-1] if outer.body.body else None
    returned = _returned(last)
    if type(returned) is not cst.Name or returned.value not in wrappers:
        return False
    wrapper = wrappers[returned.value]
    body = wrapper.body.body if isinstance(wrapper.body, cst.IndentedBlock) else ()
    call = _returned(body[-1]) if body else None
    if type(call) is not cst.Call or type(call.func) is not cst.Name or call.func.value != fn:
        return False
    star = wrapper.params.star_arg
    stars = [a for a in call.args if a.star]
    return (
        isinstance(star, cst.Param)
        and wrapper.params.star_kwarg is not None
        and len(call.args) == 2
        and len(stars) == 2
        and type(call.args[0].value) is cst.Name
        and call.args[0].value.value == star.name.value
        and type(call.args[1].value) is cst.Name
        and call.args[1].value.value == wrapper.params.star_kwarg.name.value
    )


def _returned(statement: cst.CSTNode | None) -> cst.BaseExpression | None:
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
        return None
    small = statement.body[0]
    return small.value if type(small) is cst.Return else None


def looped_call(index: ModuleIndex, unit: Unit) -> tuple[cst.Call, Unit] | None:
    """A call in a loop (the call, and the function it is written in) that runs `unit` on every iteration,
    directly or through functions it calls (through every hop `call_targets` follows); None when the module
    calls it in no loop. Computed once per module, on first use."""
    table = index.root.memo.get("looped_calls")
    if table is None:
        table = index.root.memo["looped_calls"] = _looped_calls(index)
    return table.get(id(unit))


def _looped_calls(index: ModuleIndex) -> dict[int, tuple[cst.Call, Unit]]:
    return loops_reaching(index, lambda caller: True, lambda target: True)


def loops_reaching(
    index: ModuleIndex, starts: Callable[[Unit], bool], passes: Callable[[Unit], bool]
) -> dict[int, tuple[cst.Call, Unit]]:
    """id(def) -> a call in a loop of a function `starts` accepts that runs the def on every iteration, directly or
    through functions `passes` lets the loop reach through (to a fixpoint over the module's call sites)."""
    looped: dict[int, tuple[cst.Call, Unit]] = {}
    changed = True
    while changed:
        changed = False
        for call, caller, _ in index._sites:
            site = looped.get(id(caller))
            if site is None and caller.loops_of(call) and starts(caller):
                site = (call, caller)
            if site is None:
                continue
            for target, _ in call_targets(index, call, caller)[0]:
                if id(target) not in looped and target is not caller and passes(target):
                    looped[id(target)] = site
                    changed = True
    return looped
