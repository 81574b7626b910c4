"""Faults found by fault injection in how `jaxlint --verify` runs its children (issue 30 items 2, 5, 6, 9;
issue 27 item 3), each through the real command on a hostile module of tests/fixtures/hostile."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "fixtures" / "hostile"
LIMIT = 240  # seconds: a guard against a hang, never a timing assertion


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class Run:
    def __init__(
        self, proc: subprocess.CompletedProcess, peak_rss: int, pids: list[int], survivors: list[int]
    ) -> None:
        self.proc, self.peak_rss, self.pids, self.survivors = proc, peak_rss, pids, survivors
        self.out, self.err = proc.stdout.decode(), proc.stderr.decode()

    def verdicts(self) -> dict[str, dict]:
        """Module file name -> the JSON verdict of its one finding."""
        return {Path(f["path"]).name: f for f in json.loads(self.out)}


def _peak_rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _kill_marked(mark: bytes) -> None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if mark in (entry / "environ").read_bytes().split(b"\0"):
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                continue


def verify(tmp_path: Path, *modules: str, args: tuple[str, ...] = (), pyproject: str = "", **popen) -> Run:
    """`jaxlint --verify --format json` on copies of `modules`; jaxlint's peak resident memory is
    sampled while it runs; the pids the modules report (JAXLINT_HOSTILE_PIDS) are returned, with those
    still running once jaxlint has exited. Whatever the outcome, nothing started here outlives the call."""
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    for name in modules:
        shutil.copy(HOSTILE / name, project / name)
    if pyproject:
        (project / "pyproject.toml").write_text(pyproject)
    pids_file = tmp_path / "pids.txt"
    mark = f"JAXLINT_FAULT_MARK={uuid.uuid4().hex}"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "JAXLINT_HOSTILE_PIDS": str(pids_file),
        "JAXLINT_FAULT_MARK": mark.split("=")[1],
    }
    env.update(popen.pop("env", {}))
    command = [sys.executable, "-m", "jaxlint", "--no-cache", "--verify", "--format", "json", *args, "."]
    proc = subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen
    )
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _peak_rss(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=LIMIT)
    finally:
        proc.kill()
        proc.wait()
        sampler.join()
        pids = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
        survivors = [p for p in pids if _alive(p)]
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
        _kill_marked(mark.encode())
    done = subprocess.CompletedProcess(command, proc.returncode, out, err)
    return Run(done, peak[0], pids, survivors)


def _confirmed(run: Run, module: str) -> None:
    verdict = run.verdicts()[module]
    assert verdict["verdict"] == "CONFIRMED", (verdict, run.err)


# -- issue 30 item 2: a limit on resident memory, not on address space -------------------------------------


def test_threads_that_map_gigabytes_but_touch_little_are_not_killed(tmp_path: Path) -> None:
    # 600 thread stacks are ~4.7 GiB of address space: past the child's old RLIMIT_AS (4096 MiB by default),
    # where thread creation failed, as XLA's did on a 16-core machine. Resident: a few MiB.
    run = verify(tmp_path, "many_threads.py")
    _confirmed(run, "many_threads.py")


def test_a_reason_never_quotes_two_writers_interleaved(tmp_path: Path) -> None:
    run = verify(tmp_path, "interleaved_fatal.py")
    verdict = run.verdicts()["interleaved_fatal.py"]
    assert verdict["verdict"] == "NOT_RUN", verdict
    assert "SIGABRT" in verdict["verdict_reason"]
    assert verdict["verdict_reason"].count("Fatal Python error") <= 1, verdict["verdict_reason"]


# -- issue 30 item 5: processes that escape the child's session and marker ---------------------------------


@pytest.mark.parametrize("module", ["escape_session.py", "escape_double_fork.py"])
def test_a_process_that_leaves_the_session_and_the_environment_does_not_survive(
    tmp_path: Path, module: str
) -> None:
    run = verify(tmp_path, module)
    _confirmed(run, module)
    assert run.pids, "the module did not start its sleeper"
    assert run.survivors == []  # before the change: the sleeper, re-parented to init


# -- issue 30 item 6: unbounded inputs to the parent -----------------------------------------------------


def test_a_module_flooding_the_events_pipe_does_not_grow_jaxlint(tmp_path: Path) -> None:
    run = verify(tmp_path, "flood_events.py")
    verdict = run.verdicts()["flood_events.py"]
    assert verdict["verdict"] == "NOT_RUN", verdict
    assert verdict["verdict_reason"].startswith("the child wrote more than 16 MiB of events and was killed")
    # The module wrote 400 MB into the pipe; jaxlint keeps at most 16 MiB of it.
    assert run.peak_rss < 250 * 2**20, run.peak_rss


def _cached_entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if len(p.stem) == 64)


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "huge"])
def test_a_cache_entry_that_is_not_a_small_regular_file_is_a_miss(tmp_path: Path, kind: str) -> None:
    (tmp_path / "m.py").write_text("import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "jaxlint", "--cache-dir", "c", "m.py"]
    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=LIMIT)
    assert first.returncode == 1, first.stderr
    (entry,) = _cached_entries(tmp_path / "c")
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "dev_zero":
        entry.symlink_to("/dev/zero")
    else:
        with open(entry, "wb") as handle:
            handle.truncate(64 << 20)  # sparse: past the entry limit, costs no disk
    # A bounded address space: reading /dev/zero without bound fails here instead of eating the machine.
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))"
    bounded = [
        sys.executable,
        "-c",
        f"{limit}; import runpy; runpy.run_module('jaxlint', run_name='__main__')",
    ]
    second = subprocess.run([*bounded, *command[3:]], cwd=tmp_path, env=env, capture_output=True, timeout=60)
    assert second.returncode == 1, second.stderr
    assert "m.py:4:1: JAX103" in second.stdout.decode()
    assert b"Traceback" not in second.stderr


# -- issue 30 item 9: a dead fork server, a verdict through gc, the SIGINT test -----------------------------


def test_a_dead_fork_server_costs_no_verdict(tmp_path: Path) -> None:
    run = verify(tmp_path, "kill_fork_server.py", "slow_sibling.py", args=("--jobs", "2", "--verbose"))
    _confirmed(run, "slow_sibling.py")  # was NOT RUN: killed by SIGKILL
    _confirmed(run, "kill_fork_server.py")  # in a fresh interpreter, where it kills nothing


def test_the_dead_fork_server_is_named_in_verbose_text(tmp_path: Path) -> None:
    run = verify(tmp_path, "kill_fork_server.py", args=("--verbose", "--format", "text"))
    assert "verify: kill_fork_server ran in a fresh interpreter: the fork server died" in run.out, run.out


def test_a_module_cannot_hand_in_its_verdict_through_gc(tmp_path: Path) -> None:
    run = verify(tmp_path, "gc_verdict.py")
    verdict = run.verdicts()["gc_verdict.py"]
    assert "forged" not in verdict["verdict_reason"], verdict
    assert verdict["verdict"] == "NOT_RUN", verdict  # it exited while importing, before any verdict


# -- issue 27 item 3: fork safety -----------------------------------------------------------------------


def test_a_fork_server_with_threads_is_not_forked_and_verbose_says_why(tmp_path: Path) -> None:
    # A sitecustomize that starts JAX's backend in every interpreter (a site hook picking a device, say): the
    # zygote has XLA's threads and a backend after importing jax, which `threading` does not see; forking it
    # would copy a process with threads. Every module runs in a fresh interpreter instead, and --verbose
    # says why.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import jax\njax.devices()\n")
    run = verify(
        tmp_path,
        "slow_sibling.py",
        args=("--verbose", "--format", "text"),
        env={"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"},
    )
    assert "slow_sibling.py:12:8: JAX101" in run.out and "[CONFIRMED" in run.out, run.out
    note = "verify: slow_sibling ran in a fresh interpreter: no fork server: the fork server had "
    assert note in run.out and " threads running after importing jax" in run.out, run.out


def test_blas_threads_asked_for_by_the_user_do_not_stop_the_fork_server(tmp_path: Path) -> None:
    # numpy's OpenBLAS starts its pool at import (one thread per core, or as many as asked): the zygote runs
    # with one, and the module (with what it starts) still sees the user's setting.
    probe = tmp_path / "probe.txt"
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "probe.py").write_text(
        "import os\nimport jax\n\n"
        "with open(os.environ['JAXLINT_PROBE'], 'w') as out:\n"
        "    out.write(repr([os.environ.get(n) for n in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS')]))\n\n\n"
        "@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
    )
    env = {"OPENBLAS_NUM_THREADS": "2", "JAXLINT_PROBE": str(probe)}
    run = verify(tmp_path, args=("--verbose", "--format", "text"), env=env)
    assert "[CONFIRMED" in run.out, run.out
    assert "fresh interpreter" not in run.out, run.out
    assert probe.read_text() == repr(["2", os.environ.get("OMP_NUM_THREADS")])


def test_lint_paths_forks_no_worker_from_a_process_running_jax_threads(tmp_path: Path) -> None:
    # A caller that started JAX's backend (threads) and then lints with worker processes: jaxlint lints in
    # its own process instead of forking a multithreaded one (JAX warns "os.fork() was called ...").
    for n in range(12):
        (tmp_path / f"m{n}.py").write_text("import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1\n")
    script = (
        "import sys, jax, jaxlint\n"
        "jax.devices()\n"
        "found = jaxlint.lint_paths([sys.argv[1]], jobs=2)\n"
        "print(sorted({f.code for f in found}), len(found))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True, timeout=LIMIT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['JAX103']", "12"], done.stdout
    assert "os.fork() was called" not in done.stderr


def test_a_request_larger_than_one_socket_message_is_still_forked(tmp_path: Path) -> None:
    """A module's request (declared examples, recorded and pickled calls: up to megabytes) travels to the fork
    server in a file, not in the control message, whose size the socket's send buffer caps (~208 KiB)."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "big.py").write_text(
        "import jax\n\n\n@jax.jit\ndef f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"
    )
    padding = "a" * 400_000
    pyproject = f'[tool.jaxlint.verify.examples]\n"big:f" = "jnp.ones(3) + 0 * len(\'{padding}\')"\n'
    run = verify(tmp_path, args=("--verbose", "--format", "text"), pyproject=pyproject)
    assert "[CONFIRMED" in run.out, run.out + run.err
    assert "fresh interpreter" not in run.out + run.err, run.out + run.err


# -- issue 39 item 3: a module that replaces JAX's tracing entry points forges no clean verdict -------------


def test_a_module_replacing_jax_jit_gets_no_clean_verdict_from_its_replacement(tmp_path: Path) -> None:
    # The child traces with the jax.jit (and make_jaxpr, .trace) it took before the import: the real error.
    _confirmed(verify(tmp_path, "replaces_jit.py"), "replaces_jit.py")


def test_a_clean_trace_in_a_module_that_replaced_jax_jit_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its own code (a helper it jits while traced, a function it wrapped) runs with the replacement.
    import jax

    from jaxlint.runtime.verify.child.main import _unless_replaced
    from jaxlint.runtime.verify.child.pinned_jax import PinnedJax

    pinned = PinnedJax(jax)
    real_jit = jax.jit
    clean = {"verdict": "NOT_REPRODUCED", "reason": "traced cleanly with x: f32[]", "inputs": ["x: f32[]"]}
    confirmed = {"verdict": "CONFIRMED", "reason": "TracerBoolConversionError at line 3", "inputs": []}
    assert _unless_replaced(clean, pinned) == clean
    monkeypatch.setattr(jax, "jit", lambda f, **options: f)
    assert pinned.jit is real_jit  # the child keeps JAX's own
    judged = _unless_replaced(clean, pinned)
    assert judged["verdict"] == "NOT_RUN" and "the module replaced jax.jit," in judged["reason"], judged
    assert _unless_replaced(confirmed, pinned) == confirmed  # an error JAX's own jit raised stands
