"""The `jaxlint` command: argument parsing and exit codes (0 clean, 1 findings, 2 usage/config/internal error)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from . import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split_codes(value: str) -> list[str]:
    return [code.strip().upper() for code in value.split(",") if code.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxlint",
        description="Find the mistakes JAX's transformations punish (jit, vmap, grad, lax bodies).",
        epilog="Exit codes: 0 no findings, 1 findings (or confirmed/over budget with --verify), 2 error.",
    )
    parser.add_argument("paths", nargs="*", help="files or folders to lint (default: .); '-' reads stdin")
    parser.add_argument(
        "--select", type=_split_codes, help="comma-separated rule codes or prefixes to enable"
    )
    parser.add_argument(
        "--ignore", type=_split_codes, help="comma-separated rule codes or prefixes to disable"
    )
    parser.add_argument(
        "--extend-select", type=_split_codes, help="codes or prefixes to enable on top of select"
    )
    parser.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    parser.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    parser.add_argument("--list-rules", action="store_true", help="print the rule table and exit")
    parser.add_argument("--explain", metavar="CODE", help="print one rule's documentation and exit")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--stdin-filename", help="the path to report for source read from stdin")
    parser.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of searching")
    parser.add_argument(
        "--force-exclude", action="store_true", help="apply excludes to paths given explicitly"
    )
    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes in place; report what remains")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="also unsafe fixes (implies --fix)")
    fixing.add_argument("--diff", action="store_true", help="print fixes as a diff; write nothing")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the findings cache")
    parser.add_argument("--cache-dir", metavar="DIR", help="findings cache folder (default: .jaxlint_cache)")
    parser.add_argument("--version", action="version", version=f"jaxlint {__version__}")
    runtime = parser.add_argument_group("runtime mode (imports your code in a child process; needs jax)")
    runtime.add_argument(
        "--verify", action="store_true", help="confirm findings by tracing them with real JAX"
    )
    runtime.add_argument(
        "--python", metavar="PATH", help="interpreter for the verify child (default: this one)"
    )
    runtime.add_argument(
        "--verify-timeout", type=float, default=None, help="seconds per module (default: 60)"
    )
    runtime.add_argument(
        "--run",
        metavar="CMD",
        help="with --verify: run CMD (a shell command line, or `--run -- PROG ARGS...`) and count recompiles",
    )
    runtime.add_argument(
        "--max-compiles", type=int, default=None, help="with --run: compile budget per function"
    )
    runtime.add_argument(
        "--all-functions",
        action="store_true",
        help="with --run: also list the jitted functions of installed libraries (flax, optax, ...)",
    )
    runtime.add_argument(
        "--verbose", action="store_true", help="with --verify: each verdict's reason, inputs and device"
    )
    return parser


def _fail(message: str) -> int:
    print(f"jaxlint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    command_tail = None
    if "--run" in argv:
        # `--run -- PROG ARGS...`: everything after `--` is the command, word for word.
        at = argv.index("--run")
        if argv[at + 1 : at + 2] == ["--"]:
            command_tail = argv[at + 2 :]
            argv = [*argv[:at], "--run", ""]
    args = parser.parse_args(argv)
    if command_tail is not None:
        args.run = command_tail
    try:
        return _main(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_ERROR


def _main(args: argparse.Namespace) -> int:
    from .config import ConfigError, find_pyproject, load, with_overrides
    from .rules import RULES_BY_CODE

    if args.list_rules:
        from .docs import rule_table

        print(rule_table(), end="")
        return EXIT_CLEAN
    if args.explain:
        rule = RULES_BY_CODE.get(args.explain.upper())
        if rule is None:
            return _fail(f"unknown rule code '{args.explain}' (see `jaxlint --list-rules`)")
        from .docs import explain

        print(explain(rule), end="")
        return EXIT_CLEAN
    if args.jobs is not None and args.jobs < 1:
        return _fail("--jobs must be at least 1")

    paths = args.paths or ["."]
    if args.run is not None:
        if not args.verify:
            return _fail("--run needs --verify")
        paths = ["."]
    try:
        if args.config:
            if not os.path.isfile(args.config):
                return _fail(f"config file not found: {args.config}")
            config = load(Path(args.config))
        else:
            anchor = args.stdin_filename if paths == ["-"] and args.stdin_filename else paths[0]
            config = load(find_pyproject(Path(anchor) if anchor != "-" else Path.cwd()))
        config = with_overrides(
            config,
            select=args.select,
            ignore=args.ignore,
            extend_select=args.extend_select,
            verify_timeout=args.verify_timeout,
            max_compiles=args.max_compiles,
        )
    except ConfigError as error:
        return _fail(str(error))

    if args.run is not None:
        return _run_command(args, config)
    if args.fix or args.unsafe_fixes or args.diff:
        return _fix(args, config, paths)

    from .finding import Finding
    from .runner import lint_files, lint_source_for

    if "-" in paths:
        if len(paths) > 1:
            return _fail("'-' (stdin) cannot be combined with other paths")
        source = sys.stdin.buffer.read()
        from .engine import decode

        name = args.stdin_filename or "-"
        try:
            findings: list[Finding] = lint_source_for(decode(source), name, config)
        except (UnicodeDecodeError, SyntaxError) as error:
            from .engine import parse_error

            findings = [parse_error(name, 1, 1, f"cannot decode: {error}")]
    else:
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            return _fail(f"path does not exist: {missing[0]}")
        from .files import discover

        cache_dir = None
        if not args.no_cache:
            from .cache import DEFAULT_DIR

            base = config.root if config.root is not None else Path.cwd()
            cache_dir = args.cache_dir or str(base / (config.cache_dir or DEFAULT_DIR))
        findings = lint_files(
            discover(paths, config, args.force_exclude), config, jobs=args.jobs, cache_dir=cache_dir
        )

    if args.verify:
        return _verify(args, config, findings)
    return _emit(args, findings)


def _emit(args: argparse.Namespace, findings: list) -> int:
    from .report import render, statistics

    out = sys.stdout
    out.write(render(findings, args.format))
    if args.statistics and args.format == "text":
        out.write(statistics(findings))
    if findings and args.format == "text":
        print(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}.", file=sys.stderr)
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def _fix(args: argparse.Namespace, config, paths: list[str]) -> int:
    """--fix / --unsafe-fixes / --diff: apply (or show) fixes, then report the findings that remain."""
    from .fixes import fix_files, fix_source

    if args.diff and args.verify:
        return _fail("--diff cannot be combined with --verify")
    unsafe = bool(args.unsafe_fixes)
    if "-" in paths:
        if len(paths) > 1:
            return _fail("'-' (stdin) cannot be combined with other paths")
        from .engine import decode, parse_error

        name = args.stdin_filename or "-"
        data = sys.stdin.buffer.read()
        try:
            source = decode(data)
        except (UnicodeDecodeError, SyntaxError) as error:
            return _emit(args, [parse_error(name, 1, 1, f"cannot decode: {error}")])
        results = [fix_source(source, name, config, unsafe)]
        if not args.diff:
            sys.stdout.write(results[0].fixed)  # the fixed source replaces stdin; findings go to stderr
    else:
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            return _fail(f"path does not exist: {missing[0]}")
        from .files import discover

        files = discover(paths, config, args.force_exclude)
        results = fix_files(files, config, unsafe=unsafe, write=not args.diff, jobs=args.jobs)

    fixed = sum(sum(r.applied.values()) for r in results)
    changed = [r for r in results if r.changed]
    plural = "s" if fixed != 1 else ""
    where = f"{len(changed)} file{'s' if len(changed) != 1 else ''}"
    if args.diff:
        for result in changed:
            sys.stdout.write(result.diff())
        print(f"Would fix {fixed} finding{plural} in {where}.", file=sys.stderr)
        return EXIT_FINDINGS if changed and not args.exit_zero else EXIT_CLEAN
    failed = [r for r in results if r.error]
    for result in failed:
        print(f"jaxlint: error: cannot write {result.path}: {result.error}", file=sys.stderr)
    findings = [f for r in results for f in r.findings]
    if fixed:
        print(f"Fixed {fixed} finding{plural} in {where}.", file=sys.stderr)
    if not unsafe:
        hidden = sum(1 for f in findings if f.fix is not None and f.fix_safety == "unsafe")
        if hidden:
            print(f"{hidden} more fixable with --unsafe-fixes.", file=sys.stderr)
    if args.verify:
        code = _verify(args, config, findings)
    elif "-" in paths:
        from .report import render

        sys.stderr.write(render(findings, args.format))
        code = EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN
    else:
        code = _emit(args, findings)
    return EXIT_ERROR if failed else code


def _verify(args: argparse.Namespace, config, findings: list) -> int:
    try:
        from .runtime.verify import (
            DEFAULT_MEMORY_LIMIT_MB,
            Terminated,
            ending_children_on_signals,
            unmatched_examples,
            verify_findings,
        )
    except ImportError as error:
        return _fail(f"--verify is not available: {error}")
    from .runtime_output import Progress, render_verify, verify_summary

    settings = config.verify
    root = Path(config.root or Path.cwd())
    for key in unmatched_examples(settings.examples, root):
        print(f"jaxlint: warning: [tool.jaxlint.verify.examples] {key}", file=sys.stderr)
    try:
        with ending_children_on_signals():
            report = verify_findings(
                findings,
                python=args.python or settings.python,
                timeout=config.verify_timeout,
                jobs=args.jobs or settings.jobs or min(4, os.cpu_count() or 1),
                examples=settings.examples,
                root=root,
                memory_limit_mb=settings.memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB,
                progress=Progress(),
            )
    except Terminated as stop:
        print(f"jaxlint: stopped by signal {stop.signum}; every verify child was killed", file=sys.stderr)
        return 128 + stop.signum
    except KeyboardInterrupt:
        print("jaxlint: interrupted; every verify child was killed", file=sys.stderr)
        return 128 + 2
    sys.stdout.write(render_verify(report, findings, args.format, verbose=args.verbose))
    print(verify_summary(report, len(findings)), file=sys.stderr)
    code = EXIT_FINDINGS if report.should_fail else EXIT_CLEAN
    return EXIT_CLEAN if args.exit_zero else code


def _run_command(args: argparse.Namespace, config) -> int:
    # A list is an argv; a single string is a shell command line (`"make data && python train.py"`).
    command = args.run if isinstance(args.run, list) else [args.run] if args.run.strip() else []
    if not command:
        return _fail("--run needs a command")
    try:
        from .runtime.recompiles import run_command
    except ImportError as error:
        return _fail(f"--run is not available: {error}")
    fmt = "json" if args.format == "json" else "text"
    # Static recompile hazards in the project, to cross-reference with what recompiled in the run.
    from .files import discover
    from .runner import lint_files
    from .runtime.confirmable import RECOMPILE_CODES

    codes = tuple(sorted(RECOMPILE_CODES))
    hazard_config = dataclasses.replace(config, select=codes, extend_select=(), ignore=())
    hazards = lint_files(discover(["."], hazard_config), hazard_config, jobs=args.jobs)
    return run_command(
        command,
        max_compiles=config.max_compiles,
        budgets=config.max_compiles_per_function,
        fmt=fmt,
        out=sys.stdout,
        static_findings=hazards,
        all_functions=args.all_functions,
    )
