"""pytest plugin: trace and compile counts per test and per jitted function (`pytest --jaxlint-recompiles`).

Registered through the `pytest11` entry point, it only adds options until `--jaxlint-recompiles` is
given: jax is not imported otherwise. With it, each test (setup, call and teardown) is one counting
window; a test in which one function compiles more than its budget fails, and a summary table ends
the run. The budget is `--jaxlint-max-compiles N`, else `[tool.jaxlint] max-compiles`, else 10, and
`[tool.jaxlint] max-compiles-per-function` or `@pytest.mark.jaxlint_max_compiles(N)` override it.
Works with pytest-xdist: workers send their counts to the controller, which prints one summary.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

_OUTPUT_KEY = "jaxlint_recompiles"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jaxlint", "jaxlint recompile counting")
    group.addoption(
        "--jaxlint-recompiles",
        action="store_true",
        default=False,
        help="count JAX traces and compiles per test and per jitted function; fail tests over the budget",
    )
    group.addoption(
        "--jaxlint-max-compiles",
        type=int,
        default=None,
        metavar="N",
        help="compiles allowed per jitted function within one test (default: [tool.jaxlint] max-compiles, else 10)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "jaxlint_max_compiles(n): compiles allowed per jitted function in this test (--jaxlint-recompiles)",
    )
    if config.getoption("jaxlint_recompiles"):
        config.pluginmanager.register(RecompileCounter(config), "jaxlint-recompile-counter")


def read_project_budgets(directory: str) -> tuple[int | None, dict[str, int]]:
    """`[tool.jaxlint] max-compiles` and `max-compiles-per-function` from `directory/pyproject.toml`,
    read and validated by jaxlint's own config loader: a bad value stops the run as `jaxlint` would."""
    from pathlib import Path

    from jaxlint.config import ConfigError, load

    path = Path(directory) / "pyproject.toml"
    if not path.is_file():
        return None, {}
    try:
        config = load(path)
    except ConfigError as error:
        raise pytest.UsageError(f"jaxlint: {error}") from None
    except (OSError, ValueError) as error:  # unreadable, or not TOML
        raise pytest.UsageError(f"jaxlint: cannot read {path}: {error}") from None
    return config.max_compiles, dict(config.max_compiles_per_function)


class RecompileCounter:
    def __init__(self, config: pytest.Config) -> None:
        from jaxlint.runtime.recompiles import DEFAULT_MAX_COMPILES
        from jaxlint.runtime.recompiles.aggregate import Merger
        from jaxlint.runtime.recompiles.jax_hooks import install
        from jaxlint.runtime.recompiles.recorder import Recorder

        self.config = config
        project_default, self.budgets = read_project_budgets(str(config.rootpath))
        option = config.getoption("jaxlint_max_compiles")
        self.default_budget = option if option is not None else project_default or DEFAULT_MAX_COMPILES
        self._recorder_class = Recorder
        try:
            self.bus = install()
        except ImportError as error:
            raise pytest.UsageError(f"--jaxlint-recompiles needs jax: {error}") from error
        self.merger = Merger()
        self.outside = Recorder()  # compiles outside any test: imports, collection, session teardown
        self.bus.subscribe(self.outside)
        self.current: Any = None
        self.tests: list[tuple[str, int, int]] = []  # (nodeid, compiles, traces)
        self.violations: list[str] = []

    # -- one window per test -------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        recorder = self._recorder_class()
        self.bus.unsubscribe(self.outside)
        self.bus.subscribe(recorder)
        self.current = recorder
        try:
            return (yield)
        finally:
            self.bus.unsubscribe(recorder)
            self.bus.subscribe(self.outside)
            self.current = None
            snapshot = recorder.snapshot()
            self.merger.add(snapshot, window=item.nodeid)
            functions = snapshot["functions"]
            self.tests.append(
                (item.nodeid, sum(f["compiles"] for f in functions), sum(f["traces"] for f in functions))
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        result = yield
        over = self._over_budget(item)
        if over:
            self.violations.append(f"{item.nodeid}: " + "; ".join(over))
            pytest.fail("jaxlint: compile budget exceeded: " + "; ".join(over), pytrace=False)
        return result

    def _over_budget(self, item: pytest.Item) -> list[str]:
        from jaxlint.runtime.recompiles.aggregate import budget_for

        marker = item.get_closest_marker("jaxlint_max_compiles")
        default = int(marker.args[0]) if marker and marker.args else self.default_budget
        over = []
        for stats in list(self.current.functions.values()) if self.current else []:
            budget = budget_for(stats.module, stats.qualname, stats.path, self.budgets, default)
            if stats.compiles > budget:
                reasons = sorted({r["reason"] for r in stats.reasons})
                why = f" ({'; '.join(reasons[:2])})" if reasons else ""
                over.append(f"{stats.qualname} compiled {stats.compiles} times, budget {budget}{why}")
        return over

    # -- xdist: workers hand their counts to the controller ---------------------------------------
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.bus.unsubscribe(self.outside)
        self.merger.add(self.outside.snapshot(), window="outside tests")
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_OUTPUT_KEY] = json.dumps(
                {"report": self.merger.as_report(), "tests": self.tests, "violations": self.violations}
            )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        data = getattr(node, "workeroutput", {}).get(_OUTPUT_KEY)
        if data:
            payload = json.loads(data)
            self.merger.add(payload["report"], window=getattr(node, "gateway", None) and node.gateway.id)
            self.tests.extend(tuple(t) for t in payload["tests"])
            self.violations.extend(payload["violations"])

    # -- summary -------------------------------------------------------------------------------
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if getattr(self.config, "workerinput", None) is not None:
            return
        from jaxlint.runtime.recompiles.render import write_table

        run = self.merger.result(budgets=self.budgets, default_budget=self.default_budget)
        tr = terminalreporter
        tr.write_sep("=", "jaxlint recompiles")
        tr.write_line(f"budget: {self.default_budget} compiles per jitted function within one test")

        class _Out:
            def write(self, text: str) -> None:
                tr.write(text)

        write_table(_Out(), run, by_window=True, window="test")
        busiest = sorted((t for t in self.tests if t[1] or t[2]), key=lambda t: (-t[1], -t[2]))[:10]
        if busiest:
            tr.write_line("")
            tr.write_line("tests with the most compiles of your functions:")
            for nodeid, compiles, traces in busiest:
                tr.write_line(f"  {compiles:>6} compiles  {traces:>6} traces  {nodeid}")
        if self.violations:
            tr.write_line("")
            tr.write_line(f"over the compile budget ({len(self.violations)} tests):", red=True)
            for line in self.violations:
                tr.write_line(f"  {line}", red=True)
