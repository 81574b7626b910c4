"""The `jaxlint` command: argument parsing and exit codes (0 clean, 1 findings, 2 usage/config/internal error)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import NoReturn, TextIO

from ._version import __version__
from .interrupts import keep_interrupts

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# `report_formats.render` writes each (full: `snippets.full`); named here so that `--help` imports nothing.
FORMATS = (
    *("text", "concise", "full", "json", "sarif", "github"),
    *("json-lines", "pylint", "azure", "gitlab", "junit", "rdjson"),
)
VERIFY_FORMATS = ("text", "concise", "full", "json", "sarif", "github")  # what `runtime_output` writes


def _split_codes(value: str) -> list[str]:
    return [code.strip().upper() for code in value.split(",") if code.strip()]


def _split_patterns(value: str) -> list[str]:
    return [pattern.strip() for pattern in value.split(",") if pattern.strip()]


def _per_file_ignores(value: str) -> list[tuple[str, list[str]]]:
    """ruff's `PATTERN:CODE` pairs, comma-separated; a bare code after a pair adds to it
    (`tests/*:JAX103,JAX101`)."""
    pairs: list[tuple[str, list[str]]] = []
    for item in _split_patterns(value):
        pattern, sep, code = item.rpartition(":")
        if sep and pattern:
            pairs.append((pattern, []))
        elif not pairs:
            raise argparse.ArgumentTypeError(f"expected PATTERN:CODES, got {item!r}")
        pairs[-1][1].extend(_split_codes(code))
    return pairs


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's own, measuring the terminal without importing shutil (and its compression modules) at
    every start: argparse builds a formatter for each `add_argument`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width=None) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else the terminal on stdout, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxlint",
        formatter_class=_HelpFormatter,
        description="Find the mistakes JAX's transformations punish (jit, vmap, grad, lax bodies).",
        epilog="Exit codes: 0 no findings, 1 findings (or confirmed/over budget with --verify; or a file "
        "fixed, with --exit-non-zero-on-fix), 2 error, 130 interrupted (Ctrl-C). "
        "`jaxlint check [PATHS]` is `jaxlint [PATHS]`, as in ruff. "
        "`jaxlint server` runs the language server for editors (the `server` extra; see docs/editors.md).",
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
    parser.add_argument(
        "--extend-ignore", type=_split_codes, help="codes or prefixes to disable on top of ignore"
    )
    parser.add_argument(
        "--per-file-ignores",
        type=_per_file_ignores,
        metavar="PATTERN:CODES",
        help="replaces per-file-ignores: 'tests/*:JAX103,JAX101,scripts/*:JAX2'",
    )
    parser.add_argument(
        "--exclude", type=_split_patterns, metavar="PATTERNS", help="replaces exclude (comma-separated globs)"
    )
    parser.add_argument(
        "--extend-exclude",
        type=_split_patterns,
        metavar="PATTERNS",
        help="globs to exclude on top of exclude",
    )
    parser.add_argument(
        "--output-format",
        "--format",
        dest="format",
        choices=FORMATS,
        default="text",
        help="text (= concise): path:line:col: CODE message; full: also the source lines and carets; "
        "the others as ruff's",
    )
    parser.add_argument(
        "-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    parser.add_argument(
        "--statistics", action="store_true", help="print the number of findings per rule instead of them"
    )
    parser.add_argument("--list-rules", action="store_true", help="print the rule table and exit")
    parser.add_argument("--explain", metavar="CODE", help="print one rule's documentation and exit")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("-e", "--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="exit 1 when --fix changed a file, even if no finding remains",
    )
    parser.add_argument("--ignore-noqa", action="store_true", help="report findings that `# noqa` suppresses")
    parser.add_argument("-q", "--quiet", action="store_true", help="print the findings and nothing else")
    parser.add_argument(
        "-s", "--silent", action="store_true", help="print nothing (the exit code still says 1 for findings)"
    )
    parser.add_argument("--stdin-filename", help="the path to report for source read from stdin")
    parser.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of searching")
    parser.add_argument(
        "--force-exclude", action="store_true", help="apply excludes to paths given explicitly"
    )
    parser.add_argument(
        "--show-settings", action="store_true", help="print the settings the first path is linted with"
    )
    parser.add_argument("--show-files", action="store_true", help="print the files that would be linted")
    parser.add_argument(
        "--watch", action="store_true", help="lint again on every change (the `watch` extra: watchfiles)"
    )
    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes in place; report what remains")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="also unsafe fixes (implies --fix)")
    fixing.add_argument("--diff", action="store_true", help="print fixes as a diff; write nothing")
    fixing.add_argument(
        "--fix-only", action="store_true", help="apply fixes but neither report nor fail for what remains"
    )
    fixing.add_argument(
        "--show-fixes", action="store_true", help="with --fix: list the fixes applied per file"
    )
    fixing.add_argument(
        "--add-noqa", action="store_true", help="add `# noqa: CODE` to every line with a finding"
    )
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
        "--html",
        metavar="FILE",
        help="with --run: also write a self-contained HTML report (compiles per function, reasons, timeline)",
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
        "--all",
        action="store_true",
        help="with --verify: also trace every function with real inputs (examples, calls a --run recorded), "
        "flagged or not, and report the JAX errors those traces raise",
    )
    runtime.add_argument(
        "--verbose", action="store_true", help="with --verify: each verdict's reason, inputs and device"
    )
    return parser


def _fail(message: str) -> int:
    # A path given on the command line may hold escape sequences; shown escaped, as report.clean does (not
    # imported: this also reports failures to import the rest of jaxlint).
    shown = re.sub(
        r"[\x00-\x1f\x7f-\x9f]", lambda m: m.group().encode("unicode_escape").decode("ascii"), message
    )
    print(f"jaxlint: error: {shown}", file=sys.stderr)
    return EXIT_ERROR


def command() -> NoReturn:
    """The `jaxlint` console script (and `python -m jaxlint`): `main`, then the process ends without waiting
    for Python's shutdown when nothing needs it (`process_exit`)."""
    from .process_exit import finish

    finish(main())


def _quiet_pool_wakeup() -> None:
    """After an interrupt, a process pool's wakeup pipe may already be closed when concurrent.futures' exit hook
    writes to it at Python's shutdown; Python would print that BrokenPipeError ("Exception ignored in: <module
    'threading'>") after our last line. The workers are gone either way: keep the message the last line."""
    previous = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, OSError | EOFError):
            previous(unraisable)

    sys.unraisablehook = hook


def main(argv: list[str] | None = None) -> int:
    keep_interrupts()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["server"]:  # `jaxlint server`: the language server, with its own arguments
        from .server import main as server_main

        return server_main(argv[1:])
    if argv[:1] == ["check"]:  # `jaxlint check ...`, as `ruff check`: the same as without it
        argv = argv[1:]
    parser = build_parser()
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
        _quiet_pool_wakeup()
        print("jaxlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_ERROR
    except _UsageError as error:
        return _fail(str(error))
    except Exception as error:  # a bug in jaxlint: one line and exit 2, never a traceback and exit 1
        return _fail(f"internal error: {type(error).__name__}: {error}")


class _UsageError(Exception):
    """A problem with what the command was given (a path, stdin): one line, exit 2."""


def _read_stdin() -> bytes:
    """All of stdin; closed or unreadable stdin is a usage error, not a traceback."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise _UsageError("cannot read stdin: it is closed")
    try:
        return stream.read()
    except (OSError, ValueError) as error:
        raise _UsageError(f"cannot read stdin: {error}") from error


def _decode_stdin(data: bytes, name: str):
    """(source, None), or (None, a JAX000 finding) for bytes that are not text in their declared coding."""
    from .lint import decode_or_finding

    decoded = decode_or_finding(data, name)
    return (decoded, None) if isinstance(decoded, str) else (None, decoded)


class _Skipped:
    """Collects what discovery skipped for a reason of its own (unreadable folder, FIFO, symlink loop) as
    JAX000 findings: never skipped silently."""

    def __init__(self, config) -> None:
        self.config = config
        self.findings: list = []

    def __call__(self, path: str, reason: str) -> None:
        from .finding import parse_error
        from .lint import keep_selected
        from .selection import settings_for

        self.findings += keep_selected([parse_error(path, 1, 1, reason)], settings_for(self.config, path))


def _check_paths(paths: list[str]) -> None:
    """Paths named on the command line must exist and be readable: else one line and exit 2."""
    import errno

    for given in paths:
        if given == "-":
            continue
        try:
            os.stat(given)
        except FileNotFoundError as error:
            # A dangling symlink is reported as what it is.
            hint = "a broken symlink" if os.path.islink(given) else "does not exist"
            raise _UsageError(f"path {hint}: {given}") from error
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise _UsageError(f"path is a symlink loop: {given}") from error
            raise _UsageError(f"cannot read {given}: {error.strerror or error}") from error
        if os.path.isdir(given):
            try:
                with os.scandir(given):
                    pass
            except OSError as error:
                raise _UsageError(f"cannot read folder {given}: {error.strerror or error}") from error


def _main(args: argparse.Namespace) -> int:
    if args.list_rules:
        from .docs import rule_table

        print(rule_table(), end="")
        return EXIT_CLEAN
    if args.explain:
        from .docs import explain, explain_parse_error, explain_runtime_error
        from .finding import PARSE_ERROR_CODE, RUNTIME_ERROR_CODE
        from .rules import ENTRIES_BY_CODE

        code = args.explain.upper()
        if code in (PARSE_ERROR_CODE, RUNTIME_ERROR_CODE):
            print(explain_parse_error() if code == PARSE_ERROR_CODE else explain_runtime_error(), end="")
            return EXIT_CLEAN
        entry = ENTRIES_BY_CODE.get(code)
        if entry is None:
            return _fail(f"unknown rule code '{args.explain}' (see `jaxlint --list-rules`)")
        print(explain(entry.load()), end="")  # that rule's module only
        return EXIT_CLEAN
    if args.jobs is not None and args.jobs < 1:
        return _fail("--jobs must be at least 1")
    from .report import STATISTICS_FORMATS

    if args.statistics and args.format not in STATISTICS_FORMATS:
        return _fail(f"--statistics works with --format {' or '.join(STATISTICS_FORMATS)}, not {args.format}")
    if args.statistics and args.verify:
        return _fail("--statistics cannot be combined with --verify (its report counts by verdict)")
    if args.verify and args.format not in VERIFY_FORMATS:
        return _fail(f"--verify writes --output-format {', '.join(VERIFY_FORMATS)}, not {args.format}")
    if args.add_noqa and (args.fix or args.unsafe_fixes or args.diff or args.fix_only or args.verify):
        return _fail("--add-noqa cannot be combined with --fix, --diff or --verify")
    if args.add_noqa and args.ignore_noqa:
        return _fail("--add-noqa cannot be combined with --ignore-noqa")
    if args.fix_only and args.verify:
        return _fail("--fix-only cannot be combined with --verify (it reports no findings)")
    if args.exit_zero and args.exit_non_zero_on_fix:  # as ruff
        return _fail("--exit-zero cannot be combined with --exit-non-zero-on-fix")
    args.quiet = args.quiet or args.silent
    if args.watch and (args.verify or args.add_noqa or args.show_settings or args.show_files):
        return _fail("--watch cannot be combined with --verify, --add-noqa, --show-settings or --show-files")

    paths = args.paths or ["."]
    if args.all and (not args.verify or args.run is not None):
        return _fail("--all needs --verify, without --run (run first, then `jaxlint --verify --all`)")
    if args.html is not None and args.run is None:
        return _fail("--html needs --verify --run CMD")
    if args.run is not None:
        if not args.verify:
            return _fail("--run needs --verify")
        paths = ["."]
    _check_paths(paths)
    if args.watch:
        if "-" in paths:
            return _fail("--watch cannot read stdin")
        from .watch import watch

        return watch(lambda: _configured_or_error(args, paths), _watched(args, paths))
    return _configured(args, paths)


def _configured_or_error(args: argparse.Namespace, paths: list[str]) -> int:
    """One --watch round: a bad setting or a vanished path is said, and the watch goes on."""
    try:
        _check_paths(paths)
        return _configured(args, paths)
    except _UsageError as error:
        return _fail(str(error))


def _watched(args: argparse.Namespace, paths: list[str]) -> list[str]:
    """What --watch watches: the project roots whose modules give the paths their facts (a folder's own
    project: the root found from a name inside it); a loose script's folder (a download folder, /tmp) is
    not watched whole: the path given is."""
    from .project_scope import project_of

    config, _ = _configuration(args, paths)
    watched = set()
    for path in paths:
        root, whole = project_of(path if os.path.isfile(path) else os.path.join(path, "__init__.py"), config)
        watched.add(root if whole else os.path.abspath(path))
    return sorted(watched)


def _configuration(args: argparse.Namespace, paths: list[str]):
    """The settings for this run: the nearest [tool.jaxlint] (or --config) under the command's flags;
    raises _UsageError."""
    from .config import ConfigError, find_pyproject, load, with_overrides
    from .selection import validate

    try:
        if args.config:
            if not os.path.isfile(args.config):
                raise _UsageError(f"config file not found: {args.config}")
            pyproject: Path | None = Path(args.config)
        else:
            anchor = args.stdin_filename if paths == ["-"] and args.stdin_filename else paths[0]
            pyproject = find_pyproject(Path(anchor) if anchor != "-" else Path.cwd())
        config = load(pyproject)
        validate(config, f"{pyproject}: [tool.jaxlint] ")
        config = with_overrides(
            config,
            select=args.select,
            ignore=(*(args.ignore or ()), *(args.extend_ignore or ())) or None,
            extend_select=args.extend_select,
            verify_timeout=args.verify_timeout,
            max_compiles=args.max_compiles,
            exclude=tuple(args.exclude) if args.exclude is not None else None,
            extend_exclude=(*config.extend_exclude, *args.extend_exclude) if args.extend_exclude else None,
            per_file_ignores=(
                tuple((glob, tuple(codes)) for glob, codes in args.per_file_ignores)
                if args.per_file_ignores is not None
                else None
            ),
            ignore_noqa=args.ignore_noqa or None,
        )
        validate(config)
    except ConfigError as error:
        raise _UsageError(str(error)) from error
    except OSError as error:  # e.g. an unreadable pyproject.toml on the way up
        raise _UsageError(f"cannot read the configuration: {error}") from error
    return config, pyproject


def _configured(args: argparse.Namespace, paths: list[str]) -> int:
    config, pyproject = _configuration(args, paths)
    with _report_stream(args) as args.out:
        return _configured_to(args, config, pyproject, paths)


@contextlib.contextmanager
def _report_stream(args: argparse.Namespace) -> Iterator[TextIO]:
    """Where the report goes: stdout, the --output-file (its folders made, as ruff makes them), or nowhere
    (--silent)."""
    if args.silent:
        yield io.StringIO()
    elif args.output_file:
        try:
            folder = os.path.dirname(args.output_file)
            if folder:
                os.makedirs(folder, exist_ok=True)
            handle = open(args.output_file, "w", encoding="utf-8", errors="backslashreplace")
        except OSError as error:
            raise _UsageError(f"cannot write {args.output_file}: {error.strerror or error}") from error
        with handle:
            yield handle
    else:
        yield sys.stdout


def _configured_to(args: argparse.Namespace, config, pyproject: Path | None, paths: list[str]) -> int:
    if args.show_settings:
        from .report import show_settings

        sys.stdout.write(show_settings(config, pyproject, paths[0]))
        return EXIT_CLEAN
    if args.show_files:
        from .files import discover

        skipped = _Skipped(config)
        for path in sorted(discover(paths, config, args.force_exclude, skipped)):
            print(_shown(path))
        return EXIT_CLEAN
    if args.run is not None:
        return _run_command(args, config)
    if args.fix or args.unsafe_fixes or args.diff or args.fix_only:
        return _fix(args, config, paths)

    from .finding import Finding
    from .lint import lint_text_in_project

    given: dict[str, str] = {}
    if "-" in paths:
        if len(paths) > 1:
            return _fail("'-' (stdin) cannot be combined with other paths")
        name = args.stdin_filename or "-"
        data = _read_stdin()
        source, problem = _decode_stdin(data, name)
        # Named as a file of a project (an editor's buffer): linted with the facts the project gives it.
        cache_dir = _cache_dir(args, config)
        findings: list[Finding] = (
            [problem] if problem else lint_text_in_project(source, name, config, cache_dir, data)
        )
        if source is not None:
            given[name] = source
    else:
        findings = _lint_named(args, config, paths)
    if args.add_noqa:
        return _add_noqa(args, findings, config, "-" in paths)
    if args.verify:
        return _verify(args, config, findings)
    return _emit(args, findings, given)


def _shown(text: str) -> str:
    from .report import clean

    return clean(text)


def _cache_dir(args: argparse.Namespace, config) -> str | None:
    if args.no_cache or args.ignore_noqa:  # the cache holds findings after noqa comments
        return None
    from .cache import default_dir

    return args.cache_dir or default_dir(config)


def _lint_named(args: argparse.Namespace, config, paths: list[str]) -> list:
    """The findings of the files the paths name, each linted with the facts of its whole project, sorted;
    discovery's own JAX000s (an unreadable folder) among them."""
    from .files import discover
    from .finding import Finding
    from .lint import lint_named

    cache_dir = _cache_dir(args, config)
    skipped = _Skipped(config)
    named = discover(paths, config, args.force_exclude, skipped)
    findings = lint_named(named, config, jobs=args.jobs, cache_dir=cache_dir, given=paths)
    findings = sorted([*findings, *skipped.findings], key=Finding.sort_key)
    if cache_dir is not None:
        from .cache import FindingCache

        FindingCache(cache_dir).prune()
    return findings


def _add_noqa(args: argparse.Namespace, findings: list, config, stdin: bool) -> int:
    """--add-noqa: a `# noqa: CODE` on the line of every finding (ruff's flag); notebooks and JAX000 are
    left alone, and so is a line that ends inside a string, which no comment can suppress."""
    if stdin:
        return _fail("--add-noqa rewrites files: it cannot read stdin")
    from .add_noqa import add_noqa_to_files

    added, refused = add_noqa_to_files(findings, config)
    for path, line, reason in refused:
        print(f"jaxlint: {_shown(path)}:{line}: no noqa added: {reason}", file=sys.stderr)
    plural = "s" if added != 1 else ""
    if not args.quiet:
        print(f"Added {added} noqa directive{plural}.", file=sys.stderr)
    return EXIT_ERROR if any(reason.startswith("cannot write") for _, _, reason in refused) else EXIT_CLEAN


def _emit(
    args: argparse.Namespace,
    findings: list,
    given: dict[str, str] | None = None,
    fixed: int = 0,
    fixes_shown: str = "",
) -> int:
    """Print the findings in the chosen format (--statistics: the table in their place, as ruff); text
    formats end with ruff's summary, on the report's stream as ruff's. `fixed`: how many --fix applied;
    `fixes_shown`: --show-fixes' list of them, before the summary."""
    from .report import TEXT_FORMATS, statistics, summary
    from .report_formats import render

    out = args.out
    unsafe = bool(args.unsafe_fixes)
    if args.statistics:
        out.write(statistics(findings, "json" if args.format == "json" else "text", unsafe))
    elif args.format == "full":
        from .snippets import full, use_colour

        out.write(full(findings, unsafe, use_colour(out), given))
    else:
        out.write(render(findings, args.format, unsafe))
    out.write(fixes_shown)
    if args.format in TEXT_FORMATS and not args.quiet:
        fixing = args.fix or args.unsafe_fixes  # the fix driver has said what it fixed and what it left
        out.write(summary(findings, unsafe, hints=not fixing, fixed=fixed))
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def _show_fixes(results: list) -> str:
    """--show-fixes: ruff's list of the fixes applied, per file and rule (`    2 × JAX103 (name)`)."""
    from .report import clean
    from .rules import NAMES

    total = sum(sum(r.applied.values()) for r in results)
    if not total:
        return ""
    lines = ["", f"Fixed {total} finding{'s' if total != 1 else ''}:"]
    for result in results:
        if sum(result.applied.values()):
            lines.append(f"- {clean(result.path)}:")
            for code, n in sorted(result.applied.items(), key=lambda kv: (-kv[1], kv[0])):
                if n:
                    lines.append(f"    {n} × {code} ({NAMES.get(code, code)})")
    return "\n".join(lines) + "\n\n"


def _fix(args: argparse.Namespace, config, paths: list[str]) -> int:
    """--fix / --unsafe-fixes / --diff: apply (or show) fixes, then report the findings that remain."""
    from .autofix import changes_the_project, fix_files, fix_source

    if args.diff and args.verify:
        return _fail("--diff cannot be combined with --verify")
    unsafe = bool(args.unsafe_fixes)
    if "-" in paths:
        if len(paths) > 1:
            return _fail("'-' (stdin) cannot be combined with other paths")
        name = args.stdin_filename or "-"
        data = _read_stdin()
        source, problem = _decode_stdin(data, name)
        if problem is not None:
            return EXIT_CLEAN if args.fix_only else _emit(args, [problem])
        from .lint import cached_findings, facts_for

        cache_dir = _cache_dir(args, config)
        facts = facts_for(name, config, cache_dir)
        known = cached_findings(name, data, config, cache_dir, facts)  # the file holds this text
        results = [fix_source(source, name, config, unsafe, facts, known)]
        if not args.diff:
            sys.stdout.write(results[0].fixed)  # the fixed source replaces stdin; findings go to stderr
    else:
        from .files import discover
        from .lint import lint_project

        skipped = _Skipped(config)
        files = list(discover(paths, config, args.force_exclude, skipped))
        # Each file is fixed with the facts its project gives it, so a finding that needs another module
        # is fixed (and reported) as `jaxlint FILE` reports it.
        cache_dir = _cache_dir(args, config)
        _, run = lint_project(files, config, jobs=args.jobs, cache_dir=cache_dir, given=paths)
        results = fix_files(
            files,
            config,
            unsafe=unsafe,
            write=not args.diff,
            jobs=args.jobs,
            facts=run.facts,
            cache_dir=cache_dir,
        )
        if skipped.findings:
            from .autofix import FixResult

            results.extend(FixResult(f.path, "", "", [f]) for f in skipped.findings)

    _say_notebooks_are_not_fixed(results, unsafe)
    # With --diff every changed file counts; otherwise only the files written (stdin: the text given back).
    changed = [r for r in results if r.changed and (args.diff or r.written or "-" in paths)]
    fixed = sum(sum(r.applied.values()) for r in changed)
    plural = "s" if fixed != 1 else ""
    where = f"{len(changed)} file{'s' if len(changed) != 1 else ''}"
    if args.diff:
        for result in changed:
            sys.stdout.write(result.diff())
        if not args.quiet:
            print(f"Would fix {fixed} finding{plural} in {where}.", file=sys.stderr)
        return EXIT_FINDINGS if changed and not args.exit_zero else EXIT_CLEAN
    failed = [r for r in results if r.error]
    for result in failed:
        print(f"jaxlint: error: cannot write {result.path}: {result.error}", file=sys.stderr)
    from .finding import Finding

    findings = sorted((f for r in results for f in r.findings), key=Finding.sort_key)
    # The fixes' list goes where the findings go (stdin: stderr, which is not the fixed text's stream).
    report = sys.stderr if "-" in paths and args.out is sys.stdout else args.out
    shown = _show_fixes(changed) if args.show_fixes else ""
    # --exit-non-zero-on-fix: a file changed is a failure, as a finding is.
    on_fix = EXIT_FINDINGS if fixed and args.exit_non_zero_on_fix else EXIT_CLEAN
    if args.fix_only:  # as ruff: what remains is neither reported nor a failure
        report.write(shown)
        if not args.quiet:
            hidden = _hidden_unsafe(findings, unsafe)
            more = f" ({hidden} more fixable with --unsafe-fixes)" if hidden else ""
            said = f"Fixed {fixed} finding{plural} in {where}" if fixed else "No findings fixed"
            print(f"{said}{more}.", file=sys.stderr)
        return EXIT_ERROR if failed else on_fix
    if "-" not in paths and changes_the_project(
        results, run.facts, {path: summary for path, (_, summary) in run.results.items()}
    ):
        # What remains, with the facts the fixed modules now give each other (a fix in one module can
        # change another's findings): the project linted again, the findings cache answering for the rest
        # (the fixed files' last rounds included). Otherwise each file's last lint is what remains.
        from .lint import lint_named

        remaining = lint_named(files, config, jobs=args.jobs, cache_dir=cache_dir, given=paths)
        findings = sorted([*remaining, *skipped.findings], key=Finding.sort_key)
    if fixed and not args.quiet:
        print(f"Fixed {fixed} finding{plural} in {where}.", file=sys.stderr)
    hidden = _hidden_unsafe(findings, unsafe)
    if hidden and not args.quiet:
        print(f"{hidden} more fixable with --unsafe-fixes.", file=sys.stderr)
    if args.verify:
        args.out.write(shown)
        code = _verify(args, config, findings)
    elif "-" in paths:
        from .report_formats import render

        if args.format == "full":  # the snippets show the fixed text, which went to stdout
            from .snippets import full, use_colour

            report.write(full(findings, unsafe, use_colour(report), {results[0].path: results[0].fixed}))
        else:
            report.write(render(findings, args.format))
        report.write(shown)
        code = EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN
    else:
        code = _emit(args, findings, fixed=fixed, fixes_shown=shown)
    return EXIT_ERROR if failed else max(code, on_fix)


def _hidden_unsafe(findings: list, unsafe: bool) -> int:
    """How many of what remains only --unsafe-fixes would fix."""
    return 0 if unsafe else sum(1 for f in findings if f.fix is not None and f.fix_safety == "unsafe")


def _say_notebooks_are_not_fixed(results: list, unsafe: bool) -> None:
    """jaxlint rewrites .py files only; a notebook's fixes are named, never dropped silently."""
    for result in results:
        if result.path.endswith(".ipynb"):
            count = sum(
                1 for f in result.findings if f.fix is not None and (unsafe or f.fix_safety != "unsafe")
            )
            if count:
                plural = "s" if count != 1 else ""
                print(
                    f"jaxlint: notebooks are not fixed: {count} fixable finding{plural} in {result.path} left as it is",
                    file=sys.stderr,
                )


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
    from .rules import NAMES
    from .runtime_output import Progress, render_verify, verify_summary

    settings = config.verify
    root = Path(config.root or Path.cwd())
    for key in unmatched_examples(settings.examples, root):
        print(f"jaxlint: warning: [tool.jaxlint.verify.examples] {key}", file=sys.stderr)
    progress = None if args.quiet else Progress()
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
                progress=progress,
                signatures_dir=_signatures_dir(args, config),
                names=NAMES,
                keep=lambda finding: _kept(config, finding),
                trace_all=_all_files(args, config),
            )
    except Terminated as stop:
        print(f"jaxlint: stopped by signal {stop.signum}; every verify child was killed", file=sys.stderr)
        return 128 + stop.signum
    except KeyboardInterrupt:
        print("jaxlint: interrupted; every verify child was killed", file=sys.stderr)
        return 128 + 2
    finally:
        if progress is not None:
            progress.close()
    args.out.write(render_verify(report, findings, args.format, verbose=args.verbose))
    if not args.quiet:
        print(verify_summary(report, len(findings) + len(report.found)), file=sys.stderr)
    code = EXIT_FINDINGS if report.should_fail else EXIT_CLEAN
    return EXIT_CLEAN if args.exit_zero else code


def _all_files(args: argparse.Namespace, config) -> list[str] | None:
    """`--verify --all`: the files linted, where verify looks for Modules to trace (None without --all)."""
    if not args.all:
        return None
    from .files import discover

    return [p for p in discover([p for p in (args.paths or ["."]) if p != "-"], config) if p.endswith(".py")]


def _kept(config, finding) -> bool:
    """A finding `--verify` found by running is reported as a static one would be: when its code is
    selected for its file and no `# noqa` on its line suppresses it."""
    from .selection import enabled, ignored_for
    from .suppression import Suppressions

    code = finding.code
    if not enabled(config, code) or any(code.startswith(c) for c in ignored_for(config, finding.path)):
        return False
    try:
        source = Path(finding.path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    if finding.cell is not None:  # a notebook's: the noqa comments of its own cell
        from .notebook import NotNotebook, code_cells

        try:
            cell = next((c for c in code_cells(source) or () if c.number == finding.cell), None)
        except NotNotebook:
            return True
        source = "\n".join(cell.lines) + "\n" if cell is not None else ""
    return not Suppressions(source).suppressed(code, finding.line)


def _signatures_dir(args: argparse.Namespace, config) -> str:
    """Where `--run` records jitted calls and `--verify` reads them: `signatures/` in the cache folder
    (kept with --no-cache, which is about the findings cache). A cache folder an older jaxlint made without
    its `.gitignore` gets it here (cache_folder.py)."""
    from .cache import DEFAULT_DIR
    from .cache_folder import mark_ignored
    from .runtime.recompiles.signature_store import SUBDIR

    base = config.root if config.root is not None else Path.cwd()
    folder = args.cache_dir or str(base / (config.cache_dir or DEFAULT_DIR))
    mark_ignored(folder)
    return os.path.join(folder, SUBDIR)


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
    # Static findings the run can prove: recompile hazards by recompiling, exception rules (`if tracer:`)
    # by raising at their line. The run records the jitted calls for a later --verify.
    from .files import discover
    from .lint import lint_files
    from .rules import NAMES
    from .runtime.confirmable import RECOMPILE_CODES
    from .runtime.verify.child.expectations import CONFIRMABLE_CODES

    codes = tuple(sorted(RECOMPILE_CODES | CONFIRMABLE_CODES))
    hazard_config = dataclasses.replace(config, select=codes, extend_select=(), ignore=())
    files = list(discover(["."], hazard_config))
    hazards = lint_files(files, hazard_config, jobs=args.jobs)
    return run_command(
        command,
        max_compiles=config.max_compiles,
        budgets=config.max_compiles_per_function,
        fmt=fmt,
        out=args.out,
        static_findings=hazards,
        signatures_dir=_signatures_dir(args, config),
        root=str(config.root or Path.cwd()),
        all_functions=args.all_functions,
        html=args.html,
        names=NAMES,
        keep=lambda finding: _kept(config, finding),
        files=[f for f in files if f.endswith(".py")],
    )
