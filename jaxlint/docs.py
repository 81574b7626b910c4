"""Rule documentation: the table for --list-rules and the README, and one rule's doc for --explain."""

from __future__ import annotations

from . import rules
from .finding import PARSE_ERROR_CODE, PARSE_ERROR_NAME, RUNTIME_ERROR_CODE, RUNTIME_ERROR_NAME
from .rules import Rule

# Confirmed by counting recompiles in a real run (`--run`), not by tracing (`--verify`).
from .runtime.confirmable import RECOMPILE_CODES

# JAX000 is documented the way ruff documents syntax errors: not a rule, but a code that can be selected.
_PARSE_ERROR_DOC = f"""# {PARSE_ERROR_CODE} {PARSE_ERROR_NAME}

A file jaxlint could not check.

Not a rule: jaxlint reports this code for a file it cannot read, decode (a bad coding cookie, bytes that are
not in the file's encoding), parse (a syntax error, or brackets nested deeper than Python allows), or that
is larger than `max-file-size` in `[tool.jaxlint]` (default 5,000,000 bytes), and when jaxlint itself fails
on the file (an "internal error": please report it). The other files are still checked.

It is on by default and takes part in selection like a rule code: `--ignore JAX000`,
`per-file-ignores = {{"gen/*" = ["JAX000"]}}`, or a `--select` that does not cover it (e.g. `--select JAX1`)
switches it off. A `# noqa` comment cannot suppress it: the file was not understood.
"""

_RUNTIME_ERROR_SUMMARY = "Another JAX error raised in the project's code while `--verify` traced it"
# JAX900 is not a rule: no static check reports it, `--verify` does (runtime/verify/child/raised.py).
_RUNTIME_ERROR_DOC = f"""# {RUNTIME_ERROR_CODE} {RUNTIME_ERROR_NAME}

{_RUNTIME_ERROR_SUMMARY}.

Not a rule: no static check reports this code. When `jaxlint --verify` traces a function with real inputs
(declared examples, calls a `--verify --run` recorded, calls the module's own code made) and JAX raises an
error in the project's code, the error is reported at the innermost line of the project's code, FOUND BY
RUNNING. An error a rule stands for is reported under that rule (a TracerBoolConversionError as JAX101, the
immutable-array TypeError as JAX103, ...); any other error of JAX's is reported as {RUNTIME_ERROR_CODE}.

It takes part in selection like a rule code: `--ignore {RUNTIME_ERROR_CODE}` switches it off, and a
`# noqa: {RUNTIME_ERROR_CODE}` on the line suppresses it there.
"""


def _confirmed_by(rule: type[Rule]) -> str:
    if not rule.confirmable:
        return "—"
    return "--run" if rule.code in RECOMPILE_CODES else "yes"


def rule_table() -> str:
    """A markdown table of every rule; the README embeds the same table (a test keeps them in step)."""
    lines = ["| code | name | summary | default | fix | verify |", "| --- | --- | --- | --- | --- | --- |"]
    for rule in rules.ALL_RULES:  # every rule module, imported now
        lines.append(
            f"| {rule.code} | {rule.name} | {rule.summary} | {'on' if rule.default_enabled else 'opt-in'} "
            f"| {rule.fix_safety or '—'} | {_confirmed_by(rule)} |"
        )
    lines.append(
        f"| {RUNTIME_ERROR_CODE} | {RUNTIME_ERROR_NAME} | {_RUNTIME_ERROR_SUMMARY} | on | — | found by --verify |"
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


def explain_parse_error() -> str:
    return _PARSE_ERROR_DOC


def explain_runtime_error() -> str:
    return _RUNTIME_ERROR_DOC


def rules_markdown() -> str:
    """docs/rules.md: every rule's full documentation (a test keeps the file in step with the registry)."""
    parts = [
        "# jaxlint rules\n\nGenerated from the rule modules: `python -m jaxlint.docs > docs/rules.md`.\n\n"
    ]
    parts.append(rule_table())
    for rule in rules.ALL_RULES:
        parts.append(f'\n<a id="{rule.code.lower()}"></a>\n\n' + explain(rule).replace("\n## ", "\n### "))
    parts.append(f'\n<a id="{RUNTIME_ERROR_CODE.lower()}"></a>\n\n' + _RUNTIME_ERROR_DOC)
    return "".join(parts)


if __name__ == "__main__":
    print(rules_markdown(), end="")
