"""Imports point one way: the layer map below, no import cycle, no rule module importing another rule module.

Every `jaxlint/**/*.py` is read with `ast`; imports inside functions count (a lazy import is still a
dependency; laziness only hides a cycle); imports under `if TYPE_CHECKING:` do not (annotations only). ARCHITECTURE.md draws the same layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "jaxlint"

# Lower numbers are lower layers; a module may import its own layer and the layers below it.
LEAVES, ANALYSIS, RULES, CORE, DRIVERS, OUTPUT, FACES = range(7)
RUNTIME = "runtime"  # beside the static layers: sees only the leaves; only output and faces see it
_TOP_LEVEL = {
    "_version": LEAVES,
    "finding": LEAVES,
    "fix": LEAVES,
    "config": LEAVES,
    "syntax": LEAVES,
    "bounded_read": LEAVES,
    "notebook_positions": LEAVES,
    "text_lines": LEAVES,
    "start_path": LEAVES,
    "interrupts": LEAVES,
    "process_exit": LEAVES,
    "cache_folder": LEAVES,
    "engine": CORE,
    "nesting": CORE,
    "reparse": CORE,
    "unit_reuse": CORE,
    "unit_reuse_summary": CORE,
    "word_edits": CORE,
    "selection": CORE,
    "suppression": CORE,
    "cache": CORE,
    "files": CORE,
    "notebook": DRIVERS,
    "lint": DRIVERS,
    "autofix": DRIVERS,
    "add_noqa": DRIVERS,
    "project_scope": DRIVERS,
    "report": OUTPUT,
    "report_formats": OUTPUT,
    "docs": OUTPUT,
    "snippets": OUTPUT,
    "cli": FACES,
    "watch": FACES,
    "__main__": FACES,
    "flake8_plugin": FACES,
    "pytest_plugin": FACES,
    "runtime_output": OUTPUT,
}
# Packages whose `__init__` puts runtime/shared/ on their `__path__`: `from .evidence import X` in them imports
# `jaxlint.runtime.shared.evidence` (each runtime package is loaded apart, under a private name).
_LOADS_SHARED = {"jaxlint.runtime.recompiles", "jaxlint.runtime.verify.child"}
# Rule modules may share these; any other rule module is another rule.
_RULE_HELPERS = {"jaxlint.rules", "jaxlint.rules.base", "jaxlint.rules.common", "jaxlint.rules.edits"}

# Today's violations in code other people own, each to be removed where it is fixed. (importer, imported)
ALLOWED: set[tuple[str, str]] = set()  # no exception left: every edge follows the layers


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The jaxlint modules `name` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    # `if TYPE_CHECKING:` imports are for annotations only: no dependency at run time, so no cycle.
    type_only = {
        id(inner)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test).endswith("TYPE_CHECKING")
        for statement in block.body
        for inner in ast.walk(statement)
    }
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            # `from pkg import sub` imports the submodule `pkg.sub` when there is one, else a name of `pkg`.
            targets = [
                f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            owner, _, last = target.rpartition(".")
            if (
                target not in modules
                and owner in _LOADS_SHARED
                and f"jaxlint.runtime.shared.{last}" in modules
            ):
                target = f"jaxlint.runtime.shared.{last}"
            while target and target not in modules:  # `import a.b.c` of a module: the nearest module named
                target = target.rpartition(".")[0]
            if target.startswith("jaxlint") and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(name: str) -> int | str:
    parts = name.split(".")
    if name == "jaxlint":
        return FACES
    if parts[1] == "analysis":
        return ANALYSIS
    if parts[1] == "rules":
        return RULES
    if parts[1] == "runtime":
        return RUNTIME
    if parts[1] == "server":  # the language server is a face, like the CLI
        return FACES
    return _TOP_LEVEL[parts[1]]


def _allowed(importer: str, imported: str) -> bool:
    low, high = _layer(imported), _layer(importer)
    if low == RUNTIME:
        return high == RUNTIME or high in (OUTPUT, FACES)
    if high == RUNTIME:
        return low == LEAVES
    assert isinstance(low, int) and isinstance(high, int)
    return low <= high


def test_every_module_has_a_layer() -> None:
    for name in _modules():
        _layer(name)  # KeyError for a new top-level module: add it to _TOP_LEVEL


def test_imports_point_down() -> None:
    wrong = sorted(
        (importer, imported)
        for importer, imports in _graph().items()
        for imported in imports
        if not _allowed(importer, imported) and (importer, imported) not in ALLOWED
    )
    assert wrong == [], "imports of a higher layer (see the layer map in tests/test_layers.py)"


def test_rule_modules_do_not_import_other_rule_modules() -> None:
    wrong = sorted(
        (importer, imported)
        for importer, imports in _graph().items()
        if importer.startswith("jaxlint.rules.") and importer not in _RULE_HELPERS
        for imported in imports
        if imported.startswith("jaxlint.rules.") and imported not in _RULE_HELPERS
        if (importer, imported) not in ALLOWED
    )
    assert wrong == [], "share through analysis/, rules/common.py or rules/edits.py instead"


def test_no_import_cycles() -> None:
    graph = {name: {i for i in imports if (name, i) not in ALLOWED} for name, imports in _graph().items()}
    cycles = [sorted(component) for component in _strongly_connected(graph) if len(component) > 1]
    assert cycles == []


def test_allow_list_has_no_stale_entries() -> None:
    graph = _graph()
    stale = sorted(edge for edge in ALLOWED if edge[1] not in graph.get(edge[0], set()))
    assert stale == [], "these imports are gone: delete them from ALLOWED"


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative (the graph is small, but recursion limits are not worth a thought)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


# The analysis's subpackages, bottom up: what each may import inside `jaxlint.analysis` (ARCHITECTURE.md's table).
_ANALYSIS = "jaxlint.analysis"
_ANALYSIS_LEAVES = {f"{_ANALYSIS}.kinds", f"{_ANALYSIS}.context"}
_MIDDLE = {"values", "objects", "summaries"}
_MAY_IMPORT = {
    "semantics": {"semantics"},
    "binding": {"semantics", "binding"},
    **{part: _MIDDLE | {"binding", "semantics", "project"} for part in _MIDDLE},
    "flow": _MIDDLE | {"binding", "semantics", "project", "module_facts", "flow"},
}


def _part(name: str) -> str:
    return name[len(_ANALYSIS) + 1 :].partition(".")[0]


def test_analysis_subpackages_import_downwards() -> None:
    wrong = sorted(
        (importer, imported)
        for importer, imports in _graph().items()
        if importer.startswith(f"{_ANALYSIS}.") and _part(importer) in _MAY_IMPORT
        for imported in imports
        if imported.startswith(f"{_ANALYSIS}.") and imported not in _ANALYSIS_LEAVES
        if _part(imported) not in _MAY_IMPORT[_part(importer)]
    )
    assert wrong == [], "see the analysis's table in ARCHITECTURE.md"


def test_rules_reach_the_analysis_through_its_package_only() -> None:
    wrong = sorted(
        (importer, imported)
        for importer, imports in _graph().items()
        if importer.startswith("jaxlint.rules")
        for imported in imports
        if imported.startswith(f"{_ANALYSIS}.")
    )
    assert wrong == [], "import it as `from ..analysis import name` (add the name to analysis/__init__.py)"


def test_the_analysis_package_lists_each_name_the_same_for_checkers_and_at_run_time() -> None:
    """`_EXPORTS` (imported on first use) and the `if TYPE_CHECKING:` imports (what mypy sees) name the same
    things from the same modules, and each of them exists there."""
    init = PACKAGE / "analysis" / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    checked: dict[str, str] = {}
    exports: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.level == 1
                checked.update((alias.name, statement.module or "") for alias in statement.names)
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "_EXPORTS":
            table = ast.literal_eval(node.value)  # type: ignore[arg-type]
            exports.update((name, module) for module, names in table.items() for name in names)
    assert exports and checked == exports
    import importlib

    for name, module in exports.items():
        assert hasattr(importlib.import_module(f"{_ANALYSIS}.{module}"), name), (module, name)
