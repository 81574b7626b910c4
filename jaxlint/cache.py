"""On-disk cache of findings, keyed on file content + effective settings + jaxlint version.

Entries are content-addressed, so a changed file, a changed config or an upgrade simply misses; files with
findings are cached too. Writes go to a temporary file and are renamed into place, so concurrent runs never
read half an entry.

The cache folder is writable by whoever can write the project, so an entry is believed only if it is what
this code writes: a regular file under a size limit (a FIFO or a link to a device is a miss, and no more
than the limit is ever read), an object naming its own key (an entry copied onto another file's key is a
miss, so a clean file's entry cannot hide a dirty file's findings), with findings of known rules whose
fields have the right types and ranges and hold no control characters. Anything else is a miss, never a crash.
Entries unused for `MAX_AGE_DAYS` are pruned, at most once a day.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from ._version import __version__
from .analysis.project import Summary
from .bounded_read import read_regular_file
from .cache_folder import make_cache_dir
from .finding import Finding
from .rules import NAMES

DEFAULT_DIR = ".jaxlint_cache"


def default_dir(config: Any) -> str:
    """The cache folder the command uses without --cache-dir: `cache-dir` of the settings, under the
    settings' folder (else the current one)."""
    base = config.root if config.root is not None else Path.cwd()
    return str(base / (config.cache_dir or DEFAULT_DIR))


SCHEMA = 1
MAX_ENTRY_BYTES = 4 << 20  # far above any real file's findings; bounds the JSON parsed
MAX_FINDINGS = 10_000
MAX_AGE_DAYS = 30
_PRUNE_EVERY_S = 24 * 3600
_TOUCH_AFTER_S = 24 * 3600  # a hit refreshes an entry's age at most once a day
_PRUNED = ".last-prune"

# C0 and C1 controls and DEL; a fix's replacement text may hold newlines and tabs.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_IN_CODE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SHARD = re.compile(r"[0-9a-f]{2}")
_ENTRY = re.compile(r"[0-9a-f]{64}\.json|[^/]*\.tmp")
_POSITIVE = ("line", "column", "end_line", "end_column")
_FIELDS = {field.name for field in dataclasses.fields(Finding)} - {"path"}


@functools.cache  # once per process: every project round opens the cache, and the code loaded does not change
def _build_fingerprint() -> str:
    """jaxlint's own sources and data tables (names, sizes, mtimes): an edited checkout, or an updated table
    under analysis/semantics/data, never reads entries of an older one."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(__version__.encode())
    sources = [p for p in package.rglob("*") if p.suffix == ".py" or "data" in p.relative_to(package).parts]
    for source in sorted(p for p in sources if p.is_file()):
        stat = source.stat()
        digest.update(f"{source.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


class FindingCache:
    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.root = Path(folder)
        self.folder = self.root / __version__
        self.build = _build_fingerprint()
        self._ready = False

    def key(self, data: bytes, settings: str) -> str:
        digest = hashlib.sha256(data)
        digest.update(b"\0" + settings.encode() + b"\0" + self.build.encode())
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> list[Finding] | None:
        found = self.lookup(key, path)
        return None if found is None else found[0]

    def lookup(self, key: str, path: str) -> tuple[list[Finding], Summary] | None:
        """The findings and the module summary (`analysis.project`) stored under `key`, or None."""
        entry = self._entry(key)
        data = read_regular_file(entry, MAX_ENTRY_BYTES)  # a FIFO, a device or an oversized entry: a miss
        if data is None:
            return None
        try:
            document = json.loads(data)
            findings = _findings(document, key, path)
            summary = _summary(document)
            if findings is None or summary is None:
                return None
            if time.time() - entry.stat().st_mtime > _TOUCH_AFTER_S:
                os.utime(entry)  # still in use: not pruned
            return findings, summary
        except (OSError, ValueError, TypeError, RecursionError):
            return None

    def put(self, key: str, findings: list[Finding], summary: Summary | None = None) -> None:
        entry = self._entry(key)
        rows = []
        for finding in findings:
            row = dataclasses.asdict(finding)
            del row["path"]
            rows.append(row)
        try:
            self._prepare()
            entry.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                document = {"schema": SCHEMA, "key": key, "findings": rows}
                if summary is not None and summary != Summary():
                    document["summary"] = summary.to_json()
                json.dump(document, out)
            os.replace(temporary, entry)
        except OSError:
            pass  # a read-only tree still gets linted, just not cached

    def _prepare(self) -> None:
        """Create the cache folder, git-ignored (cache_folder.py)."""
        if self._ready:
            return
        make_cache_dir(self.root)
        self._ready = True

    def prune(self, max_age_days: float = MAX_AGE_DAYS, *, force: bool = False) -> int:
        """Remove entries (of any version) and stale temporaries unused for `max_age_days`; at most once a day
        unless forced. Only names this class writes are touched (`<version>/<2 hex>/<64 hex>.json`), so a
        `cache-dir` that is a user's folder loses nothing else. Returns the number of files removed."""
        marker = self.root / _PRUNED
        try:
            if not force and time.time() - marker.stat().st_mtime < _PRUNE_EVERY_S:
                return 0
        except FileNotFoundError:
            pass
        except OSError:
            return 0
        try:
            marker.touch()
        except OSError:
            return 0
        cutoff = time.time() - max_age_days * 86400
        removed = 0
        for version in _folders(self.root):
            for shard in _folders(version):
                if not _SHARD.fullmatch(shard.name):
                    continue
                for entry in _files(shard):
                    if not _ENTRY.fullmatch(entry.name):
                        continue
                    try:
                        if entry.stat().st_mtime < cutoff:
                            entry.unlink()
                            removed += 1
                    except OSError:
                        continue
                _remove_if_empty(shard)
            _remove_if_empty(version)
        return removed


def _folders(folder: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _files(folder: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def _summary(document: dict) -> Summary | None:
    """The entry's module summary (none written: empty), or None when it is not what `put` writes."""
    if "summary" not in document:
        return Summary()
    return Summary.from_json(document["summary"])


def _findings(document: Any, key: str, path: str) -> list[Finding] | None:
    """The entry's findings if it is exactly what `put` writes for this key, else None."""
    if not isinstance(document, dict) or document.get("schema") != SCHEMA or document.get("key") != key:
        return None
    rows = document.get("findings")
    if not isinstance(rows, list) or len(rows) > MAX_FINDINGS:
        return None
    findings = []
    for row in rows:
        if not _valid_row(row):
            return None
        findings.append(Finding(path=path, **row))
    return findings


def _valid_row(row: Any) -> bool:
    if not isinstance(row, dict) or set(row) != _FIELDS:
        return False
    for name in _POSITIVE:
        value = row[name]
        if type(value) is not int or not 1 <= value <= 1 << 31:
            return False
    if row["end_line"] < row["line"]:
        return False
    if NAMES.get(row["code"]) != row["name"] or row["severity"] not in ("error", "warning"):
        return False
    if not isinstance(row["message"], str) or _CONTROL.search(row["message"]):
        return False
    if row["fix"] is not None and (not isinstance(row["fix"], str) or _CONTROL_IN_CODE.search(row["fix"])):
        return False
    if row["fix_safety"] not in (None, "safe", "unsafe"):
        return False
    function = row["function"]
    if function is not None and (not isinstance(function, str) or _CONTROL.search(function)):
        return False
    cell = row["cell"]
    return cell is None or (type(cell) is int and 1 <= cell <= 1 << 31)
