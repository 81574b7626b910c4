"""What every runtime child shares: how it loads our code, and the environment it starts with.

Both kinds of child (the verify child, and the `sitecustomize` that `--run` injects into the user's
processes) run under the user's interpreter, which may have neither libcst nor jaxlint installed. So
they load one package folder of ours under a private name: `jaxlint/__init__.py` (the linter) never runs,
and a user module that happens to be called like one of ours is never shadowed or imported by mistake.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

# Python source that loads `package_dir` as the package `name` (both given as Python expressions, so the
# caller decides whether they come from argv, the environment or a literal). Works on Python >= 3.5.
_LOADER = """\
import importlib.util as _jl_util, os as _jl_os, sys as _jl_sys
if {name} not in _jl_sys.modules:
    _jl_spec = _jl_util.spec_from_file_location(
        {name}, _jl_os.path.join({package_dir}, "__init__.py"), submodule_search_locations=[{package_dir}])
    _jl_module = _jl_util.module_from_spec(_jl_spec)
    _jl_sys.modules[_jl_spec.name] = _jl_module
    _jl_spec.loader.exec_module(_jl_module)
"""


def private_loader(name_expr: str, package_dir_expr: str, indent: str = "") -> str:
    """Source lines that load a package folder under a private name (see the module docstring)."""
    text = _LOADER.format(name=name_expr, package_dir=package_dir_expr)
    return "".join(indent + line if line.strip() else line for line in text.splitlines(keepends=True))


# JAX checking modes the verify child switches per attempt; inherited globally they would change every
# trace.
JAX_CHECK_FLAGS = ("JAX_CHECK_TRACER_LEAKS", "JAX_DEBUG_KEY_REUSE", "JAX_ENABLE_CUSTOM_PRNG")


def child_environment(
    base: Mapping[str, str] | None = None,
    *,
    drop: Iterable[str] = (),
    pythonpath_first: str | None = None,
    extra: Mapping[str, str] | None = None,
    scratch: bool = False,
) -> dict[str, str]:
    """The environment of a child: `base` (default: ours) without `drop`, with `pythonpath_first` put
    before any existing PYTHONPATH, plus `extra`. A `scratch` child (one that only imports the user's
    code to look at it) leaves no `__pycache__` in the user's tree and does not grab 75% of a GPU's
    memory; a user's own command (`--run`) keeps its environment as it is."""
    dropped = set(drop)
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in dropped}
    if scratch:
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    if pythonpath_first:
        existing = env.get("PYTHONPATH")
        env["PYTHONPATH"] = pythonpath_first + (os.pathsep + existing if existing else "")
    env.update(extra or {})
    return env


def processes_with_marker(marker: bytes) -> list[int]:
    """Processes whose initial environment carries `marker` (`NAME=value`, with a value unique to one
    run): a child and everything it started, even what left its session or process group. Linux /proc;
    elsewhere none."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                if marker in handle.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            continue
    return found
