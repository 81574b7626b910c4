"""The coverage matrix's depth axis: a pitfall one to three hops away from the code that traces it.

A case is PITFALL x CONTEXT x CHAIN. The CONTEXT (from `matrix_cases.CONTEXTS`) traces a function; that
function reaches the pitfall's lines through a CHAIN of 1-3 HOPS, each one way real code hands work on:

  helper        a function of the same module:                       y = helper1(x)
  module        a function of another module of the package:         from pkg.ops2 import helper2 / ops2.helper2(x)
  method_obj    a method of a module-level object:                   y = OBJ1.compute(x)
  method_self   a method of the same class, through `self`:          y = self.compute2(x)   (after a method hop)
  closure       a nested def closing over the caller's value:        def _helper1(): ... ; y = _helper1()
  lambda        a lambda bound to a name and called:                 helper1_fn = lambda x: NEXT ; y = helper1_fn(x)
  higher_order  a function passed to another function that calls it: y = call_with1(helper1, x)
  transform     a function handed to a JAX transformation:           y = jax.checkpoint(helper1)(x)
  partial       a `functools.partial` of a function:                 y = partial(helper1, scale=1.0)(x)
  lookup        a function fetched from a dict, list or class:       y = OPS1["helper1"](x)
  decorator     a function under a user decorator with functools.wraps: @keep1 def helper1(x): ...

The chains are drawn by seed so that, for every rule and depth, every hop kind appears at every position it may
take. Surface names come from `matrix_cases.draw_names`. Like `matrix_cases`, this module imports no JAX:
`python tools/verify_matrix.py --depth` runs the pairs against real JAX (`verified_depth.json`) and
`tests/matrix/test_depth.py` lints the verified ones.
"""

from __future__ import annotations

import dataclasses
import json
import random
import zlib
from collections.abc import Iterator

import matrix_cases as mc

HOPS = (
    "helper",
    "module",
    "method_obj",
    "method_self",
    "closure",
    "lambda",
    "higher_order",
    "transform",
    "partial",
    "lookup",
    "decorator",
)
DEPTHS = (1, 2, 3)
# The contexts a chain starts from: the ways plain code gets traced, and one per framework family.
DEPTH_CONTEXTS = (
    "jit",
    "jit(f)",
    "partial(jit,static)",
    "vmap",
    "grad",
    "value_and_grad",
    "lax.scan",
    "lax.fori_loop",
    "lax.while_loop",
    "lax.cond",
    "checkpoint",
    "linen.apply",
    "TrainState.apply_fn",
    "eqx.filter_jit",
    "haiku transform",
)
FRAMEWORKS = tuple(c for c in DEPTH_CONTEXTS if c in mc.FRAMEWORKS)
# The matrix's location a hop stands for, for the pitfalls that hold only in some locations (JAX501 and JAX503
# judge programs, so a helper module of a package is library code; JAX405's pitfall is a class of its own).
HOP_LOCATION = {
    "helper": "helper_same",
    "module": "helper_abs",
    "method_obj": "method",
    "method_self": "method",
    "closure": "nested_def",
    "lambda": "lambda",
    "higher_order": "helper_same",
    "transform": "helper_same",
    "partial": "helper_same",
    "lookup": "helper_same",
    "decorator": "helper_same",
}
HERE = mc.HERE
VERIFIED = HERE / "verified_depth.json"
GAPS = HERE / "gaps_depth.json"


def depth_of(case: mc.Case) -> int:
    return len(hops_of(case))


def hops_of(case: mc.Case) -> tuple[str, ...]:
    return tuple(case.location.split(">"))


# -- which chains ----------------------------------------------------------------------------------------


def _allowed(p: mc.Pitfall, hops: tuple[str, ...]) -> bool:
    for k, hop in enumerate(hops):
        last = k == len(hops) - 1
        if p.locations is not None and HOP_LOCATION[hop] not in p.locations:
            return False
        if hop == "method_self" and (k == 0 or hops[k - 1] not in ("method_obj", "method_self")):
            return False
        if hop == "lambda" and last and p.expr_bad is None:
            return False
        if hop == "transform" and p.code == "JAX401" and p.applies == mc.EAGER:
            return False  # the jit would be built in traced code, where it is inlined: not the pitfall
        if hop == "lambda" and not last and hops[k + 1] in ("closure", "lambda"):
            return False  # a lambda's body is an expression: no def (nor a bound lambda) inside it
    return True


def _pitfalls() -> list[mc.Pitfall]:
    return [p for p in mc.PITFALLS if p.applies in (mc.TRACED, mc.BOTH)]


def chains(p: mc.Pitfall, depth: int) -> list[tuple[str, ...]]:
    """Chains of `depth` hops for the pitfall: every hop kind at every position it may take, drawn by seed."""
    rng = random.Random(zlib.crc32(f"{mc.SEED}:depth:{p.id}:{depth}".encode()))
    out: list[tuple[str, ...]] = []
    for position in range(depth):
        for hop in HOPS:
            if any(chain[position] == hop for chain in out):
                continue
            for _ in range(200):
                chain = tuple(hop if k == position else rng.choice(HOPS) for k in range(depth))
                if _allowed(p, chain):
                    out.append(chain)
                    break
    return out


def selected() -> Iterator[tuple[mc.Pitfall, str, tuple[str, ...]]]:
    """(pitfall, context, chain) for every depth case, in a stable order. One pitfall per rule and chain (the
    rule's pitfalls rotate), and the contexts rotate over the chains."""
    by_rule: dict[str, list[mc.Pitfall]] = {}
    for p in _pitfalls():
        by_rule.setdefault(p.code, []).append(p)
    turn = 0
    for rule in sorted(by_rule):
        for depth in DEPTHS:
            for k in range(len(HOPS)):
                p = by_rule[rule][(k + depth) % len(by_rule[rule])]
                drawn = chains(p, depth)
                if k >= len(drawn):
                    break
                context = DEPTH_CONTEXTS[turn % len(DEPTH_CONTEXTS)]
                turn += 1
                if not mc.applies(p, context, "inline"):
                    context = "jit"
                yield p, context, drawn[k]


# -- pitfalls around a jitted call ---------------------------------------------------------------------------
# The driver (eager code in `run()`: a loop, a timer, a loop over rows) calls a chain of hops whose last body
# builds, calls or feeds the jitted work. A family's context names its driver. The twin changes what its rule
# asks to change: the last body (JAX401: a jit built once) or the driver (JAX301: a key split per iteration;
# JAX403: the timed result waited for; JAX404: vmap over the rows instead of the loop).

HEAVY = (
    "@{jit}\ndef _heavy(v):\n    m = {jnp}.outer({jnp}.tile(v, 200), {jnp}.tile(v, 200))\n"
    "    return v + (m @ m).mean() * 1e-9"
)
HEAVY_BOUND = (
    "def _heavy_impl(v):\n    m = {jnp}.outer({jnp}.tile(v, 200), {jnp}.tile(v, 200))\n"
    "    return v + (m @ m).mean() * 1e-9\n\n\n_heavy = {jit}(_heavy_impl)"
)
ENCODE = "@{jit}\ndef _encode(v):\n    return {jnp}.tanh(v * 2.0)"
NOISE = "@{jit}\ndef _noise(k):\n    return {rnd}.normal(k, (3,))"

AROUND: tuple[mc.Pitfall, ...] = (
    mc.Pitfall(
        "JAX401-helper-lambda",
        "JAX401",
        "{y} = {jit}(lambda v: v * 2)({x})  #!",
        "{y} = _double({x})",
        "compiles",
        applies=mc.EAGER,
        support_good="_double = {jit}(lambda v: v * 2)",
        expr_bad="{jit}(lambda v: v * 2)({x})",
        expr_good="_double({x})",
    ),
    mc.Pitfall(
        "JAX401-helper-closure",
        "JAX401",
        "scale = {x}.shape[0]\n{y} = {jit}(lambda v: v * scale)({x})  #!",
        "{y} = _times({x}, {x}.shape[0])",
        "compiles",
        applies=mc.EAGER,
        support_good="_times = {jit}(lambda v, s: v * s)",
        expr_bad="{jit}(lambda v: v * {x}.shape[0])({x})",
        expr_good="_times({x}, {x}.shape[0])",
    ),
    mc.Pitfall(
        "JAX301-loop-sampler",
        "JAX301",
        "{y} = {x} + {rnd}.normal(key, (3,))",
        "{y} = {x} + {rnd}.normal(key, (3,))",
        "draws",
        applies=mc.EAGER,
        expr_bad="{x} + {rnd}.normal(key, (3,))",
        expr_good="{x} + {rnd}.normal(key, (3,))",
    ),
    mc.Pitfall(
        "JAX301-loop-jitted",
        "JAX301",
        "{y} = {x} + _noise(key)",
        "{y} = {x} + _noise(key)",
        "draws",
        applies=mc.EAGER,
        support_bad=NOISE,
        support_good=NOISE,
        expr_bad="{x} + _noise(key)",
        expr_good="{x} + _noise(key)",
    ),
    mc.Pitfall(
        "JAX403-timed-jit",
        "JAX403",
        "{y} = _heavy({x})",
        "{y} = _heavy({x})",
        "timing",
        applies=mc.EAGER,
        support_bad=HEAVY,
        support_good=HEAVY,
        expr_bad="_heavy({x})",
        expr_good="_heavy({x})",
    ),
    mc.Pitfall(
        "JAX403-timed-bound",
        "JAX403",
        "{y} = _heavy({x}) * 2.0",
        "{y} = _heavy({x}) * 2.0",
        "timing",
        applies=mc.EAGER,
        support_bad=HEAVY_BOUND,
        support_good=HEAVY_BOUND,
        expr_bad="_heavy({x}) * 2.0",
        expr_good="_heavy({x}) * 2.0",
    ),
    mc.Pitfall(
        "JAX404-rows-jitted",
        "JAX404",
        "{y} = _encode({x}) + 1.0",
        "{y} = _encode({x}) + 1.0",
        "rowcalls",
        applies=mc.EAGER,
        support_bad=ENCODE,
        support_good=ENCODE,
        expr_bad="_encode({x}) + 1.0",
        expr_good="_encode({x}) + 1.0",
    ),
    mc.Pitfall(
        "JAX404-rows-jnp",
        "JAX404",
        "{y} = {jnp}.tanh({x} * 2.0) + 1.0",
        "{y} = {jnp}.tanh({x} * 2.0) + 1.0",
        "rowcalls",
        applies=mc.EAGER,
        expr_bad="{jnp}.tanh({x} * 2.0) + 1.0",
        expr_good="{jnp}.tanh({x} * 2.0) + 1.0",
    ),
)
# The driver of each family: its context's name, and the chain's parameters.
DRIVERS = {
    "JAX401": ("loop", "{x}"),
    "JAX301": ("loop key", "key, {x}"),
    "JAX403": ("timer", "{x}"),
    "JAX404": ("rows", "{x}"),
}
AROUND_CONTEXTS = frozenset(context for context, _ in DRIVERS.values())


def _driver(code: str, n: mc.Names, pre: list[str], expr: str, twin: bool) -> tuple[list[str], list[str]]:
    """(imports, run()'s body) of the driver around the chain's call (`pre` defines what the call needs)."""
    x, y = n.x, n.y
    if code == "JAX401":
        return [], [
            f"{x} = {mc.X(n)}",
            "for _ in range(3):",
            *mc.indent([*pre, f"{y} = {expr}"]),
            f"return {y}",
        ]
    if code == "JAX301":
        start = ("loop_key = " if twin else "key = ") + f"{n.rnd}.key(0)"
        split = [f"loop_key, key = {n.rnd}.split(loop_key)"] if twin else []
        mark = "" if twin else mc.MARK
        loop = [*split, *pre, f"draws.append({expr}){mark}"]
        body = [f"{x} = {mc.X(n)}", start, "draws = []", "for _ in range(3):", *mc.indent(loop)]
        return [], [*body, f"return {n.jnp}.stack(draws)"]
    if code == "JAX403":
        call = f"jax.block_until_ready({expr})" if twin else expr
        mark = "" if twin else mc.MARK
        body = [f"{x} = {mc.X(n)}", *pre, f"{y} = {expr}", f"jax.block_until_ready({y})"]
        body += ["t0 = time.perf_counter()", f"{y} = {call}", f"elapsed = time.perf_counter() - t0{mark}"]
        return ["import time"], [*body, f"jax.block_until_ready({y})", f"return {y}, elapsed"]
    if code == "JAX404":
        rows = f"rows = {n.jnp}.arange(12.0).reshape(4, 3)"
        if twin:
            per_row = [f"def _per_row({x}):", *mc.indent([*pre, f"return {expr}"])]
            return [], [*per_row, "", rows, "return jax.vmap(_per_row)(rows)"]
        loop = [f"for {x} in rows:{mc.MARK}", *mc.indent([*pre, f"row_results.append({expr})"])]
        return [], [rows, "row_results = []", *loop, f"return {n.jnp}.stack(row_results)"]
    raise ValueError(code)


def selected_around() -> Iterator[tuple[mc.Pitfall, str, tuple[str, ...]]]:
    """(pitfall, driver, chain) for the families around a jitted call: as `selected`, one driver per rule."""
    by_rule: dict[str, list[mc.Pitfall]] = {}
    for p in AROUND:
        by_rule.setdefault(p.code, []).append(p)
    for rule in sorted(by_rule):
        for depth in DEPTHS:
            for k in range(len(HOPS)):
                p = by_rule[rule][(k + depth) % len(by_rule[rule])]
                drawn = chains(p, depth)
                if k >= len(drawn):
                    break
                yield p, DRIVERS[rule][0], drawn[k]


# -- building a case -------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Program:
    """The project being written: per module, its imports and its top-level blocks (in definition order)."""

    n: mc.Names
    args: str = ""  # the chain's parameters and arguments ("{x}" unless the family passes more, as a key)
    imports: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    blocks: dict[str, list[list[str]]] = dataclasses.field(default_factory=dict)
    classes: dict[str, tuple[str, list[list[str]]]] = dataclasses.field(default_factory=dict)

    def add(self, module: str, block: list[str]) -> None:
        self.blocks.setdefault(module, []).append(block)

    def need(self, module: str, line: str) -> None:
        have = self.imports.setdefault(module, [])
        if line not in have:
            have.append(line)


def _def(name: str, params: str, body: list[str], n: mc.Names) -> list[str]:
    return [f"def {name}({params}):", *mc.indent(body), f"    return {n.y}"]


def _chain(
    prog: _Program,
    p: mc.Pitfall,
    hops: tuple[str, ...],
    k: int,
    module: str,
    cls: str | None,
    twin: bool,
) -> tuple[list[str], str]:
    """(lines before the call, the call's expression) that compute {y} from {x} through hops[k:], in a function
    of `module` (a method of `cls` when given). Definitions the hops need are added to `prog`."""
    n = prog.n
    if k == len(hops):
        raise AssertionError("the body is placed by the last hop")
    hop = hops[k]
    last = k == len(hops) - 1
    name = f"{n.helper}{k + 1}"

    def body_in(target_module: str, target_cls: str | None) -> list[str]:
        """The callee's body: the pitfall's lines, or the next hop's call."""
        if last:
            support = mc.fill(p.support_good if twin else p.support_bad, n)
            if support:
                prog.add(target_module, support.split("\n"))
            return mc.fill(p.good if twin else p.bad, n).split("\n")
        pre, expr = _chain(prog, p, hops, k + 1, target_module, target_cls, twin)
        return [*pre, f"{n.y} = {expr}"]

    x = prog.args or n.x
    if hop == "helper":
        prog.add(module, _def(name, x, body_in(module, None), n))
        return [], f"{name}({x})"
    if hop == "module":
        target = f"{n.pkg}/{n.mod}{k + 1}.py"
        prog.imports.setdefault(target, [])
        prog.add(target, _def(name, x, body_in(target, None), n))
        dotted = target[:-3].replace("/", ".")
        if (k + len(n.fn)) % 2:
            prog.need(module, f"from {dotted} import {name}")
            return [], f"{name}({x})"
        prog.need(module, f"from {n.pkg} import {n.mod}{k + 1}")
        return [], f"{n.mod}{k + 1}.{name}({x})"
    if hop == "method_obj":
        owner = f"{n.cls}{k + 1}"
        method = f"{n.method}{k + 1}"
        methods: list[list[str]] = []
        prog.classes[owner] = (module, methods)
        methods.append(_def(method, f"self, {x}", body_in(module, owner), n))
        prog.add(module, [f"\x00class {owner}"])
        prog.add(module, [f"{owner.upper()} = {owner}()"])
        return [], f"{owner.upper()}.{method}({x})"
    if hop == "method_self":
        assert cls is not None
        method = f"{n.method}{k + 1}"
        prog.classes[cls][1].append(_def(method, f"self, {x}", body_in(module, cls), n))
        return [], f"self.{method}({x})"
    if hop == "closure":
        inner = f"_{name}"
        names = [a.strip() for a in x.split(",")]
        body = body_in(module, cls)
        rebind = [f"{a} = {a}_outer{k + 1}" for a in names]
        nested = [f"def {inner}():", *mc.indent([*rebind, *body]), f"    return {n.y}"]
        return [f"{a}_outer{k + 1} = {a}" for a in names] + nested, f"{inner}()"
    if hop == "lambda":
        fn = f"{name}_fn"
        if last:
            support = mc.fill(p.support_good if twin else p.support_bad, n)
            if support:
                prog.add(module, support.split("\n"))
            assert p.expr_bad is not None and p.expr_good is not None
            line = f"{fn} = lambda {x}: {mc.fill(p.expr_good if twin else p.expr_bad, n)}"
            if not twin and mc.MARK in p.bad:
                line += mc.MARK
            return [line], f"{fn}({x})"
        pre, expr = _chain(prog, p, hops, k + 1, module, cls, twin)
        assert not pre, "a lambda's body is one expression"
        return [f"{fn} = lambda {x}: {expr}"], f"{fn}({x})"
    if hop == "higher_order":
        caller = f"call_with{k + 1}"
        prog.add(module, _def(name, x, body_in(module, None), n))
        if x == n.x:
            prog.add(module, [f"def {caller}(fn, value):", "    return fn(value)"])
        else:
            prog.add(module, [f"def {caller}(fn, {x}):", f"    return fn({x})"])
        return [], f"{caller}({name}, {x})"
    if hop == "transform":
        prog.add(module, _def(name, x, body_in(module, None), n))
        transform = "jax.checkpoint" if (k + len(n.x)) % 2 else n.jit
        return [], f"{transform}({name})({x})"
    if hop == "partial":
        prog.add(module, _def(name, f"{x}, scale", body_in(module, None), n))
        if (k + len(n.y)) % 2:
            prog.add(module, [f"{name}_bound = {n.partial}({name}, scale=1.0)"])
            return [], f"{name}_bound({x})"
        return [], f"{n.partial}({name}, scale=1.0)({x})"
    if hop == "lookup":
        prog.add(module, _def(name, x, body_in(module, None), n))
        table = f"OPS{k + 1}"
        style = (k + len(n.helper)) % 3
        if style == 0:
            prog.add(module, [f'{table} = {{"{name}": {name}}}'])
            return [], f'{table}["{name}"]({x})'
        if style == 1:
            prog.add(module, [f"{table} = [{name}]"])
            return [], f"{table}[0]({x})"
        prog.add(module, [f"class {table}:", f"    run = staticmethod({name})"])
        return [], f"{table}.run({x})"
    if hop == "decorator":
        deco = f"keep{k + 1}"
        prog.need(module, "import functools")
        prog.add(
            module,
            [
                f"def {deco}(fn):",
                "    @functools.wraps(fn)",
                "    def wrapper(*args, **kwargs):",
                "        return fn(*args, **kwargs)",
                "",
                "    return wrapper",
            ],
        )
        prog.add(module, [f"@{deco}", *_def(name, x, body_in(module, None), n)])
        return [], f"{name}({x})"
    raise ValueError(hop)


def _module_lines(prog: _Program, module: str) -> list[str]:
    """A module's definitions, classes written where they were first named (their methods gathered)."""
    out: list[list[str]] = []
    for block in prog.blocks.get(module, []):
        if block and block[0].startswith("\x00class "):
            owner = block[0].split(" ", 1)[1]
            methods = prog.classes[owner][1]
            lines = [f"class {owner}:"]
            for k, method in enumerate(methods):
                lines += ([""] if k else []) + mc.indent(method)
            out.append(lines)
        else:
            out.append(block)
    return mc._join(*out)


def build(p: mc.Pitfall, context: str, hops: tuple[str, ...], twin: bool) -> mc.Case:
    chain = ">".join(hops)
    case_id = f"{p.id}|{context}|{chain}|{'good' if twin else 'bad'}"
    n = dataclasses.replace(
        mc.draw_names(case_id.rsplit("|", 1)[0], case_id), repeat=p.measure in ("counter", "ticks")
    )
    around = p.applies == mc.EAGER
    prog = _Program(n, mc.fill(DRIVERS[p.code][1], n) if around else "")
    main = f"{n.main}.py"
    pre, expr = _chain(prog, p, hops, 0, main, None, twin)
    if around:
        defs: list[str] = []
        imports, run_body = _driver(p.code, n, pre, expr, twin)
    else:
        inner = [*pre, f"{n.y} = {expr}"]
        imports, defs, run_body = mc.CONTEXTS[context](n, inner)
    files: dict[str, list[str]] = {}
    for module in prog.imports:
        if module != main:
            files[module] = mc._join(n.header() + prog.imports[module], _module_lines(prog, module))
    if any(path.startswith(f"{n.pkg}/") for path in files):
        files[f"{n.pkg}/__init__.py"] = []
    header = [*n.header(), *imports, *prog.imports.get(main, [])]
    run_def = ["def run():", *mc.indent(run_body)]
    main_block = ['if __name__ == "__main__":', "    print(run())"]
    files[main] = mc._join(header, _module_lines(prog, main), defs, run_def, main_block)
    texts, expect = mc._texts(files)
    assert twin or expect is not None, case_id
    return mc.Case(
        case_id, p.id, p.code, context, chain, twin, texts, None if twin else expect, p.measure, p.raises
    )


def all_pairs() -> Iterator[tuple[mc.Case, mc.Case]]:
    for p, context, hops in [*selected(), *selected_around()]:
        yield build(p, context, hops, False), build(p, context, hops, True)


def verified_pairs() -> list[tuple[mc.Case, mc.Case]]:
    table = json.loads(VERIFIED.read_text())["pairs"]
    return [(bad, good) for bad, good in all_pairs() if table.get(bad.pair, {}).get("verified")]


def load_gaps() -> dict[str, str]:
    return json.loads(GAPS.read_text())["gaps"] if GAPS.exists() else {}
