"""The key that signs the pickled calls `--run` records: per user and machine, outside every project.

A key kept beside the records it signs vouches for nothing: a copy of the cache folder that keeps its modes
(a clone made with umask 077, `tar -p`, a restored CI cache) carries it along, and the copy is trusted. So
the key lives in the user's own cache folder: `$JAXLINT_KEY_DIR` if set (tests), else
`%LOCALAPPDATA%\\jaxlint` on Windows, `~/Library/Caches/jaxlint` on macOS, `$XDG_CACHE_HOME/jaxlint` or
`~/.cache/jaxlint` elsewhere; `signing-key`, 32 random bytes, made by the first `--run` that keeps a pickle,
mode 0600 in a folder made 0700. It is believed only as a regular file of this user's that no one else can
read. Losing it costs only the recorded pickles: the next `--run` records them anew.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile

ENV_DIR = "JAXLINT_KEY_DIR"
NAME = "signing-key"
_BYTES = 32


def key_dir() -> str:
    """The folder of this user's key (module docstring)."""
    chosen = os.environ.get(ENV_DIR)
    if chosen:
        return os.path.abspath(chosen)
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or ""
        if not os.path.isabs(base):  # the XDG spec: a relative value is to be ignored
            base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxlint")


def key_path() -> str:
    return os.path.join(key_dir(), NAME)


def read_key() -> bytes | None:
    """This user's key, if there is one that only this user can read; never creates it."""
    try:
        # Non-blocking: a FIFO planted in its place must not hang the run.
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(key_path(), flags)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return None
        if hasattr(os, "getuid") and (status.st_uid != os.getuid() or status.st_mode & 0o077):
            return None
        key = os.read(fd, _BYTES + 1)
    finally:
        os.close(fd)
    return key if len(key) == _BYTES else None


def make_key() -> bytes:
    """This user's key, made on first use. It is written to a private temporary file and then linked into
    place, so a concurrent run never reads it half-written, and the first of two runs making one at once
    keeps it (the other reads it back instead of replacing it)."""
    key = read_key()
    if key is not None:
        return key
    directory = key_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    path = os.path.join(directory, NAME)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".signing-key-")  # mode 0600
    try:
        key = os.urandom(_BYTES)
        try:
            os.write(fd, key)
        finally:
            os.close(fd)
        try:
            os.link(temp, path)
            return key
        except FileExistsError:
            theirs = read_key()
            if theirs is not None:
                return theirs  # another run made it just now
            os.replace(temp, path)  # one we may not trust (another owner, readable by others, truncated)
            return key
        except OSError:  # a file system without hard links
            os.replace(temp, path)
            return key
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
