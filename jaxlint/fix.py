"""The fix record: what a rule offers to change, and what the engine collects for `--fix`.

A rule offers a fix by passing `fix=replace(node, replacement, SAFE or UNSAFE)` to `ctx.report`: `node` is a
node of the tree the engine parsed (matched by identity, never by text) and `replacement` a new node built
mostly from the old one's children, so formatting and comments inside reused nodes survive. `replace`
refuses an edit that would drop a comment. The engine turns each `Fix` into the finding's `fix` text (the
replacement source) and, for `--fix`, hands the `Fix` objects of unsuppressed findings to a `FixCollector`;
`autofix.py` applies them. The builders rules use to write replacements are in `rules/edits.py`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import libcst as cst

if TYPE_CHECKING:
    from .finding import Finding

SAFE, UNSAFE = "safe", "unsafe"


@dataclasses.dataclass(frozen=True, eq=False)
class Fix:
    """Replace `node` (by identity) with `replacement`; add the `imports` statements (source text, e.g.
    `import jax.numpy as jnp`) that the replacement needs after the module's leading imports."""

    node: cst.CSTNode
    replacement: cst.CSTNode
    safety: str = SAFE
    imports: tuple[str, ...] = ()


def replace(
    node: cst.CSTNode, replacement: cst.CSTNode, safety: str = SAFE, imports: tuple[str, ...] = ()
) -> Fix | None:
    """A fix, or None when the replacement would lose a comment of the original."""
    if _count_comments(replacement) < _count_comments(node):
        return None
    return Fix(node, replacement, safety, imports)


def _count_comments(node: cst.CSTNode) -> int:
    """The comments under `node`, reached through its fields (libcst's `children` runs a visitor per node:
    most of a fix's cost on a module with many findings)."""
    count = 0
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Comment:
            count += 1
            continue
        kind = type(current)
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(field.name for field in dataclasses.fields(kind))
        for name in names:
            value = getattr(current, name)
            if isinstance(value, cst.CSTNode):
                stack.append(value)
            elif type(value) is tuple or type(value) is list:
                stack.extend(item for item in value if isinstance(item, cst.CSTNode))
    return count


_FIELDS: dict[type, tuple[str, ...]] = {}  # node class -> its fields' names


def describe(module: cst.Module, fix: Any, default_safety: str | None) -> tuple[str | None, str | None]:
    """The (replacement source, safety) a finding shows for its fix."""
    if fix is None:
        return None, None
    if isinstance(fix, Fix):
        return module.code_for_node(fix.replacement), fix.safety
    return str(fix), default_safety


class FixCollector:
    """Filled by the engine: the module it parsed and the (finding, fix) pairs of unsuppressed findings."""

    def __init__(self) -> None:
        self.module: cst.Module | None = None
        self.items: list[tuple[Finding, Fix]] = []

    def add(self, module: cst.Module, finding: Finding, fix: Any) -> None:
        if isinstance(fix, Fix):
            self.module = module
            self.items.append((finding, fix))
