"""The coverage matrix's cases, built from three axes: PITFALL x CONTEXT x LOCATION.

A PITFALL is one rule's mistake as a few body lines that read `{x}` (a float32[3] array) and leave `{y}`, with
its clean twin (the fix). A CONTEXT is one way code gets traced (`jax.jit`, `lax.scan`, flax `apply`, ...): it
wraps the traced function and the `run()` that drives it. A LOCATION is where the pitfall's lines live (in
the traced function, a helper of the same module, a helper of another module reached by an absolute or
relative import or an `__init__` re-export, a method, a lambda or nested def, a notebook cell).

Every case is a small project (files as text) whose `main` module (or `main.ipynb`) defines `run()`. Surface
details (names, `jnp`/`jax.numpy`, `lax`/`jax.lax`, `jit`/`jax.jit`, ...) are drawn from a generator seeded by
the case's id, so every spelling is exercised and the same id always gives the same text.

This module imports no JAX: `tools/verify_matrix.py` runs the cases against real JAX and writes
`verified.json` (the cases that misbehave as the pitfall says and whose twin runs clean);
`test_matrix.py` lints the verified ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import zlib
from collections.abc import Iterator

SEED = 29
MARK = "  #!"  # ends the pitfall's line in a template; removed from the generated text

# -- pitfalls ---------------------------------------------------------------------------------------------

TRACED = "traced"  # applies in the traced contexts
EAGER = "eager"  # applies in eager code only
BOTH = "both"  # applies in both


@dataclasses.dataclass(frozen=True)
class Pitfall:
    id: str
    code: str
    bad: str  # body lines; the one ending with MARK is where the finding belongs
    good: str  # the twin: the fix
    measure: str  # how the verifier tells the pitfall misbehaves (see tools/verify_matrix.py)
    applies: str = TRACED
    support_bad: str = ""  # module-level lines the body needs, in the module the body lives in
    support_good: str = ""
    expr_bad: str | None = None  # lambda form: `lambda {x}: <expr>`
    expr_good: str | None = None
    raises: str = ""  # for measure "raises": the exception class expected (dotted)
    locations: tuple[str, ...] | None = None  # None: every location


# Where the pitfall's lines live in the program itself: JAX501/JAX503 judge programs only, and a helper module
# of a package is library code (the existing JAX501 rows record those misses as gaps by design).
PROGRAM_LOCATIONS = ("inline", "helper_same", "method", "nested_def", "lambda", "notebook")

PITFALLS: tuple[Pitfall, ...] = (
    Pitfall(
        "JAX101-if",
        "JAX101",
        "if {sum} > 0:  #!\n    {y} = {x} * 2\nelse:\n    {y} = {x}",
        "{y} = {jnp}.where({sum} > 0, {x} * 2, {x})",
        "raises",
        raises="jax.errors.ConcretizationTypeError",
    ),
    Pitfall(
        "JAX101-ternary",
        "JAX101",
        "{y} = {x} * 2 if {sum} > 0 else {x}  #!",
        "{y} = {jnp}.where({sum} > 0, {x} * 2, {x})",
        "raises",
        expr_bad="{x} * 2 if {sum} > 0 else {x}",
        expr_good="{jnp}.where({sum} > 0, {x} * 2, {x})",
        raises="jax.errors.ConcretizationTypeError",
    ),
    Pitfall(
        "JAX101-while",
        "JAX101",
        "{y} = {x}\nwhile {y}.sum() < 10:  #!\n    {y} = {y} * 2",
        "{y} = {lax}.while_loop(lambda v: v.sum() < 10, lambda v: v * 2, {x})",
        "raises",
        raises="jax.errors.ConcretizationTypeError",
    ),
    Pitfall(
        "JAX102-float",
        "JAX102",
        "{y} = {x} * float({sum})  #!",
        "{y} = {x} * {sum}",
        "raises",
        expr_bad="{x} * float({sum})",
        expr_good="{x} * {sum}",
        raises="jax.errors.ConcretizationTypeError",
    ),
    Pitfall(
        "JAX102-item",
        "JAX102",
        "{y} = {x} * {x}.max().item()  #!",
        "{y} = {x} * {x}.max()",
        "raises",
        expr_bad="{x} * {x}.max().item()",
        expr_good="{x} * {x}.max()",
        raises="jax.errors.ConcretizationTypeError",
    ),
    Pitfall(
        "JAX102-asarray",
        "JAX102",
        "{y} = {jnp}.asarray({np}.asarray({x})) * 2  #!",
        "{y} = {jnp}.asarray({x}) * 2",
        "raises",
        expr_bad="{jnp}.asarray({np}.asarray({x})) * 2",
        expr_good="{jnp}.asarray({x}) * 2",
        raises="jax.errors.TracerArrayConversionError",
    ),
    Pitfall(
        "JAX103-setitem",
        "JAX103",
        "{x}[0] = 1.0  #!\n{y} = {x} * 2",
        "{x} = {x}.at[0].set(1.0)\n{y} = {x} * 2",
        "raises",
        applies=BOTH,
        raises="TypeError",
    ),
    Pitfall(
        "JAX103-augassign",
        "JAX103",
        "{x}[1] += 1.0  #!\n{y} = {x} * 2",
        "{x} = {x}.at[1].add(1.0)\n{y} = {x} * 2",
        "raises",
        applies=BOTH,
        raises="TypeError",
    ),
    Pitfall(
        "JAX103-fill",
        "JAX103",
        "{x}.fill(0.0)  #!\n{y} = {x} * 2",
        "{x} = {jnp}.full_like({x}, 0.0)\n{y} = {x} * 2",
        "raises",
        applies=BOTH,
        raises="AttributeError",
    ),
    Pitfall(
        "JAX104-mask",
        "JAX104",
        "{y} = {x} * {x}[{x} > 1].sum()  #!",
        "{y} = {x} * {jnp}.where({x} > 1, {x}, 0).sum()",
        "raises",
        expr_bad="{x} * {x}[{x} > 1].sum()",
        expr_good="{x} * {jnp}.where({x} > 1, {x}, 0).sum()",
        raises="IndexError",
    ),
    Pitfall(
        "JAX104-nonzero",
        "JAX104",
        "(idx,) = {jnp}.nonzero({x} > 1)  #!\n{y} = {x}.at[idx].set(0.0)",
        "(idx,) = {jnp}.nonzero({x} > 1, size=3)\n{y} = {x}.at[idx].set(0.0)",
        "raises",
        raises="jax.errors.ConcretizationTypeError",
    ),
    Pitfall(
        "JAX105-global",
        "JAX105",
        "global LAST\nLAST = {x}  #!\n{y} = {x} * 2",
        "global LAST\nLAST = {x}.shape\n{y} = {x} * 2",
        "leak",
        support_bad="LAST = None",
        support_good="LAST = None",
    ),
    Pitfall(
        "JAX106-discarded",
        "JAX106",
        "{x}.at[0].set(7.0)  #!\n{y} = {x} * 2",
        "{x} = {x}.at[0].set(7.0)\n{y} = {x} * 2",
        "output",
        applies=BOTH,
    ),
    Pitfall(
        "JAX106-sort",
        "JAX106",
        "rev = {x}[::-1]\nrev.sort()  #!\n{y} = rev * {jnp}.arange(3.0)",
        "rev = {x}[::-1]\nrev = rev.sort()\n{y} = rev * {jnp}.arange(3.0)",
        "output",
        applies=BOTH,
    ),
    Pitfall(
        "JAX201-print",
        "JAX201",
        "print({x})  #!\n{y} = {x} * 2",
        'jax.debug.print("{{}}", {x})\n{y} = {x} * 2',
        "tracer_stdout",
    ),
    Pitfall(
        "JAX201-print-fstring",
        "JAX201",
        'print(f"value: {{{x}}}")  #!\n{y} = {x} * 2',
        'jax.debug.print("value: {{}}", {x})\n{y} = {x} * 2',
        "tracer_stdout",
    ),
    Pitfall(
        "JAX202-counter",
        "JAX202",
        "global CALLS\nCALLS += 1  #!\n{y} = {x} * 2",
        "jax.debug.callback(_bump)\n{y} = {x} * 2",
        "counter",
        support_bad="CALLS = 0",
        support_good="CALLS = 0\n\n\ndef _bump():\n    global CALLS\n    CALLS += 1",
    ),
    Pitfall(
        "JAX202-next",
        "JAX202",
        "{y} = {x} * next(BATCHES)  #!",
        "jax.debug.callback(_advance)\n{y} = {x} * 2.0",
        "counter",
        support_bad=(
            "CALLS = 0\n\n\ndef _batches():\n    global CALLS\n    while True:\n        CALLS += 1\n"
            "        yield 2.0\n\n\nBATCHES = _batches()"
        ),
        support_good=(
            "CALLS = 0\n\n\ndef _batches():\n    global CALLS\n    while True:\n        CALLS += 1\n"
            "        yield 2.0\n\n\nBATCHES = _batches()\n\n\ndef _advance():\n    next(BATCHES)"
        ),
    ),
    Pitfall(
        "JAX202-logger",
        "JAX202",
        'LOG.warning("value %s", {x})  #!\n{y} = {x} * 2',
        'jax.debug.callback(lambda v: LOG.warning("value %s", v), {x})\n{y} = {x} * 2',
        "tracer_stdout",
        support_bad="import logging\nimport sys\n\nLOG = logging.getLogger(__name__)\nLOG.addHandler(logging.StreamHandler(sys.stdout))",
        support_good="import logging\nimport sys\n\nLOG = logging.getLogger(__name__)\nLOG.addHandler(logging.StreamHandler(sys.stdout))",
    ),
    Pitfall(
        "JAX202-progress-bar",
        "JAX202",
        "BAR.update(1)  #!\n{y} = {x} * 2",
        "jax.debug.callback(lambda: BAR.update(1))\n{y} = {x} * 2",
        "ticks",
        support_bad="import io\n\nfrom tqdm import tqdm\n\nBAR = tqdm(total=100, file=io.StringIO())",
        support_good="import io\n\nfrom tqdm import tqdm\n\nBAR = tqdm(total=100, file=io.StringIO())",
    ),
    Pitfall(
        "JAX203-fstring",
        "JAX203",
        'jax.debug.print(f"value: {{{x}}}")  #!\n{y} = {x} * 2',
        'jax.debug.print("value: {{}}", {x})\n{y} = {x} * 2',
        "tracer_stdout",
    ),
    Pitfall(
        "JAX301-two-samplers",
        "JAX301",
        "key = {rnd}.fold_in({rnd}.key(0), {x}[0].astype(int))\nnoise = {rnd}.normal(key, (3,))\n{y} = {x} + noise - {rnd}.normal(key, (3,))  #!",
        "key = {rnd}.fold_in({rnd}.key(0), {x}[0].astype(int))\nk1, k2 = {rnd}.split(key)\nnoise = {rnd}.normal(k1, (3,))\n{y} = {x} + noise - {rnd}.normal(k2, (3,))",
        "raises",
        applies=BOTH,
        raises="jax.errors.KeyReuseError",
    ),
    Pitfall(
        "JAX301-after-split",
        "JAX301",
        "key = {rnd}.fold_in({rnd}.key(1), {x}[0].astype(int))\nk1, k2 = {rnd}.split(key)\n{y} = {x} + {rnd}.normal(key, (3,))  #!",
        "key = {rnd}.fold_in({rnd}.key(1), {x}[0].astype(int))\nkey, k1 = {rnd}.split(key)\n{y} = {x} + {rnd}.normal(k1, (3,))",
        "raises",
        applies=BOTH,
        raises="jax.errors.KeyReuseError",
    ),
    Pitfall(
        "JAX401-jit-in-loop",
        "JAX401",
        "for _ in range(3):\n    {y} = {jit}(lambda v: v * 2)({x})  #!",
        "for _ in range(3):\n    {y} = _double({x})",
        "compiles",
        applies=EAGER,
        support_good="_double = {jit}(lambda v: v * 2)",
    ),
    Pitfall(
        "JAX402-list-static",
        "JAX402",
        "{y} = _scale({x}, [1.0, 2.0])  #!",
        "{y} = _scale({x}, (1.0, 2.0))",
        "raises",
        applies=BOTH,
        support_bad="@{partial}({jit}, static_argnums=1)\ndef _scale(v, factors):\n    return v * len(factors)",
        support_good="@{partial}({jit}, static_argnums=1)\ndef _scale(v, factors):\n    return v * len(factors)",
        expr_bad="_scale({x}, [1.0, 2.0])",
        expr_good="_scale({x}, (1.0, 2.0))",
        raises="ValueError",
    ),
    Pitfall(
        "JAX405-jit-method",
        "JAX405",
        "{y} = Scaler().apply({x})",
        "{y} = Scaler().apply({x})",
        "raises",
        applies=BOTH,
        support_bad=(
            "class Scaler:\n    def __init__(self):\n        self.k = 2.0\n\n"
            "    @{jit}  #!\n    def apply(self, v):\n        return v * self.k"
        ),
        support_good=(
            "_times = {jit}(lambda v, k: v * k)\n\n\n"
            "class Scaler:\n    def __init__(self):\n        self.k = 2.0\n\n"
            "    def apply(self, v):\n        return _times(v, self.k)"
        ),
        raises="TypeError",
        locations=("inline", "helper_same", "helper_abs", "helper_rel", "reexport", "notebook"),
    ),
    Pitfall(
        "JAX501-astype",
        "JAX501",
        "{y} = {x}.astype({jnp}.float64)  #!",
        "{y} = {x}.astype({jnp}.float32)",
        "dtype",
        applies=BOTH,
        expr_bad="{x}.astype({jnp}.float64)",
        expr_good="{x}.astype({jnp}.float32)",
    ),
    Pitfall(
        "JAX501-zeros",
        "JAX501",
        "{y} = {x} + {jnp}.zeros(3, dtype={jnp}.float64)  #!",
        "{y} = {x} + {jnp}.zeros(3, dtype={jnp}.float32)",
        "dtype",
        applies=BOTH,
        expr_bad="{x} + {jnp}.zeros(3, dtype={jnp}.float64)",
        expr_good="{x} + {jnp}.zeros(3, dtype={jnp}.float32)",
    ),
    Pitfall(
        "JAX501-mean-dtype",
        "JAX501",
        "{y} = {x} * {x}.mean(dtype={jnp}.float64)  #!",
        "{y} = {x} * {x}.mean(dtype={jnp}.float32)",
        "dtype",
        applies=BOTH,
        expr_bad="{x} * {x}.mean(dtype={jnp}.float64)",
        expr_good="{x} * {x}.mean(dtype={jnp}.float32)",
        locations=PROGRAM_LOCATIONS,
    ),
    Pitfall(
        "JAX502-sum-list",
        "JAX502",
        "{y} = {x} * {jnp}.sum([{x}[0], {x}[1]])  #!",
        "{y} = {x} * {jnp}.sum({jnp}.stack([{x}[0], {x}[1]]))",
        "raises",
        applies=BOTH,
        expr_bad="{x} * {jnp}.sum([{x}[0], {x}[1]])",
        expr_good="{x} * {jnp}.sum({jnp}.stack([{x}[0], {x}[1]]))",
        raises="TypeError",
    ),
    Pitfall(
        "JAX503-overflow",
        "JAX503",
        "{y} = {x} * ({jnp}.arange(3) * 2**40)  #!",
        "{y} = {x} * ({jnp}.arange(3.0) * 2.0**40)",
        "raises",
        applies=BOTH,
        expr_bad="{x} * ({jnp}.arange(3) * 2**40)",
        expr_good="{x} * ({jnp}.arange(3.0) * 2.0**40)",
        raises="OverflowError",
        locations=PROGRAM_LOCATIONS,
    ),
)

RULES = sorted({p.code for p in PITFALLS})

# -- surface names ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Names:
    x: str
    y: str
    fn: str
    helper: str
    cls: str
    method: str
    pkg: str
    mod: str
    jnp: str
    lax: str
    jit: str
    np: str
    rnd: str
    partial: str
    sum_style: int
    repeat: bool = (
        False  # run() drives the traced code twice (a side effect skipped on the second call shows)
    )

    @property
    def main(self) -> str:
        return "main_" + self.pkg.rsplit("_", 1)[1]

    @property
    def sum(self) -> str:
        return f"{self.x}.sum()" if self.sum_style == 0 else f"{self.jnp}.sum({self.x})"

    def header(self) -> list[str]:
        lines = [
            "import functools" if self.partial == "functools.partial" else "from functools import partial"
        ]
        lines.append("import numpy as np" if self.np == "np" else "import numpy as onp")
        lines.append("")
        lines.append("import jax")
        if self.jnp == "jnp":
            lines.append("import jax.numpy as jnp")
        if self.lax == "lax":
            lines.append("from jax import lax")
        if self.jit == "jit":
            lines.append("from jax import jit")
        if self.rnd == "jr":
            lines.append("from jax import random as jr")
        return lines


def draw_names(pair_id: str, case_id: str) -> Names:
    """The surface of a pitfall and its twin (one draw per pair); the package tag is the case's own, so that
    every case's modules have names of their own when all are linted as one tree."""
    rng = random.Random(zlib.crc32(f"{SEED}:{pair_id}".encode()))
    tag = hashlib.sha1(case_id.encode()).hexdigest()[:6]
    return Names(
        x=rng.choice(["x", "inputs", "h", "values", "batch"]),
        y=rng.choice(["y", "out", "result", "res"]),
        fn=rng.choice(["step", "forward", "update", "apply_fn", "body"]),
        helper=rng.choice(["helper", "compute", "transform_block", "_inner_op", "layer"]),
        cls=rng.choice(["Ops", "Block", "Processor"]),
        method=rng.choice(["apply", "run_block", "compute"]),
        pkg=rng.choice(["mypkg", "models", "lib", "core"]) + "_" + tag,
        mod=rng.choice(["ops", "layers", "utils", "functional"]),
        jnp=rng.choice(["jnp", "jax.numpy"]),
        lax=rng.choice(["lax", "jax.lax"]),
        jit=rng.choice(["jax.jit", "jit"]),
        np=rng.choice(["np", "onp"]),
        rnd=rng.choice(["jax.random", "jr"]),
        partial=rng.choice(["partial", "functools.partial"]),
        sum_style=rng.randrange(2),
    )


def fill(template: str, n: Names) -> str:
    fields = {f.name: getattr(n, f.name) for f in dataclasses.fields(n)}
    return template.format(**fields, sum=n.sum)


def indent(lines: list[str], by: int = 4) -> list[str]:
    return [(" " * by + line) if line else "" for line in lines]


# -- contexts ---------------------------------------------------------------------------------------------
# A context gets the lines computing {y} from {x} and answers (imports, module-level defs, run() lines).
# run() drives the traced code (twice where a side effect is counted) and returns the result.


def X(n: Names) -> str:
    return f"{n.jnp}.array([1.0, 2.0, 3.0])"


def XS(n: Names) -> str:
    return f"{n.jnp}.array([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]])"


def _fn(
    n: Names, inner: list[str], params: str, prelude: tuple[str, ...] = (), ret: str = "{y}"
) -> list[str]:
    filled = [fill(line, n) for line in prelude]
    return [f"def {n.fn}({params}):", *indent([*filled, *inner, f"return {fill(ret, n)}"])]


def _twice(n: Names, call: str, setup: tuple[str, ...] = ()) -> list[str]:
    return [*setup, call, f"return {call}"] if n.repeat else [*setup, f"return {call}"]


def ctx_jit_decorator(n, inner):
    return [], [f"@{n.jit}", *_fn(n, inner, n.x)], _twice(n, f"{n.fn}({X(n)})")


def ctx_jit_assign(n, inner):
    defs = _fn(n, inner, n.x)
    defs[0] = defs[0].replace(f"def {n.fn}(", f"def _{n.fn}_impl(")
    return [], [*defs, "", "", f"{n.fn} = {n.jit}(_{n.fn}_impl)"], _twice(n, f"{n.fn}({X(n)})")


def ctx_partial_jit_static(n, inner):
    defs = [
        f'@{n.partial}({n.jit}, static_argnames=("scale",))',
        *_fn(n, inner, f"{n.x}, scale", ret="{y} * scale"),
    ]
    return [], defs, _twice(n, f"{n.fn}({X(n)}, scale=2)")


def ctx_vmap(n, inner):
    return [], _fn(n, inner, n.x), _twice(n, f"jax.vmap({n.fn})({XS(n)})")


def ctx_grad(n, inner):
    return [], _fn(n, inner, n.x, ret="{jnp}.sum({y})"), _twice(n, f"jax.grad({n.fn})({X(n)})")


def ctx_value_and_grad(n, inner):
    return [], _fn(n, inner, n.x, ret="{jnp}.sum({y} ** 2)"), _twice(n, f"jax.value_and_grad({n.fn})({X(n)})")


def ctx_scan(n, inner):
    defs = _fn(n, inner, f"carry, {n.x}", ret="carry + {y}.sum(), {y}")
    return [], defs, _twice(n, f"{n.lax}.scan({n.fn}, 0.0, {XS(n)})")


def ctx_fori_loop(n, inner):
    return [], _fn(n, inner, f"i, {n.x}"), _twice(n, f"{n.lax}.fori_loop(0, 2, {n.fn}, {X(n)})")


def ctx_while_loop(n, inner):
    defs = _fn(n, inner, "state", prelude=(f"i, {n.x} = state",), ret="i + 1, {y}")
    return [], defs, _twice(n, f"{n.lax}.while_loop(lambda s: s[0] < 2, {n.fn}, (0, {X(n)}))")


def ctx_cond(n, inner):
    return [], _fn(n, inner, n.x), _twice(n, f"{n.lax}.cond({X(n)}.sum() > 0, {n.fn}, lambda v: v, {X(n)})")


def ctx_checkpoint(n, inner):
    return [], ["@jax.checkpoint", *_fn(n, inner, n.x)], _twice(n, f"{n.fn}({X(n)})")


def ctx_shard_map(n, inner):
    imports = ["from jax.sharding import PartitionSpec as P"]
    setup = ('mesh = jax.make_mesh((1,), ("i",))',)
    call = f"jax.shard_map({n.fn}, mesh=mesh, in_specs=P(), out_specs=P())({X(n)})"
    return imports, _fn(n, inner, n.x), _twice(n, call, setup)


def ctx_pmap(n, inner):
    return [], _fn(n, inner, n.x), _twice(n, f"jax.pmap({n.fn})({X(n)}[None])")


def ctx_eager(n, inner):
    return [], _fn(n, inner, n.x), _twice(n, f"{n.fn}({X(n)})")


def ctx_linen_apply(n, inner):
    imports = ["import flax.linen as nn"]
    defs = [
        "class Model(nn.Module):",
        "    @nn.compact",
        *indent(_fn(n, inner, f"self, {n.x}")),
    ]
    defs[2] = defs[2].replace(f"def {n.fn}(", "def __call__(")
    setup = (
        "model = Model()",
        f"variables = model.init(jax.random.key(0), {X(n)})",
        "apply = jax.jit(model.apply)",
    )
    return imports, defs, _twice(n, f"apply(variables, {X(n)})", setup)


def ctx_linen_scan(n, inner):
    imports = ["import flax.linen as nn"]
    defs = [
        "class Cell(nn.Module):",
        "    @nn.compact",
        *indent(_fn(n, inner, f"self, carry, {n.x}", ret="carry, {y}")),
        "",
        "",
        'ScanCell = nn.scan(Cell, variable_broadcast="params", split_rngs={"params": False})',
    ]
    defs[2] = defs[2].replace(f"def {n.fn}(", "def __call__(")
    return imports, defs, _twice(n, f"ScanCell().init_with_output(jax.random.key(0), 0.0, {XS(n)})[0]")


def ctx_trainstate(n, inner):
    imports = ["import flax.linen as nn", "import optax", "from flax.training import train_state"]
    defs = [
        "class Model(nn.Module):",
        *indent(_fn(n, inner, f"self, {n.x}")),
        "",
        "",
        "@jax.jit",
        "def train_step(state, batch):",
        '    return state.apply_fn({"params": state.params}, batch)',
    ]
    defs[1] = defs[1].replace(f"def {n.fn}(", "def __call__(")
    setup = ("state = train_state.TrainState.create(apply_fn=Model().apply, params={}, tx=optax.sgd(0.1))",)
    return imports, defs, _twice(n, f"train_step(state, {X(n)})", setup)


def ctx_nnx_jit(n, inner):
    imports = ["from flax import nnx"]
    defs = [
        "class Model(nnx.Module):",
        "    def __init__(self, rngs):",
        "        self.rngs = rngs",
        "",
        *indent(_fn(n, inner, f"self, {n.x}")),
        "",
        "",
        "@nnx.jit",
        f"def {n.fn}_model(model, batch):",
        "    return model(batch)",
    ]
    defs[4] = defs[4].replace(f"def {n.fn}(", "def __call__(")
    setup = ("model = Model(nnx.Rngs(0))",)
    return imports, defs, _twice(n, f"{n.fn}_model(model, {X(n)})", setup)


def ctx_eqx_filter_jit(n, inner):
    imports = ["import equinox as eqx"]
    return imports, ["@eqx.filter_jit", *_fn(n, inner, n.x)], _twice(n, f"{n.fn}({X(n)})")


def ctx_eqx_scan(n, inner):
    imports = ["import equinox as eqx"]
    defs = [
        "class Layer(eqx.Module):",
        "    weight: jax.Array",
        "",
        *indent(_fn(n, inner, f"self, {n.x}", prelude=(f"{n.x} = {n.x} * self.weight",))),
        "",
        "",
        "def apply_layers(layers, batch):",
        "    def one(h, layer):",
        "        return layer(h), None",
        "",
        f"    return {n.lax}.scan(one, batch, layers)[0]",
    ]
    defs[3] = defs[3].replace(f"def {n.fn}(", "def __call__(")
    setup = (f"layers = Layer({n.jnp}.ones((2, 3)))",)
    return imports, defs, _twice(n, f"eqx.filter_jit(apply_layers)(layers, {X(n)})", setup)


def ctx_optax_schedule(n, inner):
    imports = ["import optax"]
    defs = [
        *_fn(
            n,
            inner,
            "count",
            prelude=(f"{n.x} = {n.jnp}.ones(3) * (count + 1)",),
            ret="0.01 * {jnp}.mean({y})",
        ),
        "",
        "",
        f"tx = optax.sgd(learning_rate={n.fn})",
        "",
        "",
        "@jax.jit",
        "def train_step(params, opt_state):",
        "    updates, opt_state = tx.update(params, opt_state, params)",
        "    return optax.apply_updates(params, updates), opt_state",
    ]
    setup = (f"params = {X(n)}", "opt_state = tx.init(params)")
    return imports, defs, _twice(n, "train_step(params, opt_state)[0]", setup)


def ctx_numpyro_mcmc(n, inner):
    imports = [
        "import numpyro",
        "import numpyro.distributions as dist",
        "from numpyro.infer import MCMC, NUTS",
    ]
    prelude = ('z = numpyro.sample("z", dist.Normal(0.0, 1.0))', f"{n.x} = {n.x} * z")
    defs = [
        *_fn(
            n, inner, n.x, prelude=prelude, ret='numpyro.sample("obs", dist.Normal({y}.sum(), 1.0), obs=1.0)'
        ),
    ]
    setup = (f"mcmc = MCMC(NUTS({n.fn}), num_warmup=2, num_samples=2, progress_bar=False)",)
    call = f'(mcmc.run(jax.random.key(0), {X(n)}), mcmc.get_samples()["z"])[1]'
    return imports, defs, _twice(n, call, setup)


def ctx_haiku_transform(n, inner):
    imports = ["import haiku as hk"]
    defs = [*_fn(n, inner, n.x), "", "", f"model = hk.transform({n.fn})"]
    setup = (f"params = model.init(jax.random.key(0), {X(n)})", "apply = jax.jit(model.apply)")
    return imports, defs, _twice(n, f"apply(params, None, {X(n)})", setup)


def ctx_jit_bound_method(n, inner):
    """`jax.jit(runner.fn)`: a method bound to an instance of a class of the module, `self` not traced."""
    defs = [f"class {n.cls}Runner:", *indent(_fn(n, inner, f"self, {n.x}"))]
    setup = (f"runner = {n.cls}Runner()", f"{n.fn}_jitted = {n.jit}(runner.{n.fn})")
    return [], defs, _twice(n, f"{n.fn}_jitted({X(n)})", setup)


def ctx_jit_by_helper(n, inner):
    """`compiled(fn, x)` applies jit to its parameter: the function a call passes there is what is traced."""
    helper = [f"def {n.helper}_compiled(fn, arg):", f"    return {n.jit}(fn)(arg)"]
    return [], [*helper, "", "", *_fn(n, inner, n.x)], _twice(n, f"{n.helper}_compiled({n.fn}, {X(n)})")


CONTEXTS = {
    "jit": ctx_jit_decorator,
    "jit(f)": ctx_jit_assign,
    "partial(jit,static)": ctx_partial_jit_static,
    "vmap": ctx_vmap,
    "grad": ctx_grad,
    "value_and_grad": ctx_value_and_grad,
    "lax.scan": ctx_scan,
    "lax.fori_loop": ctx_fori_loop,
    "lax.while_loop": ctx_while_loop,
    "lax.cond": ctx_cond,
    "checkpoint": ctx_checkpoint,
    "shard_map": ctx_shard_map,
    "pmap": ctx_pmap,
    "linen.apply": ctx_linen_apply,
    "linen.scan": ctx_linen_scan,
    "TrainState.apply_fn": ctx_trainstate,
    "nnx.jit": ctx_nnx_jit,
    "eqx.filter_jit": ctx_eqx_filter_jit,
    "eqx scan over modules": ctx_eqx_scan,
    "optax schedule": ctx_optax_schedule,
    "numpyro MCMC": ctx_numpyro_mcmc,
    "haiku transform": ctx_haiku_transform,
    "eager": ctx_eager,
    "jit(obj.method)": ctx_jit_bound_method,
    "jit by a helper": ctx_jit_by_helper,  # last: the rotation of the contexts above stays as verified
}
FRAMEWORKS = (
    "linen.apply",
    "linen.scan",
    "TrainState.apply_fn",
    "nnx.jit",
    "eqx.filter_jit",
    "eqx scan over modules",
    "optax schedule",
    "numpyro MCMC",
    "haiku transform",
)

# -- locations --------------------------------------------------------------------------------------------

LOCATIONS = (
    "inline",
    "helper_same",
    "helper_abs",
    "helper_rel",
    "reexport",
    "method",
    "nested_def",
    "lambda",
    "notebook",
)
# Framework contexts run a library's machinery (slow to verify): the locations that change what the linter
# must follow, the rest are covered by the core contexts.
FRAMEWORK_LOCATIONS = ("inline", "helper_same", "helper_abs", "method")
NUMPYRO_LOCATIONS = ("inline",)  # NUTS compiles for seconds per case


@dataclasses.dataclass(frozen=True)
class Case:
    id: str  # "<pitfall>|<context>|<location>|bad" or "...|good"
    pitfall: str
    code: str
    context: str
    location: str
    twin: bool
    files: dict[str, str]  # relative path -> text
    expect: tuple[str, int, int | None] | None  # (path, line, cell) of the pitfall's finding; None for a twin
    measure: str
    raises: str

    @property
    def pair(self) -> str:
        return self.id.rsplit("|", 1)[0]

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.files, sort_keys=True).encode()).hexdigest()[:16]


def _helper_def(n: Names, body: list[str], name: str, param: str | None = None) -> list[str]:
    return [f"def {name}({param or n.x}):", *indent(body), f"    return {n.y}"]


def _join(*blocks: list[str]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if not block:
            continue
        if out:
            out += ["", ""]
        out += block
    return out


def _place(n: Names, body: list[str], expr: str | None, location: str) -> tuple[list[str], list[str]]:
    """(the lines the traced function runs, the definitions the body lives in) for a location."""
    if location == "inline":
        return body, []
    if location in ("helper_same", "helper_abs", "helper_rel", "reexport", "notebook"):
        return [f"{n.y} = {n.helper}({n.x})"], _helper_def(n, body, n.helper)
    if location == "method":
        owner = [f"class {n.cls}:", *indent(_helper_def(n, body, n.method, f"self, {n.x}"))]
        return [f"{n.y} = {n.cls}().{n.method}({n.x})"], owner
    if location == "nested_def":
        return [*_helper_def(n, body, f"_{n.helper}_local"), f"{n.y} = _{n.helper}_local({n.x})"], []
    if location == "lambda":
        assert expr is not None
        inner = [f"{n.helper}_fn = lambda {n.x}: {fill(expr, n)}", f"{n.y} = {n.helper}_fn({n.x})"]
        if MARK in "".join(body):
            inner[0] += MARK
        return inner, []
    raise ValueError(location)


def _layout(n: Names, context: str, location: str, inner: list[str], support: list[str], owner: list[str]):
    """The project's files as lines (a notebook's cells start at a "\x00cell" line)."""
    imports, defs, run_body = CONTEXTS[context](n, inner)
    run_def = ["def run():", *indent(run_body)]
    main_block = ['if __name__ == "__main__":', "    print(run())"]
    files: dict[str, list[str]] = {}
    main_imports: list[str] = []
    main_support = [*support, *([""] * 2 if support and owner else []), *owner]
    if location in ("helper_abs", "helper_rel", "reexport"):
        files[f"{n.pkg}/{n.mod}.py"] = _join(n.header(), support, owner)
        files[f"{n.pkg}/__init__.py"] = [f"from .{n.mod} import {n.helper}"] if location == "reexport" else []
        main_imports = [
            {
                "helper_abs": f"from {n.pkg}.{n.mod} import {n.helper}",
                "reexport": f"from {n.pkg} import {n.helper}",
                "helper_rel": f"from .{n.mod} import {n.helper}",
            }[location]
        ]
        main_support = []
    header = [*n.header(), *imports, *main_imports]
    if location == "helper_rel":
        files[f"{n.pkg}/train.py"] = _join(header, _join(main_support, defs), run_def)
        files[f"{n.main}.py"] = [f"from {n.pkg}.train import run", "", "", *main_block]
    elif location == "notebook":
        cells = [header, main_support, _join(defs, run_def), ["result = run()"]]
        files[f"{n.main}.ipynb"] = [line for cell in cells for line in ["\x00cell", *cell]]
    else:
        files[f"{n.main}.py"] = _join(header, _join(main_support, defs), run_def, main_block)
    return files


def _texts(files: dict[str, list[str]]) -> tuple[dict[str, str], tuple[str, int, int | None] | None]:
    """The files' texts with the pitfall's mark removed, and where the mark was (path, line, cell)."""
    expect = None
    texts: dict[str, str] = {}
    for path, lines in files.items():
        if path.endswith(".ipynb"):
            cells: list[list[str]] = []
            for line in lines:
                if line == "\x00cell":
                    cells.append([])
                else:
                    cells[-1].append(line)
            for number, cell in enumerate(cells, 1):
                for k, line in enumerate(cell):
                    if line.endswith(MARK):
                        cell[k] = line[: -len(MARK)]
                        expect = (path, k + 1, number)
            texts[path] = _notebook(cells)
        else:
            for k, line in enumerate(lines):
                if line.endswith(MARK):
                    lines[k] = line[: -len(MARK)]
                    expect = (path, k + 1, None)
            texts[path] = "\n".join(lines) + "\n"
    return texts, expect


def build(p: Pitfall, context: str, location: str, twin: bool) -> Case:
    case_id = f"{p.id}|{context}|{location}|{'good' if twin else 'bad'}"
    n = dataclasses.replace(
        draw_names(case_id.rsplit("|", 1)[0], case_id), repeat=p.measure in ("counter", "ticks")
    )
    body = fill(p.good if twin else p.bad, n).split("\n")
    support = fill(p.support_good if twin else p.support_bad, n)
    inner, owner = _place(n, body, p.expr_good if twin else p.expr_bad, location)
    files = _layout(n, context, location, inner, support.split("\n") if support else [], owner)
    texts, expect = _texts(files)
    assert twin or expect is not None, case_id
    return Case(
        case_id, p.id, p.code, context, location, twin, texts, None if twin else expect, p.measure, p.raises
    )


def _notebook(cells: list[list[str]]) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": [line + "\n" for line in cell[:-1]] + cell[-1:],
                }
                for cell in cells
            ],
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


def applies(p: Pitfall, context: str, location: str) -> bool:
    if p.applies == EAGER and context != "eager":
        return False
    if p.applies == TRACED and context == "eager":
        return False
    if location == "lambda" and p.expr_bad is None:
        return False
    if p.locations is not None and location not in p.locations:
        return False
    if context == "numpyro MCMC":
        return location in NUMPYRO_LOCATIONS
    if context in FRAMEWORKS:
        return location in FRAMEWORK_LOCATIONS
    return True


CORE_SHARE = 4  # rules per (core context, location) cell away from "inline", rotated over the contexts
FRAMEWORK_SHARE = 3


def _variant(rule: str, context: str, location: str) -> Pitfall | None:
    """The seeded choice among the rule's pitfalls that apply in this cell."""
    fitting = [p for p in PITFALLS if p.code == rule and applies(p, context, location)]
    if not fitting:
        return None
    return random.Random(zlib.crc32(f"{SEED}:{rule}:{context}:{location}".encode())).choice(fitting)


def selected() -> Iterator[tuple[Pitfall, str, str]]:
    """(pitfall, context, location) of every cell of the matrix, in a stable order.

    Every rule in every context at "inline" (and every rule in eager code everywhere); elsewhere a share of
    the rules per cell, rotated over the contexts so that each location meets every rule."""
    for k, context in enumerate(CONTEXTS):
        for location in LOCATIONS:
            chosen = [v for rule in RULES if (v := _variant(rule, context, location)) is not None]
            share = len(chosen)
            if location != "inline" and context != "eager":
                share = FRAMEWORK_SHARE if context in FRAMEWORKS else CORE_SHARE
            if share < len(chosen):
                start = (k * share) % len(chosen)
                chosen = (chosen + chosen)[start : start + share]
            for p in chosen:
                yield p, context, location


def all_pairs() -> Iterator[tuple[Case, Case]]:
    """Every (pitfall, twin) of the matrix, in a stable order."""
    for p, context, location in selected():
        yield build(p, context, location, False), build(p, context, location, True)


# -- the data files and the tree the linter reads -----------------------------------------------------------

HERE = __import__("pathlib").Path(__file__).resolve().parent
VERIFIED = HERE / "verified.json"
GAPS = HERE / "gaps.json"


def verified_pairs() -> list[tuple[Case, Case]]:
    """The pairs `tools/verify_matrix.py` verified against JAX (its file must be current: see the test)."""
    table = json.loads(VERIFIED.read_text())["pairs"]
    return [(bad, good) for bad, good in all_pairs() if table.get(bad.pair, {}).get("verified")]


def load_gaps() -> dict[str, str]:
    """Known gaps: case id -> the one reason it fails (a missed pitfall, or "false positive" for a twin)."""
    return json.loads(GAPS.read_text())["gaps"] if GAPS.exists() else {}


def write_tree(cases: list[Case], root) -> dict[str, str]:
    """Write the cases' files under `root` (their names never collide); answers path -> case id."""
    owner: dict[str, str] = {}
    for case in cases:
        for path, text in case.files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            owner[path] = case.id
    return owner


def findings_by_case(
    findings, root, owner: dict[str, str]
) -> dict[str, set[tuple[str, str, int, int | None]]]:
    """case id -> {(code, path, line, cell)} of the findings in its files."""
    import os

    found: dict[str, set[tuple[str, str, int, int | None]]] = {}
    for f in findings:
        path = os.path.relpath(f.path, root).replace(os.sep, "/")
        found.setdefault(owner[path], set()).add((f.code, path, f.line, f.cell))
    return found


def outcome(case: Case, found: set[tuple[str, str, int, int | None]]) -> bool:
    """Whether the linter did right by the case: the pitfall's rule on its line, or nothing on a twin."""
    if case.twin:
        return not found
    assert case.expect is not None
    path, line, cell = case.expect
    return (case.code, path, line, cell) in found
