"""What hover shows: on a diagnostic, the finding and its rule's explanation; on a code of a
`# noqa: CODES` comment, that rule's name and summary."""

from __future__ import annotations

from lsprotocol import types as lsp

from .linting import Finding, docs_url, rule_help, rule_summary
from .noqa_comment import noqa_code_at


def finding_hover(finding: Finding, where: lsp.Range) -> lsp.Hover:
    body = f"{finding.code}: {finding.message}"
    explanation = rule_help(finding.code)
    if explanation:
        body += "\n\n---\n\n" + explanation
    return _markdown(body + _link(finding.code), where)


def noqa_hover(line: str, column: int) -> lsp.Hover | None:
    """`column` in code points."""
    code = noqa_code_at(line, column)
    summary = rule_summary(code) if code is not None else None
    if code is None or summary is None:
        return None
    return _markdown(summary + _link(code))


def _link(code: str) -> str:
    url = docs_url(code)
    return f"\n\n[{code} documentation]({url})" if url else ""


def _markdown(body: str, where: lsp.Range | None = None) -> lsp.Hover:
    return lsp.Hover(contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, body), range=where)
