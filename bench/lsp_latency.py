"""Latency of `jaxlint server`: from a keystroke (didChange) to the diagnostics for that version.

Usage::

    python bench/lsp_latency.py                # a generated 1,000-line file, 30 changes
    python bench/lsp_latency.py --lines 5000 --changes 50
    python bench/lsp_latency.py --file path/to/module.py
    python bench/lsp_latency.py --one-char --lines 5000 --changes 10 --project   # a file on disk, project mode

A real server subprocess (`python -m jaxlint server`) is driven by pygls's LanguageClient over stdio. Each
change edits one line in the middle of the file (in the generated file it turns a print into
jax.debug.print and back, so a finding comes and goes; with --one-char it changes one character, `2.0` to
`3.0` and back, with `--one-char name` a local name, with `--one-char string` a docstring; in another file it adds and removes a comment line) and waits for the publishDiagnostics of
that version; the time includes the
server's debounce; the CPU time the server's processes spent per change is read from /proc (Linux), as it
depends far less on the machine's load than the wall time. The same text is also linted in this process, for
the lint's own share (a full lint: no earlier parse to reuse). The figure the issue asks for is the ratio of the change -> diagnostics time to libcst's parse of the whole file; on a loaded machine the CPU ratio is the steadier one. Needs the
`server` extra (pygls). No jax import.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

BLOCK = '''\


@jax.jit
def step_{n}(params, x, key):
    """A jitted step with a few findings and plenty of clean code."""
    y = jnp.tanh(params["w"] @ x + params["b"])
    if y.sum() > 0:
        y = y * 2.0
    noise = jax.random.normal(key, y.shape)
    z = y + noise
    for i in range(3):
        z = z + jnp.float32(i) * params["scale"]
    print("z is", z)
    total = jnp.sum(z) + jnp.mean(y)
    return total, jax.nn.relu(z)


def helper_{n}(a, b):
    c = a + b
    return [c, c * 2, c * 3]
'''


def generated(lines: int) -> str:
    header = "import jax\nimport jax.numpy as jnp\n"
    parts = [header]
    count = header.count("\n")
    n = 0
    while count < lines:
        block = BLOCK.format(n=n)
        parts.append(block)
        count += block.count("\n")
        n += 1
    return "".join(parts)


def tree_cpu(pid: int) -> float:
    """CPU seconds used so far by `pid` and the processes under it (its lint process); Linux's /proc, else 0."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += tree_cpu(int(child))
    except (OSError, ValueError, IndexError):
        pass
    return total


async def measure(
    text: str, changes: int, one_char: str | None = None, folder: Path | None = None
) -> tuple[list[float], float]:
    client = LanguageClient("lsp-latency", "0")
    published: dict[int, asyncio.Event] = {}
    arrived: dict[int, float] = {}

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(ls, params: lsp.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            arrived.setdefault(params.version, time.perf_counter())
            published.setdefault(params.version, asyncio.Event()).set()

    await client.start_io(sys.executable, "-m", "jaxlint", "server")
    await client.initialize_async(
        lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=Path.cwd().as_uri())
    )
    client.initialized(lsp.InitializedParams())
    if folder is not None:  # a file on disk in a project: linted with its project's facts, as a user's file
        (folder / ".git").mkdir(exist_ok=True)
        (folder / "lsp_latency_bench.py").write_text(text)
    uri = ((folder or Path.cwd()) / "lsp_latency_bench.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, text)))
    await asyncio.wait_for(published.setdefault(1, asyncio.Event()).wait(), 60)

    lines = text.splitlines()
    numbers = [i for i in range(len(lines) // 2, len(lines)) if "* 2.0" in lines[i]]
    prints = [i for i in range(len(lines) // 2, len(lines)) if lines[i].strip().startswith("print(")]
    names = [i for i in range(len(lines) // 2, len(lines)) if lines[i] == "    c = a + b"]
    docstrings = [i for i in range(len(lines) // 2, len(lines)) if "a few findings" in lines[i]]
    if one_char == "number" and numbers:  # one character: `2.0` -> `3.0` and back
        middle = numbers[0]
        column = lines[middle].index("* 2.0") + 2
        original, edited = "2", "3"
    elif one_char == "name" and names:  # a local name: `c = a + b` -> `d = a + b` and back
        middle, column = names[0], 4
        original, edited = "c", "d"
    elif one_char == "string" and docstrings:  # a docstring: `few` -> `fee` and back
        middle = docstrings[0]
        column = lines[middle].index("few") + 2
        original, edited = "w", "e"
    elif prints:  # turn a print into jax.debug.print and back: a finding comes and goes
        middle = prints[0]
        column = lines[middle].index("print(")
        original, edited = "print(", "jax.debug.print("
    else:  # any file: add a comment line and take it away again
        middle, column = len(lines) // 2, 0
        original, edited = "", "# an edit\n"
    samples = []
    server = client._server
    assert server is not None
    cpu_before = tree_cpu(server.pid)
    for k in range(changes):
        version = k + 2
        old, new = (original, edited) if k % 2 == 0 else (edited, original)
        end = lsp.Position(middle + 1, 0) if old.endswith("\n") else lsp.Position(middle, column + len(old))
        where = lsp.Range(lsp.Position(middle, column), end)
        event = published.setdefault(version, asyncio.Event())
        sent = time.perf_counter()
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [lsp.TextDocumentContentChangePartial(range=where, text=new)],
            )
        )
        await asyncio.wait_for(event.wait(), 60)
        samples.append(arrived[version] - sent)
        await asyncio.sleep(0.2)  # a pause between keystroke bursts, so changes are not debounced together
    cpu = (tree_cpu(server.pid) - cpu_before) / changes
    await client.shutdown_async(None)
    client.exit(None)
    await asyncio.wait_for(server.wait(), 10)  # let the server exit before the loop closes
    return samples, cpu


def lint_only(text: str, repeats: int = 10) -> tuple[list[float], list[float]]:
    from jaxlint.server.linting import config_for, lint_document

    path = str(Path.cwd() / "lsp_latency_bench.py")
    config = config_for(path)
    times, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        lint_document(text, path, config)  # a full lint (no previous parse to start from)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return times, cpu


def libcst_parse(text: str, repeats: int = 5) -> tuple[float, float]:
    """Median wall and CPU seconds of `libcst.parse_module` of the whole text (the issue's yardstick)."""
    import libcst

    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        libcst.parse_module(text)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1000, help="size of the generated file")
    parser.add_argument("--file", help="measure this file instead of a generated one")
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument(
        "--one-char",
        nargs="?",
        const="number",
        choices=["number", "name", "string"],
        help="in the generated file, change one character: of a number (the default: 2.0 <-> 3.0), of a "
        "local name (`c = a + b` <-> `d = a + b`) or of a docstring (`few` <-> `fee`)",
    )
    parser.add_argument(
        "--project",
        action="store_true",
        help="open the text as a file on disk in a project of its own (project facts, as a saved file has)",
    )
    args = parser.parse_args()
    text = Path(args.file).read_text() if args.file else generated(args.lines)
    with tempfile.TemporaryDirectory() as folder:
        samples, server_cpu = asyncio.run(
            measure(text, args.changes, args.one_char, Path(folder) if args.project else None)
        )
    lint, lint_cpu = lint_only(text)
    parse, parse_cpu = libcst_parse(text)
    ms = sorted(s * 1000 for s in samples)
    print(f"file: {text.count(chr(10))} lines; {len(ms)} changes")
    print(
        f"change -> diagnostics: median {statistics.median(ms):.0f} ms, "
        f"p90 {ms[int(0.9 * (len(ms) - 1))]:.0f} ms, max {ms[-1]:.0f} ms (includes the debounce)"
    )
    print(
        f"libcst parse of the whole file: median {parse * 1000:.0f} ms wall, {parse_cpu * 1000:.0f} ms CPU; "
        f"change -> diagnostics / parse: {statistics.median(ms) / (parse * 1000):.2f}x (wall)"
    )
    print(
        f"server CPU per change (the server and its lint process): {server_cpu * 1000:.0f} ms, "
        f"{server_cpu / parse_cpu:.2f}x the parse's CPU"
    )
    print(
        f"lint alone (in process): median {statistics.median(lint) * 1000:.0f} ms wall, "
        f"{statistics.median(lint_cpu) * 1000:.0f} ms CPU (CPU time is what an idle machine would wait)"
    )


if __name__ == "__main__":
    main()
