"""How many times a face lints a text, counted in a real run of the command through the engine's audit event
(`sys.audit("jaxlint.lint", path, source)`): a text linted with the same facts is linted once; the fix loop
lints again only the text its fixes produced."""

from __future__ import annotations

import collections
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

# The real `python -m jaxlint` (or `python -m flake8`), with an audit hook that records a digest of each text
# the engine lints.
_COUNTED = """
import atexit, hashlib, json, runpy, sys
passes = []
sys.addaudithook(
    lambda event, args: passes.append(hashlib.sha256(args[1].encode()).hexdigest())
    if event == "jaxlint.lint"
    else None
)
command, sys.argv = sys.argv[1], sys.argv[1:]
# At exit (an atexit callback also makes the command end the ordinary way, not by os._exit: process_exit.py)
atexit.register(lambda: sys.stderr.write("\\nPASSES " + json.dumps(passes) + "\\n"))
runpy.run_module(command, run_name="__main__", alter_sys=True)
"""

SOURCE = "import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)\n    if x > 0:\n        return x\n    return -x\n"
FIXED = SOURCE.replace("print(x)", 'jax.debug.print("{}", x)')
UNFIXABLE = FIXED  # JAX101 only: no fix


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _passes(
    cwd: Path, *args: str, stdin: str | None = None, command: str = "jaxlint"
) -> tuple[subprocess.CompletedProcess, dict]:
    """Run jaxlint or flake8 (one process); the texts it linted, by name (`SOURCE`, `FIXED`), counted."""
    done = subprocess.run(
        [sys.executable, "-c", _COUNTED, command, "-j", "1", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    marker = done.stderr.rindex("\nPASSES ")
    digests = json.loads(done.stderr[marker + len("\nPASSES ") :])
    names = {_digest(SOURCE): "SOURCE", _digest(FIXED): "FIXED"}
    return done, dict(collections.Counter(names.get(d, d) for d in digests))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return tmp_path


@pytest.mark.parametrize("cache", [[], ["--no-cache"]], ids=["cold-cache", "no-cache"])
def test_fix_lints_the_file_once_more_only_for_the_fixes_it_applies(project: Path, cache: list[str]) -> None:
    (project / "m.py").write_text(SOURCE)
    done, passes = _passes(project, "--fix", *cache, "m.py")
    assert done.returncode == 1 and "Fixed 1 finding in 1 file." in done.stderr, done.stderr
    assert (project / "m.py").read_text() == FIXED
    assert "m.py:7:8: JAX101" in done.stdout
    # The project's lint, the fix's first round (it needs the parsed module and the rules' edits, which the
    # project's lint does not keep), and the fixed text once: what remains is that lint's findings.
    assert passes == {"SOURCE": 2, "FIXED": 1}


def test_fix_with_nothing_to_fix_lints_once_and_a_warm_cache_not_at_all(project: Path) -> None:
    (project / "m.py").write_text(UNFIXABLE)
    done, passes = _passes(project, "--fix", "m.py")
    assert done.returncode == 1 and "m.py:7:8: JAX101" in done.stdout, done.stderr
    assert passes == {"FIXED": 1}
    done, passes = _passes(project, "--fix", "m.py")
    assert done.returncode == 1 and "m.py:7:8: JAX101" in done.stdout, done.stderr
    assert passes == {}


def test_stdin_holding_the_file_lints_it_once(project: Path) -> None:
    (project / "m.py").write_text(SOURCE)
    done, passes = _passes(project, "-", "--stdin-filename", "m.py", stdin=SOURCE)
    assert done.returncode == 1 and "m.py:6:5: JAX201" in done.stdout, done.stderr
    assert passes == {"SOURCE": 1}
    # Another text under that name: the file (for its project's facts), then the text given.
    done, passes = _passes(project, "-", "--stdin-filename", "m.py", "--no-cache", stdin=FIXED)
    assert done.returncode == 1 and "m.py:7:8: JAX101" in done.stdout, done.stderr
    assert passes == {"SOURCE": 1, "FIXED": 1}
    (project / "m.py").write_text(UNFIXABLE)
    done, passes = _passes(project, "--fix", "-", "--stdin-filename", "m.py", stdin=UNFIXABLE)
    assert done.returncode == 1 and done.stdout == UNFIXABLE, done.stderr
    assert passes == {"FIXED": 1}


def test_flake8_takes_the_projects_lint_of_the_file_it_checks(project: Path) -> None:
    """flake8's text is the file's, the settings are the plugin's and no `# noqa` is in it: the project's lint
    of the file (its facts need it) is the plugin's answer. A `# noqa` in the file: the plugin lints it itself,
    since flake8, not the engine, applies those."""
    (project / "m.py").write_text(SOURCE)
    done, passes = _passes(project, "--select", "JAX", "m.py", command="flake8")
    assert [line.split(" ")[:2] for line in done.stdout.splitlines()] == [
        ["m.py:6:5:", "JAX201"],
        ["m.py:7:8:", "JAX101"],
    ], done.stdout + done.stderr
    assert passes == {"SOURCE": 1}
    noqa = SOURCE.replace("print(x)", "print(x)  # noqa: JAX201")
    (project / "m.py").write_text(noqa)
    done, passes = _passes(project, "--select", "JAX", "--disable-noqa", "m.py", command="flake8")
    assert [line.split(" ")[:2] for line in done.stdout.splitlines()] == [
        ["m.py:6:5:", "JAX201"],
        ["m.py:7:8:", "JAX101"],
    ], done.stdout + done.stderr
    assert passes == {_digest(noqa): 2}
