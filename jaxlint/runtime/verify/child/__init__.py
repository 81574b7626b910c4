"""The verify child: runs under the user's interpreter, imports their module and traces flagged functions.

This package is loaded in the child under the top-level name ``jaxlint_verify_child`` (see
``jaxlint.runtime.verify.process.BOOTSTRAP``), so it must use relative imports only and never import the rest
of jaxlint: the user's interpreter may have jax but not jaxlint or libcst. Only ``expectations`` is also
imported by the linter's own process, and it imports nothing from jax.
"""
