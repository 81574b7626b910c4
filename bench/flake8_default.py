"""Run flake8 with its default plugins only (pyflakes, pycodestyle, mccabe), whatever else is installed.

Usage: ``python bench/flake8_default.py [flake8 arguments]``.

flake8 loads every installed ``flake8.extension`` entry point, jaxlint's own ``JAX`` plugin included once
jaxlint is installed, so a plain ``flake8`` row would silently measure jaxlint too.  This wrapper hides the
other plugins from flake8's plugin finder and then runs flake8's own ``main``.  The names of the hidden
plugins are printed on stderr.  (Works with the fork start method, Linux's default: flake8's ``-j``
workers inherit the filtered plugin list.)
"""

from __future__ import annotations

import sys

from flake8.main import cli
from flake8.plugins import finder

DEFAULT_PACKAGES = {"flake8", "pyflakes", "pycodestyle", "mccabe"}

_original = finder._find_importlib_plugins


def _default_only():
    hidden = []
    for plugin in _original():
        if plugin.package.lower() in DEFAULT_PACKAGES:
            yield plugin
        else:
            hidden.append(f"{plugin.package}:{plugin.entry_point.name}")
    if hidden:
        print("flake8_default: not loading " + ", ".join(sorted(hidden)), file=sys.stderr)


finder._find_importlib_plugins = _default_only

if __name__ == "__main__":
    sys.exit(cli.main(sys.argv[1:]))
