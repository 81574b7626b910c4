"""The store of recorded jitted calls under the cache folder: `<cache>/signatures/<stem>-<hash>.json`, one
file per source file (the hash is of its real path), so that `--verify` finds a module's calls in one read.

    {"version": 1, "path": "/abs/train.py",
     "functions": {"train_step": {"line": 12, "first_line": 11, "calls": [<call_records call>, ...]}}}

A function called only with arguments that can be rebuilt neither by name nor by cloudpickle has no calls
and `"unkept": why`.

A call kept by cloudpickle (pickled_calls.py: a flax `TrainState`) is data that the next `--verify`
*executes* when it unpickles it. So each such call carries `"hmac"`: HMAC-SHA256, under this user's key
(signing_key.py: outside the project, so that a copy of the cache folder carries no key with it), of the
source's real path, the function's qualname and the pickle. `read_functions` drops pickled calls whose
HMAC does not match, and all of them when the key is missing, not the user's or readable by others: a
store copied from another project, user or machine (a cloned repository, a restored CI cache), or edited
by hand, is never unpickled.

The store's folder is made with the cache folder's `.gitignore` (cache_folder.py), so git never sees it.

`--run` writes it: the calls of this run first, then older ones, at most `MAX_CALLS_PER_FUNCTION` per
function; each file is replaced atomically, so a reader never sees half of one. Only files of the
project (under `root`) are kept: library code and temporary files are not verified.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from typing import Any

from ...bounded_read import read_regular_file
from ...cache_folder import make_cache_dir
from .call_records import MAX_CALLS_PER_FUNCTION
from .signing_key import key_path, make_key, read_key

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
    real = os.path.realpath(source)
    if os.path.realpath(str(data.get("path"))) != real:
        return {}
    functions = data.get("functions")
    if not isinstance(functions, dict):
        return {}
    secret = read_key()
    for qualname, entry in functions.items():
        calls = entry.get("calls") if isinstance(entry, dict) else None
        if not isinstance(calls, list):
            continue
        signed = [c for c in calls if not _pickled(c) or _signed(secret, real, qualname, c)]
        if len(signed) < len(calls):
            entry["calls"] = signed
            entry["refused"] = (
                f"{len(calls) - len(signed)} pickled call(s) in {directory} were not written by this "
                f"user's jaxlint for {real} (their HMAC does not match the key in {key_path()}: a store "
                "copied from another project, user or machine, or edited), so they were not unpickled"
            )
    return functions


def _pickled(call: Any) -> bool:
    return isinstance(call, dict) and "pickled" in call


def _mac(secret: bytes, source: str, qualname: str, pickled: str) -> str:
    message = "\0".join((source, qualname, pickled)).encode("utf-8", "surrogatepass")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _signed(secret: bytes | None, source: str, qualname: str, call: dict[str, Any]) -> bool:
    mac, pickled = call.get("hmac"), call.get("pickled")
    if secret is None or not isinstance(mac, str) or not isinstance(pickled, str):
        return False
    return hmac.compare_digest(mac, _mac(secret, source, qualname, pickled))


def recorded_sources(directory: str | None) -> list[str]:
    """The source files the store holds calls for."""
    sources = []
    try:
        names = sorted(os.listdir(directory)) if directory else []
    except OSError:
        return []
    for name in names:
        if not name.endswith(".json"):
            continue
        text = read_regular_file(os.path.join(str(directory), name), MAX_STORE_BYTES)
        try:
            path = json.loads(text).get("path") if text is not None else None
        except (ValueError, AttributeError):
            continue
        if isinstance(path, str):
            sources.append(path)
    return sources


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
    pickled = any(_pickled(c) for found in by_file.values() for e in found for c in e.get("calls", []))
    if by_file:
        make_cache_dir(os.path.dirname(os.path.abspath(directory)))  # git-ignored, whichever command made it
    secret = None
    if pickled:
        try:
            secret = make_key()
        except OSError as error:  # no key, no pickles: the plain-JSON calls are still kept
            sys.stderr.write(f"jaxlint: pickled calls not kept: cannot make the signing key: {error}\n")
    for source, found in by_file.items():
        functions = read_functions(directory, source)
        for kept in functions.values():
            if isinstance(kept, dict):
                kept.pop("refused", None)  # said of calls read_functions dropped: not written back with them
        for entry in found:
            calls = [c for c in entry.get("calls", []) if secret is not None or not _pickled(c)]
            new = [_sign(secret, source, entry["qualname"], c) for c in calls]
            old = functions.get(entry["qualname"], {})
            same_def = old.get("first_line") == entry.get("first_line")
            calls = new + [c for c in (old.get("calls", []) if same_def else []) if c not in new]
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


def _sign(secret: bytes | None, source: str, qualname: str, call: dict[str, Any]) -> dict[str, Any]:
    if secret is None or not _pickled(call):
        return call
    return {**call, "hmac": _mac(secret, source, qualname, call["pickled"])}


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
