"""`--watch`: lint, then lint again whenever a source file or a pyproject.toml under the watched folders
changes, until Ctrl-C. File events come from `watchfiles` (the `watch` extra: Rust's notify, inotify on
Linux), imported only here; its default filter already skips VCS folders, virtualenvs and caches."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

_WATCHED_SUFFIXES = (".py", ".pyi", ".ipynb")


def _relevant(change: object, path: str) -> bool:
    return path.endswith(_WATCHED_SUFFIXES) or path.endswith("pyproject.toml")


def watch(lint: Callable[[], int], roots: list[str]) -> int:
    """Run `lint` now and after each batch of changes, until Ctrl-C; a usage error is reported and the
    watching goes on (the next change may fix it). Without watchfiles: exit 2."""
    try:
        import watchfiles
    except ImportError:
        print(
            "jaxlint: error: --watch needs the watchfiles package: pip install watchfiles",
            file=sys.stderr,
        )
        return 2
    relevant = watchfiles.DefaultFilter()

    def wanted(change: watchfiles.Change, path: str) -> bool:
        return relevant(change, path) and _relevant(change, path)

    code = _once(lint)
    for _ in watchfiles.watch(*roots, watch_filter=wanted, raise_interrupt=True):
        code = _once(lint)
    return code


def _once(lint: Callable[[], int]) -> int:
    code = lint()
    sys.stdout.flush()
    print(f"[{time.strftime('%H:%M:%S')}] Watching for file changes.", file=sys.stderr, flush=True)
    return code
