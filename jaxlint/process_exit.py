"""The end of the `jaxlint` command's own process: once the report is out, exit without tearing Python down.

Python's shutdown frees every module and object one at a time (libcst's ~200 node classes, jaxlint's tables),
with full collections: 72 ms CPU after a one-file lint on the loaded shared machine, a third of what `import
libcst` costs there (`docs/performance.md`). A run needs none of it: files are closed
and cache entries renamed into place before `main` returns. So the command flushes its streams and leaves with
`os._exit`, as mypy does, unless something else is waiting for the interpreter's end: an `atexit` callback
(coverage, logging, multiprocessing), a thread that is not a daemon, or a stream that cannot be flushed (the
ordinary exit then reports it as before). Only the command's process: `cli.main` called in-process returns.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn


def finish(code: int) -> NoReturn:
    """Exit with `code`: at once when nothing waits for Python's shutdown, else the ordinary way."""
    if _nothing_waits():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # a closed pipe, a full disk: let the ordinary exit report it
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


def _nothing_waits() -> bool:
    callbacks = getattr(atexit, "_ncallbacks", None)
    if callbacks is None or callbacks() != 0:
        return False
    threading = sys.modules.get("threading")  # not imported: no thread was started through it
    if threading is None:
        return True
    if getattr(threading, "_threading_atexits", None):  # concurrent.futures' executors join there
        return False
    main = threading.main_thread()
    return all(thread is main or thread.daemon for thread in threading.enumerate())
