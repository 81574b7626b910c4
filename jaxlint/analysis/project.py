"""Facts that cross module boundaries: which project functions other modules call, and with what.

While a module is walked, calls to functions of *other* project modules are recorded as `CallFact`s (its
summary): calls from traced code with traced arguments, calls from anywhere with Python scalar literals, and
eager calls with JAX arrays (the callee's parameter then holds one: `Unit.eager_arrays`).
The file driver (`lint.py`) names the project's modules (`ProjectIndex`: the linted paths and their package
roots), turns every module's summary into the facts each module receives (`ProjectIndex.incoming`), and lints
again the modules whose incoming facts changed, until nothing changes. The walker of a receiving module applies
them as it applies its own call sites (`flow/walk.py`): a helper called from traced code is traced; a Python scalar
passed to a non-static parameter of a jitted function is a traced scalar there. Methods count as functions
("MLP.__call__"): a flax `model.apply(variables, x)` or `obj.m(x)` on a project class instance records a call
of that method (`objects.instances.module_apply`), with the flags of its instance (`receiver`: a traced equinox Module's
fields are tracers); `jax.jit(model.apply)` and `nn.jit(MLP)` of another module's class (also `jax.grad`,
`eqx.filter_jit` of it) record a call whose `rest` flags every parameter not named static
(`objects.instances.record_transformed`; static positions counted from the end travel as `static_tail`, which the callee
resolves; under equinox's filtering only array-annotated parameters, `ARRAYS_ONLY`; under grad alone only the
differentiated positions, as `positional`). A transformation of another module's function called eagerly
(`jax.jit(step)(x, True)`, `f = jax.jit(step, static_argnums=-1)`; `f(x, True)`) records what the call passes: its
JAX arrays, and the Python scalars `semantics.library.SCALAR_TRACING` traces, are tracers there, an argument of unknown
structure nothing (`flow.calls._foreign_call`). A call of another module's
function passing an instance of a project class (`step(model, x)`, `model = models.Counter()`) records which
argument is of which class (`classes`): a parameter no call of its own module passes takes that class
(`objects.receivers.parameter_class`), and the class's kind is sent to the callee's module.

Classes: a summary names its module's top-level flax.linen Module and flax.nnx classes (and those deriving from
other project modules' classes) and the project names it imports; `ProjectIndex.classes` resolves the kinds through
bases and re-exports and gives each module that calls `init`/`apply` the kinds of the classes it imports, and
each module the static and data fields of the pytree classes it imports (`objects.pytrees.pytree_kind`)
(`ModuleFacts.classes`, read by `objects.instances.module_class_kind`): a key consumed by an imported class's `init`
is consumed (JAX301), and `apply` of an imported class is followed. One file alone (flake8, `lint_source`)
knows nothing of imported classes: they stay unknown, and silent.

What other modules' functions do: a summary also says, per top-level function, which parts of which
parameters it consumes as PRNG keys (`keys/dataflow.py`'s summary, through its own callees: those of its module, and
those of other modules by the facts its module received), whether it surely returns one JAX array
(`summaries/returns.py`) and whether calling it runs a jitted function (module-level `f = jax.jit(g)` too), and which
project names the module calls (`uses`). `ProjectIndex.exports` gives each module the `Export`s of the
functions it calls, kept only where they can change a finding there; a module linted again may export more,
so the driver recomputes them every round, to a fixed point (at most `MAX_ROUNDS`). A caller then consumes
the keys it passes them (JAX301), gets a tracer from one returning an array to traced code (JAX101/JAX102),
and times a jitted one (JAX403), as for a function of its own module; a `@contextmanager` wall-clock timer
(`summaries.timers.context_timer`), or a timer class (`summaries.timers.timer_class`), is exported as one, and a module using it in a
`with` times as one reading a clock.
A module-level host object (`logger = logging.getLogger(...)`, `bar = tqdm(...)`: `Summary.hosts`) is exported
by its kind (`Export.host`) to the modules calling its methods: JAX202 there, as for one of their own. Methods are exported for their keys only (`Cls.m`, also under a subclass
that inherits them from the module's classes): what every override the module defines consumes
(`keys.dataflow.method_keys`); a caller's `uses` names the methods it calls on instances of project classes
(`env = envs.Env()`, `env: envs.Env`) and the functions it calls through `jax.jit(f)(...)`.

Everything here is small frozen data, and imports neither libcst nor the analysis: summaries travel between
worker processes and into the findings cache, which a run answered from the cache reads without them. The
module's own side (`ModuleFacts`, and how its summary is drawn from its index) is `module_facts.py`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping

from ..bounded_read import read_regular_file
from .kinds import ARRAY, HAIKU, HOLDS_TRACED, LITERAL, PYTREE, STATIC_FIELD, TRACED

# Rounds of "lint again the modules whose incoming facts changed": each round carries facts one call deeper.
MAX_ROUNDS = 4


@dataclasses.dataclass(frozen=True, order=True)
class CallFact:
    """One call of another module's function, as the caller sees it."""

    target: str  # the callee's dotted name as the caller's imports resolve it ("model.dropout")
    kind: int  # the caller's transformation kind (transforms.NONE outside traced code)
    context: str  # the caller's context, for messages ("jax.jit-compiled 'step'")
    positional: tuple[int, ...]  # per positional argument up to any `*args`: value flags, or LITERAL
    keywords: tuple[tuple[str, int], ...] = ()
    starred: bool = False  # `*args`/`**kwargs` in the call: any parameter may be passed
    # The flags of every parameter that `positional`/`keywords` do not name: what a transformation of the
    # callee gives them (`jax.jit(model.apply)`, `nn.jit(MLP)` of another module's class: TRACED).
    rest: int = 0
    # The flags of the instance a method runs on (`layer(h)` with `layer` a traced equinox Module: TRACED, its
    # fields read as tracers: `values.flags.traced_self_field`).
    receiver: int = 0
    # The arguments that are instances of a known project class (the keyword, or the position as a decimal
    # string so that facts stay sortable; the class's qualified name as the caller's imports give it):
    # `step(model, x)` with `model = models.Counter(...)`; the callee's parameter is one
    # (`objects.receivers.parameter_class`).
    classes: tuple[tuple[str, str], ...] = ()
    # Static positions counted from the end of the callee's parameters (`jax.jit(model.apply,
    # static_argnums=-1)`): only the callee knows which parameters they name, so `rest` skips them there.
    static_tail: tuple[int, ...] = ()
    # The constructor arguments of the object a method runs on, when the caller built it from a class of the
    # callee's module (`op = qops.Exp(coeff=jnp.cos(t)); op.decomposition()`): (position as a decimal string,
    # or keyword; flags). The callee's module knows which fields they fill (`objects.records.constructor`).
    built: tuple[tuple[str, int], ...] = ()
    # An eager call on every iteration of a loop, of a function that compiles on every call (`FunctionFacts.
    # compiles_per_call`): JAX401 in the callee's module.
    looped: bool = False
    # The caller calls the method again on one object (or in a loop) while it draws from a key the object keeps
    # as built (JAX301 at the draw, in the callee's module); `context` is then the line of that call or loop,
    # which `ProjectIndex.incoming` turns into "main.py:8".
    repeated: bool = False

    def to_json(self) -> list:
        keywords = [list(k) for k in self.keywords]
        positional = list(self.positional)
        return [
            self.target,
            self.kind,
            self.context,
            positional,
            keywords,
            self.starred,
            self.rest,
            self.receiver,
            [list(c) for c in self.classes],
            list(self.static_tail),
            [list(b) for b in self.built],
            self.looped,
            self.repeated,
        ]

    @staticmethod
    def from_json(row: object) -> CallFact | None:
        """The fact a cache entry holds, or None when the row is not what `to_json` writes."""
        if (
            not isinstance(row, list)
            or len(row) != 13
            or type(row[11]) is not bool
            or type(row[12]) is not bool
        ):
            return None
        target, kind, context, positional, keywords, starred, rest, receiver, classes, tail, built = row[:11]
        if not (
            isinstance(built, list)
            and all(
                isinstance(b, list) and len(b) == 2 and isinstance(b[0], str) and type(b[1]) is int
                for b in built
            )
        ):
            return None
        if not (isinstance(tail, list) and all(type(i) is int and i < 0 for i in tail)):
            return None
        if not (
            isinstance(classes, list)
            and all(
                isinstance(c, list) and len(c) == 2 and isinstance(c[0], str) and isinstance(c[1], str)
                for c in classes
            )
        ):
            return None
        if not (
            type(starred) is bool
            and type(rest) is int
            and type(receiver) is int
            and isinstance(target, str)
            and isinstance(kind, int)
            and isinstance(context, str)
            and isinstance(positional, list)
            and all(type(p) is int for p in positional)
            and isinstance(keywords, list)
            and all(
                isinstance(k, list) and len(k) == 2 and isinstance(k[0], str) and type(k[1]) is int
                for k in keywords
            )
        ):
            return None
        pairs = tuple((k, v) for k, v in keywords)
        given = tuple((c[0], c[1]) for c in classes)
        return CallFact(
            target,
            kind,
            context,
            tuple(positional),
            pairs,
            starred,
            rest,
            receiver,
            given,
            tuple(tail),
            tuple((b[0], b[1]) for b in built),
            row[11],
            row[12],
        )

    @property
    def as_given(self) -> bool:
        """A library runs the function under its trace with its own arguments as the caller gave them
        (`NUTS(model)` of another module's `model`: `objects.instances.lifted_classes`): traced code, no tracer passed."""
        return not (self.positional or self.keywords or self.starred or self.rest or self.receiver)

    def static_names(self, positional: tuple[str, ...]) -> tuple[str, ...]:
        """The callee's parameters (`positional`: its positional parameter names, after a bound `self`) that
        `static_tail` names."""
        return tuple(positional[i] for i in self.static_tail if -len(positional) <= i)


@dataclasses.dataclass(frozen=True, order=True)
class FunctionFacts:
    """One top-level function as its own module sees it (before any other module's facts): what a fact must
    add for the module to be worth linting again."""

    name: str
    positional: tuple[str, ...]  # parameter names, in order
    keyword_only: tuple[str, ...]
    kind: int  # transforms.NONE / GRAD / STRICT (HOST: a host callback, never traced)
    traced: tuple[str, ...]  # traced parameters, sorted
    arrays: tuple[str, ...]  # traced parameters known to be arrays, sorted
    jitted: bool  # calling the name runs the jitted function
    passed: tuple[str, ...] = ()  # parameters some traced caller passes (the others keep their defaults)
    # What a caller in another module needs (`Export`): the parts of its parameters it consumes as PRNG keys
    # ((name, index path): ints index tuples, ".attr" strings attributes; `keys.dataflow.Summary`), and whether it
    # surely returns one JAX array (`summaries/returns.py`).
    keys: tuple[tuple[str, tuple[int | str, ...]], ...] = ()
    returns: bool = False
    # A `@contextmanager` that reads a wall clock around its `yield` (`summaries/timers.py`): `with timer(...)` in
    # another module times its block (JAX403).
    timer: bool = False
    # Calling it only dispatches JAX work and returns before the work is done (`summaries.dispatch.dispatches_only`:
    # JAX403 in a module timing it); it runs JAX code that vmap could run (`summaries.dispatch.runs_jax`: JAX404).
    dispatches: bool = False
    runs_jax: bool = False
    # Parameters it hands to a transformation, with the transformations (`Unit.hands_on`): a caller's argument
    # there is traced by them.
    hands_on: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # It answers the array namespace of its arguments, `jax.numpy` for JAX arrays (`summaries/namespaces.py`).
    namespace: bool = False
    # Static parameters by name (`summaries.jit.static_exports`): of the function itself when jitted
    # (`@partial(jax.jit, static_argnums=1)`), and of the jitted function it returns (a factory's
    # `return run` of a nested `@partial(jax.jit, static_argnums=...)` def), with that one's positional
    # parameters: JAX402 in a caller passing them something unhashable.
    static: tuple[str, ...] = ()
    made_positional: tuple[str, ...] = ()
    made_static: tuple[str, ...] = ()
    # Called eagerly it runs lax control flow on a function it makes anew (`summaries.eager_flow`): every call
    # compiles again, which matters where a loop calls it (`CallFact.looped`).
    compiles_per_call: bool = False
    # The module's class every `return` builds an instance of (`summaries.returns.returned_class`): a caller
    # reading a property or calling a method of the result runs that class's method.
    returns_class: str = ""
    # A method drawing from a key its object keeps that returns the advanced key (`keys.held_draws.hands_back`):
    # a caller calling it again on the old object, dropping what it returned, reuses the key at its call.
    hands_back: bool = False

    def to_json(self) -> list:
        return [
            self.name,
            list(self.positional),
            list(self.keyword_only),
            self.kind,
            list(self.traced),
            list(self.arrays),
            self.jitted,
            list(self.passed),
            [[name, list(path)] for name, path in self.keys],
            self.returns,
            self.timer,
            self.dispatches,
            self.runs_jax,
            [[name, list(chain)] for name, chain in self.hands_on],
            self.namespace,
            list(self.static),
            list(self.made_positional),
            list(self.made_static),
            self.compiles_per_call,
            self.returns_class,
            self.hands_back,
        ]

    @staticmethod
    def from_json(row: object) -> FunctionFacts | None:
        if (
            not isinstance(row, list)
            or len(row) != 21
            or type(row[18]) is not bool
            or type(row[20]) is not bool
        ):
            return None
        name, positional, keyword_only, kind, traced, arrays, jitted, passed, keys, returns, timer = row[:11]
        dispatches, runs_jax, hands_on, namespace, static, made_positional, made_static = row[11:18]
        returns_class = row[19]
        lists = (positional, keyword_only, traced, arrays, passed, static, made_positional, made_static)
        if not (
            isinstance(name, str)
            and type(kind) is int
            and type(jitted) is bool
            and type(returns) is bool
            and type(timer) is bool
            and type(dispatches) is bool
            and type(runs_jax) is bool
            and type(namespace) is bool
            and isinstance(returns_class, str)
            and all(isinstance(names, list) and all(isinstance(n, str) for n in names) for names in lists)
            and isinstance(keys, list)
            and all(
                isinstance(k, list)
                and len(k) == 2
                and isinstance(k[0], str)
                and isinstance(k[1], list)
                and all(type(i) in (int, str) for i in k[1])
                for k in keys
            )
            and isinstance(hands_on, list)
            and all(
                isinstance(h, list)
                and len(h) == 2
                and isinstance(h[0], str)
                and isinstance(h[1], list)
                and all(isinstance(t, str) for t in h[1])
                for h in hands_on
            )
        ):
            return None
        return FunctionFacts(
            name,
            tuple(positional),
            tuple(keyword_only),
            kind,
            tuple(traced),
            tuple(arrays),
            jitted,
            tuple(passed),
            tuple((k[0], tuple(k[1])) for k in keys),
            returns,
            timer,
            dispatches,
            runs_jax,
            tuple((h[0], tuple(h[1])) for h in hands_on),
            namespace,
            tuple(static),
            tuple(made_positional),
            tuple(made_static),
            row[18],
            returns_class,
            row[20],
        )

    def export(self) -> Export | None:
        """What a caller in another module needs to know of this function, None when nothing."""
        if not (
            self.keys
            or self.returns
            or self.jitted
            or self.timer
            or self.dispatches
            or self.runs_jax
            or self.hands_on
            or self.namespace
            or self.static
            or self.made_static
            or self.compiles_per_call
            or self.returns_class
            or self.hands_back
        ):
            return None
        return Export(
            self.positional,
            self.keyword_only,
            self.keys,
            self.returns,
            self.jitted,
            self.timer,
            dispatches=self.dispatches,
            runs_jax=self.runs_jax,
            hands_on=self.hands_on,
            namespace=self.namespace,
            static=self.static,
            made_positional=self.made_positional,
            made_static=self.made_static,
            compiles_per_call=self.compiles_per_call,
            returns_class=self.returns_class,
            hands_back=self.hands_back,
        )

    def adds(self, fact: CallFact) -> bool:
        """Whether `fact` could change what the walk of this function finds."""
        if fact.repeated:
            return True  # its draws from a key the object keeps are repeated (JAX301 there)
        passed = list(zip(self.positional, fact.positional, strict=False))
        known = set(self.positional) | set(self.keyword_only)
        passed += [(name, flags) for name, flags in fact.keywords if name in known]
        if fact.kind > 0 and self.kind > 0 and (fact.starred or {n for n, _ in passed} - set(self.passed)):
            return True  # a parameter a guard reads may no longer hold its default
        for name, flags in passed:
            if flags & LITERAL and self.jitted and name not in self.arrays:
                return True
            if fact.kind == 0 and self.kind == 0 and flags & ARRAY:
                return True  # an eager caller passes a JAX array (its own walk saw none: not in its facts)
            if (
                fact.kind > 0
                and flags & TRACED
                and (name not in self.traced or flags & ARRAY and name not in self.arrays)
            ):
                return True
            if fact.kind > 0 and flags & HOLDS_TRACED and name not in self.traced:
                return True
        if fact.looped and self.compiles_per_call:
            return True  # a loop of another module calls it: each call compiles again (JAX401)
        if fact.classes and (self.kind > 0 or "." in self.name):
            # a transformed function's parameter holds an instance of a known class; a method's too (what
            # `dist.sample(key)` on it consumes: JAX301)
            return True
        if fact.kind > 0 and fact.receiver & TRACED:
            return True  # the method's reads of its instance's fields become tracers
        if fact.kind > 0 and any(flags & TRACED for _, flags in fact.built):
            return True  # it runs on an object built from tracers: its fields hold them
        if fact.kind > 0 and fact.rest & TRACED:
            named = {name for name, _ in passed} | set(fact.static_names(self.positional))
            if known - named - set(self.traced):
                return True
        return (
            fact.kind > self.kind
            and self.kind >= 0
            and (
                fact.as_given
                or bool(fact.rest & TRACED)
                or any(f & (TRACED | HOLDS_TRACED) for _, f in passed)
            )
        )


@dataclasses.dataclass(frozen=True, order=True)
class Export:
    """Another project module's function as its callers need it (`ModuleFacts.exports`, by the qualified
    name the caller's imports give it): which parts of which parameters it consumes as PRNG keys (JAX301 in
    the caller), whether it returns one JAX array (a tracer when called from traced code with tracers:
    JAX101/JAX102 in the caller), whether calling it runs a jitted function (JAX403's timed regions)."""

    positional: tuple[str, ...]
    keyword_only: tuple[str, ...]
    keys: tuple[tuple[str, tuple[int | str, ...]], ...] = ()
    returns: bool = False
    jitted: bool = False
    timer: bool = False  # a wall-clock timer context manager (`FunctionFacts.timer`)
    # A module-level host object rather than a function (`Summary.hosts`): its kind ("logger", "progress bar":
    # `semantics.library.HOST_OBJECTS` says what its methods do under a transformation, JAX202).
    host: str = ""
    dispatches: bool = False  # calling it only dispatches JAX work (`FunctionFacts.dispatches`)
    runs_jax: bool = False  # it runs JAX code that vmap could run (`FunctionFacts.runs_jax`)
    hands_on: tuple[tuple[str, tuple[str, ...]], ...] = ()  # `FunctionFacts.hands_on`
    namespace: bool = False  # it answers the array namespace of its arguments (`FunctionFacts.namespace`)
    static: tuple[str, ...] = ()  # `FunctionFacts.static`: its static parameters, when jitted
    made_positional: tuple[str, ...] = ()  # the positional parameters of the jitted function it returns
    made_static: tuple[str, ...] = ()  # ... and that one's static parameters (`FunctionFacts.made_static`)
    compiles_per_call: bool = False  # `FunctionFacts.compiles_per_call`
    returns_class: str = ""  # `FunctionFacts.returns_class`
    hands_back: bool = False  # `FunctionFacts.hands_back`


@dataclasses.dataclass(frozen=True, order=True)
class ClassFacts:
    """One top-level class as its own module sees it: its kind when known there (`objects.instances.LINEN`), else the
    classes of other project modules it derives from, whose kinds the project index looks up."""

    name: str
    kind: str
    bases: tuple[str, ...] = ()  # qualified names, as the module's imports resolve them

    def to_json(self) -> list:
        return [self.name, self.kind, list(self.bases)]

    @staticmethod
    def from_json(row: object) -> ClassFacts | None:
        if not (isinstance(row, list) and len(row) == 3 and all(isinstance(v, str) for v in row[:2])):
            return None
        bases = row[2]
        if not isinstance(bases, list) or not all(isinstance(b, str) for b in bases):
            return None
        return ClassFacts(row[0], row[1], tuple(bases))


@dataclasses.dataclass(frozen=True)
class Summary:
    """What one module tells the others: its calls into them, its own top-level functions and classes, the
    project names it imports (local name, qualified name: re-exports are followed through them), the
    imported classes whose kinds matter to it (`wants`: it calls `init`/`apply` on their instances), the
    project names it calls (`uses`: what other modules' `Export`s it may need) and whether it reads a clock
    (`times`: the jitted functions it calls matter to JAX403) and its module-level host objects (`hosts`: name,
    kind, as `logger = logging.getLogger(__name__)` is a "logger")."""

    calls: tuple[CallFact, ...] = ()
    functions: tuple[FunctionFacts, ...] = ()
    classes: tuple[ClassFacts, ...] = ()
    imports: tuple[tuple[str, str], ...] = ()
    wants: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    times: bool = False
    hosts: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict:
        return {
            "calls": [c.to_json() for c in self.calls],
            "functions": [f.to_json() for f in self.functions],
            "classes": [c.to_json() for c in self.classes],
            "imports": [list(pair) for pair in self.imports],
            "wants": list(self.wants),
            "uses": list(self.uses),
            "times": self.times,
            "hosts": [list(pair) for pair in self.hosts],
        }

    @staticmethod
    def from_json(document: object) -> Summary | None:
        if not isinstance(document, dict):
            return None
        calls, functions = document.get("calls"), document.get("functions")
        classes, imports = document.get("classes"), document.get("imports")
        wants, uses, times = document.get("wants"), document.get("uses"), document.get("times")
        hosts = document.get("hosts")
        if type(times) is not bool or not all(
            isinstance(rows, list) for rows in (calls, functions, classes, imports, wants, uses, hosts)
        ):
            return None
        assert isinstance(calls, list) and isinstance(functions, list)  # for the type checker
        assert isinstance(classes, list) and isinstance(imports, list) and isinstance(wants, list)
        assert isinstance(uses, list) and isinstance(hosts, list)
        if not all(isinstance(w, str) for w in [*wants, *uses]) or not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, str) for v in pair)
            for pair in [*imports, *hosts]
        ):
            return None
        parsed_calls = tuple(CallFact.from_json(row) for row in calls)
        parsed_functions = tuple(FunctionFacts.from_json(row) for row in functions)
        parsed_classes = tuple(ClassFacts.from_json(row) for row in classes)
        if None in parsed_calls or None in parsed_functions or None in parsed_classes:
            return None
        return Summary(
            parsed_calls,  # type: ignore[arg-type]
            parsed_functions,  # type: ignore[arg-type]
            parsed_classes,  # type: ignore[arg-type]
            tuple((local, qualname) for local, qualname in imports),
            tuple(wants),
            tuple(uses),
            times,
            tuple((name, kind) for name, kind in hosts),
        )


# What one module receives: its top-level function name -> the facts other modules give it, sorted.
Incoming = Mapping[str, tuple[CallFact, ...]]


# Packages that are never the linted project: calls into them are not recorded.
LIBRARIES = frozenset(
    "builtins jax jaxlib numpy scipy flax equinox optax chex haiku jaxtyping orbax einops torch tensorflow "
    "functools itertools collections dataclasses typing math os sys time random re json logging abc".split()
)


def library_heads(heads: Iterable[str]) -> frozenset[str]:
    """The project's top-level names that are also library names (linting flax itself, say)."""
    return frozenset(heads) & LIBRARIES


def incoming_key(
    incoming: Incoming, classes: Mapping[str, str] | None = None, exports: Mapping[str, Export] | None = None
) -> str:
    """A stable text of the facts a module was linted with (for the findings cache key)."""
    calls = repr(sorted((name, facts) for name, facts in incoming.items())) if incoming else ""
    calls += repr(sorted(classes.items())) if classes else ""
    return calls + (repr(sorted(exports.items())) if exports else "")


def _pytree_fact(kind: str) -> bool:
    """A kind the pytree model of an importing module reads: a pytree class, a static field maker."""
    return kind.startswith(PYTREE + ":") or kind == STATIC_FIELD


def inherit_pytree(kind: str, bases: Iterable[str]) -> str:
    """A pytree class's kind ("pytree:<static>:<data>[:plain]", `objects.pytrees.pytree_kind`) with the static fields
    (class attributes) of its bases' pytree kinds added, except those it makes data."""
    parts = kind.split(":")
    static, data = ({f for f in part.split(",") if f} for part in parts[1:3])
    if static == {"*"}:
        return kind
    for base in bases:
        base_parts = base.split(":")
        if base_parts[0] == PYTREE and len(base_parts) >= 3 and base_parts[1] != "*":
            static |= {f for f in base_parts[1].split(",") if f} - data
    return ":".join([parts[0], ",".join(sorted(static)), ",".join(sorted(data)), *parts[3:]])


def module_name(path: str) -> str | None:
    """`pkg/sub/mod.py` -> "pkg.sub.mod" when `pkg` and `sub` hold `__init__.py` (the package root is the
    first folder up without one); a lone `train.py` is "train". None for notebooks and non-identifiers."""
    if not path.endswith(".py"):
        return None
    folder, file = os.path.split(os.path.abspath(path))
    parts = [file[:-3]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        if not package:
            break
        parts.append(package)
    if parts[0] == "__init__":
        parts.pop(0)
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(reversed(parts))


def import_root(path: str) -> str:
    """The folder a module's dotted name starts from (`module_name`): the first folder up without an
    `__init__.py`, the one that must be on `sys.path` to import it."""
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder


def package_name(path: str) -> str | None:
    """The package a module's relative imports start from: "pkg.sub" for `pkg/sub/mod.py` and for
    `pkg/sub/__init__.py` (a package is its own); None for a module outside any package."""
    name = module_name(path)
    if name is None:
        return None
    if os.path.basename(path) == "__init__.py":
        return name
    return name.rpartition(".")[0] or None


_INIT_LIMIT = 1 << 20  # a package `__init__.py` larger than this is not read
_INIT_MEMO: dict[tuple[str, int, int], bool] = {}


def packages_enable_x64(path: str) -> bool:
    """Whether the `__init__.py` of a package enclosing the module at `path` mentions enabling x64 (apax's
    `__init__.py` runs `jax.config.update("jax_enable_x64", True)`): importing the module runs its packages'
    `__init__.py` first. Up to the package root, as `module_name` walks; a file that does not read or
    parse says nothing."""
    if not path.endswith(".py"):
        return False
    own = os.path.abspath(path)
    folder = os.path.dirname(own)
    while True:
        init = os.path.join(folder, "__init__.py")
        if not os.path.isfile(init):
            return False
        if init != own and _init_mentions_x64(init):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _init_mentions_x64(init: str) -> bool:
    try:
        info = os.stat(init)
    except OSError:
        return False
    memo_key = (init, info.st_mtime_ns, info.st_size)
    found = _INIT_MEMO.get(memo_key)
    if found is None:
        data = read_regular_file(init, _INIT_LIMIT)
        text = data.decode("utf-8", "replace") if data is not None else ""
        found = False
        if "x64" in text.lower():
            import libcst as cst

            from .values.x64 import mentions_x64

            try:
                found = mentions_x64(cst.parse_module(text))
            except Exception:  # bad input never crashes: a package that does not parse says nothing
                found = False
        _INIT_MEMO[memo_key] = found
    return found


class ProjectIndex:
    """The linted modules by dotted name, and the facts their summaries give each other."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.modules: dict[str, str] = {}  # dotted name -> path
        self.names: dict[str, str] = {}  # path -> dotted name
        ambiguous: set[str] = set()
        for path in paths:
            name = module_name(path)
            if name is None:
                continue
            if name in self.modules:
                ambiguous.add(name)  # two roots give one name: which one an import means is unknown
            self.modules[name] = path
            self.names[path] = name
        # A name two roots give (`examples/a/utils.py`, `examples/b/utils.py`; a bad/ and a fixed/ copy) is
        # resolved only where Python's own search settles it: from a module under the same import root (the
        # folder a script runs from is first on `sys.path`); `exports` reads these through `_module_of`.
        self.rooted: dict[tuple[str, str], str] = {}  # (import root, dotted name) -> path, ambiguous names
        for path, name in self.names.items():
            if name in ambiguous:
                self.rooted[(import_root(path), name)] = path
        for name in ambiguous:
            self.modules.pop(name)
        self.all_names = dict(self.names)  # path -> dotted name, ambiguous ones included
        self.names = {path: name for path, name in self.names.items() if name in self.modules}
        self.heads = frozenset(name.partition(".")[0] for name in self.modules)

    def resolve(self, target: str) -> tuple[str, str] | None:
        """ "pkg.model.dropout" -> (path of pkg/model.py, "dropout"): a top-level function of a project module;
        "pkg.model.MLP.__call__" -> (its path, "MLP.__call__"): a method of a top-level class."""
        module, _, function = target.rpartition(".")
        if module in self.modules and function:
            return self.modules[module], function
        module, _, cls = module.rpartition(".")
        if module in self.modules and cls and function:
            return self.modules[module], f"{cls}.{function}"
        return None

    def defined(self, target: str, summaries: Mapping[str, Summary]) -> tuple[str, str] | None:
        """`resolve`, then through re-exports (`from .utils import rotate` in a package's `__init__.py`): the
        module that defines the function and its name there."""
        resolved = self.resolve(target)
        for _ in range(8):
            if resolved is None or resolved[0] not in summaries:
                return resolved
            aliases = dict(summaries[resolved[0]].imports)
            alias = aliases.get(resolved[1])
            cls, dot, method = resolved[1].partition(".")
            if alias is None and dot and cls in aliases:  # a method of a re-exported class
                alias = f"{aliases[cls]}.{method}"
            if alias is None:
                return resolved
            resolved = self.resolve(alias)
        return resolved

    def silent_callees(self, summaries: Mapping[str, Summary]) -> frozenset[str]:
        """The project modules that analysed modules call from traced code (the calls their summaries record)
        (re-exports followed) but that left no summary: skipped for naming no JAX library (the engine's
        prefilter), they are analysed after all (`ModuleFacts.imported`), since a NumPy-only helper called from
        jitted code is traced too. Modules called only eagerly are left alone: no fact another module gives
        could change a finding in a module without JAX."""
        found: set[str] = set()
        for caller, summary in summaries.items():
            for fact in summary.calls:
                resolved = self.defined(fact.target, summaries)
                if resolved is not None and resolved[0] != caller and summaries.get(resolved[0]) == Summary():
                    found.add(resolved[0])
        return frozenset(found)

    def incoming(
        self,
        summaries: Mapping[str, Summary],
        own: Mapping[str, Summary] | None = None,
        silent: frozenset[str] = frozenset(),
    ) -> dict[str, dict[str, tuple[CallFact, ...]]]:
        """path -> function name -> the facts the other modules' summaries give it. With `own` (each module's
        summary linted on its own), only facts that could change a finding are kept: the function exists, and
        the fact adds a traced parameter, an array, a traced scalar of a jitted function or a stricter kind.
        A call reaches a function through package re-exports (`from pkg import helper`, re-exported by
        `pkg/__init__.py`), except into a package that is itself a known library (`LIBRARIES`: linting flax,
        its own callers' facts would reach nnx internals, through `nnx.merge`, that the model reads less surely
        than a project's code), where only `silent` modules (`silent_callees`) are reached that way."""
        tables = {
            path: {f.name: f for f in summary.functions} for path, summary in (own or summaries).items()
        }
        found: dict[str, dict[str, set[CallFact]]] = {}
        for caller, summary in summaries.items():
            origin = self.names.get(caller, os.path.basename(caller))
            for fact in summary.calls:
                resolved = self.resolve(fact.target)
                if resolved is not None:  # through re-exports (above)
                    defined = self.defined(fact.target, summaries)
                    if defined is not None and (
                        defined[0] in silent or fact.target.partition(".")[0] not in LIBRARIES
                    ):
                        resolved = defined
                if resolved is None or resolved[0] == caller:
                    continue
                path, function = resolved
                callee = tables.get(path, {}).get(function)
                if callee is None or not callee.adds(fact):
                    continue
                if fact.repeated:  # "main.py:8": the file and line of the repeated call
                    file = origin.replace(".", "/") + (
                        "/__init__.py" if caller.endswith("__init__.py") else ".py"
                    )
                    context = f"{file if caller in self.names else os.path.basename(caller)}:{fact.context}"
                else:
                    context = f"{fact.context} in {origin}"
                if fact.classes:  # a class of the callee's own module, by its name there
                    fact = dataclasses.replace(
                        fact, classes=self._local_classes(fact.classes, path, summaries)
                    )
                fact = dataclasses.replace(fact, target=function, context=context)
                found.setdefault(path, {}).setdefault(function, set()).add(fact)
        return {
            path: {name: tuple(sorted(facts)) for name, facts in sorted(functions.items())}
            for path, functions in found.items()
        }

    def _local_classes(
        self, classes: tuple[tuple[str, str], ...], path: str, summaries: Mapping[str, Summary]
    ) -> tuple[tuple[str, str], ...]:
        """`CallFact.classes` as the module at `path` names them: its own top-level classes by their name."""
        out = []
        for key, qualname in classes:
            defined = self.defined(qualname, summaries)
            local = defined is not None and defined[0] == path and "." not in defined[1]
            out.append((key, defined[1] if local and defined is not None else qualname))
        return tuple(out)

    def classes(self, summaries: Mapping[str, Summary]) -> dict[str, dict[str, str]]:
        """path -> the kinds of the project classes whose instances the module calls `init`/`apply` on (by the
        qualified name its imports give them: `from model import MLP` and `import model; model.MLP()` both
        "model.MLP"). A class's kind comes from its own module, else from its project bases; names a module
        re-exports (`from .model import MLP` in a package's `__init__.py`) are followed."""
        by_module = {self.names[path]: s for path, s in summaries.items() if path in self.names}
        classes = {m: {c.name: c for c in s.classes} for m, s in by_module.items()}
        aliases = {m: dict(s.imports) for m, s in by_module.items()}
        memo: dict[str, str] = {}

        def kind_of(qualname: str, depth: int = 0) -> str:
            if qualname in memo:
                return memo[qualname]
            memo[qualname] = ""  # a cycle of bases or re-exports finds nothing
            module, _, name = qualname.rpartition(".")
            found = ""
            if depth < 8 and module in classes:
                cls = classes[module].get(name)
                if cls is not None and cls.kind.startswith(HAIKU + ":"):  # its function, by qualified name
                    leading, _, function = cls.kind[len(HAIKU) + 1 :].partition(":")
                    found = f"{HAIKU}:{leading}:{module}.{function}"
                elif cls is not None and cls.kind.startswith(PYTREE + ":"):
                    # A pytree's class attributes may be declared on a base in another module (jaxlie's
                    # `tangent_dim: ClassVar[int]`): they are static on the subclass too.
                    found = inherit_pytree(cls.kind, [kind_of(b, depth + 1) for b in cls.bases])
                elif cls is not None:
                    found = cls.kind or next((k for k in (kind_of(b, depth + 1) for b in cls.bases) if k), "")
                elif name in aliases[module]:
                    found = kind_of(aliases[module][name], depth + 1)
            memo[qualname] = found
            return found

        given: dict[
            str, set[str]
        ] = {}  # path -> the classes of the instances other modules pass its functions
        for caller, summary in summaries.items():
            for fact in summary.calls:
                resolved = self.defined(fact.target, summaries) if fact.classes else None
                if resolved is not None and resolved[0] != caller:
                    given.setdefault(resolved[0], set()).update(c for _, c in fact.classes)
        out: dict[str, dict[str, str]] = {}
        for path, summary in summaries.items():
            table = {q: kind for q in {*summary.wants, *given.get(path, ())} if (kind := kind_of(q))}
            # The pytree classes it imports: their static fields are Python values in its traced code.
            # ... and the static field makers it imports (kind STATIC_FIELD).
            table.update((q, kind) for _, q in summary.imports if _pytree_fact(kind := kind_of(q)))
            # ... and those of the project modules it imports whole, read as attributes (`jaxlie.SO2`).
            for _, q in summary.imports:
                names = (*classes.get(q, ()), *aliases.get(q, ())) if q in classes else ()
                table.update((f"{q}.{n}", kind) for n in names if _pytree_fact(kind := kind_of(f"{q}.{n}")))
            if table:
                out[path] = dict(sorted(table.items()))
        return out

    def _module_of(self, module: str, root: str) -> str | None:
        """The path of the project module a dotted name means to a module under the import root `root`: the
        only module of that name, else (two roots give it) the one under the same root, else None."""
        found = self.modules.get(module)
        return found if found is not None else self.rooted.get((root, module))

    def exports(self, summaries: Mapping[str, Summary]) -> dict[str, dict[str, Export]]:
        """path -> the `Export`s of the other modules' functions that the module calls (by the qualified name
        its imports give them; re-exports followed), kept only where they could change a finding there: keys
        consumed (anywhere), an array returned (only to a call from traced code with tracers: `calls`), a
        jitted function (only to a module that reads a clock), static parameters (its own, or those of the
        jitted function it returns)."""
        functions = {p: {f.name: f for f in s.functions} for p, s in summaries.items()}
        aliases = {p: dict(s.imports) for p, s in summaries.items()}
        hosts = {p: dict(s.hosts) for p, s in summaries.items() if s.hosts}

        def host_of(qualname: str, root: str, depth: int = 0) -> str:
            """The kind of host object a module-level name is ("utils.logger": "logger"), re-exports followed."""
            module, _, name = qualname.rpartition(".")
            path = self._module_of(module, root)
            if depth > 8 or path not in functions:
                return ""
            if name in hosts.get(path, {}):
                return hosts[path][name]
            return host_of(aliases[path][name], root, depth + 1) if name in aliases[path] else ""

        def export_of(qualname: str, root: str, depth: int = 0) -> Export | None:
            module, _, name = qualname.rpartition(".")
            if depth > 8:
                return None
            path = self._module_of(module, root)
            if path not in functions:  # "envs.Env.reset": a method of a class of module "envs"
                module, _, cls = module.rpartition(".")
                path = self._module_of(module, root)
                if path not in functions or not cls:
                    return None
                facts = functions[path].get(f"{cls}.{name}")
                if facts is not None:
                    # methods export only the keys they consume, and whether each call compiles
                    return facts.export() if facts.keys or facts.compiles_per_call else None
                if cls in aliases[path]:
                    return export_of(f"{aliases[path][cls]}.{name}", root, depth + 1)
                return None
            facts = functions[path].get(name)
            if facts is not None:
                return facts.export()
            if name in aliases[path]:
                return export_of(aliases[path][name], root, depth + 1)
            return None

        out: dict[str, dict[str, Export]] = {}
        for path, summary in summaries.items():
            own = self.all_names.get(path)
            root = import_root(path)
            found_all = {}
            for qualname in summary.uses:
                if qualname.rpartition(".")[0] == own or own is not None and qualname.startswith(f"{own}."):
                    continue
                found = export_of(qualname, root)
                if found is not None:
                    found_all[qualname] = found
                # `logger.info(...)` of `from utils import logger`: "utils.logger.info" names a host object's method
                holder = qualname.rpartition(".")[0]
                if kind := host_of(holder, root):
                    found_all[holder] = Export((), (), host=kind)
            # A module timing with another module's timer times as one reading a clock does.
            times = summary.times or any(found.timer for found in found_all.values())
            table = {}
            for qualname, found in found_all.items():
                # what a helper returns matters wherever it is called: a JAX array in eager code, a tracer in
                # traced code (`values.flags._call` decides by the caller's scope)
                found = dataclasses.replace(
                    found, jitted=found.jitted and times, dispatches=found.dispatches and times
                )
                if (
                    found.keys
                    or found.returns
                    or found.jitted
                    or found.timer
                    or found.host
                    or found.dispatches
                    or found.runs_jax
                    or found.hands_on
                    or found.namespace
                    or found.static
                    or found.made_static
                    or found.compiles_per_call
                    or found.returns_class
                ):
                    table[qualname] = found
            if table:
                out[path] = dict(sorted(table.items()))
        return out
