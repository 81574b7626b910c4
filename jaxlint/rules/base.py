"""What a rule is: metadata, a doc in fixed sections, and hooks the flow walk calls.

A rule subclasses `Rule`, sets the class attributes, and defines any of these hooks, which the flow walk
(`jaxlint.analysis.flow.walk`) calls:
- `on_module(module, ctx)`: once per file, before anything else;
- `on_unit(unit, ctx)`: when the body of a unit (the module, a function, a lambda) is about to be walked, with
  that unit's own `ctx`; a function may be walked more than once (when callers show more of its parameters
  traced), and a finding reported twice for the same node and rule is kept once;
- `visit_<NodeType>(node, ctx)`: each libcst node of that type, parents before children; a def or lambda is
  visited where it is defined, with the enclosing scope's `ctx`;
- `on_assign(target, value, statement, ctx)`: each assignment target (`value` is None inside unpacking);
- `on_delete(target, statement, ctx)`.
`ctx` is a `jaxlint.analysis.context.RuleContext`: `ctx.traced(expr)`, `ctx.flags(expr)`, `ctx.qualname(expr)`,
`ctx.kind`, `ctx.context`, `ctx.unit`, `ctx.index`, and `ctx.report(self, node, message, fix=None)`.

Lifetime: the engine makes one instance of each selected rule per file (per linted text), so instance
attributes may hold per-file state and caches; nothing may be kept across files. Facts about the code that
more than one rule needs belong in `jaxlint.analysis` (memoised on `ModuleIndex`/`Unit`), not in a rule.
Rules never parse, never resolve imports themselves, never import another rule module and never import jax.
"""

from __future__ import annotations

from typing import ClassVar

DOC_SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety", "References")


_PHASES = ("on_module", "on_unit", "on_assign", "on_delete")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for --list-rules and SARIF
    doc: ClassVar[str]  # markdown, with the DOC_SECTIONS as `## ` headings
    severity: ClassVar[str] = "error"
    confirmable: ClassVar[bool] = False  # whether `--verify` can confirm it by tracing
    fix_safety: ClassVar[str | None] = None  # "safe", "unsafe" or None (no fix)
    # Whether its messages name line numbers ("first consumed at line 12"): the server's per-unit reuse
    # (`unit_reuse.py`) keeps such a finding only where no line moved.
    quotes_lines: ClassVar[bool] = False
    default_enabled: ClassVar[bool] = True
    # Its findings are errors raised while tracing: silent inside a `try` whose handler catches them (the flow
    # walk's `tracer_errors_caught`).
    trace_error: ClassVar[bool] = False

    def hooks(self) -> dict[str, object]:
        """Hook name -> bound method, for the walker's dispatch table."""
        names = _HOOK_NAMES.get(type(self))
        if names is None:  # dir() per instance cost a tenth of a second on 300 files: once per class
            names = _HOOK_NAMES[type(self)] = tuple(
                attr for attr in dir(type(self)) if attr.startswith("visit_") or attr in _PHASES
            )
        return {attr.removeprefix("visit_"): getattr(self, attr) for attr in names}


_HOOK_NAMES: dict[type, tuple[str, ...]] = {}
