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


def dash_m_jaxlint() -> bool:
    """True while `python -m jaxlint...` imports jaxlint (argv[0] is still "-m" then)."""
    argv = getattr(sys, "orig_argv", [])
    if sys.argv[:1] != ["-m"]:
        return False
    try:
        module = argv[argv.index("-m") + 1]
    except (ValueError, IndexError):
        return False
    return module == "jaxlint" or module.startswith("jaxlint.")


def drop_working_directory_of_dash_m() -> None:
    """Under `python -m jaxlint...`, take off the working directory `-m` put first (before anything of
    jaxlint imports a module that is not loaded yet). Another package imported while its own `-m` runs
    keeps its sys.path as it is."""
    if dash_m_jaxlint() and not getattr(sys.flags, "safe_path", False) and sys.path:
        del sys.path[0]
