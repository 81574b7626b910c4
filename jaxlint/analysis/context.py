"""`RuleContext`: what a rule may ask of the analysis at a node (the `ctx` of every hook).

`flow.walk.Frame` implements it; rules and the analysis helpers they call are typed against this Protocol, so the
walker's internals (environments, rounds, silent passes) stay out of the rules' reach.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import libcst as cst

if TYPE_CHECKING:
    from .binding.index import ModuleIndex, Unit
    from .values.abstract import Value


class RuleContext(Protocol):
    unit: Unit  # the function (or the module) being walked
    kind: int  # transforms.NONE / GRAD / STRICT / HOST: how the unit runs
    context: str  # "jax.jit-compiled 'step'", for messages
    own_names: set[str] | None  # names of a comprehension or class body; None in a function's own frame
    declared_global: set[str]  # `global`/`nonlocal` names seen so far in this frame

    @property
    def parent(self) -> RuleContext | None: ...

    @property
    def index(self) -> ModuleIndex: ...

    @property
    def function(self) -> str | None: ...

    def flags(self, node: cst.BaseExpression) -> int: ...

    def traced(self, node: cst.BaseExpression) -> bool: ...

    def value(
        self, node: cst.BaseExpression
    ) -> Value: ...  # flags and, where known, structure (`values/abstract.py`)

    def qualname(self, node: cst.BaseExpression) -> str | None: ...

    def is_module_global(self, name: str) -> bool: ...

    def report(self, rule: Any, node: cst.CSTNode, message: str, fix: Any = None) -> None: ...
