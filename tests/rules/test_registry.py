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
