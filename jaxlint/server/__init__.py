"""`jaxlint server`: a Language Server (LSP over stdio) giving jaxlint's findings, fixes and rule docs in editors.

Needs the `server` extra (pygls and lsprotocol): `pip install "/path/to/jaxlint[server]"`. Static mode only: the
server never imports jax. Every use of the linter's internals goes through `jaxlint.server.linting`.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import traceback


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="jaxlint server", description="Run the jaxlint language server over stdio."
    )
    parser.add_argument("--log-file", metavar="PATH", help="write the server's own log here")
    parser.add_argument("--verbose", action="store_true", help="log debug messages (with --log-file)")
    args = parser.parse_args(argv)
    # Ctrl-C during the imports (a second or two) too, even where the shell started us with SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        from .language_server import build_server
        from .lsp_input import LspInput
    except ImportError as error:
        print(
            f"jaxlint: error: the server needs pygls ({error}); pip install pygls lsprotocol",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        return 130
    if args.log_file:
        level = logging.DEBUG if args.verbose else logging.INFO
        logging.basicConfig(filename=args.log_file, level=level, format="%(asctime)s %(name)s %(message)s")
    server = build_server()
    signal.signal(signal.SIGINT, _interrupted(server))
    try:
        # Garbage on stdin ends the server, with the reason on stderr (lsp_input.py).
        server.start_io(stdin=LspInput(sys.stdin.buffer, lambda: server.exited))
    except Exception:
        logging.getLogger(__name__).exception("jaxlint server: internal error")
        traceback.print_exc()
        server.exit_code = 1
    # Leave at once: a thread of pygls may still be reading stdin, and joining it (as the interpreter does at
    # exit) waited for a client that never closes the pipe. The lint processes are killed already.
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed by `exit`, or the client is gone
            pass
    os._exit(server.exit_code)


def _interrupted(server):
    def handler(signum: int, frame: object) -> None:
        server.exit_code = 130  # as a shell reports an interrupted command
        raise KeyboardInterrupt

    return handler
