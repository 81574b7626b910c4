"""Rule documentation: the table for --list-rules and the README, and one rule's doc for --explain."""

from __future__ import annotations

from .rules import ALL_RULES, Rule

# Confirmed by counting recompiles in a real run (`jaxlint --verify --run`), not by tracing (`--verify`);
# jaxlint.runtime.confirmable.RECOMPILE_CODES says the same.
_CONFIRMED_BY_RUN = frozenset({"JAX401", "JAX402"})


def _confirmed_by(rule: type[Rule]) -> str:
    if not rule.confirmable:
        return "—"
    return "--run" if rule.code in _CONFIRMED_BY_RUN else "yes"


def rule_table() -> str:
    """A markdown table of every rule; the README embeds the same table (a test keeps them in step)."""
    lines = ["| code | name | summary | default | fix | verify |", "| --- | --- | --- | --- | --- | --- |"]
    for rule in ALL_RULES:
        lines.append(
            f"| {rule.code} | {rule.name} | {rule.summary} | {'on' if rule.default_enabled else 'opt-in'} "
            f"| {rule.fix_safety or '—'} | {_confirmed_by(rule)} |"
        )
    return "\n".join(lines) + "\n"


def explain(rule: type[Rule]) -> str:
    header = f"# {rule.code} {rule.name}\n\n{rule.summary}\n"
    confirmed = {"yes": "yes", "--run": "no; `--verify --run` confirms it by counting recompiles", "—": "no"}
    facts = (
        f"\nDefault: {'enabled' if rule.default_enabled else 'off (enable with --select ' + rule.code + ')'}. "
        f"Fix: {rule.fix_safety or 'none'}. Confirmable by --verify: {confirmed[_confirmed_by(rule)]}.\n"
    )
    return header + facts + rule.doc.rstrip() + "\n"


def rules_markdown() -> str:
    """docs/rules.md: every rule's full documentation (a test keeps the file in step with the registry)."""
    parts = [
        "# jaxlint rules\n\nGenerated from the rule modules: `python -m jaxlint.docs > docs/rules.md`.\n\n"
    ]
    parts.append(rule_table())
    for rule in ALL_RULES:
        parts.append(f'\n<a id="{rule.code.lower()}"></a>\n\n' + explain(rule).replace("\n## ", "\n### "))
    return "".join(parts)


if __name__ == "__main__":
    print(rules_markdown(), end="")
