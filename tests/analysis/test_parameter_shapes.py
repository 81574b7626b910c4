"""Every rule fixture with its defs' parameters made keyword-only, or `*args` only, lints without an internal error.

The analysis once took a def's first positional parameter for `self` without asking whether it had one: a helper
`def helper(*, p, block_state)` reading `block_state.valid` under jit raised IndexError (JAX000) and the file's
other findings were lost.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from jaxlint import lint_source

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "rules").glob("JAX*.py"))


class _Reshape(cst.CSTTransformer):
    """`def f(a, b=1, *, c)` -> `def f(*, a, b=1, c)` (keyword-only) or `def f(*args, c)` (star)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def leave_Parameters(self, original: cst.Parameters, updated: cst.Parameters) -> cst.Parameters:
        positional = [*updated.posonly_params, *updated.params]
        if not positional:
            return updated
        if self.mode == "star":
            return updated.with_changes(posonly_params=(), params=(), star_arg=cst.Param(cst.Name("args")))
        star = updated.star_arg if isinstance(updated.star_arg, cst.Param) else cst.ParamStar()
        return updated.with_changes(
            posonly_params=(), params=(), star_arg=star, kwonly_params=(*positional, *updated.kwonly_params)
        )


@pytest.mark.parametrize("mode", ["keyword_only", "star"])
def test_reshaped_parameters_never_crash(mode: str) -> None:
    crashed = []
    for fixture in FIXTURES:
        source = cst.parse_module(fixture.read_text(encoding="utf-8")).visit(_Reshape(mode)).code
        crashed += [
            f"{fixture.name}: {f.message}" for f in lint_source(source, fixture.name) if f.code == "JAX000"
        ]
    assert not crashed, "\n".join(crashed)
