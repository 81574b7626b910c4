"""What calls tell the flow walk (`flow/walk.py`): a same-module function called from traced code with traced
arguments is traced too (walked again with them), one called eagerly with JAX arrays has array parameters, a
jitted function given Python scalars traces them; calls into other project modules are recorded for them, and
their calls into this one applied (`module_facts.py`, `project.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import libcst as cst

from ..binding.index import ModuleIndex, Unit
from ..binding.transforms import (
    ARRAY_ANNOTATIONS,
    STATIC_ANNOTATIONS,
    annotation_name,
    eager,
    positional_params,
)
from ..kinds import ARRAY, ARRAYS_ONLY, BOOL, GRAD, HOLDS_TRACED, HOST, LITERAL, NONE, STRICT, TRACED
from ..module_facts import ModuleFacts
from ..objects.instances import class_methods, foreign_transformed, module_apply, module_instance
from ..objects.receivers import spread_keys
from ..objects.records import CONSTRUCTION_CHECKS, constructor
from ..project import CallFact, FunctionFacts
from ..semantics.library import LINEN_APPLY_KEYWORDS, SCALAR_TRACING, TRANSFORMATIONS, TREE_MAPS
from ..summaries.custom_derivatives import custom_rules, nondiff_positions
from ..summaries.dispatch import dispatches_only, runs_jax
from ..summaries.function_values import called_value, note_function_arguments
from ..summaries.jit import jitted_callable, jitted_def
from ..summaries.returns import imported_result_class
from ..values.abstract import INSTANCES, Value
from ..values.flags import evaluate, value_of
from .frame import Frame

_TREE_MAPS = frozenset(name for name, leaf in TREE_MAPS.items() if leaf == 0)  # the leaf is the argument


class FlowCalls:
    """The flow walker's call evidence (its base class): who calls whom, with what."""

    index: ModuleIndex
    project: ModuleFacts | None
    _parent_frames: dict[int, Frame]  # each walked unit's enclosing frame: walked again when marked dirty
    _dirty: dict[int, Unit]
    _staged_calls: set[int]
    _eager_calls: set[int]
    _walked_eager: set[int]

    def _functions(self, root: Frame) -> tuple[FunctionFacts, ...]:
        """The module's top-level functions as the walk leaves them (for `ModuleFacts.summary`)."""
        facts = []
        for name, defs in self.index.root.defs.items():
            unit = defs[-1]  # what an importer sees: the module's last binding of the name
            params = unit.params
            jitted = (
                jitted_def(unit, self.index, SCALAR_TRACING)
                if len(defs) > 1
                else jitted_callable(cst.Name(name), root, SCALAR_TRACING)
            )
            facts.append(
                FunctionFacts(
                    name,
                    tuple(p.name.value for p in positional_params(params)),
                    tuple(p.name.value for p in params.kwonly_params),
                    unit.kind,
                    tuple(sorted(unit.traced_params | unit.container_params)),
                    tuple(sorted(unit.array_params & unit.traced_params)),
                    jitted is not None and jitted.unit is unit,
                    tuple(sorted(unit.passed_params)),
                    dispatches=dispatches_only(self.index, unit),
                    runs_jax=runs_jax(self.index, unit),
                    hands_on=tuple(sorted(unit.hands_on.items())),
                )
            )
        return tuple(sorted(facts))

    # -- call-site evidence --------------------------------------------------------------------------------

    def _call_sites(self) -> None:
        """`step(x, True)` with `step` jitted: `True` becomes a traced bool inside `step` (unless static).
        Calls into other project modules with such arguments are recorded for them (project mode)."""
        project = self.project
        frames: dict[int, Frame] = {}
        for call, unit, _ in self.index._sites:
            if not call.args:
                continue  # no argument, no literal one
            func = call.func
            if type(func) is cst.Attribute and not (
                type(func.value) is cst.Name and func.value.value in _SELF
            ):
                # `jnp.sum(x, 0)`: no def of ours (`jitted_callable`, `resolve_function` find none), so only
                # another project module's function is of interest
                if project is None or not project.records(self.index.qualname(func, unit)):
                    continue
            literal = _literal_arguments(call, unit, self.index)
            dicts = _scalar_dicts(call)
            if literal is None and not dicts:
                continue
            frame = frames.get(id(unit))
            if frame is None:
                frame = frames[id(unit)] = Frame(self, unit, None, NONE, "")
            jitted = jitted_callable(call.func, frame, SCALAR_TRACING)
            if jitted is not None:
                if literal is not None:
                    self._traced_scalars(jitted, *literal)
                if dicts:
                    # `sample(model, {"temperature": 0.7})`: the dict's scalars are traced as its leaves, as
                    # jax.jit traces a dict argument (nnx.jit too, although it filters: flax 0.12.8)
                    positional = [i in dicts for i in range(len(call.args))]
                    named = tuple((k, LITERAL) for k in dicts if isinstance(k, str))
                    self._traced_scalars(jitted, positional, named, arrays=False)
            elif literal is None:
                continue
            elif project is not None and not self.index.resolve_function(call.func, unit):
                target = frame.qualname(call.func)
                if project.records(target):
                    assert target is not None
                    positional, keywords = literal
                    project.outgoing.add(
                        CallFact(target, NONE, "", tuple(LITERAL if p else 0 for p in positional), keywords)
                    )

    def _foreign_call(self, call: cst.Call, frame: Frame) -> bool:
        """`jax.jit(step)(x, True)` (any transformation, called here or through a name bound once to it) of
        another module's `step`, in eager code: the JAX arrays it passes, and the Python scalars `jax.jit` and
        `nnx.jit` trace, hold tracers there, but for the static and undifferentiated positions; an argument
        of unknown structure records nothing (a pytree's static fields stay Python values). A fact for its
        module. Whether the call is one."""
        found = foreign_transformed(self.index, call.func, frame.unit)
        if found is None:
            return False
        target, name, context, spec, leading = found
        if leading and any(arg.keyword is not None and arg.keyword.value == "method" for arg in call.args):
            return True  # `apply(..., method=...)` runs another method than the one found
        differentiated = spec.differentiated
        if spec.unknown or any(i < 0 for i in differentiated or ()):
            return True
        scalars = name in SCALAR_TRACING
        positional: list[int] = []
        keywords: list[tuple[str, int]] = []
        starred = False
        for arg in call.args:
            if arg.star:
                starred = True
                break
            if arg.keyword is None and leading:  # `apply`'s variables: not the method's
                leading -= 1
                continue
            if arg.keyword is not None and found[4] and arg.keyword.value in LINEN_APPLY_KEYWORDS:
                continue
            value = arg.value
            traced = bool(evaluate(value, frame) & ARRAY) or (
                scalars and (_is_scalar_literal(value) or _names_literal(value, frame.unit, self.index))
            )
            if arg.keyword is not None:
                keywords.append(
                    (
                        arg.keyword.value,
                        TRACED | ARRAY if traced and arg.keyword.value not in spec.argnames else 0,
                    )
                )
                continue
            i = len(positional)
            static = (
                i in spec.argnums
                or i in spec.unbatched
                or differentiated is not None
                and i not in differentiated
            )
            positional.append(TRACED | ARRAY if traced and not static else 0)
        if any(positional) or any(flags for _, flags in keywords):
            keywords += [(n, 0) for n in spec.argnames if n not in dict(keywords)]  # its module knows where
            tail = tuple(sorted(i for i in spec.argnums if i < 0))
            fact = CallFact(
                target,
                TRANSFORMATIONS[name].kind,
                context,
                tuple(positional),
                tuple(sorted(keywords)),
                starred,
                static_tail=tail,
            )
            assert self.project is not None
            self.project.outgoing.add(fact)
        return True

    @staticmethod
    def _traced_scalars(
        jitted: Any, positional: list[bool], keywords: tuple[tuple[str, int], ...], arrays: bool = True
    ) -> None:
        """Parameters of a jitted function that receive Python scalars and are not static: traced arrays (with
        `arrays` False: dicts of them, traced leaf by leaf)."""
        params = positional_params(jitted.params)
        static_indices, static_names = jitted.static_parameters()
        names: set[str] = set()
        for i, is_literal in enumerate(positional):
            index = i + jitted.offset
            if is_literal and index < len(params) and index not in static_indices:
                names.add(params[index].name.value)
        known = {p.name.value for p in [*params, *jitted.params.kwonly_params]}
        names |= {name for name, flags in keywords if flags & LITERAL and name in known}
        names -= static_names
        unit = jitted.unit
        unit.traced_params |= names
        if arrays:
            unit.array_params |= names

    def _receive(self, root: Frame) -> None:
        """Apply the calls other modules make to this module's top-level functions."""
        assert self.project is not None
        for name, facts in self.project.incoming.items():
            defs = self.index.root.defs.get(name)
            bound = not defs and "." in name  # "MLP.__call__": a method, called on an instance
            if bound:
                owner, _, method = name.partition(".")
                defs = class_methods(self.index, owner, method)
            elif not defs and self.index.classes.get(name) is not None:
                self._constructed_here(name, facts)  # `Potential(m=x)` in another module's traced code
                continue
            if not defs:
                continue
            callee = defs[-1]  # what an importer sees: the module's last binding of the name
            for fact in facts:
                if bound and fact.built and fact.kind > NONE:
                    fields = self._built_fields(owner, fact.built)
                    if fields:
                        self._on_object(callee, fields, fact.kind, fact.context)
                if any(f & LITERAL for f in fact.positional) or any(f & LITERAL for _, f in fact.keywords):
                    jitted = (
                        jitted_def(callee, self.index, SCALAR_TRACING)
                        if len(defs) > 1 and not bound
                        else jitted_callable(cst.Name(name), root, SCALAR_TRACING)
                    )
                    if jitted is not None and jitted.unit is callee:
                        self._traced_scalars(
                            jitted, [bool(f & LITERAL) for f in fact.positional], fact.keywords
                        )
                if fact.kind > NONE and callee.kind != HOST:
                    positional, keywords = list(fact.positional), dict(fact.keywords)
                    if fact.receiver & TRACED and bound and not callee.traced_receiver:
                        callee.traced_receiver = True
                        self._mark(callee, set(), fact.kind, fact.context, force=True)
                    if fact.rest & TRACED and callee.kind < fact.kind:  # a transformation of the whole method
                        self._mark(callee, set(), fact.kind, fact.context, force=True)
                    if fact.as_given:  # `NUTS(model)`: traced code, no parameter a tracer
                        self._mark(callee, set(), fact.kind, fact.context, force=callee.kind < fact.kind)
                        continue
                    if (
                        not fact.rest
                        and callee.is_target
                        and not any(a.kind == GRAD for a in callee.applications)
                    ):
                        # A call of a jitted function: its own transformation says which parameters hold
                        # tracers (a static one never does), whatever the caller passes, as in `_propagate`.
                        self._mark(callee, set(), fact.kind, fact.context)
                        continue
                    # Static by name or counted from the end (`static_argnames="train"`, `static_argnums=-1`):
                    # only this module knows which positions those are; a static parameter holds no tracer.
                    params = positional_params(callee.params)[1 if bound else 0 :]
                    keywords.update(
                        (name, 0) for name in fact.static_names(tuple(p.name.value for p in params))
                    )
                    static = {name for name, flags in keywords.items() if not flags}
                    if static:
                        positional = [
                            0 if i < len(params) and params[i].name.value in static else f
                            for i, f in enumerate(positional)
                        ]
                    self._pass(
                        callee, bound, positional, keywords, fact.kind, fact.context, fact.starred, fact.rest
                    )
                elif fact.kind == NONE:  # an eager caller passing JAX arrays
                    self._mark_eager_arrays(callee, bound, fact.positional, dict(fact.keywords))

    def _built_fields(self, class_name: str, arguments: Sequence[tuple[str, int]]) -> dict[str, int]:
        """The fields of the module's class that a constructor call with arguments of these flags (`CallFact.built`:
        position or keyword) fills with tracers."""
        cls = self.index.classes.get(class_name)
        made = constructor(self.index, cls) if cls is not None else None
        if made is None:
            return {}
        given: dict[str, int] = {}
        for key, flags in arguments:
            if key.isdigit():
                if int(key) >= len(made.positional):
                    return {}
                key = made.positional[int(key)]
            elif key not in made.positional and key not in made.keyword_only:
                return {}
            given[key] = flags
        return {
            field: given[param] & (TRACED | ARRAY | BOOL)
            for field, param in made.fields
            if given.get(param, 0) & TRACED
        }

    def _constructed_here(self, class_name: str, facts: Sequence[CallFact]) -> None:
        """Another module's traced code builds the module's class from tracers: its construction checks see them."""
        for fact in facts:
            if fact.kind <= NONE or fact.starred:
                continue
            arguments = [(str(i), f) for i, f in enumerate(fact.positional)] + list(fact.keywords)
            fields = self._built_fields(class_name, arguments)
            if not fields:
                continue
            for hook in CONSTRUCTION_CHECKS:
                for method in class_methods(self.index, class_name, hook):
                    self._on_object(method, fields, fact.kind, fact.context)

    def _propagate(self, call: cst.Call, frame: Frame) -> None:
        """A same-module function called with traced arguments is traced too (another module's: recorded)."""
        if type(call.func) is cst.Name and call.args:
            self._constructed(call, frame)
        if frame.qualname(call.func) in _TREE_MAPS and call.args:
            # Each parameter receives the leaves of the tree in its position.
            trees = [a for a in call.args[1:] if a.keyword is None and not a.star]
            traced = [bool(evaluate(a.value, frame) & (TRACED | HOLDS_TRACED)) for a in trees]
            starred = any(a.star for a in call.args[1:])
            for callee, _ in self.index.resolve_function(call.args[0].value, frame.unit):
                self._called_from(callee, frame)
                params = positional_params(callee.params)
                names = {p.name.value for p, t in zip(params, traced, strict=False) if t}
                leaves = params if starred else params[: len(trees)]
                callee.passed_params |= {p.name.value for p in leaves}
                self._mark(callee, names, frame.kind, frame.context)
            return
        through = self._called_through(call, frame)
        args, target = call.args, None
        applied = module_apply(self.index, call, frame.unit)
        if applied is not None:  # `model.apply(variables, x)` runs `__call__(x)`; `obj.m(x)` runs `m`
            callees, args, target = [(u, applied.bound) for u in applied.units], applied.args, applied.target
        elif through:  # `jax.grad(f)(t, i - 1)`: f receives these arguments
            callees = through
        else:
            callees = self.index.resolve_function(call.func, frame.unit, self.index.call_order(call))
            # `partial(f, a)(x)`, `OPS["f"](x)`, `fn(x)` with `fn` a parameter given a function
            if not callees:
                value = called_value(self.index, call, frame.unit)
                if value is not None:
                    callees, args = value
        if not callees and self.project is None:
            return
        positional: list[int] = []
        starred = any(arg.star for arg in args)
        for arg in args:
            if arg.keyword is None:
                if arg.star:
                    break
                positional.append(evaluate(arg.value, frame))
        keywords = {a.keyword.value: evaluate(a.value, frame) for a in args if a.keyword is not None}
        for arg in args:
            if arg.star == "**" and evaluate(arg.value, frame) & TRACED:
                # `f(**kwargs)` of a traced dict (a traced function's argument: every leaf a tracer): the
                # keyword parameters it fills hold tracers, when its keys are known (`objects.receivers.spread_keys`)
                for key in spread_keys(self.index, arg.value, frame.unit) or ():
                    keywords.setdefault(key, TRACED)
        # `layer(h)` on a traced instance: its method reads the traced fields of `self` (values.traced_self_field)
        receiver = applied.receiver if applied is not None else None
        traced_receiver = receiver is not None and bool(evaluate(receiver, frame) & TRACED)
        if not callees:
            assert self.project is not None
            built: tuple[tuple[str, int], ...] = ()
            if applied is None and type(call.func) is cst.Attribute:
                found = self._foreign_object(call.func, frame)
                if found is not None:
                    target, built = found
            target = target or frame.qualname(call.func)
            on_traced = traced_receiver and applied is not None and applied.bound
            if self.project.records(target) and (
                on_traced
                or any(f & (TRACED | HOLDS_TRACED) for f in [*positional, *keywords.values()])
                or any(f & TRACED for _, f in built)
            ):
                assert target is not None
                fact = CallFact(
                    target,
                    frame.kind,
                    frame.context,
                    tuple(positional),
                    tuple(sorted(keywords.items())),
                    starred,
                    receiver=TRACED if on_traced else 0,
                    built=built,
                )
                self.project.outgoing.add(fact)
            return
        fields = receiver_fields(applied.receiver if applied is not None else call.func, frame)
        for callee, bound_self in callees:
            if callee.kind == HOST or type(callee.node) is cst.Module:
                continue
            self._called_from(callee, frame)
            if fields and bound_self:
                self._on_object(callee, fields, frame.kind, frame.context)
            if note_function_arguments(self.index, callee, bound_self, args, frame.unit):
                if id(callee) in self._parent_frames:  # walked already: its calls of `fn` run these now
                    self._dirty[id(callee)] = callee
            if traced_receiver and bound_self and not callee.traced_receiver:
                callee.traced_receiver = True
                self._mark(callee, set(), frame.kind, frame.context, force=True)
            nondiff = nondiff_positions(self.index, callee) if frame.kind >= STRICT and frame.staged else None
            if nondiff is not None:  # a custom-derivative function: traced again, with its rules
                self._custom_call(callee, nondiff, positional, keywords, frame, starred)
                continue
            if callee.is_target:
                self._mark(callee, set(), frame.kind, frame.context)
                if through or any(app.kind == GRAD for app in callee.applications):
                    # A transformed function nested in traced code gets tracers where its caller passes them.
                    self._pass(callee, bound_self, positional, keywords, frame.kind, frame.context, starred)
                continue
            self._pass(callee, bound_self, positional, keywords, frame.kind, frame.context, starred)

    def _custom_call(
        self,
        callee: Unit,
        nondiff: frozenset[int],
        positional: list[int],
        keywords: dict[str, int],
        frame: Frame,
        starred: bool,
    ) -> None:
        """`f(z, x)` of a `@jax.custom_vjp` (or `custom_jvp`) `f` from staged-out code: JAX traces `f` again with
        every argument outside `nondiff` a tracer (a static jit argument included), its forward rule likewise,
        its jvp rule with (primals, tangents) tuples of tracers after the nondiff arguments (jax 0.10.2)."""
        params = positional_params(callee.params)
        kept = {p.name.value for i, p in enumerate(params) if i in nondiff}
        traced = [f if i in nondiff else f | TRACED for i, f in enumerate(positional)]
        named = {k: f if k in kept else f | TRACED for k, f in keywords.items()}
        self._pass(callee, False, traced, named, frame.kind, frame.context, starred)
        for rule, primal_arguments in custom_rules(self.index, callee):
            self._called_from(rule, frame)
            if primal_arguments:
                self._pass(rule, False, traced, named, frame.kind, frame.context, starred)
            else:
                tuples = [0] * len(nondiff) + [HOLDS_TRACED, HOLDS_TRACED]
                self._pass(rule, False, tuples, {}, frame.kind, frame.context)

    def _on_object(self, method: Unit, fields: dict[str, int], kind: int, context: str) -> None:
        """`method` runs on an object whose `fields` hold tracers (`receiver_fields`): so does its `self`."""
        if not method.is_method:
            return
        known, changed = method.traced_fields, False
        for field, flags in fields.items():
            # a field a tracer on every call: an array only where every call says it is one
            joined = flags if field not in known else known[field] & flags
            if known.get(field) != joined:
                known[field] = joined
                changed = True
        if changed:
            self._mark(method, set(), kind, context, force=True)

    def _foreign_object(
        self, func: cst.Attribute, frame: Frame
    ) -> tuple[str, tuple[tuple[str, int], ...]] | None:
        """`op.decomposition()` with `op = Exp(coeff=jnp.cos(t))` built here from another project module's class:
        the method's qualified name and the flags of the constructor's arguments (`CallFact.built`)."""
        receiver = func.value
        if type(receiver) is not cst.Name or func.attr.value.startswith("__"):
            return None
        made = module_instance(self.index, receiver, frame.unit)
        if made is None or type(made.func) not in (cst.Name, cst.Attribute) or any(a.star for a in made.args):
            return None
        if type(made.func) is cst.Name and self.index.classes.get(made.func.value) is not None:
            return None  # the module's own class: `instance_method` follows it
        qualname = frame.qualname(made.func)
        if qualname is None or self.project is None or not self.project.records(qualname):
            return None
        flags: list[tuple[str, int]] = []
        position = 0
        for arg in made.args:
            if arg.keyword is None:
                flags.append((str(position), evaluate(arg.value, frame)))
                position += 1
            else:
                flags.append((arg.keyword.value, evaluate(arg.value, frame)))
        return f"{qualname}.{func.attr.value}", tuple(flags)

    def _constructed(self, call: cst.Call, frame: Frame) -> None:
        """`Potential(m=x)` of the module's class: what runs on construction besides storing the fields (an
        equinox Module's `__check_init__`) sees the tracers the fields are given."""
        func = call.func
        if type(func) is not cst.Name or self.index.classes.get(func.value) is None:
            return
        cls = frame.lookup_value(func.value)
        if cls.kind != "class" or cls.definition is not self.index.classes.get(func.value):
            return
        built = value_of(call, frame)
        fields = traced_fields(built)
        if not fields:
            return
        for hook in CONSTRUCTION_CHECKS:
            for method in class_methods(self.index, func.value, hook):
                self._called_from(method, frame)
                self._on_object(method, fields, frame.kind, frame.context)

    def _property_read(self, node: cst.Attribute, frame: Frame) -> None:
        """`obj.converged` of a property of the module's class, on an object built from tracers (or `self` of
        one): the property's getter runs there, on those fields. On the result of another project module's
        function given tracers (`out = sinkhorn(x)`), recorded for that module."""
        fields = receiver_fields(node, frame)
        if not fields:
            self._foreign_result_read(node, frame)
            return
        held = frame.lookup_value(node.value.value)  # type: ignore[attr-defined]
        cls = held.definition
        if type(cls) is not cst.ClassDef or self.index.classes.get(cls.name.value) is not cls:
            return
        for method in class_methods(self.index, cls.name.value, node.attr.value):
            if is_property(method):
                self._called_from(method, frame)
                self._on_object(method, fields, frame.kind, frame.context)

    def _foreign_result_read(self, node: cst.Attribute, frame: Frame) -> None:
        """`out.converged` / `out.check()` in traced code, with `out = solve(x)` of another project module whose
        every return builds an instance of its class (`summaries.returns.imported_result_class`), given tracers:
        the instance holds them, so that class's property or method runs on a traced instance there."""
        if self.project is None or node.attr.value.startswith("__"):
            return
        found = imported_result_class(self.index, node.value, frame.unit)
        if found is None:
            return
        cls, made = found
        if not any(evaluate(a.value, frame) & (TRACED | HOLDS_TRACED) for a in made.args):
            return
        target = f"{cls}.{node.attr.value}"
        if self.project.records(target):
            self.project.outgoing.add(CallFact(target, frame.kind, frame.context, (), receiver=TRACED))

    def _transforms_foreign(self) -> bool:
        """Whether the module may transform another project module's function: it imports project names."""
        memo = self.index.root.memo
        if "transforms_foreign" not in memo:
            project = self.project
            memo["transforms_foreign"] = project is not None and any(
                project.records(q) for q in self.index.imports.names.values()
            )
        return memo["transforms_foreign"]

    def _eager_arrays(self, call: cst.Call, frame: Frame) -> None:
        """`update(jnp.zeros(3))` in eager code: the function's parameter holds a JAX array there (an item
        assignment to it fails; `.astype(jnp.float64)` on it asks JAX for float64). Another module's function:
        recorded for it (project mode)."""
        func = type(call.func)
        if (
            (func is cst.Call or func is cst.Name)
            and self._transforms_foreign()
            and self._foreign_call(call, frame)
        ):
            return
        if func is cst.Attribute:
            name = frame.qualname(call.func)  # `jnp.sum(x)`: a library's function runs, nothing of ours
            if name is not None and (self.project is None or not self.project.records(name)):
                return
        # Most eager calls pass no JAX array: decide that first (what `module_apply` passes on is a part of
        # the call's arguments), before resolving what the call runs. Each argument is evaluated once (values
        # are pure): the flags are read again below when the call's own arguments are what it passes on.
        arrays = [0 if arg.star else evaluate(arg.value, frame) & ARRAY for arg in call.args]
        if not any(arrays):
            return
        applied = module_apply(self.index, call, frame.unit)
        target = None
        args: Sequence[cst.Arg] = call.args
        if applied is not None:
            callees, args, target = [(u, applied.bound) for u in applied.units], applied.args, applied.target
        else:
            callees = self.index.resolve_function(call.func, frame.unit, self.index.call_order(call))
            # `partial(f, a)(x)`, `OPS["f"](x)`, `fn(x)` with `fn` a parameter given a function
            if not callees:
                value = called_value(self.index, call, frame.unit)
                if value is not None:
                    callees, args = value
        if not callees and self.project is None:
            return
        positional: list[int] = []
        keywords: dict[str, int] = {}
        starred = False
        own = args is call.args
        for i, arg in enumerate(args):
            if arg.star:
                starred = True
                break
            flags = arrays[i] if own else evaluate(arg.value, frame) & ARRAY
            if arg.keyword is None:
                positional.append(flags)
            else:
                keywords[arg.keyword.value] = flags
        if not any(positional) and not any(keywords.values()):
            return
        if not callees:
            assert self.project is not None
            target = target or frame.qualname(call.func)
            if self.project.records(target):
                assert target is not None
                facts = tuple(sorted(keywords.items()))
                self.project.outgoing.add(CallFact(target, NONE, "", tuple(positional), facts, starred))
            return
        for callee, bound_self in callees:
            self._mark_eager_arrays(callee, bound_self, positional, keywords)

    def _mark_eager_arrays(
        self, callee: Unit, bound_self: bool, positional: Sequence[int], keywords: Mapping[str, int]
    ) -> None:
        """The parameters of an untraced function that an eager caller passes JAX arrays; also of a function
        under a filtering transformation (`eqx.filter_jit`), which traces exactly its array arguments. A traced
        function an eager caller passes JAX arrays (`f(xs)` of `@jax.jit def f`, or of a def also traced by
        `jax.make_jaxpr(f)`): those parameters are arrays where they are traced (not some other pytree)."""
        if type(callee.node) is cst.Module:
            return
        params = positional_params(callee.params)
        if callee.is_method and bound_self:
            params = params[1:]
        names = {
            params[i].name.value for i, flags in enumerate(positional) if flags & ARRAY and i < len(params)
        }
        named = {p.name.value for p in [*params, *callee.params.kwonly_params]}
        names |= {name for name, flags in keywords.items() if flags & ARRAY and name in named}
        if callee.kind != NONE and not filtering(callee):
            if names - callee.array_params:
                callee.array_params |= names
                if id(callee) in self._parent_frames:  # already walked: walk it again
                    self._dirty[id(callee)] = callee
            return
        if names - callee.eager_arrays:
            callee.eager_arrays |= names
            if id(callee) in self._parent_frames:  # already walked: walk it again
                self._dirty[id(callee)] = callee

    def _called_from(self, callee: Unit, frame: Frame) -> None:
        """Note whether traced code that stages its body out calls `callee` (see `_stages`)."""
        if frame.staged:
            if id(callee) not in self._staged_calls:
                self._staged_calls.add(id(callee))
                if id(callee) in self._walked_eager:  # walked as eager code: again, staged
                    self._dirty[id(callee)] = callee
        else:
            self._eager_calls.add(id(callee))

    def _stages(self, unit: Unit, parent: Frame, kind: int) -> bool:
        """Whether JAX stages the unit's body out. Not when only eager vmaps map it (`jax.vmap(f)(xs)` outside
        jit) and no staged code defines or calls it: vmap traces only its mapped arguments, so `jnp.zeros(3)`
        or `split(closed_key)` there are concrete arrays (checked on jax 0.10)."""
        if kind < STRICT:
            return False
        if parent.staged or id(unit) in self._staged_calls:
            return True
        if unit.is_target:
            apps = [app for app in unit.applications if app.kind >= STRICT]
            return not apps or not all(eager(app) for app in apps)
        if unit.kind == NONE:
            return False  # defined in an eager vmap's body, runs there
        # Traced through its callers: eager only when all of them are.
        return id(unit) not in self._eager_calls

    def _called_through(self, call: cst.Call, frame: Frame) -> list[tuple[Unit, bool]]:
        """`jax.grad(f)(...)`, `jax.vmap(f)(...)` (or `g = jax.grad(f)` then `g(...)`): the function the outer
        call runs, when `f` is ours."""
        func = call.func
        if type(func) is cst.Name and (
            type(frame.unit.node) is cst.FunctionDef or type(frame.unit.node) is cst.Lambda
        ):
            func = frame.unit.single_assignment(func.value) or func
        if type(func) is not cst.Call or not func.args or func.args[0].keyword is not None:
            return []
        if self.index.transform_of(func.func, frame.unit) is None:
            return []
        return self.index.resolve_function(func.args[0].value, frame.unit)

    def _pass(
        self,
        callee: Unit,
        bound_self: bool,
        positional: list[int],
        keywords: dict[str, int],
        kind: int,
        context: str,
        starred: bool = False,
        rest: int = 0,
    ) -> None:
        """`callee` is called from code under `kind` with arguments of these flags (`starred`: and with
        `*args`/`**kwargs` too, which may pass any parameter; `rest`: the flags of the parameters not named,
        as another module's transformation of the callee gives them, static annotations aside)."""
        params = positional_params(callee.params)
        if callee.is_method and bound_self:
            params = params[1:]
        passed = [(params[i].name.value, flags) for i, flags in enumerate(positional) if i < len(params)]
        all_names = {p.name.value for p in [*params, *callee.params.kwonly_params]}
        passed += [(name, flags) for name, flags in keywords.items() if name in all_names]
        # What no named parameter takes lands in `*args` (a tuple) or `**kwargs` (a dict): a container that holds
        # the tracers passed there (`log(**kw)` then `self.metrics.update(kw)`).
        star_arg, star_kwarg = callee.params.star_arg, callee.params.star_kwarg
        if isinstance(star_arg, cst.Param) and any(f & TRACED for f in positional[len(params) :]):
            passed.append((star_arg.name.value, HOLDS_TRACED))
        if isinstance(star_kwarg, cst.Param) and any(
            f & TRACED for name, f in keywords.items() if name not in all_names
        ):
            passed.append((star_kwarg.name.value, HOLDS_TRACED))
        if rest:
            named = {name for name, _ in passed}
            passed += [
                (p.name.value, rest)
                for p in [*params, *callee.params.kwonly_params]
                if p.name.value not in named
                and annotation_name(p) not in STATIC_ANNOTATIONS
                # a defaulted parameter not passed keeps its Python default (`binding.transforms.traced_parameters`)
                and (p.default is None or annotation_name(p) in ARRAY_ANNOTATIONS)
                and (not rest & ARRAYS_ONLY or annotation_name(p) in ARRAY_ANNOTATIONS)
            ]
        given = all_names if starred else {name for name, _ in passed}
        if kind > NONE and not given <= callee.passed_params:
            callee.passed_params |= given
            if id(callee) in self._parent_frames:
                self._dirty[id(callee)] = callee
        names: set[str] = set()
        arrays: set[str] = set()
        containers: set[str] = set()
        for name, flags in passed:
            if flags & TRACED:
                names.add(name)
                if flags & ARRAY:
                    arrays.add(name)
            elif flags & HOLDS_TRACED:
                containers.add(name)
        force = bool(containers - callee.container_params or arrays - callee.array_params)
        callee.container_params |= containers
        callee.array_params |= arrays
        if force or names:
            self._mark(callee, names, kind, context, force=force)

    def _mark(self, callee: Unit, names: set[str], kind: int, context: str, force: bool = False) -> None:
        changed = force or not names <= callee.traced_params
        callee.traced_params |= names
        if callee.kind < kind:
            callee.kind = kind
            if not callee.is_target:
                callee.context = f"'{callee.name}' (called from {context})"
            changed = True
        if changed and id(callee) in self._parent_frames:  # already walked: walk it again
            self._dirty[id(callee)] = callee


_NUMBERS = (cst.Integer, cst.Float)
_SELF = ("self", "cls")
# The types `_is_scalar_literal` can answer True for.
_LITERAL_KINDS = frozenset({cst.Integer, cst.Float, cst.UnaryOperation, cst.Name})


def _is_scalar_literal(node: cst.BaseExpression) -> bool:
    """`True`, `3`, `-0.5`: a Python bool, int or float written out."""
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:  # identity: ABCs are slow
        node = node.expression
    return type(node) in _NUMBERS or (type(node) is cst.Name and node.value in ("True", "False"))


def _literal_arguments(
    call: cst.Call, unit: Unit, index: ModuleIndex
) -> tuple[list[bool], tuple[tuple[str, int], ...]] | None:
    """Which arguments of a call are Python scalars (literals, or names bound once to one); None when none."""
    positional: list[bool] = []
    keywords: list[tuple[str, int]] = []
    found = False
    for arg in call.args:
        if arg.star:
            break
        kind = type(arg.value)  # most arguments are neither: decided by their type, with no call
        is_literal = (
            kind in _LITERAL_KINDS
            and _is_scalar_literal(arg.value)
            or kind is cst.Name
            and _names_literal(arg.value, unit, index)
        )
        found = found or is_literal
        if arg.keyword is None:
            positional.append(is_literal)
        elif is_literal:
            keywords.append((arg.keyword.value, LITERAL))
    return (positional, tuple(keywords)) if found else None


def _scalar_dicts(call: cst.Call) -> set[int | str]:
    """The arguments of a call (position, or keyword) that are dict displays of string keys and Python scalar
    literals (`{"temperature": 0.7}`)."""
    found: set[int | str] = set()
    for i, arg in enumerate(call.args):
        if arg.star:
            break
        node = arg.value
        if type(node) is not cst.Dict or not node.elements:
            continue
        if all(
            type(e) is cst.DictElement and type(e.key) is cst.SimpleString and _is_scalar_literal(e.value)
            for e in node.elements
        ):
            found.add(arg.keyword.value if arg.keyword is not None else i)
    return found


def _names_literal(node: cst.BaseExpression, unit: Unit, index: ModuleIndex) -> bool:
    """A name whose only binding (in its function, or at module level) is `name = <scalar literal>`."""
    if type(node) is not cst.Name or node.value in ("True", "False", "None"):
        return False
    owner = unit if unit is not index.root and node.value in unit.local_names else index.root
    value = owner.single_assignment(node.value) or _unpacked_literal(owner, node.value)
    return value is not None and _is_scalar_literal(value)


def _unpacked_literal(unit: Unit, name: str) -> cst.BaseExpression | None:
    """The item bound to `name` by its only binding `m, n = 4, 3` (a tuple display unpacked item by item)."""
    bindings = unit.bindings.get(name)
    node = bindings[0].node if bindings and len(bindings) == 1 else None
    if type(node) is not cst.Assign or len(node.targets) != 1:
        return None
    target, value = node.targets[0].target, node.value
    if type(target) is not cst.Tuple or type(value) is not cst.Tuple:
        return None
    if len(target.elements) != len(value.elements) or any(
        type(e) is not cst.Element for e in (*target.elements, *value.elements)
    ):
        return None
    for element, item in zip(target.elements, value.elements, strict=True):
        if type(element.value) is cst.Name and element.value.value == name:
            return item.value
    return None


def receiver_fields(func: cst.BaseExpression | None, frame: Frame) -> dict[str, int]:
    """`obj.m` (or `obj` itself) with `obj` a name bound to an object known field by field (`values/abstract.py`): the
    fields that hold tracers, with their values' flags."""
    receiver = func.value if type(func) is cst.Attribute else func
    if type(receiver) is not cst.Name:
        return {}
    return traced_fields(frame.lookup_value(receiver.value))


def traced_fields(value: Value) -> dict[str, int]:
    if value.kind not in INSTANCES or value.keys is None or value.items is None:
        return {}
    return {
        key: item.flags & (TRACED | ARRAY | BOOL)
        for key, item in zip(value.keys, value.items, strict=True)
        if item.flags & TRACED
    }


def is_property(unit: Unit) -> bool:
    """A method decorated `@property` (or `functools.cached_property`): reading the attribute runs it."""
    node = unit.node
    return type(node) is cst.FunctionDef and any(
        (type(d.decorator) is cst.Name and d.decorator.value in _PROPERTIES)
        or (type(d.decorator) is cst.Attribute and d.decorator.attr.value in _PROPERTIES)
        for d in node.decorators
    )


_PROPERTIES = frozenset({"property", "cached_property"})


def filtering(unit: Unit) -> bool:
    """Whether a filtering transformation (equinox's `filter_jit`) applies to `unit` itself: it traces the
    arguments that are arrays and keeps every other one static."""
    return any(app.kind == STRICT and app.spec.filtering for app in unit.applications)
