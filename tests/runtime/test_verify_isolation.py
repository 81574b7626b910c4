"""User code that hangs, exits, crashes or eats memory gives NOT RUN with its reason, never a crash of
jaxlint, and leaves no process behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from test_verify_support import FIXTURES, marked

from jaxlint.runtime.verify import verify_findings
from jaxlint.runtime_output import render_verify

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for a reaper that is not us."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.fixture
def marked_processes(monkeypatch):
    """Every process started from here on inherits a mark; returns a function listing the live ones."""
    mark = f"JAXLINT_TEST_MARK={uuid.uuid4().hex}".encode()
    monkeypatch.setenv("JAXLINT_TEST_MARK", mark.split(b"=")[1].decode())

    def alive() -> list[int]:
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    environ = (entry / "environ").read_bytes()
                except OSError:
                    continue
                if mark in environ.split(b"\0") and _alive(int(entry.name)):
                    pids.append(int(entry.name))
        return pids

    return alive


def _only(name: str, **kwargs):
    (case,) = marked(name)
    report = verify_findings([case.finding], root=FIXTURES, **kwargs)
    return report.verdicts[case.finding], report.modules[0]


def test_module_that_hangs_at_import_times_out_and_takes_its_children_along(
    tmp_path, monkeypatch, marked_processes
):
    pidfile = tmp_path / "grandchild.pid"
    monkeypatch.setenv("JAXLINT_TEST_PIDFILE", str(pidfile))
    result, run = _only("iso_hang_import.py", timeout=20)  # time for jax and the grandchild to start
    assert result.verdict == "NOT_RUN" and result.reason.startswith("timed out after 20 s")
    assert run.status == "timeout"
    assert not _alive(run.pid)
    assert pidfile.exists(), "the module started a grandchild before hanging"
    assert not _alive(int(pidfile.read_text()))  # killed with the child's process group
    assert marked_processes() == []


def test_sys_exit_at_import_is_not_run():
    result, run = _only("iso_sys_exit.py", timeout=120)
    assert result.verdict == "NOT_RUN"
    assert result.reason == "importing the module failed: the code called sys.exit(3) (line 4)"
    assert run.status == "import_failed"


def test_os_exit_at_import_is_not_run(marked_processes):
    result, run = _only("iso_os_exit.py", timeout=120)
    assert result.verdict == "NOT_RUN"
    assert result.reason == "the child exited with code 7 while importing the module"
    assert run.status == "crashed" and marked_processes() == []


def test_unbounded_allocation_is_stopped():
    result, run = _only("iso_memory.py", timeout=120, memory_limit_mb=400)
    assert result.verdict == "NOT_RUN"
    # The limit is on resident memory, watched by the parent (no address-space limit: see test_verify_faults).
    assert result.reason.startswith("the child used more than 400 MiB of memory and was killed")
    assert run.status == "memory"


def test_hang_while_tracing_is_not_run_and_leaves_no_process(marked_processes):
    cases = marked("iso_hang_trace.py")
    report = verify_findings([c.finding for c in cases], root=FIXTURES, timeout=8)
    hangs, after = (report.verdicts[c.finding] for c in cases)
    assert hangs.verdict == after.verdict == "NOT_RUN"
    assert hangs.reason.startswith("timed out after 8 s")
    assert marked_processes() == []


def test_exit_and_crash_while_tracing_cost_only_their_own_findings():
    cases = marked("iso_in_trace.py") + marked("iso_crash.py")
    report = verify_findings([c.finding for c in cases], root=FIXTURES, timeout=120, jobs=2)
    verdicts = {
        (c.finding.path.rsplit("/", 1)[-1], c.finding.function): report.verdicts[c.finding] for c in cases
    }
    assert verdicts[("iso_in_trace.py", "exits")].reason.startswith("the code called sys.exit(3) (line 7)")
    assert verdicts[("iso_in_trace.py", "fine")].verdict == "CONFIRMED"
    assert verdicts[("iso_crash.py", "fine")].verdict == "CONFIRMED"
    segfault = verdicts[("iso_crash.py", "segfaults")]
    assert segfault.verdict == "NOT_RUN" and "SIGSEGV" in segfault.reason and "'segfaults'" in segfault.reason
    hard_exit = verdicts[("iso_crash.py", "hard_exit")]  # reached by a restarted child
    assert hard_exit.reason == "the child exited with code 7 while tracing 'hard_exit'"
    crash_run = next(m for m in report.modules if m.module == "iso_crash")
    assert crash_run.restarts == 1


def test_user_output_never_reaches_the_report(capfd):
    cases = marked("iso_noise.py") + marked("iso_in_trace.py")
    report = verify_findings([c.finding for c in cases], root=FIXTURES, timeout=120)
    text = render_verify(report, [c.finding for c in cases], "text", verbose=True)
    data = render_verify(report, [c.finding for c in cases], "json")
    captured = capfd.readouterr()
    for noise in ("IMPORT-TIME-STDOUT-NOISE", "IMPORT-TIME-STDERR-NOISE", "TRACE-TIME-NOISE"):
        assert noise not in text and noise not in data
        assert noise not in captured.out and noise not in captured.err
    assert report.verdicts[cases[0].finding].verdict == "CONFIRMED"


def test_missing_interpreter_is_not_run(tmp_path):
    (case,) = marked("iso_noise.py")
    report = verify_findings([case.finding], root=FIXTURES, python=str(tmp_path / "no-python"))
    result = report.verdicts[case.finding]
    assert result.verdict == "NOT_RUN" and "cannot start the interpreter" in result.reason


def test_interpreter_without_jax_is_not_run(tmp_path):
    # An interpreter that cannot import jax: the same Python, isolated from site-packages.
    wrapper = tmp_path / "python-without-jax"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    wrapper.chmod(0o755)
    (case,) = marked("iso_noise.py")
    report = verify_findings([case.finding], root=FIXTURES, python=str(wrapper), timeout=120)
    result = report.verdicts[case.finding]
    assert result.verdict == "NOT_RUN" and "cannot import jax" in result.reason
    assert os.path.exists(wrapper)


def test_interrupted_verify_kills_its_children_at_once(marked_processes):
    from jaxlint.runtime.verify.supervise import LIVE_CHILDREN

    (case,) = marked("iso_hang_import.py")
    results = []
    worker = threading.Thread(
        target=lambda: results.append(verify_findings([case.finding], root=FIXTURES, timeout=300)),
        daemon=True,
    )
    worker.start()
    # The fork server and the module's child forked from it.
    while worker.is_alive() and len(LIVE_CHILDREN._children) < 2:
        threading.Event().wait(0.05)
    LIVE_CHILDREN.kill_all()  # what verify_findings does on KeyboardInterrupt
    worker.join(120)  # a guard against a hang, not a timing assertion
    assert not worker.is_alive()
    result = results[0].verdicts[case.finding]
    # Killed with the fork server, whose death hides how the child ended: not run again, said so.
    assert result.verdict == "NOT_RUN" and result.reason == "jaxlint was interrupted", result.reason
    assert marked_processes() == []


def test_a_grandchild_in_a_new_session_dies_with_the_child(marked_processes):
    verdict, run = _only("iso_setsid.py", timeout=8)
    assert run.status == "timeout" and verdict.verdict == "NOT_RUN"
    assert marked_processes() == []


def _spinning_module_request() -> dict:
    """A child request for `iso_setsid.py`, whose module starts a setsid'd grandchild and spins."""
    return {
        "path": str(FIXTURES / "iso_setsid.py"),
        "module": "iso_setsid",
        "search_path": [str(FIXTURES)],
        "memory_limit_mb": None,
        "examples": {},
        "recorded": {},
        "findings": [{"id": 0, "code": "JAX101", "line": 14, "end_line": 14, "function": "f"}],
    }


def test_a_setsid_grandchild_of_a_forked_module_dies_at_that_modules_timeout(marked_processes):
    from jaxlint.runtime.verify.fork_server import ForkServer
    from jaxlint.runtime.verify.supervise import run_child

    server = ForkServer(sys.executable)
    assert server.running, server.failure
    try:
        request = _spinning_module_request()
        run = run_child(request, python=sys.executable, timeout=8, memory_limit_mb=None, server=server)
        assert run.ended == "timeout" and run.pid is not None
        time.sleep(0.5)
        # Only the fork server is left: the child's setsid'd grandchild went with the child's timeout.
        assert marked_processes() == [server._proc.pid]
    finally:
        server.close()
    assert marked_processes() == []


@pytest.mark.parametrize("lands", ["while the fork server is asked", "after it forked"])
def test_a_signal_that_lands_while_a_child_starts_leaves_no_child_running(
    marked_processes, monkeypatch, lands
):
    # The race behind a SIGHUP run that waited for a module's whole timeout: kill_all ran while a module
    # thread was starting its child, the fork server died with it, and the thread started a fresh
    # interpreter that nothing killed; jaxlint then waited for that thread.
    from jaxlint.runtime.verify.fork_server import ForkServer
    from jaxlint.runtime.verify.supervise import LIVE_CHILDREN, run_child

    LIVE_CHILDREN.reopen()
    server = ForkServer(sys.executable)
    assert server.running, server.failure
    real_start = server.start

    def start(*args, **kwargs):
        if lands == "while the fork server is asked":
            LIVE_CHILDREN.kill_all()
            return real_start(*args, **kwargs)
        pid = real_start(*args, **kwargs)
        LIVE_CHILDREN.kill_all()
        return pid

    monkeypatch.setattr(server, "start", start)
    request = _spinning_module_request()
    try:
        run = run_child(request, python=sys.executable, timeout=20, memory_limit_mb=None, server=server)
    finally:
        server.close()
        LIVE_CHILDREN.reopen()
    assert run.ended != "timeout"  # the module spins: only its timeout would end a child left running
    if lands == "while the fork server is asked":
        assert run.ended == "not_started"
    time.sleep(0.5)
    assert marked_processes() == []


def test_the_module_cannot_hand_in_a_verdict_of_its_own():
    verdict, run = _only("iso_spoof.py", timeout=120)
    assert run.status == "done"
    assert verdict.verdict == "NOT_REPRODUCED" and "spoofed" not in verdict.reason


def _default_sigint() -> None:
    # A shell that runs a job in the background starts it with SIGINT ignored, and Python then never
    # raises KeyboardInterrupt: jaxlint is right to keep ignoring it there. The test wants a Ctrl-C.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_jaxlint_ends_every_child_and_removes_its_folders(tmp_path, marked_processes, signum):
    project = tmp_path / "proj"
    project.mkdir()
    spin = (FIXTURES / "iso_setsid.py").read_text()
    (project / "spin.py").write_text("import jax\n" + spin.replace("def f(x):", "@jax.jit\ndef f(x):"))
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--verify", "--verify-timeout", "300", "."],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while len(marked_processes()) < 3 and time.monotonic() < deadline:  # jaxlint, child, grandchild
            time.sleep(0.2)
        assert len(marked_processes()) >= 3, "the verify child and its grandchild did not start"
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signum, err
        assert "Traceback" not in err
        time.sleep(0.5)
        assert marked_processes() == []
        assert list(temp.iterdir()) == []
    finally:  # a failure must not leave jaxlint and a spinning grandchild behind for 300 s
        proc.kill()
        proc.communicate()
        for pid in marked_processes():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_modules_forked_from_one_server_do_not_see_each_other():
    cases = marked("iso_pollute.py") + marked("verify_jax101.py")
    report = verify_findings([c.finding for c in cases], root=FIXTURES, timeout=120, jobs=1)
    for case in cases[1:]:
        result = report.verdicts[case.finding]
        assert (result.verdict == "CONFIRMED") == (case.expect == "confirmed"), result.reason
        assert "f64" not in result.reason  # x64 stayed off in the sibling
    assert len({m.pid for m in report.modules}) == 2


_TRACED_IF = "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"


@pytest.mark.parametrize("fork", [True, False])
def test_verify_imports_no_module_of_the_project_but_the_users_own(tmp_path, planted_modules, fork):
    # Issue 39, item 1: the fork server ran in the project's folder with it first on sys.path, and a fresh
    # child imported jax after putting the project first: the project's `json.py`, `logging.py`, ... ran
    # as jaxlint's own. Only the module verified (and what it imports itself) is the project's.
    project = tmp_path / "project"
    project.mkdir()
    planted_modules.plant(project)
    (project / "traced_if.py").write_text(_TRACED_IF)
    if fork:  # the command, run in the project: the fork server and the child forked from it
        # A console script (`python -m jaxlint`: tests/test_workspace_modules.py).
        script = tmp_path / "jaxlint"
        script.write_text("import sys\nfrom jaxlint.cli import main\nsys.exit(main())\n")
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        command = [sys.executable, str(script), "--no-cache", "--verify", "traced_if.py"]
        result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)
        assert "[CONFIRMED" in result.stdout, result.stdout + result.stderr
    else:  # a fresh interpreter for the module
        from jaxlint import lint_paths

        findings = lint_paths([str(project / "traced_if.py")], jobs=1)
        report = verify_findings(findings, root=project, fork=False, timeout=120)
        assert [v.verdict for v in report.verdicts.values()] == ["CONFIRMED"], report.verdicts
    assert planted_modules.ran(project) == []


def _zygote(pids: list[int]) -> int | None:
    for pid in pids:
        with contextlib.suppress(OSError):
            if b"jaxlint_verify_child.zygote" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
    return None


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_fork_server_starts_ends_jaxlint_and_its_processes(
    tmp_path, marked_processes, signum
):
    # Issue 39, item 6: a signal that landed while the fork server imported jax stopped jaxlint only 5 s
    # later (the zygote, registered but never closed, kept the end of the run waiting). Sent at several
    # points of the start: before the fork server runs, as it appears, and while it imports jax.
    project = tmp_path / "project"
    project.mkdir()
    (project / "traced_if.py").write_text(_TRACED_IF)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    command = [sys.executable, "-m", "jaxlint", "--no-cache", "--verify", "traced_if.py"]
    for when in ("before the fork server", 0.0, 0.1, 0.3):
        proc = subprocess.Popen(
            command,
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_default_sigint,
        )
        try:
            deadline = time.monotonic() + 120
            if when == "before the fork server":
                time.sleep(0.1)
            else:
                while _zygote(marked_processes()) is None and time.monotonic() < deadline:
                    time.sleep(0.01)
                assert proc.poll() is None, "jaxlint ended before its fork server started"
                time.sleep(when)
            proc.send_signal(signum)
            # Liveness, not speed: a bound well under the 5 s wait, generous for a loaded machine.
            _, err = proc.communicate(timeout=3)
            if when == "before the fork server":  # still starting (a KeyboardInterrupt's traceback, or
                assert proc.returncode in (128 + signum, -signum), err  # the default action): it ended
            else:
                assert proc.returncode == 128 + signum and "Traceback" not in err, (when, err)
            deadline = time.monotonic() + 3
            while marked_processes() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert marked_processes() == [], when
        finally:
            proc.kill()
            proc.communicate()
            for pid in marked_processes():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
