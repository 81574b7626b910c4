"""Reading a file that someone else could have replaced: the cache and the signature store live in a folder
anyone who can write the project can write, so an entry may be a FIFO (opening it blocks until a writer
comes), a device or a symlink to one (`/dev/zero` has size 0 and never ends), or simply huge."""

from __future__ import annotations

import os
import stat


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """The contents of `path` if it is a regular file (symlinks followed) of at most `limit` bytes; None
    otherwise, or when it cannot be read. Never blocks on a FIFO and never reads more than `limit` + 1
    bytes, whatever the file's reported size."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks = []
        left = limit + 1  # one byte past the limit says the file grew beyond it while we read
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)
