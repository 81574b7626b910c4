"""The store of recorded jitted calls under the cache folder: `<cache>/signatures/<stem>-<hash>.json`, one
file per source file (the hash is of its real path), so that `--verify` finds a module's calls in one read.

    {"version": 1, "path": "/abs/train.py",
     "functions": {"train_step": {"line": 12, "first_line": 11, "calls": [<call_records call>, ...]}}}

A function called only with arguments that cannot be rebuilt elsewhere has no calls and `"unkept": why`.

`--run` writes it: the calls of this run first, then older ones, at most `MAX_CALLS_PER_FUNCTION` per
function; each file is replaced atomically, so a reader never sees half of one. Only files of the
project (under `root`) are kept: library code and temporary files are not verified.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from typing import Any

from ...bounded_read import read_regular_file
from .call_records import MAX_CALLS_PER_FUNCTION

SUBDIR = "signatures"
VERSION = 1
MAX_STORE_BYTES = 64 << 20  # one source file's recorded calls; a larger file is not ours


def store_path(directory: str, source: str) -> str:
    real = os.path.realpath(source)
    digest = hashlib.sha1(real.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    stem = os.path.splitext(os.path.basename(real))[0] or "module"
    return os.path.join(directory, f"{stem}-{digest}.json")


def read_functions(directory: str | None, source: str) -> dict[str, dict[str, Any]]:
    """`{qualname: {"line", "first_line", "calls"}}` recorded for `source`; empty when none or unreadable."""
    if not directory:
        return {}
    text = read_regular_file(store_path(directory, source), MAX_STORE_BYTES)  # never a FIFO or a device
    try:
        data = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    if os.path.realpath(str(data.get("path"))) != os.path.realpath(source):
        return {}
    functions = data.get("functions")
    return functions if isinstance(functions, dict) else {}


def write_calls(directory: str, entries: Iterable[dict[str, Any]], root: str | None = None) -> int:
    """Add the run's calls (`RunTotals.calls`) to the store; returns how many functions have calls."""
    by_file: dict[str, list[dict[str, Any]]] = {}
    real_root = os.path.realpath(root) + os.sep if root else None
    for entry in entries:
        path = entry.get("path")
        if not isinstance(path, str) or path.startswith("<"):
            continue
        if not entry.get("calls") and not entry.get("unkept"):
            continue
        real = os.path.realpath(path)
        if real_root is not None and not real.startswith(real_root):
            continue
        by_file.setdefault(real, []).append(entry)
    written = 0
    for source, found in by_file.items():
        functions = read_functions(directory, source)
        for entry in found:
            old = functions.get(entry["qualname"], {})
            same_def = old.get("first_line") == entry.get("first_line")
            calls = list(entry.get("calls", [])) + [
                c for c in (old.get("calls", []) if same_def else []) if c not in entry.get("calls", [])
            ]
            functions[entry["qualname"]] = {
                "line": entry.get("line"),
                "first_line": entry.get("first_line"),
                "calls": calls[:MAX_CALLS_PER_FUNCTION],
            }
            if calls:
                written += 1
            elif entry.get("unkept"):
                functions[entry["qualname"]]["unkept"] = entry["unkept"]
        _write_atomic(
            store_path(directory, source), {"version": VERSION, "path": source, "functions": functions}
        )
    return written


def _write_atomic(path: str, data: dict[str, Any]) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".signatures-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
