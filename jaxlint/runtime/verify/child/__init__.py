"""The verify child: runs under the user's interpreter, imports their module and traces flagged functions.

This package is loaded in the child under the top-level name ``jaxlint_verify_child`` (see
``jaxlint.runtime.verify.process.BOOTSTRAP``), so it must use relative imports only and never import the rest
of jaxlint: the user's interpreter may have jax but not jaxlint or libcst. Only ``expectations`` is also
imported by the linter's own process, and it imports nothing from jax.
"""

import os

# The leaves shared with the other runtime package (`runtime/shared/`): submodules of this package, in the
# linter's process as under the private name this package is loaded by.
__path__.append(
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared")
)
