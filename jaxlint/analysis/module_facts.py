"""The project as one module's walk sees it (`ModuleFacts`), and the summary the module leaves for the others.

The engine hands a module's `ModuleFacts` to its walk: the facts the other modules give it (calls its
functions receive, kinds of the classes it imports, `Export`s of the functions it calls; `analysis.project`
says what each means and how the driver computes them) and, as the walk goes, the calls it makes into other
modules. At the end the walk's and the index's facts become the module's `Summary`: its calls, its top-level
functions with the keys they consume and whether they return one array (`keys/dataflow.py`, `summaries/returns.py`), its
jitted module-level bindings, its classes' methods, the project names it imports and calls, and whether it
reads a clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import libcst as cst

from .binding.index import ModuleIndex, Unit
from .binding.transforms import positional_params
from .keys.relevance import uses_keys
from .kinds import NONE
from .objects.held_fields import field_method_call
from .objects.instances import (
    class_methods,
    imports_project_names,
    method_call,
    subclass_bases,
    top_level_class_facts,
    wanted_classes,
)
from .objects.receivers import module_instance
from .objects.records import CONSTRUCTION_CHECKS, constructor
from .project import LIBRARIES, CallFact, ClassFacts, Export, FunctionFacts, Incoming, Summary
from .semantics.library import DISPATCHING, HOST_OBJECTS
from .summaries.eager_flow import compiles_per_call, looped_calls
from .summaries.host_effects import module_host_objects
from .summaries.namespaces import chooses_namespace
from .summaries.returns import function_returns_array, returned_class
from .summaries.static_exports import static_exports
from .summaries.timers import context_timer, timer_class
from .values.flags import returns_one_array


class ModuleFacts:
    """The project as one module's walk sees it: what it receives, which calls to record, and its summary.

    The summary records calls into any imported module but `project.LIBRARIES` (unless the project is one of
    them: `also`): which modules belong to the project is the driver's business, so a module's summary (and
    its cache entry) does not depend on the other files linted with it."""

    def __init__(
        self,
        incoming: Incoming | None = None,
        also: frozenset[str] = frozenset(),
        package: str | None = None,
        classes: Mapping[str, str] | None = None,
        exports: Mapping[str, Export] | None = None,
        imported: bool = False,
        x64_package: bool = False,
    ) -> None:
        self.incoming: Incoming = incoming or {}
        # An `__init__.py` of a package enclosing the module, or a project module it imports, enables x64, so
        # the module runs with it (`imported_x64.x64_on_import`, which the driver asks).
        self.x64_package = x64_package
        # Analysed code calls this module's functions: it is analysed whatever words it contains (the engine's
        # prefilter skips only modules nothing analysed calls; `ProjectIndex.silent_callees`).
        self.imported = imported
        self.also = also
        self.package = package  # what the module's relative imports resolve against (`package_name`)
        # The kinds of the project classes this module imports, by the qualified name its imports give them.
        self.classes: Mapping[str, str] = classes or {}
        # The other project modules' functions this module calls, by the qualified name its imports give them.
        self.exports: Mapping[str, Export] = exports or {}
        self.outgoing: set[CallFact] = set()
        self.functions: tuple[FunctionFacts, ...] = ()  # set by the walker at its end
        self.keys: Any = (
            None  # the module's key dataflow (`keys.dataflow.key_analysis`), shared by JAX301 and the summary
        )
        # The server's per-unit reuse (`unit_reuse_summary.after_walk`): top-level functions whose exports the last
        # lint's summary computed and that no changed code can alter, by name: (facts, facts with exports).
        self.kept_exports: dict[str, tuple[FunctionFacts, FunctionFacts]] = {}
        self.exported: tuple[tuple[FunctionFacts, FunctionFacts], ...] = ()  # this summary's, likewise
        self._index: ModuleIndex | None = None
        self._summary: Summary | None = None

    def observe(self, index: ModuleIndex) -> None:
        """The engine hands over the module's index: the analysis reads these facts from it (`index.project`),
        and the summary reads the module's classes and imports."""
        self._index = index
        index.project = self

    @property
    def observed(self) -> bool:
        """Whether the engine handed over the module's index (it skips modules that name no JAX library)."""
        return self._index is not None

    def records(self, qualname: str | None) -> bool:
        return qualname is not None and "." in qualname and self._is_project_name(qualname)

    def summary(self) -> Summary:
        """The module's summary, computed once: the index is released after it (`ModuleIndex.release`)."""
        if self._summary is None:
            self._summary = self._summarize()
            if self._index is not None:
                self._index.release()
            self.keys = None  # it holds the index too
        return self._summary

    def _summarize(self) -> Summary:
        index = self._index
        if index is None:
            return Summary(tuple(sorted(self.outgoing)), self.functions)
        classes = tuple(ClassFacts(*row) for row in top_level_class_facts(index, self._is_project_name))
        imports = tuple(
            sorted((local, q) for local, q in index.imports.names.items() if self._is_project_name(q))
        )
        wants = tuple(sorted(wanted_classes(index, self._is_project_name)))
        exported = _with_exports(index, self.functions, self.kept_exports)
        self.exported = tuple(zip(self.functions, exported, strict=True))
        functions = tuple(
            sorted(
                exported
                + _jitted_bindings(index)
                + _methods(index)
                + _timer_classes(index)
                + _checked_classes(index)
            )
        )
        uses = tuple(
            sorted(
                {q for q in index.callee_names if "." in q and self._is_project_name(q)}
                | _method_uses(index, self._is_project_name)
            )
        )
        times = any(q.partition(".")[0] in ("time", "timeit") for q in index.imports.names.values()) or any(
            getattr(magic, "name", "") in ("time", "timeit") for magic in index.magics.values()
        )
        calls = tuple(
            sorted(
                self.outgoing
                | _managers(index, self._is_project_name)
                | _class_arguments(index, self._is_project_name)
                | looped_calls(index, self.exports)
                | _repeated_held(index, self.exports)
            )
        )
        hosts = tuple(module_host_objects(index))
        return Summary(calls, functions, classes, imports, wants, uses, times, hosts)

    def _is_project_name(self, qualname: str) -> bool:
        head = qualname.partition(".")[0]
        return head not in LIBRARIES or head in self.also


def _managers(index: ModuleIndex, project_name) -> set[CallFact]:
    """`with timer("step"):` of another project module's function, and `bar.update(1)` of another project
    module's name by a method a host object has: an eager call fact, so that its module is analysed even when it
    names no JAX library (`ProjectIndex.silent_callees`): it may export a timer or a host object."""
    found: set[CallFact] = set()
    if not any(project_name(q) for q in index.imports.names.values()):
        return found
    for callee in index.callee_names:
        holder, _, method = callee.rpartition(".")
        if "." in holder and project_name(holder) and method in _HOST_METHODS:
            found.add(CallFact(callee, NONE, "", ()))
    for call in index.with_calls:
        qualname = index.qualname(call.func)
        if qualname is not None and "." in qualname and project_name(qualname):
            found.add(CallFact(qualname, NONE, "", ()))
    return found


def _repeated_held(index: ModuleIndex, exports: Mapping[str, Export]) -> set[CallFact]:
    """Other modules' methods this module calls again on one object while they draw from a key the object keeps
    (`keys.held_draws.repeated_calls`)."""
    if not exports or not uses_keys(index):
        return set()
    from .keys.dataflow import key_analysis
    from .keys.held_draws import repeated_calls

    return repeated_calls(index, exports, key_analysis(index))


def _class_arguments(index: ModuleIndex, project_name) -> set[CallFact]:
    """`step(model, x)` of another project module's function with `model` bound once to `models.Counter(...)`
    (a class of another project module): an eager call fact naming the argument's class, so that the callee
    knows what its parameter holds (`objects.receivers.parameter_class`: an nnx object, a Module whose fields trace)."""
    found: set[CallFact] = set()
    if not imports_project_names(index, project_name):
        return found  # neither the callee nor the class can be a project name
    for (call, unit, _), target in zip(index._sites, index.site_callees, strict=True):
        if call.args and (target is None or not project_name(target)):
            target = _method_target(index, call.func, unit)  # `obj.m(x)`, `obj(x)`: another module's method
        if not call.args or target is None or "." not in target or not project_name(target):
            continue
        classes: list[tuple[str, str]] = []
        positional = 0
        for arg in call.args:
            if arg.star:
                break
            built = module_instance(index, arg.value, unit)
            cls = index.qualname(built.func, unit) if built is not None else None
            if cls is not None and "." in cls and project_name(cls):
                classes.append((arg.keyword.value if arg.keyword is not None else str(positional), cls))
            positional += arg.keyword is None
        if classes:
            starred = any(arg.star for arg in call.args)
            found.add(CallFact(target, NONE, "", (0,) * positional, (), starred, classes=tuple(classes)))
    return found


def _method_target(index: ModuleIndex, func: cst.BaseExpression, unit: Unit) -> str | None:
    """The other project module's method `obj.m(...)` or `obj(...)` runs (`objects.instances.method_call`)."""
    if type(func) is cst.Name:
        if index.resolve_function(func, unit):
            return None
        func = cst.Attribute(value=func, attr=cst.Name("__call__"))
    if (
        type(func) is not cst.Attribute
        or type(func.value) is not cst.Name
        or func.value.value in ("self", "cls")
    ):
        return None
    method = method_call(index, func, unit)
    return method.target if method is not None else None


def _with_exports(
    index: ModuleIndex,
    functions: tuple[FunctionFacts, ...],
    kept: Mapping[str, tuple[FunctionFacts, FunctionFacts]],
) -> tuple[FunctionFacts, ...]:
    """The module's top-level functions with what their callers in other modules need: the keys they consume
    (the key dataflow of `keys/dataflow.py`, through their own callees, in this module or, by the facts this module
    received, in others) and whether they return one JAX array (`summaries/returns.py`)."""
    analysis = None
    if uses_keys(index):
        from .keys.dataflow import key_analysis, path_json

        analysis = key_analysis(index)
    out = []
    for facts in functions:
        hit = kept.get(facts.name)
        if hit is not None and hit[0] == facts:
            out.append(hit[1])
            continue
        defs = index.root.defs.get(facts.name)
        if not defs:
            out.append(facts)
            continue
        unit = defs[-1]  # what an importer sees: the last binding of the name
        keys: tuple[tuple[str, tuple[int | str, ...]], ...] = ()
        if analysis is not None:
            consumed = analysis.call_summary(unit).params
            keys = tuple(sorted((name, path_json(path)) for name, path in consumed))
        returns = function_returns_array(unit, index, returns_one_array)
        timer = context_timer(unit, index)
        namespace = chooses_namespace(unit, index)
        static, made_positional, made_static = static_exports(unit, index)
        per_call = compiles_per_call(unit, index)
        made = returned_class(unit, index)
        changed = keys or returns or timer or namespace or static or made_static or per_call or made
        out.append(
            dataclasses.replace(
                facts,
                keys=keys,
                returns=returns,
                timer=timer,
                namespace=namespace,
                static=static,
                made_positional=made_positional,
                made_static=made_static,
                compiles_per_call=per_call,
                returns_class=made,
            )
            if changed
            else facts
        )
    return tuple(out)


_HOST_METHODS = frozenset(m for methods in HOST_OBJECTS.values() for m in methods)


def _jitted_bindings(index: ModuleIndex) -> tuple[FunctionFacts, ...]:
    """Module-level names bound once to `jax.jit(f)` (f a function of the module): jitted, for JAX403 in the
    modules that time them. No parameters and kind NONE, so no call fact ever adds to them (`adds`)."""
    root = index.root
    found = []
    for name in root.bindings:
        if name in root.defs:
            continue
        value = root.single_assignment(name)
        if type(value) is not cst.Call or not value.args or value.args[0].keyword is not None:
            continue
        transform = index.transform_of(value.func, root)
        if transform is not None and transform[0] in DISPATCHING:
            if index.resolve_function(value.args[0].value, root):
                found.append(FunctionFacts(name, (), (), NONE, (), (), True))
    return tuple(found)


def _timer_classes(index: ModuleIndex) -> tuple[FunctionFacts, ...]:
    """The module's top-level timer classes (`summaries.timers.timer_class`): `with Timer():` in another module times its
    block (JAX403). No parameters and kind NONE, so no call fact ever adds to them (`adds`)."""
    if not any(q.partition(".")[0] in ("time", "timeit") for q in index.imports.names.values()):
        return ()
    return tuple(
        FunctionFacts(name, (), (), NONE, (), (), False, timer=True)
        for name, node in index.classes.items()
        if node is not None and timer_class(name, index)
    )


def _methods(index: ModuleIndex) -> tuple[FunctionFacts, ...]:
    """The methods of the module's top-level classes (`_method_facts`), with the keys a call on an instance
    surely consumes (`keys.dataflow.method_keys`); a method a class inherits from the module's classes is listed under
    the subclass's name too when it consumes keys (`env.reset(key)` on an instance of the subclass)."""
    consuming = uses_keys(index)  # else no method consumes a key (and the key dataflow need not load)
    out = []
    for name, node in index.classes.items():
        if node is None:
            continue
        own = index.class_methods.get(id(node), {})
        for units in own.values():
            unit = units[-1]
            if unit.is_method:
                facts = _method_facts(f"{name}.{unit.name}", unit)
                keys = _method_keys(index, name, unit.name) if consuming else ()
                if keys:
                    facts = dataclasses.replace(facts, keys=keys, hands_back=_hands_back(index, keys, unit))
                if compiles_per_call(unit, index):
                    facts = dataclasses.replace(facts, compiles_per_call=True)
                out.append(facts)
        inherited = {
            m
            for base in subclass_bases(index, name)
            for m in index.class_methods.get(id(index.classes[base]), {})
        }
        for method in sorted(inherited - own.keys()):
            found = class_methods(index, name, method)  # the def the class runs: its nearest base's
            keys = _method_keys(index, name, method) if consuming and found and found[-1].is_method else ()
            if keys:
                facts = _method_facts(f"{name}.{method}", found[-1])
                out.append(
                    dataclasses.replace(facts, keys=keys, hands_back=_hands_back(index, keys, found[-1]))
                )
    return tuple(out)


def _hands_back(index: ModuleIndex, keys: tuple, unit: Unit) -> bool:
    """Whether a method drawing from its object's kept key returns the advanced key (`keys.held_draws.hands_back`):
    its callers' repeated calls on the old object are theirs to report."""
    from .keys.held_draws import hands_back
    from .keys.model import RECEIVER

    return any(name == RECEIVER for name, _ in keys) and hands_back(index, [unit])


def _method_keys(
    index: ModuleIndex, class_name: str, method: str
) -> tuple[tuple[str, tuple[int | str, ...]], ...]:
    """`keys.dataflow.method_keys` in the summary's form: sorted, with JSON-able paths."""
    from .keys.dataflow import method_keys, path_json

    return tuple(sorted((n, path_json(p)) for n, p in method_keys(index, class_name, method)))


def _method_uses(index: ModuleIndex, project_name) -> set[str]:
    """The other project modules' methods the module calls on instances of their classes (`env.reset(key)`
    with `env = envs.Env()` or `env: envs.Env`), and the functions and methods it transforms
    (`jax.jit(helpers.sample)(key)`, `step = jax.jit(env.step)`): names whose `Export`s it may need."""
    found: set[str] = set()
    if not imports_project_names(index, project_name):
        return found  # both kinds of name found are project names the imports give
    for call, unit, _ in index._sites:
        func = call.func
        if call.args and call.args[0].keyword is None and index.transform_of(func, unit) is not None:
            func = call.args[0].value  # what the transformation applies to
            name = index.qualname(func, unit)
            if name is not None and "." in name and project_name(name):
                found.add(name)
        if type(func) is cst.Name and not index.resolve_function(func, unit):
            func = cst.Attribute(value=func, attr=cst.Name("__call__"))  # `model(x)`: its class's `__call__`
        elif type(func) is cst.Attribute and type(func.value) is cst.Attribute:
            # `self.detector.sample(x)`, `self.block(x)`: the class of a field the object keeps
            method = field_method_call(index, func, unit) or field_method_call(
                index, cst.Attribute(value=func, attr=cst.Name("__call__")), unit
            )
            if method is not None and method.target is not None:
                found.add(method.target)
        if type(func) is cst.Attribute and not (
            type(func.value) is cst.Name and func.value.value in ("self", "cls")
        ):  # a method of `self`'s own class is this module's: `method_call` names no target for it
            method = method_call(index, func, unit)
            if method is not None and method.target is not None:
                found.add(method.target)
    return found


def _checked_classes(index: ModuleIndex) -> tuple[FunctionFacts, ...]:
    """The module's top-level classes whose construction runs a check on the fields it stores (an equinox
    Module's `__check_init__`), as functions taking the constructor's parameters: another module building one
    from tracers makes the check read them (`FlowCalls._constructed_here`)."""
    out = []
    for name, node in index.classes.items():
        if node is None:
            continue
        hooks = [u for hook in sorted(CONSTRUCTION_CHECKS) for u in class_methods(index, name, hook)]
        made = constructor(index, node) if hooks else None
        if made is None:
            continue
        traced = set().union(*(u.traced_fields for u in hooks))
        out.append(
            FunctionFacts(
                name,
                made.positional,
                made.keyword_only,
                min(u.kind for u in hooks),
                tuple(sorted(p for f, p in made.fields if f in traced)),
                (),
                False,
            )
        )
    return tuple(out)


def _method_facts(name: str, unit: Unit) -> FunctionFacts:
    """A method as the class's own module leaves it (its parameters after `self`): what the walk of another
    module's `model.apply(...)` must add for it to be worth linting again."""
    params = unit.params
    return FunctionFacts(
        name,
        tuple(p.name.value for p in positional_params(params)[1:]),
        tuple(p.name.value for p in params.kwonly_params),
        unit.kind,
        tuple(sorted(unit.traced_params | unit.container_params)),
        tuple(sorted(unit.array_params & unit.traced_params)),
        False,
        tuple(sorted(unit.passed_params)),
    )
