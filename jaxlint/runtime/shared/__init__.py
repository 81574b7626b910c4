"""Leaves the runtime packages and the report share: the kinds of evidence a rule's pitfall leaves
(`evidence.py`), where tracers sit after a trace (`leaks.py`), and how a reason is clipped (`short_text.py`).

`recompiles` runs in a `--run` command's processes and `verify/child` in the verify child, each loaded from
its own folder under a private name (`runtime/_isolate.py`), so neither can import the other or this package.
Each adds this folder to its own `__path__` instead and imports these modules as its own submodules
(`from .evidence import LEAK`), in the linter's process as in its private one. So a module here imports only
the standard library and the other modules here.
"""
