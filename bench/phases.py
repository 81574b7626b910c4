"""Where jaxlint's time goes, per phase, in one process: read, prefilter, parse, index, walk, positions, findings.

Usage: ``python bench/phases.py [--libs flax,optax,equinox] [--files-from LIST] [--rules] [--json PATH]
[--jaxlint CHECKOUT]``

Each file goes through the same steps as ``engine.lint_text``, each phase timed in CPU time of this process
(``process_time``: a loaded machine inflates it far less than wall time; the total wall time is printed too):

- **read**: bytes from disk and decoding;
- **prefilter**: the cheap "does it mention JAX" test that lets most files skip parsing;
- **parse**: the engine's parse (``syntax.parse_module``: libcst's parser without libcst re-checking the
  nodes it built; plain ``libcst.parse_module`` in checkouts before it);
- **libcst parse** (a reference, not a phase of jaxlint): ``libcst.parse_module`` of the same text as any
  libcst user calls it, the floor the ratios of ``bench/run.py`` divide by;
- **index**: ``ModuleIndex`` (imports, units, transform sites);
- **walk**: the flow walk with every default rule riding on it (``--rules`` splits it per rule, which adds
  a timer call per hook, which inflates the walk: 1.9 -> 3.6 s on flax + optax + equinox, so compare rules with
  each other, not with the other phases; without it the walk is timed as a whole);
- **summary**: the facts the module gives the other modules in project mode (`ModuleFacts.summary`), which
  every directory run computes (each module's facts are built as a directory run's first round builds them:
  the project's own library names, the module's package);
- **positions**: line/column of the reported nodes (`analysis/binding/positions.py`), only for files with findings;
- **findings**: placing, suppressing and describing the findings;
- **gc**: the cyclic collector, run once per file on the young generation as `lint.py`'s workers do, after
  the file's lint has let go of everything (with ``--gc auto`` the collector runs on its own, as before that
  change, and its time falls into the phases).

The figures that matter are the ratios to the parse: ``(index + walk + summary + positions + findings) / parse`` is what
the analysis and rules cost on top of jaxlint's own parse in one process (issue 17 asks for <= 0.3 of the parse);
the same sum over the libcst parse is printed too.
Worker start-up and result transfer are measured by ``bench/run.py`` (all-core rows against the parse floor).

``--jaxlint CHECKOUT`` profiles the jaxlint of another checkout (e.g. a copy of an older commit) with this
script, so that before/after figures come from the same harness; alternate the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

from corpus import python_files  # bench/ is this script's folder, first on sys.path

HERE = Path(__file__).resolve().parent

_clock = time.process_time

PHASES = ("read", "prefilter", "parse", "index", "walk", "summary", "positions", "findings", "gc")
REFERENCE = "libcst parse"  # timed beside the phases, not one of them
# What the analysis and rules cost on top of the parse (issue 17 asks for <= 0.3 of the parse).
ANALYSIS = ("index", "walk", "summary", "positions", "findings")


class _Timed:
    """Wraps a hook so its time is charged to its rule."""

    def __init__(self, hook, code: str, totals: dict[str, float]) -> None:
        self.hook, self.code, self.totals = hook, code, totals

    def __call__(self, *args, **kwargs):
        start = _clock()
        try:
            return self.hook(*args, **kwargs)
        finally:
            self.totals[self.code] += _clock() - start


def profile(files: list[str], per_rule: bool, per_file_gc: bool = True) -> dict:
    import gc

    settings, rule_classes = _settings()
    also = _project_libraries(files)
    phases = dict.fromkeys((*PHASES, REFERENCE), 0.0)
    rules_time: dict[str, float] = defaultdict(float)
    counts = {"files": 0, "parsed": 0, "with_findings": 0, "findings": 0, "lines": 0}
    if per_file_gc:
        gc.disable()
    for path in files:
        _one_file(path, settings, rule_classes, per_rule, phases, rules_time, counts, also)
        # As `lint.py`'s workers do: once per file, after the file's lint has let go of everything.
        if per_file_gc:
            t = _clock()
            gc.collect(0)
            phases["gc"] += _clock() - t
    if per_file_gc:
        gc.enable()
    parse = phases["parse"] or 1e-9
    beyond = sum(phases[p] for p in ANALYSIS)
    return {
        "counts": counts,
        "seconds": {k: round(v, 3) for k, v in phases.items()},
        "per_rule_seconds": {k: round(v, 3) for k, v in sorted(rules_time.items(), key=lambda kv: -kv[1])},
        "ratio_to_parse": {k: round(v / parse, 3) for k, v in phases.items()},
        "analysis_and_rules_over_parse": round(beyond / parse, 3),
        "analysis_and_rules_over_libcst_parse": round(beyond / (phases[REFERENCE] or 1e-9), 3),
    }


def _settings() -> tuple:
    """The default settings and their rule classes (older checkouts' settings held classes, newer hold codes)."""
    from jaxlint import engine, selection

    settings = getattr(selection, "LintSettings", None) or engine.LintSettings  # older: in the engine
    default = settings()
    if default.rules and isinstance(default.rules[0], str):
        from jaxlint.rules import RULES_BY_CODE

        return default, tuple(RULES_BY_CODE[code] for code in default.rules)
    return default, default.rules


def _project_libraries(files: list[str]) -> frozenset[str]:
    """What `lint.py` passes every module of a directory run as `also`: the library names that are the linted
    project's own packages (flax, optax and equinox when linting them), whose calls and imports the summaries
    then record as the project's."""
    try:
        from jaxlint.analysis.project import ProjectIndex, library_heads
    except ImportError:  # an older checkout, before project mode
        return frozenset()
    return library_heads(ProjectIndex(dict.fromkeys(files)).heads)


def _decode(data: bytes) -> str:
    from jaxlint import engine, lint

    return (getattr(lint, "decode", None) or engine.decode)(data)  # older checkouts: in the engine


def _one_file(
    path: str,
    settings,
    rule_classes: tuple,
    per_rule: bool,
    phases: dict,
    rules_time: dict,
    counts: dict,
    also: frozenset[str] = frozenset(),
) -> None:
    """One file through the engine's steps, each charged to its phase. Everything it builds dies when it
    returns, so the collection that follows costs what it costs in a real run."""
    import libcst as cst

    from jaxlint import engine
    from jaxlint.analysis import FlowWalker, ModuleIndex

    try:
        from jaxlint.analysis.module_facts import ModuleFacts
    except ImportError:
        try:  # an older checkout: in project.py
            from jaxlint.analysis.project import ModuleFacts
        except ImportError:  # older still, before project mode
            ModuleFacts = None
    if ModuleFacts is not None:
        from jaxlint.analysis.project import package_name
    try:
        from jaxlint.syntax import parse_module as parse
    except ImportError:  # an older checkout: libcst's own parse
        parse = cst.parse_module

    t0 = _clock()
    data = Path(path).read_bytes()
    try:
        source = _decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError):
        return
    t1 = _clock()
    counts["files"] += 1
    counts["lines"] += source.count("\n")
    words = getattr(engine, "PREFILTER_WORDS", None) or engine._PREFILTER  # renamed in 115c8c7
    mentions = any(word in source for word in words)
    t2 = _clock()
    phases["read"] += t1 - t0
    phases["prefilter"] += t2 - t1
    if not mentions:
        return
    try:
        module = parse(source)
    except Exception:
        return
    t3 = _clock()
    phases["parse"] += t3 - t2
    cst.parse_module(source)
    reference = _clock() - t3
    phases[REFERENCE] += reference
    t3 += reference
    counts["parsed"] += 1
    # As a directory run's first round builds them (`lint.py`): the project's own library names and the package
    # the module's relative imports start from.
    project = ModuleFacts(None, also, package_name(path)) if ModuleFacts is not None else None
    index = (
        ModuleIndex(module, settings.jit_decorators, project.package)
        if project is not None
        else ModuleIndex(module, settings.jit_decorators)
    )
    if project is not None:
        project.observe(index)
    t4 = _clock()
    phases["index"] += t4 - t3
    raw: list = []
    if index.imports.mentions_jax:
        hooks: dict[str, list] = {}
        for rule_class in rule_classes:
            rule = rule_class()
            for name, method in rule.hooks().items():
                hook = _Timed(method, rule.code, rules_time) if per_rule else method
                hooks.setdefault(name, []).append(hook)
        args = (project,) if project is not None else ()
        FlowWalker(index, hooks, lambda rule, node, message, frame, fix: raw.append(node), *args).run()
    t5 = _clock()
    phases["walk"] += t5 - t4
    if project is not None:
        project.summary()  # the facts the module gives the others (project mode); releases the index
    elif hasattr(index, "release"):
        index.release()
    t6 = _clock()
    phases["summary"] += t6 - t5
    if not raw:
        return
    positions = index.positions()
    if hasattr(positions, "resolve"):  # as the engine does: only the reported nodes (older checkouts: all)
        positions.resolve(raw)
    t7 = _clock()
    phases["positions"] += t7 - t6
    # The findings phase is timed through the engine itself on the already-parsed module, minus the
    # index, walk and positions it redoes (measured just above), so it stays honest as the engine changes.
    findings = engine.lint_module(module, source, path, settings)
    t8 = _clock()
    redone = (t4 - t3) + (t5 - t4) + (t7 - t6)
    phases["findings"] += max(0.0, (t8 - t7) - redone)
    counts["with_findings"] += 1
    counts["findings"] += len(findings)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--libs", default="flax,optax,equinox")
    ap.add_argument("--files-from", help="one path a line, instead of the corpus")
    ap.add_argument("--cache", default=os.environ.get("JAXLINT_BENCH_CACHE"))
    ap.add_argument("--rules", action="store_true", help="time each rule's hooks (adds overhead)")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--gc", choices=("per-file", "auto"), default="per-file", help="how the collector runs")
    ap.add_argument("--jaxlint", default=str(HERE.parent), help="the checkout whose jaxlint is profiled")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(args.jaxlint).resolve()))
    if args.files_from:
        files = [line.strip() for line in Path(args.files_from).read_text().splitlines() if line.strip()]
    else:
        files = python_files(args.libs, args.cache)
    wall = time.perf_counter()
    result = profile(files, args.rules, args.gc == "per-file")
    result["wall_seconds"] = round(time.perf_counter() - wall, 2)
    result["load_average"] = os.getloadavg()
    c = result["counts"]
    print(
        f"{c['files']} files, {c['lines']:,} lines; parsed {c['parsed']}, {c['with_findings']} with findings"
    )
    import jaxlint

    print(
        f"jaxlint from {Path(jaxlint.__file__).parent}; wall {result['wall_seconds']:.1f} s; load average after "
        + " ".join(f"{x:.2f}" for x in result["load_average"])
    )
    print(f"{'phase':<12}{'CPU s':>10}{'x parse':>10}")
    for phase in PHASES:
        print(f"{phase:<12}{result['seconds'][phase]:>10.2f}{result['ratio_to_parse'][phase]:>10.2f}")
    print(
        f"{REFERENCE:<12}{result['seconds'][REFERENCE]:>10.2f}{result['ratio_to_parse'][REFERENCE]:>10.2f}"
        "   (reference: libcst.parse_module of the same texts)"
    )
    print(
        f"analysis + rules over parse: {result['analysis_and_rules_over_parse']:.2f}x"
        f" (over the libcst parse: {result['analysis_and_rules_over_libcst_parse']:.2f}x)"
    )
    if result["per_rule_seconds"]:
        print("per rule (hooks only):")
        for code, seconds in result["per_rule_seconds"].items():
            print(f"  {code:<8}{seconds:>8.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
