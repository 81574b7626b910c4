"""Lint the coverage matrix's verified cases and rewrite its known gaps and the coverage page.

    python tools/matrix_gaps.py

Needs only jaxlint (no JAX: the cases were verified by `tools/verify_matrix.py`, whose `verified.json` it
reads). It writes `tests/matrix/gaps.json` (every verified pitfall the linter misses and every twin it flags,
one reason each, from REASONS below; an entry already in the file keeps its reason) and `docs/coverage.md`.
Run it after a change to the linter: a fixed gap leaves the file, and the strict xfail that held it is gone.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "matrix"))
sys.path.insert(0, str(ROOT))

import coverage_table  # noqa: E402
import depth_cases as dc  # noqa: E402
import matrix_cases as mc  # noqa: E402

import jaxlint  # noqa: E402
from jaxlint.config import Config  # noqa: E402

# Why a verified pitfall is missed, by what the case shares with others (first match wins). Each was diagnosed
# on the cases it matches (and on a minimal file); a new kind of miss falls through and must be diagnosed.
LIBRARY_X64 = (
    "by design: JAX501 checks programs only, and the helper's module is library code (enabling x64 is the "
    "program's choice)"
)
FRAMEWORK_TRACES = {
    "linen.apply": "the `__call__` of a flax.linen Module run by `jax.jit(model.apply)` is not taken as traced",
    "linen.scan": "the `__call__` of a flax.linen Module lifted by `nn.scan` is not taken as traced",
    "TrainState.apply_fn": (
        "the `__call__` of a flax.linen Module called through `state.apply_fn` in a jitted step is not taken "
        "as traced"
    ),
    "nnx.jit": "the `__call__` of an nnx.Module called from an `@nnx.jit` function is not taken as traced",
    "eqx.filter_jit": "`@eqx.filter_jit` is not taken as a transformation",
    "eqx scan over modules": (
        "the `__call__` of an equinox Module applied per layer by `lax.scan` over stacked modules is not "
        "taken as traced"
    ),
    "optax schedule": "a schedule passed to an optax optimizer is not known to run inside the jitted update",
    "numpyro MCMC": "a numpyro model run by `MCMC(NUTS(model))` is not known to be traced",
    "haiku transform": (
        "a function passed to `hk.transform` and run by `jax.jit(model.apply)` is not taken as traced"
    ),
}
REASONS: tuple[tuple[str, str, str, str], ...] = (
    # (rule or "*", context or "*", location or "*", reason)
    ("JAX501", "*", "helper_abs", LIBRARY_X64),
    ("JAX501", "*", "helper_rel", LIBRARY_X64),
    ("JAX501", "*", "reexport", LIBRARY_X64),
    (
        "JAX501",
        "*",
        "notebook",
        "missed: a float64 request in a notebook, a program (its last cell calls run())",
    ),
    (
        "JAX501",
        "*",
        "*",
        "missed: `.astype(jnp.float64)` on a value not known to be a JAX array (the parameter of a function "
        "the linter does not take as traced)",
    ),
    (
        "JAX103",
        "eager",
        "*",
        "missed: in eager code nothing says the parameter is a JAX array (its caller passes one)",
    ),
    *(("*", context, "*", "missed: " + why) for context, why in FRAMEWORK_TRACES.items()),
    (
        "*",
        "*",
        "reexport",
        "missed: a helper imported through its package's `__init__` re-export (`from pkg import helper`) is "
        "not known to be called from traced code (found when imported from its own module)",
    ),
    (
        "*",
        "*",
        "lambda",
        "missed: a lambda bound to a name in traced code and called there: its parameter is not taken as traced",
    ),
)
APPLY_METHOD = (
    "missed: a method named `apply` of a plain class, called on an instance from traced code, is not followed "
    "(the same method named otherwise is found)"
)
UNDIAGNOSED = "missed: not yet diagnosed"


def reason_for(case: mc.Case) -> str:
    if case.twin:
        return "false positive"
    for rule, context, location, reason in REASONS:
        if rule in ("*", case.code) and context in ("*", case.context) and location in ("*", case.location):
            return reason
    if case.location == "method" and mc.draw_names(case.pair, case.id).method == "apply":
        return APPLY_METHOD
    return UNDIAGNOSED


# A pitfall missed at depth is not yet diagnosed one by one: the depth axis was measured before the analysis
# that composes facts through calls (issue "Analysis v4"); the hop kinds of the misses are in docs/coverage.md.
DEPTH_UNDIAGNOSED = "missed at depth: not yet diagnosed (measured before the composing analysis)"


CROSS_MODULE_LOOP = (
    "missed: a jit built per call in a function of another module than the loop's: that the loop runs it is a "
    "fact of the caller's module, which the callee's module does not receive"
)


def _depth_reason(case: mc.Case) -> str:
    if case.twin:
        return "false positive"
    if case.code == "JAX501" and "module" in dc.hops_of(case):
        return LIBRARY_X64
    if case.code == "JAX401" and "module" in dc.hops_of(case):
        return CROSS_MODULE_LOOP
    return DEPTH_UNDIAGNOSED


def _gaps(pairs, old: dict[str, str], reason) -> dict[str, str]:
    cases = [case for pair in pairs for case in pair]
    with tempfile.TemporaryDirectory(prefix="jaxlint-matrix-") as tmp:
        root = Path(tmp)
        owner = mc.write_tree(cases, root)
        found = mc.findings_by_case(jaxlint.lint_paths([str(root)], config=Config(), jobs=2), root, owner)
    gaps = {}
    for case in cases:
        if not mc.outcome(case, found.get(case.id, set())):
            gaps[case.id] = old.get(case.id) or reason(case)
    return gaps


def _report(name: str, pairs, gaps: dict[str, str]) -> None:
    misses = sum(1 for k in gaps if k.endswith("|bad"))
    flagged = sorted(k for k in gaps if k.endswith("|good"))
    print(
        f"{name}: {len(pairs)} verified pairs: {misses} pitfalls missed "
        f"({100 * misses / max(len(pairs), 1):.1f}%),"
    )
    print(f"{len(flagged)} twins flagged (false positives){': ' if flagged else ''}" + ", ".join(flagged))


def main() -> int:
    pairs = mc.verified_pairs()
    gaps = _gaps(pairs, mc.load_gaps(), reason_for)
    mc.GAPS.write_text(
        json.dumps({"generated_by": "python tools/matrix_gaps.py", "gaps": gaps}, indent=1) + "\n"
    )
    _report("matrix", pairs, gaps)
    undiagnosed = sum(1 for v in gaps.values() if v == UNDIAGNOSED)
    if undiagnosed:
        print(f"{undiagnosed} gaps without a diagnosed reason: add a line to REASONS")
    if dc.VERIFIED.exists():
        depth_pairs = dc.verified_pairs()
        depth_gaps = _gaps(depth_pairs, dc.load_gaps(), _depth_reason)
        dc.GAPS.write_text(
            json.dumps({"generated_by": "python tools/matrix_gaps.py", "gaps": depth_gaps}, indent=1) + "\n"
        )
        _report("depth", depth_pairs, depth_gaps)
    coverage_table.DOC.write_text(coverage_table.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
