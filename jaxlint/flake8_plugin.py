"""jaxlint's rules as a flake8 plugin: entry point `JAX = "jaxlint.flake8_plugin:JaxlintChecker"`.

The same engine, rules, codes and messages as the `jaxlint` command, one libcst parse per file. flake8 owns
everything a flake8 user expects it to own: `--select`/`--ignore`/`--extend-select`/`--extend-ignore`,
`--per-file-ignores`, `--exclude`, `# noqa` and `# flake8: noqa`. The plugin itself never filters `noqa`.

Settings:
- `--jaxlint-jit-decorators` (`jaxlint-jit-decorators = a.b, c.d` under `[flake8]`): the user jit wrappers of
  `[tool.jaxlint] jit-decorators`. When flake8 is not given it, the plugin reads `jit-decorators` from the
  nearest pyproject.toml with a `[tool.jaxlint]` table (the rest of that table, selection included, is the
  `jaxlint` command's business and is not applied here).
- Opt-in rules (`default_enabled = False`, e.g. JAX302) are in flake8's default ignore list, and they run only
  when a selector more specific than the bare `JAX` prefix names them (`--extend-select JAX302`), as with
  `jaxlint --select`: `--select JAX` means "the JAX rules" in both tools, not "every opt-in rule too".
  `selection.rules_for_flake8` answers this, with the same code as the `jaxlint` command.
- `# noqa: jax201` (lowercase codes) suppresses nothing, in flake8 and in `jaxlint` alike.

Project context: flake8 hands the plugin one file, but its findings are computed with the facts of its whole
project, as the `jaxlint` command computes them (`lint.lint_project`): a helper in `model.py` that `train.py`
calls from jitted code with traced arguments is traced under flake8 too, even for `flake8 model.py`. The
project (`project_scope.project_root`: the `[tool.jaxlint]` folder, else the nearest folder with a
pyproject.toml, setup.py, setup.cfg or .git) has its files listed and their import statements read once per
flake8 process, and the modules linked to the checked file by imports are linted in that process, the
findings cache (the `jaxlint` command's, `.jaxlint_cache` in the project) answering for unchanged modules.
The cost is bounded by one `jaxlint` run over the project per flake8 worker process when the cache is cold,
and by reading each project file once (imports and cache entries) when it is warm. The text flake8 gives is
linted with the facts the project's files on disk give it; when it is the file's own text, holds no `# noqa`
(the project's lint applies those, flake8 must see the findings under them) and the plugin's settings are the
project's, the project's lint of the file (from the findings cache) is the answer, not linted again.

Notebooks: flake8 reads an `.ipynb` it is given by name (`flake8 nb.ipynb`; its default `--filename` skips
them in folders) as lines of JSON text, and shows findings at those lines. A notebook finding is therefore
yielded where its code is stored in that JSON text (the line and column `--format github` gives), its message
starting with the cell, line and column inside the cell (`cell 3:5:8: ...`), so a `# noqa` written in the cell
suppresses it (flake8 looks for it on the JSON line, which holds the code line).

Columns: flake8 expects 0-based columns from plugins and adds 1 when it prints; `Finding.column` is 1-based,
so the plugin yields `column - 1` and flake8 prints exactly the column `jaxlint` prints.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ._version import __version__
from .config import Config
from .engine import lint_text
from .finding import Finding, internal_error, parse_error
from .lint import ProjectFacts, cached_findings, decode_or_finding, lint_scope
from .selection import LintSettings, opt_in_codes, rules_for_flake8, settings_for


class JaxlintChecker:
    name = "jaxlint"
    version = __version__

    # Set from flake8's options (class-level: flake8 builds one checker per file, and workers re-parse options).
    jit_decorators: frozenset[str] | None = None  # None: not given to flake8, read [tool.jaxlint]
    rules: tuple[str, ...] = rules_for_flake8(())  # codes

    _pyproject_cache: dict[Path, Config | str] = {}  # folder -> its settings, or the error
    # Per process: each project's files and import links, and the facts of every file linted so far.
    _projects: dict[tuple[str, str], tuple[list[str], dict[str, set[str]]]] = {}
    _facts: dict[str, ProjectFacts] = {}

    def __init__(self, tree: Any, lines: list[str], filename: str = "stdin") -> None:
        # `tree` (the ast) must be asked for so flake8 runs this as a tree plugin once per file; it is unused:
        # the engine parses the text with libcst.
        self.lines = lines
        self.filename = filename

    # -- options ------------------------------------------------------------------------------------

    @staticmethod
    def add_options(option_manager: Any) -> None:
        option_manager.add_option(
            "--jaxlint-jit-decorators",
            default=None,
            parse_from_config=True,
            comma_separated_list=True,
            help="Qualified names of your own jit wrappers, e.g. 'mylib.compile,mylib.jit' "
            "(default: jit-decorators of [tool.jaxlint] in pyproject.toml)",
        )
        opt_in = opt_in_codes()
        if opt_in:
            option_manager.extend_default_ignore(opt_in)

    @classmethod
    def parse_options(cls, option_manager: Any, options: argparse.Namespace, args: Sequence[str]) -> None:
        given = getattr(options, "jaxlint_jit_decorators", None)
        cls.jit_decorators = frozenset(name.strip() for name in given if name.strip()) if given else None
        selectors = [
            *(getattr(options, "select", None) or []),
            *(getattr(options, "extend_select", None) or []),
        ]
        cls.rules = rules_for_flake8(selectors)
        cls._pyproject_cache = {}
        cls._projects, cls._facts = {}, {}

    # -- the check ----------------------------------------------------------------------------------

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        stored = None  # a notebook's JSON text, as flake8 shows it
        for finding in self.findings():
            line, column, message = finding.line, finding.column, finding.message
            if finding.cell is not None:
                if stored is None:
                    from .notebook_positions import NotebookText

                    stored = NotebookText("".join(self.lines))
                line, column = stored.raw_position(finding.cell, line, column) or (1, 1)
                message = f"cell {finding.cell}:{finding.line}:{finding.column}: {message}"
            yield line, max(column - 1, 0), f"{finding.code} {message}", type(self)

    def findings(self) -> list[Finding]:
        config = self._config()
        if isinstance(config, str):
            return [parse_error(self.filename, 1, 1, config)]
        decorators = (
            self.jit_decorators if self.jit_decorators is not None else frozenset(config.jit_decorators)
        )
        settings = LintSettings(rules=self.rules, jit_decorators=decorators)
        source = "".join(self.lines)
        try:
            config = dataclasses.replace(config, jit_decorators=tuple(sorted(decorators)))
            facts = self._project_facts(config)
            known = self._linted_already(config, settings, facts, source)
            if known is not None:
                return known
            project = facts.module_facts(self.filename) if facts is not None else None
            if self.filename.endswith(".ipynb"):  # flake8 hands over the JSON text: lint its cells
                from .notebook import lint_notebook

                return lint_notebook(source, self.filename, settings, project=project, noqa=False)
            return lint_text(source, self.filename, settings, noqa=False, project=project)
        except RecursionError:
            return [parse_error(self.filename, 1, 1, "cannot analyse: nesting too deep")]
        except Exception as error:  # a bug in jaxlint must not stop flake8
            return [internal_error(self.filename, error)]

    def _config(self) -> Config | str:
        """The nearest [tool.jaxlint] (its jit-decorators, and where the project and its cache are), or the
        config error's text."""
        from .config import ConfigError, find_pyproject, load

        folder = Path(self.filename).parent if not self._stdin() else Path.cwd()
        cache = type(self)._pyproject_cache
        if folder not in cache:
            try:
                cache[folder] = load(find_pyproject(folder))
            except (ConfigError, OSError, UnicodeDecodeError) as error:
                cache[folder] = f"cannot read configuration: {error}"
        return cache[folder]

    def _stdin(self) -> bool:
        return self.filename in ("stdin", "-")

    def _project_facts(self, config: Config) -> ProjectFacts | None:
        """What the other modules of this file's project give it. Per process, each project's files and
        import links are read once (`_projects`), and each set of linked modules is linted once, which gives
        every file in it its facts (`_facts`); the findings cache answers for unchanged modules."""
        if self._stdin() or not os.path.isfile(self.filename):
            return None
        absolute = os.path.abspath(self.filename)
        known = type(self)._facts
        if absolute not in known:
            from .project_scope import linked, links, project_files, project_root

            key = (project_root(self.filename, config), repr(config))
            projects = type(self)._projects
            if key not in projects:
                files = project_files([self.filename], config)
                projects[key] = (files, links(files, config))
            files, graph = projects[key]
            path = next((p for p in files if os.path.abspath(p) == absolute), None)
            if path is None:  # not part of the project as searched (excluded there): its imports are unread
                path, files = self.filename, [*files, self.filename]
            run = lint_scope(linked([path], graph), files, config, jobs=1, cache_dir=_cache_dir(config))
            known.update((os.path.abspath(p), facts) for p, facts in run.facts.items())
        return known.get(absolute)

    def _linted_already(
        self, config: Config, settings: LintSettings, facts: ProjectFacts | None, source: str
    ) -> list[Finding] | None:
        """The project's lint of this file (`_project_facts` just ran it, and the findings cache keeps it) when
        it was this very lint: the text flake8 gives is the file's, the settings are the plugin's, and no
        `# noqa` is in it (flake8 owns those; the project's lint applied them). Else None: lint it here."""
        if facts is None or "noqa" in source.lower() or settings_for(config, self.filename) != settings:
            return None
        try:
            with open(self.filename, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        if decode_or_finding(data, self.filename) != source:
            return None
        return cached_findings(self.filename, data, config, _cache_dir(config), facts)


def _cache_dir(config: Config) -> str:
    """The `jaxlint` command's findings cache of the project: the plugin's project lints share it."""
    from .cache import DEFAULT_DIR

    base = config.root if config.root is not None else Path.cwd()
    return str(base / (config.cache_dir or DEFAULT_DIR))
