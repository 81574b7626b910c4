"""The store of recorded calls through the real command (issue 39 item 2): git never sees the cache folder,
whichever command makes it, and a store signed elsewhere (a copied folder, a restored CI cache, a cloned
repository) is refused, never unpickled, with a reason."""

from __future__ import annotations

import base64
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlint.runtime.recompiles.signature_store import write_calls

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp


    @jax.jit
    def step(x, n):
        return x * n


    print(step(jnp.ones(3), 2))
    """
)

# A finding whose inputs verify cannot search for (an object with attributes): only a recorded call reaches it.
MODULE = textwrap.dedent(
    """\
    import jax


    @jax.jit
    def f(state):
        if state.weights.sum() > 0:
            return state.weights
        return -state.weights
    """
)


def _jaxlint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_run_that_makes_the_cache_folder_leaves_nothing_for_git(tmp_path, needs_jit_hook):
    _git(tmp_path, "init", "-q", ".")
    (tmp_path / "script.py").write_text(SCRIPT)
    run = _jaxlint(tmp_path, "--verify", "--run", f"{sys.executable} script.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert list((tmp_path / ".jaxlint_cache" / "signatures").glob("script-*.json")), run.stdout  # recorded
    assert _git(tmp_path, "status", "--porcelain").splitlines() == ["?? script.py"]
    _git(tmp_path, "add", "-A")
    assert _git(tmp_path, "ls-files").splitlines() == ["script.py"]


def test_a_cache_folder_an_older_jaxlint_left_without_gitignore_gets_one(tmp_path):
    store = tmp_path / ".jaxlint_cache" / "signatures"
    store.mkdir(parents=True)
    (store / "script-0123456789ab.json").write_text("{}")
    (tmp_path / "m.py").write_text("x = 1\n")
    _jaxlint(tmp_path, "--verify", "m.py")
    assert (tmp_path / ".jaxlint_cache" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_store_signed_elsewhere_is_never_unpickled_and_the_verdict_says_why(tmp_path, monkeypatch):
    pytest.importorskip("cloudpickle")
    project = tmp_path / "project"
    project.mkdir()
    source = project / "m.py"
    source.write_text(MODULE)
    marker = tmp_path / "MARKER"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    pickled = base64.b64encode(pickle.dumps(Payload())).decode()
    call = {"pickled": pickled, "static_argnums": [], "static_argnames": []}
    entry = {"module": "m", "qualname": "f", "path": str(source), "line": 5, "first_line": 4, "calls": [call]}
    # Signed by the real writer on another machine (or as another user), at this very path: a restored CI
    # cache, a repository cloned with its cache folder, a copy made with `tar -p`.
    with monkeypatch.context() as elsewhere:
        elsewhere.setenv("JAXLINT_KEY_DIR", str(tmp_path / "another-machine"))
        write_calls(str(project / ".jaxlint_cache" / "signatures"), [entry], root=str(project))

    verify = _jaxlint(project, "--verify", "--format", "json", "m.py")
    assert not marker.exists()
    (found,) = [f for f in json.loads(verify.stdout) if f["code"] == "JAX101"]
    assert found["verdict"] == "NOT_RUN", found
    assert "not written by this user's jaxlint" in found["verdict_reason"], found
