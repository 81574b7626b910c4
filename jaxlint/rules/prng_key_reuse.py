"""JAX301 prng-key-reuse: the rule on top of the key dataflow in `jaxlint.analysis.keys.dataflow`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..analysis import RuleContext, Unit, closed_stream, defaulted_key, uses_keys
from ..syntax import walk
from .base import Rule

if TYPE_CHECKING:  # the dataflow itself loads only for a module that draws random numbers
    from ..analysis import KeyAnalysis, KeyReuse

_LOOP_WORDS = {
    cst.For: "for loop",
    cst.While: "while loop",
    cst.ListComp: "list comprehension",
    cst.SetComp: "set comprehension",
    cst.DictComp: "dict comprehension",
    cst.GeneratorExp: "generator expression",
}


class PrngKeyReuse(Rule):
    code = "JAX301"
    name = "prng-key-reuse"
    quotes_lines = True
    summary = "A PRNG key consumed twice (two samplers, a loop, or after `split`) without a fresh split"
    confirmable = True
    doc = """
## What it does
Follows every PRNG key through each function, along every execution path, and flags the second
consumption of the same key: two `jax.random` samplers given the same key; a key sampled inside a loop
(Python `for`/`while`, a comprehension, or a `lax.scan`/`fori_loop`/`while_loop`/`map` body) without being
replaced in that body; a parent key used after `jax.random.split(key)` (or split after it was used); the
same element of one split used twice (`k = split(key, 3)`; `k[0]` twice; also `split(key)[0]` written twice,
while `split(key)[0]` and `split(key)[1]` are two different keys); a key given to a function of the same module (or, in project mode, of another project module) that consumes it, then consumed again, also
through `jax.jit(f)(key)`/`jax.vmap(f)(keys)`. Jitted or not. Methods count as such functions:
`self.m(key)`, and `env.reset(key)` on an object of a known class (built by `Env(...)` right there or bound
once to it, or a parameter annotated with the class; in project mode also a class of another project module).
Where the object may be of a subclass (`self`, an annotated parameter), the call consumes only what the
class's method *and every override of it in that module* consume: an abstract base method (gymnax's
`reset_env`) or an override that draws nothing makes the call draw nothing (overrides in other modules are not
known). Objects of unknown class (`self.env.reset(key)`, a library's `make_env()`), `super().m(key)`
and properties consume nothing. Also: a key closed over (or bound by
`partial`) by a function mapped with `vmap` or a `jax.tree.map` callback and drawn noise from (every element or
leaf gets the same noise; `permutation`, `choice`, `randint`, `bernoulli` share one key on purpose to keep a
batch aligned), and a key made from a literal seed (`jax.random.key(0)`) inside a function that runs repeatedly (a lax
loop body, a mapped function, or a function that a loop calls; not in tests, where fixed seeds are deliberate).

`jax.random.split` consumes its key and returns fresh ones; `fold_in(key, data)`, `clone`, `key_data`,
`wrap_key_data` and storing a key in a pytree do not consume it (but `fold_in(key, 0)` twice derives the same
key twice). One use in each branch of an `if` is fine; `return`, `break`, `continue` and `try` are followed.
A reuse on *some* path is flagged (consumed in one branch and again after it; a helper that consumes its
key only when a flag is set; a helper that draws from its key only when another argument `is None` consumes it
at a call passing `None` or the default `None`, and not at one passing a literal of another kind). Keys
re-split on every iteration of a loop (`self.key, sub = split(self.key)`) are fresh after it, also when held in
an attribute or dict entry. Keys held in parameters, attributes (`self.key`) and dict entries are tracked
only while no unknown code could have replaced them. When a project is linted (the command, `lint_paths`), a
function of another of its modules consumes what its own module's analysis says it does (through its own
callees too); one file alone (flake8, `lint_source`), library functions and methods of unknown objects are
assumed not to consume the keys they get, except those the library table (`analysis/semantics/library.py`) names, each
checked by running it: a numpyro, distrax or tfp-on-jax distribution's `sample(key)` / `sample(seed=key)`,
`numpyro.handlers.seed(model, key)` (the same key given to `seed` twice replays on purpose, as for a model and
its guide), `nnx.Rngs(key)` (it draws `split(key)[n]` on its n-th call: two Rngs from one key, or the key also
split, repeat its keys; one Rngs drawn from many times does not), equinox layers' `key=`, a haiku
transformation's `apply(params, rng, x)` (what `hk.next_rng_key()` draws from), and flax's
`apply(..., rngs={"dropout": key})`, which draws from a `fold_in` of the key per collection name (twice with
one key and one name is reuse; the key's own draws are not; `self.make_rng` draws a fresh key per call). A key
an object keeps as built (`self.key` set only by its constructor, or a Module field, and assigned nowhere else
in the module; also a key rebuilt on each call from a seed it keeps so, `jax.random.key(self._seed)`, and a key
kept by an object in such a field, `self.detector.sample(x)` with `detector: Detector` or `self.detector =
Detector(key)`) is the same key on every call of a method that draws from it: two calls on one object, or one
in a loop, draw the same numbers. The finding is at the draw in the method (where the fix goes), its message
naming the repeated call: its line, or its file and line when another module of the project calls it (project
mode); where the draw is not found it is at the repeated call. A method that splits the kept key and returns
the advanced one (`return eqx.tree_at(lambda m: m.key, self, new_key), batch`) is a functional update and
right: a caller calling it again on the old object, dropping the one returned, is reported at its call. An
`eqx.nn.Dropout` called with `key=` consumes
it; a parameter whose class every caller shows (`dist.sample(key, n)` with `dist` a `Normal` built by the
caller, also in another module) runs that class's method. More ways a key is fixed once and drawn from again: a key given to a factory
and closed over by the compiled function it returns (flagged at the draw); a method kept compiled as
a bound method (`self._loss = jax.jit(self._elbo)`, made once) that draws from `self.rng` while another method
advances `self.rng`: the compiled function keeps the key it was traced with (flagged at the draw); a dataclass
field defaulting to a key from a literal seed (`default_factory=lambda: jax.random.PRNGKey(0)`) left out of an
instance built by a function that consumes a key it is given, while the module draws from that field (flagged at
the construction); a flax.nnx object that draws from an Rngs stream it holds (`nnx.Dropout(..., rngs=...)`, an
`nnx.Rngs` called) closed over by a plain `jax.jit` function (flax 0.12 raises TraceContextError; earlier flax
drew the same mask on every call). A library object drawn from a key as noise (diffrax's `VirtualBrownianTree`,
`UnsafeBrownianPath`) counts as a sampler does in a mapped function. A key given to a `vmap` with `in_axes=None` is the same key for every
element; where `in_axes` maps one argument alone, that argument is never None (a map refuses a call with
nothing to map), so a draw under `if u is None:` on it never runs. `jax.grad` and its kin, equinox's
`filter_grad`/`filter_value_and_grad` and nnx's `grad`/`value_and_grad` run the function once with the
arguments given: a key handed to the gradient call is consumed. A key both split and folded in with a literal index below the split's literal
count is flagged too: on JAX's default keys `fold_in(k, i)` equals `split(k)[i]`. A key carried to the next
iteration of a loop is reuse only if some path skips what replaces it; a `for` over `range(n)` with `n` surely
at least 1 (a literal, `max(..., 1)`, or a name bound once to one) always runs its body.

Not flagged: reuse in **test code that checks results**. A test function (named `test*`, or any method of
a class named `Test*`, `*Test`, `*Tests` or `*TestCase`, or a function nested in one) whose test function or
class asserts something (an `assert` statement, or a call of `assert*`, `*allclose`, `*array_equal`,
`np.testing.*`, `chex.assert_*`, `pytest.assume`, also one passed as a callable:
`jax.tree.map(np.testing.assert_allclose, a, b)`) draws its inputs from one key on purpose: paired draws that
compare two implementations on the same randomness (`assertAllClose(f(key), f_ref(key))`), or test inputs whose
correlation does not matter to what is checked. Users reading real test suites (distrax, optax,
neural-tangents) judged these findings noise. Reuse in a test helper outside such functions and classes, and
in any non-test code, is still flagged; deliberate paired sampling there (common random numbers) takes a
`# noqa: JAX301` that says so.

`--verify` confirms a finding by tracing the function with typed keys under `jax_debug_key_reuse`; JAX's
checker does not see the same-`fold_in`-data case, nor reuse spread over several calls of a generator.

## Why is this bad
The same key always gives the same random bits: two "independent" samples drawn with one key are
identical or correlated (dropout masks that match the noise, every loop iteration drawing the same
numbers). JAX does not warn about it: only `jax.config.update("jax_debug_key_reuse", True)` with typed
keys (`jax.random.key`, not the legacy `PRNGKey`) raises `KeyReuseError`.

## Example
```python
key = jax.random.key(0)
x = jax.random.normal(key, (3,))
y = jax.random.uniform(key, (3,))        # same key: y is correlated with x

for step in range(n):
    noise = jax.random.normal(key, (3,))  # the same noise on every step

k1, k2 = jax.random.split(key)
z = jax.random.normal(key, (3,))          # the parent key after split
```

## Use instead
```python
key, k_x, k_y = jax.random.split(key, 3)
x = jax.random.normal(k_x, (3,))
y = jax.random.uniform(k_y, (3,))

for step in range(n):
    key, sub = jax.random.split(key)      # or: sub = jax.random.fold_in(key, step)
    noise = jax.random.normal(sub, (3,))
```

## Fix safety
No automatic fix: which key should be split, and where, is the author's choice.

## References
- https://docs.jax.dev/en/latest/random-numbers.html
- https://docs.jax.dev/en/latest/jep/9263-typed-keys.html
- https://docs.jax.dev/en/latest/_autosummary/jax.experimental.key_reuse.html
"""

    def __init__(self) -> None:
        self._analysis: KeyAnalysis | None = None

    # -- hooks ---------------------------------------------------------------------------------------

    def on_module(self, module: cst.Module, ctx: RuleContext) -> None:
        if uses_keys(ctx.index):
            from ..analysis import key_analysis

            self._analysis = key_analysis(ctx.index)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        """A flax.nnx object drawing from its Rngs stream, closed over by a plain `jax.jit` function; a dataclass
        built without its field whose default is one fixed key."""
        analysis = self._analysis
        if analysis is not None and analysis.relevant and type(node.func) is cst.Name:
            defaulted = defaulted_key(analysis, node, ctx.unit)
            if defaulted is not None:
                field, key = defaulted
                ctx.report(
                    self,
                    node,
                    f"'{node.func.value}' is built without '{field}', so it holds the default key {key}, one key "
                    f"for every instance built here whatever key '{ctx.unit.name}' is given: their draws are the "
                    f"same; pass '{field}' a key split from the one given",
                )
                return
        found = closed_stream(node, ctx)
        if found is None:
            return
        name, kind = found
        context = f"jax.jit-compiled '{ctx.unit.name}'"
        ctx.report(
            self,
            node,
            f"'{name}' ({kind.rpartition('.')[2]}) draws from its nnx Rngs stream, closed over by {context}: "
            "the stream is advanced under the trace (flax 0.12 raises TraceContextError there; earlier flax "
            "read it once, so every call drew the same numbers); pass the object in and compile with nnx.jit",
        )

    def on_unit(self, unit: Unit, ctx: RuleContext) -> None:
        analysis = self._analysis
        if analysis is None or not analysis.relevant:
            return
        # A held key drawn again in another module's method is reported there (`target`); a method of this
        # module that others call repeatedly reports its draws with the module body.
        reuses = [r for r in analysis.reuses(unit) if not r.target]
        if unit is ctx.index.root:
            reuses += analysis.repeated_draws()
        if reuses and _in_asserting_test(unit):
            return  # test inputs drawn from one key on purpose (see the doc's "Not flagged")
        if reuses:  # the messages quote lines: one positions pass for them and the findings, not one each
            nodes = (
                node for r in reuses for node in (r.node, r.first.node, r.loop, r.caller) if node is not None
            )
            ctx.index.positions().resolve(nodes)
        for reuse in reuses:
            ctx.report(self, reuse.node, self._message(reuse, ctx.index))

    # -- messages ------------------------------------------------------------------------------------

    def _line(self, node: cst.CSTNode, index) -> int:
        return index.line_of(node)

    def _message(self, reuse: KeyReuse, index) -> str:
        first = (
            f"key '{reuse.key}' reused: first consumed at line {self._line(reuse.first.node, index)} "
            f"by {reuse.first.consumer}"
        )
        if reuse.kind == "loop":
            assert reuse.loop is not None
            loop = f"{_LOOP_WORDS.get(type(reuse.loop), 'loop')} at line {self._line(reuse.loop, index)}"
            again = ", and again" if reuse.first.node is reuse.node else f", again by {reuse.consumer}"
            return (
                f"{first}{again} in the next iteration of the {loop}, whose body does not (always) replace it; "
                "split it in the loop body (`key, sub = jax.random.split(key)`) or use `jax.random.fold_in(key, i)`"
            )
        if reuse.kind == "closure":
            return (
                f"{first}, again on every iteration of {reuse.context}, which gets the same key each time (closed "
                "over or bound by partial); pass the key in the carry and split it each step, or use "
                "`jax.random.fold_in(key, i)`"
            )
        if reuse.kind == "mapped":
            return (
                f"{first}, the same key for every call of {reuse.context} ({_how_shared(reuse.context)}): "
                "every element or leaf draws the same numbers; split it into one key per element and map over those"
            )
        if reuse.kind == "seed":
            where = (
                f"called in the loop at line {self._line(reuse.loop, index)}"
                if reuse.loop
                else "per iteration"
            )
            return (
                f"key '{reuse.key}' comes from a constant seed and is consumed by {reuse.first.consumer} in "
                f"{reuse.context}, which runs repeatedly ({where}): every run draws the same numbers; pass a key "
                "in and split it, or `jax.random.fold_in(key, step)`"
            )
        if reuse.kind == "held":
            if reuse.loop is not None:
                where = f"called in the {_LOOP_WORDS.get(type(reuse.loop), 'loop')} at line {self._line(reuse.loop, index)}"
            elif reuse.caller is not None:
                where = f"called at line {self._line(reuse.first.node, index)} and again at line {self._line(reuse.caller, index)}"
            else:
                where = f"called repeatedly at {reuse.context}"
            kept = (
                f"key '{reuse.key}' is kept by the object as built (only construction sets it)"
                if reuse.kept in ("", reuse.key)
                else f"key '{reuse.key}' is made from '{reuse.kept}', which the object keeps as built (only "
                "construction sets it),"
            )
            return (
                f"{kept} and drawn from on every call of {reuse.first.consumer}, {where}: every call on one "
                "object draws the same numbers; take a key per call, or keep a key and split it on each call "
                "(`self.key, sub = jax.random.split(self.key)`)"
            )
        if reuse.kind == "frozen":
            return (
                f"key '{reuse.key}' is read when {reuse.context} is traced, and the compiled function kept with "
                f"it holds that key: advancing '{reuse.key}' in Python later changes nothing, so every call "
                f"draws the same numbers; pass the key as an argument of the compiled function"
            )
        if reuse.kind == "captured":
            return (
                f"key '{reuse.key}' is given to the factory and closed over by {reuse.context}: it is fixed when "
                "the factory runs, so every call of the returned function draws the same numbers; take the key as "
                "an argument of the returned function and split a new one per call"
            )
        if reuse.kind == "carry":
            return (
                f"{first}, then returned unchanged in the carry of {reuse.context}, so the next iteration "
                "consumes it again; carry the new key from `jax.random.split` instead"
            )
        if reuse.kind == "folded":
            return (
                f"key '{reuse.key}' both split (line {self._line(reuse.first.node, index)}) and folded in: "
                "`fold_in(k, i)` equals `split(k)[i]`, so the two draw the same numbers; fold in a key you "
                "never split (or split one more key for the fold)"
            )
        return f"{first}, again by {reuse.consumer}; split it (`jax.random.split`) and use each subkey once"


# -- test code ---------------------------------------------------------------------------------------------

_ASSERT_SUFFIXES = ("allclose", "array_equal", "array_almost_equal")


def _is_test_class(node: cst.ClassDef) -> bool:
    name = node.name.value
    return name.startswith("Test") or name.endswith(("Test", "Tests", "TestCase"))


def _in_asserting_test(unit: Unit) -> bool:
    """Whether `unit` is (inside) a test function or a test class method, and that test asserts something."""
    scope: Unit | None = unit
    while scope is not None:
        node = scope.node
        if scope.class_node is not None and _is_test_class(scope.class_node):
            return _asserts(scope.class_node)
        if type(node) is cst.FunctionDef and node.name.value.startswith("test"):
            return _asserts(node)
        scope = scope.parent
    return False


def _asserts(node: cst.CSTNode) -> bool:
    """An `assert`, a call of an assertion, or an assertion passed as a callable (`jax.tree.map(
    np.testing.assert_allclose, a, b)`, `partial(assert_allclose, atol=...)`)."""
    for inner in walk(node):
        if type(inner) is cst.Assert:
            return True
        if type(inner) is cst.Call and (
            _is_assertion(inner.func) or any(_is_assertion(arg.value) for arg in inner.args)
        ):
            return True
    return False


def _is_assertion(callee: cst.BaseExpression) -> bool:
    name = callee.attr.value if type(callee) is cst.Attribute else getattr(callee, "value", "")
    if name == "assume" and type(callee) is cst.Attribute and getattr(callee.value, "value", "") == "pytest":
        return True  # pytest-assume's soft assertion (qdax's tests)
    return (
        (type(callee) is cst.Name or type(callee) is cst.Attribute)
        and isinstance(name, str)
        and (name.startswith("assert") or name.endswith(_ASSERT_SUFFIXES))
    )


def _how_shared(context: str) -> str:
    """How a mapped function gets one key for every element: a vmap may also leave it unmapped."""
    return (
        "closed over, bound by partial or `in_axes=None`"
        if "vmap" in context
        else "closed over or bound by partial"
    )
