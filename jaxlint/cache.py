"""On-disk cache of findings, keyed on file content + effective settings + jaxlint version.

Entries are content-addressed, so a changed file, a changed config or an upgrade simply misses; files with
findings are cached too. Writes go to a temporary file and are renamed into place, so concurrent runs never
read half an entry. A corrupt or unreadable entry is a miss.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path

from . import __version__
from .finding import Finding

DEFAULT_DIR = ".jaxlint_cache"


def _build_fingerprint() -> str:
    """jaxlint's own sources (names, sizes, mtimes): an edited checkout never reads entries of an older one."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(__version__.encode())
    for source in sorted(package.rglob("*.py")):
        stat = source.stat()
        digest.update(f"{source.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


class FindingCache:
    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder) / __version__
        self.build = _build_fingerprint()

    def key(self, data: bytes, settings: str) -> str:
        digest = hashlib.sha256(data)
        digest.update(b"\0" + settings.encode() + b"\0" + self.build.encode())
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> list[Finding] | None:
        try:
            rows = json.loads(self._entry(key).read_text(encoding="utf-8"))
            return [Finding(path=path, **row) for row in rows]
        except (OSError, ValueError, TypeError):
            return None

    def put(self, key: str, findings: list[Finding]) -> None:
        entry = self._entry(key)
        rows = []
        for finding in findings:
            row = dataclasses.asdict(finding)
            del row["path"]
            rows.append(row)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            _ignore_folder(self.folder.parent)
            handle, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(rows, out)
            os.replace(temporary, entry)
        except OSError:
            pass  # a read-only tree still gets linted, just not cached


def _ignore_folder(folder: Path) -> None:
    """Keep the cache out of version control, as ruff does."""
    marker = folder / ".gitignore"
    if not marker.exists():
        try:
            marker.write_text("# Automatically created by jaxlint.\n*\n", encoding="utf-8")
        except OSError:
            pass
