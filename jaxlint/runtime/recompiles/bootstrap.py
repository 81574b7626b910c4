"""The `sitecustomize.py` that `--run` writes into a temporary directory put first on PYTHONPATH.

It is generated rather than shipped so it can name this package's directory: the command's Python
may be another interpreter or venv, and the package is loaded from that directory under a private
name (`_jaxlint_recompiles`), which never runs `jaxlint/__init__.py` (libcst, the linter) and never
shadows an installed jaxlint. Then it runs the `sitecustomize` it shadows, if there is one.
"""

from __future__ import annotations

import os

from .._isolate import child_environment as _environment
from .._isolate import private_loader
from .process_report import ENV_DIR

PRIVATE_NAME = "_jaxlint_recompiles"

_TEMPLATE = '''\
"""Written by `jaxlint --verify --run`: counts JAX traces and compiles in this process."""
import os as _os
import sys as _sys


def _jaxlint_start():
    directory = _os.environ.get({env_dir!r})
    if not directory:
        return
{loader}    from {name}.process_report import activate

    activate(directory)


def _jaxlint_chain():
    """Run the sitecustomize that this one shadows, as Python would have."""
    import importlib.machinery
    import importlib.util

    here = _os.path.dirname(_os.path.abspath(__file__))
    path = [p for p in _sys.path if _os.path.abspath(p or _os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    _sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


try:
    _jaxlint_start()
except Exception as _exc:
    print("jaxlint: recompile counting is off in this process:", repr(_exc), file=_sys.stderr)
_jaxlint_chain()
'''


def write_sitecustomize(directory: str) -> str:
    """Write the bootstrap into `directory` (created if needed); return the directory for PYTHONPATH."""
    os.makedirs(directory, exist_ok=True)
    package_dir = os.path.dirname(os.path.abspath(__file__))
    loader = private_loader(repr(PRIVATE_NAME), repr(package_dir), indent="    ")
    source = _TEMPLATE.format(env_dir=ENV_DIR, name=PRIVATE_NAME, loader=loader)
    with open(os.path.join(directory, "sitecustomize.py"), "w", encoding="utf-8") as handle:
        handle.write(source)
    return directory


def child_environment(base: dict[str, str], site_dir: str, reports_dir: str) -> dict[str, str]:
    """The command's environment: the bootstrap first on PYTHONPATH, the reports directory named."""
    return _environment(base, pythonpath_first=site_dir, extra={ENV_DIR: reports_dir})
