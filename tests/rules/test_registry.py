"""Every rule is registered once, in code order, with a complete doc."""

from __future__ import annotations

import re

from jaxlint.rules import ALL_RULES, RULES_BY_CODE
from jaxlint.rules.base import DOC_SECTIONS


def test_codes_unique_and_ordered() -> None:
    codes = [rule.code for rule in ALL_RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes) == len(RULES_BY_CODE)
    assert all(re.fullmatch(r"JAX[1-9]\d\d", code) for code in codes)


def test_names_and_docs() -> None:
    names = [rule.name for rule in ALL_RULES]
    assert len(set(names)) == len(names)
    for rule in ALL_RULES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", rule.name), rule.name
        headings = re.findall(r"^## (.+)$", rule.doc, re.MULTILINE)
        assert headings == list(DOC_SECTIONS), f"{rule.code}: {headings}"
        assert rule.severity in ("error", "warning")
        assert rule.fix_safety in (None, "safe", "unsafe")
        assert rule.summary and "\n" not in rule.summary


def test_docs_rules_md_is_current() -> None:
    from pathlib import Path

    from jaxlint.docs import rules_markdown

    page = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert page.read_text(encoding="utf-8") == rules_markdown(), (
        "regenerate: python -m jaxlint.docs > docs/rules.md"
    )


def test_registry_rows_agree_with_the_rule_classes() -> None:
    """`REGISTRY` is the data selection and the cache read without importing a rule: each row names its class,
    and the class says the same code, name and default; every rule module has a row."""
    from pathlib import Path

    from jaxlint.rules import REGISTRY

    assert [entry.code for entry in REGISTRY] == [rule.code for rule in ALL_RULES]
    for entry, rule in zip(REGISTRY, ALL_RULES, strict=True):
        assert rule.__module__ == f"jaxlint.rules.{entry.module}" and rule.__name__ == entry.cls
        assert (rule.code, rule.name, rule.default_enabled) == (entry.code, entry.name, entry.default_enabled)
    helpers = {"__init__", "base", "common", "edits"}
    modules = {p.stem for p in (Path(__file__).resolve().parents[2] / "jaxlint" / "rules").glob("*.py")}
    assert modules - helpers == {entry.module for entry in REGISTRY}
