"""One source of truth for what the runtime confirms, and the seams of the runtime package."""

from __future__ import annotations

import ast
from pathlib import Path

from jaxlint.rules import ALL_RULES
from jaxlint.runtime.confirmable import CONFIRMABLE_CODES, RECOMPILE_CODES, VERIFY_CODES
from jaxlint.runtime.verify.child.expectations import EXPECTATIONS

RUNTIME = Path(__file__).resolve().parents[2] / "jaxlint" / "runtime"


def test_rule_confirmable_flag_matches_what_the_runtime_can_confirm():
    flagged = {rule.code for rule in ALL_RULES if rule.confirmable}
    assert flagged == CONFIRMABLE_CODES
    assert VERIFY_CODES == frozenset(EXPECTATIONS) and not VERIFY_CODES & RECOMPILE_CODES


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_runtime_imports_only_findings_and_config_from_the_linter():
    allowed = {"jaxlint.finding", "jaxlint.config"}
    for path in RUNTIME.rglob("*.py"):
        outside = {
            name
            for name in _imports(path)
            if name.startswith("jaxlint") and not name.startswith("jaxlint.runtime") and name not in allowed
        }
        assert not outside, f"{path.relative_to(RUNTIME)} imports {sorted(outside)}"


def test_runtime_module_names_are_unique_in_the_package():
    seen: dict[str, Path] = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        assert path.name not in seen, f"{path} and {seen[path.name]}"
        seen[path.name] = path
    assert not {"runner.py", "report.py", "command.py", "model.py"} & set(seen)


def test_verify_package_init_only_re_exports():
    tree = ast.parse((RUNTIME / "verify" / "__init__.py").read_text(encoding="utf-8"))
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Assign"}, kinds
