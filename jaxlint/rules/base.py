"""What a rule is: metadata, a doc in fixed sections, and hooks the flow walk calls.

A rule subclasses `Rule`, sets the class attributes, and defines any of:
- `visit_<NodeType>(node, ctx)`: called for each libcst node of that type, parents before children;
- `on_assign(target, value, statement, ctx)`: each assignment target (`value` is None inside unpacking);
- `on_delete(target, statement, ctx)`.
`ctx` is the `jaxlint.analysis.Frame` of the function being walked: `ctx.traced(expr)`, `ctx.flags(expr)`,
`ctx.qualname(expr)`, `ctx.kind`, `ctx.context`, and `ctx.report(self, node, message, fix=None)`.
Rules never parse, never resolve imports themselves and never import jax.
"""

from __future__ import annotations

from typing import ClassVar

DOC_SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety", "References")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for --list-rules and SARIF
    doc: ClassVar[str]  # markdown, with the DOC_SECTIONS as `## ` headings
    severity: ClassVar[str] = "error"
    confirmable: ClassVar[bool] = False  # whether `--verify` can confirm it by tracing
    fix_safety: ClassVar[str | None] = None  # "safe", "unsafe" or None (no fix)
    default_enabled: ClassVar[bool] = True

    def __init__(self, settings: object | None = None) -> None:
        self.settings = settings

    def hooks(self) -> dict[str, object]:
        """Hook name -> bound method, for the walker's dispatch table."""
        found = {}
        for attr in dir(type(self)):
            if attr.startswith("visit_") or attr in ("on_assign", "on_delete"):
                found[attr.removeprefix("visit_")] = getattr(self, attr)
        return found
