"""`jaxlint server`: a Language Server (LSP over stdio) giving jaxlint's findings, fixes and rule docs in editors.

Needs the `server` extra (pygls and lsprotocol): `pip install "jaxlint-cst[server]"`. Static mode only: the
server never imports jax. Every use of the linter's internals goes through `jaxlint.server.linting`.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="jaxlint server", description="Run the jaxlint language server over stdio."
    )
    parser.add_argument("--log-file", metavar="PATH", help="write the server's own log here")
    parser.add_argument("--verbose", action="store_true", help="log debug messages (with --log-file)")
    args = parser.parse_args(argv)
    try:
        from .language_server import build_server
    except ImportError as error:
        print(
            f'jaxlint: error: the server needs pygls ({error}); pip install "jaxlint-cst[server]"',
            file=sys.stderr,
        )
        return 2
    if args.log_file:
        import logging

        level = logging.DEBUG if args.verbose else logging.INFO
        logging.basicConfig(filename=args.log_file, level=level, format="%(asctime)s %(name)s %(message)s")
    build_server().start_io()
    return 0
