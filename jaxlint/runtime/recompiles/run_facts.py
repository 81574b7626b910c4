"""What the last `--run` proved and what it saw run clean, kept for a later `--verify` (verify/contradictions.py),
so that a verdict the run contradicts can say so.

`<cache>/signatures/last-run.facts` (not *.json: the store's readers take those for recorded calls), replaced
by each `--run`:

    {"version": 1, "files": {"/real/path.py": {
        "sha256": "<the file's content when the run ended>",
        "seen": [{"code": "JAX201", "first": 12, "last": 12, "text": "line 12 printed ..."}],
        "clean": [{"qualname": "step", "first": 10, "last": 20, "traces": 12}]}}}

`seen`: a rule's pitfall the run proved (a CONFIRMED or FOUND BY RUNNING verdict: its statement's lines).
`clean`: jitted functions of the project the run traced, when JAX reports every error a trace raises
(the per-call jit hook, JAX 0.9 on), with no error raised at any line of theirs. A file changed since is
not judged by them (its digest differs).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .crossref import Verdict

FACTS_FILE = "last-run.facts"
VERSION = 1
MAX_BYTES = 16 << 20


def digest(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def write_facts(directory: str, verdicts: list[Verdict], run: Any, root: str | None, exact: bool) -> None:
    from .crossref import _span  # (verify reads the facts; crossref imports verify)
    from .render import seen_text

    real_root = os.path.realpath(root or os.getcwd()) + os.sep
    files: dict[str, dict[str, Any]] = {}

    def entry(path: str) -> dict[str, Any] | None:
        real = os.path.realpath(path)
        if not real.startswith(real_root):
            return None
        if real not in files:
            sha = digest(real)
            if sha is None:
                return None
            files[real] = {"sha256": sha, "seen": [], "clean": []}
        return files[real]

    for v in verdicts:
        if not v.confirmed:
            continue
        place = entry(v.finding.path)
        if place is not None:
            first, last = (v.finding.line, v.finding.line) if v.found else _span(v.finding)
            place["seen"].append({"code": v.finding.code, "first": first, "last": last, "text": seen_text(v)})
    if exact:
        for fn in run.functions:
            place = entry(fn.path)
            last = _last_line(fn.path, fn.line) if place is not None else None
            if place is None or last is None or not fn.traces:
                continue
            raised_here = any(
                os.path.realpath(str(frame[0])) == os.path.realpath(fn.path)
                and fn.first_line <= frame[1] <= last
                for error in run.raised
                for frame in error.get("frames", ())
            )
            if not raised_here:
                place["clean"].append(
                    {"qualname": fn.qualname, "first": fn.first_line, "last": last, "traces": fn.traces}
                )
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, FACTS_FILE)
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"version": VERSION, "files": files}, handle)
    os.replace(tmp, target)


def read_facts(directory: str | None) -> dict[str, dict[str, Any]]:
    """`{real path: {"sha256", "seen", "clean"}}` of the last run; empty when none or unreadable."""
    if not directory:
        return {}
    try:
        path = os.path.join(directory, FACTS_FILE)
        if os.path.getsize(path) > MAX_BYTES:
            return {}
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return {}
    files = data.get("files") if isinstance(data, dict) and data.get("version") == VERSION else None
    return {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else {}


def _last_line(path: str, def_line: int) -> int | None:
    """The last line of the function defined at `def_line` (a `lambda` is its own line)."""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node.lineno == def_line:
            return getattr(node, "end_lineno", None)
    return None
