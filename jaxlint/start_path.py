"""Keeping the user's project out of sys.path in jaxlint's own processes.

`python -c` and `python -m` put the working directory first on sys.path, ahead of the standard library; in
an editor that is the user's project, so its `json.py` or `struct.py` would run at jaxlint's first `import
json`: opening a repository would run code from it. Python >= 3.11's `-P` leaves the entry out; the user's
interpreter (`--verify`'s children) may be older, so each of our processes takes it off itself, first.
"""

from __future__ import annotations

import sys

# The first lines of every `python -c SOURCE` process jaxlint starts: `-c` put '' (the working directory)
# first; other entries are absolute by then (site.py), so '' is that one, and none under `-P`.
DROP_WORKING_DIRECTORY = "import sys\nif sys.path[:1] == ['']:\n    del sys.path[0]\n"


def drop_working_directory_of_dash_m() -> None:
    """Under `python -m jaxlint...`, take off the working directory `-m` put first (before anything of
    jaxlint imports a module that is not loaded yet). Another package imported while its own `-m` runs
    keeps its sys.path as it is."""
    if sys.argv[:1] != ["-m"] or getattr(sys.flags, "safe_path", False) or not sys.path:
        return
    argv = getattr(sys, "orig_argv", [])
    try:
        module = argv[argv.index("-m") + 1]
    except (ValueError, IndexError):
        return
    if module == "jaxlint" or module.startswith("jaxlint."):
        del sys.path[0]
