"""Faults found by fault injection (issue 15), each reproduced through the real `jaxlint` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BAD = "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
INPLACE = "import jax.numpy as jnp\n\nx = jnp.zeros(3)\nx[0] = 1\n"

# Runs the command with os.scandir refusing one folder, as chmod 000 does for anyone but root: the tests
# run as root in some CI containers, where permissions cannot make a folder unreadable.
_UNREADABLE = """\
import errno, os, sys
refused = os.path.realpath(os.environ["JAXLINT_TEST_UNREADABLE"])
real_scandir = os.scandir
def scandir(path="."):
    if os.path.realpath(path) == refused:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))
    return real_scandir(path)
os.scandir = scandir
from jaxlint.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run(*args: str, cwd: Path, stdin: str | bytes | None = None, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.update(kwargs.pop("env", {}))
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", *args],
        capture_output=True,
        cwd=cwd,
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        env=env,
        timeout=120,
        **kwargs,
    )


def out(result: subprocess.CompletedProcess) -> str:
    return result.stdout.decode()


def finding_lines(result: subprocess.CompletedProcess) -> list[str]:
    """stdout's lines without the text report's closing summary ("Found N findings.", the fix hints, "All
    checks passed!")."""
    summary = ("Found ", "[*] ", "No fixes", "All checks passed!")
    return [line for line in out(result).splitlines() if not line.startswith(summary)]


def err(result: subprocess.CompletedProcess) -> str:
    return result.stderr.decode()


def assert_one_line_error(result: subprocess.CompletedProcess, words: str) -> None:
    assert result.returncode == 2, (result.returncode, err(result))
    assert "Traceback" not in err(result)
    assert f"jaxlint: error: {words}" in err(result)


# -- item 2: messages, not tracebacks; exit 2 for usage and internal errors ----------------------------------


def test_undefined_coding_is_jax000_and_the_other_files_are_linted(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("# coding: undefined\nimport jax\n")
    (tmp_path / "good.py").write_text(INPLACE)
    result = run(".", cwd=tmp_path)
    assert result.returncode == 1, err(result)
    assert "Traceback" not in err(result)
    assert "bad.py:1:1: JAX000 cannot decode" in out(result)
    assert "good.py:4:1: JAX103" in out(result)
    fixed = run("--fix", ".", cwd=tmp_path)
    assert fixed.returncode == 1 and "bad.py:1:1: JAX000 cannot decode" in out(fixed), err(fixed)


def test_symlink_loop_in_the_tree_and_as_the_first_path(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(INPLACE)
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "loop.py").symlink_to("loop.py")
    result = run(".", cwd=tmp_path)
    assert result.returncode == 1, err(result)
    assert "m.py:4:1: JAX103" in out(result)
    assert "loop.py:1:1: JAX000 skipped: symlink loop" in out(result)
    assert_one_line_error(run("loop", cwd=tmp_path), "path is a symlink loop: loop")


def test_missing_path_and_broken_symlink(tmp_path: Path) -> None:
    (tmp_path / "gone.py").symlink_to("nowhere.py")
    assert_one_line_error(run("missing.py", cwd=tmp_path), "path does not exist: missing.py")
    assert_one_line_error(run("gone.py", cwd=tmp_path), "path a broken symlink: gone.py")


def _unreadable(folder: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    if os.geteuid() != 0:
        folder.chmod(0)
        try:
            return run(*args, cwd=cwd)
        finally:
            folder.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAXLINT_TEST_UNREADABLE": str(folder)}
    return subprocess.run(
        [sys.executable, "-c", _UNREADABLE, "--no-cache", *args],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def test_unreadable_folder_as_first_path_and_inside_the_tree(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "m.py").write_text(INPLACE)
    (tmp_path / "m.py").write_text(INPLACE)
    assert_one_line_error(
        _unreadable(locked, "locked", cwd=tmp_path), "cannot read folder locked: Permission denied"
    )
    inside = _unreadable(locked, ".", cwd=tmp_path)
    assert inside.returncode == 1, err(inside)
    assert "locked:1:1: JAX000 cannot read folder: Permission denied" in out(inside)
    assert "m.py:4:1: JAX103" in out(inside)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_reported_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "m.py").write_text(INPLACE)
    for args in ((".",), ("pipe.py", "m.py")):
        result = run(*args, cwd=tmp_path)  # opening the FIFO would block until the timeout
        assert result.returncode == 1, err(result)
        assert "pipe.py:1:1: JAX000 skipped: a FIFO (named pipe), not a file" in out(result)
        assert "m.py:4:1: JAX103" in out(result)


def test_closed_stdin(tmp_path: Path) -> None:
    for args in (("-",), ("--fix", "-")):
        assert_one_line_error(_closed(tmp_path, *args), "cannot read stdin: it is closed")


def _closed(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # The child starts with file descriptor 0 closed, as `jaxlint - <&-` in a shell.
    return subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m jaxlint --no-cache {" ".join(args)} <&-'],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


def test_rot13_coding_on_stdin(tmp_path: Path) -> None:
    for args in (("-",), ("--fix", "-")):
        result = run(*args, cwd=tmp_path, stdin="# coding: rot13\nimport jax\n")
        assert result.returncode == 1, err(result)
        assert "Traceback" not in err(result)
        assert "JAX000 cannot decode: 'rot13' is not a text encoding" in out(result) + err(result)


def test_internal_error_exits_2_with_one_line(tmp_path: Path) -> None:
    # A bug anywhere outside the per-file guard (here: discovery) must not exit 1, the code for findings.
    script = (
        "import sys, jaxlint.files as files\n"
        "def broken(*args, **kwargs):\n    raise RuntimeError('boom')\n"
        "files.discover = broken\n"
        "from jaxlint.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    (tmp_path / "m.py").write_text(INPLACE)
    result = subprocess.run(
        [sys.executable, "-c", script, "--no-cache", "."],
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert_one_line_error(result, "internal error: RuntimeError: boom")


def _json(result: subprocess.CompletedProcess) -> list[dict]:
    return json.loads(out(result))


# -- item 8: --force-exclude (what the pre-commit hook runs) matches parents, relative to the project root --


def test_force_exclude_matches_parent_folders_default_excludes_and_absolute_paths(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nextend-exclude = ["vendor", "src/gen"]\n')
    for folder in ("vendor", "vendor/deep/er", "build", "src/gen/x", "src/ok", "tools/vendor"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "m.py").write_text(INPLACE)
    excluded = ["vendor/m.py", "vendor/deep/er/m.py", "build/m.py", "src/gen/x/m.py", "tools/vendor/m.py"]
    given = [*excluded, str(tmp_path / "vendor/deep/er/m.py"), "src/ok/m.py"]
    result = run("--force-exclude", *given, cwd=tmp_path)
    assert result.returncode == 1, err(result)
    assert finding_lines(result) == [
        "src/ok/m.py:4:1: JAX103 [*] In-place update of JAX array 'x': JAX arrays are immutable (TypeError); "
        "use x = x.at[0].set(...)"
    ]
    # From a subfolder, `src/gen` is still anchored at the project root.
    (tmp_path / "src" / "pyproject.toml").write_text("")
    inner = run("--force-exclude", "gen/x/m.py", "ok/m.py", cwd=tmp_path / "src")
    assert [line.split(":")[0] for line in finding_lines(inner)] == ["ok/m.py"], out(inner)
    # Without --force-exclude a file named explicitly is linted; a folder walk still skips excluded ones.
    assert "vendor/m.py:4:1: JAX103" in out(run("vendor/m.py", cwd=tmp_path))
    walked = run(".", cwd=tmp_path)
    assert [line.split(":")[0] for line in finding_lines(walked)] == ["src/ok/m.py"], out(walked)


# -- item 6: a cache-dir that already exists (the project root) gets no `*` .gitignore ------------------------


def test_cache_dir_dot_does_not_ignore_the_project(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\ncache-dir = "."\n')
    (tmp_path / "m.py").write_text(INPLACE)
    for _ in range(2):  # the second run reads the cache and must still see the file
        result = run_cached(".", cwd=tmp_path)
        assert result.returncode == 1 and "m.py:4:1: JAX103" in out(result), err(result)
    assert not (tmp_path / ".gitignore").exists()
    # A folder jaxlint creates is marked ignored, as ruff does.
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\ncache-dir = "made/by/jaxlint"\n')
    run_cached(".", cwd=tmp_path)
    assert (tmp_path / "made/by/jaxlint/.gitignore").read_text().splitlines()[-1] == "*"
    assert not (tmp_path / "made/.gitignore").exists()


def run_cached(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


# -- item 7: cache entries are validated, printed text is cleaned, old entries are pruned --------------------


def _entry(cache: Path) -> Path:
    (entry,) = [p for p in cache.rglob("*.json")]
    return entry


def _poisoned_runs(tmp_path: Path, poison) -> tuple[str, str]:
    """Lint m.py cold, rewrite its cache entry with `poison(document)`, lint warm: (cold, warm) stdout."""
    (tmp_path / "m.py").write_text(BAD)
    cold = run_cached("--cache-dir", "c", "m.py", cwd=tmp_path)
    entry = _entry(tmp_path / "c")
    entry.write_text(poison(json.loads(entry.read_text()), entry))
    warm = run_cached("--cache-dir", "c", "m.py", cwd=tmp_path)
    assert "Traceback" not in err(warm)
    return out(cold), out(warm)


def test_cache_entry_of_a_clean_file_copied_onto_a_dirty_file_is_a_miss(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text("import jax\n")
    run_cached("--cache-dir", "c0", "clean.py", cwd=tmp_path)
    clean_entry = _entry(tmp_path / "c0").read_text()
    assert json.loads(clean_entry)["findings"] == []
    cold, warm = _poisoned_runs(tmp_path, lambda doc, entry: clean_entry)
    assert "JAX101" in cold and warm == cold


@pytest.mark.parametrize(
    "poison",
    [
        pytest.param(
            lambda d, e: json.dumps({**d, "findings": []}).replace(d["key"], "0" * 64), id="other-key"
        ),
        pytest.param(lambda d, e: json.dumps(d["findings"]), id="old-schema"),
        pytest.param(
            lambda d, e: json.dumps({**d, "findings": [{**d["findings"][0], "line": 0}]}), id="line-0"
        ),
        pytest.param(
            lambda d, e: json.dumps({**d, "findings": [{**d["findings"][0], "code": "JAX999"}]}), id="code"
        ),
        pytest.param(
            lambda d, e: json.dumps({**d, "findings": [{**d["findings"][0], "extra": 1}]}), id="field"
        ),
        pytest.param(lambda d, e: "[" * 100_000 + "]" * 100_000, id="deep-nesting"),
        pytest.param(lambda d, e: " " * (5 << 20) + json.dumps(d), id="too-large"),
    ],
)
def test_poisoned_cache_entries_are_misses(tmp_path: Path, poison) -> None:
    cold, warm = _poisoned_runs(tmp_path, poison)
    assert "JAX101" in cold and warm == cold


def test_escape_sequences_are_never_printed(tmp_path: Path) -> None:
    escape = "\x1b]0;owned\x07\x1b[2K\r"

    def poison(doc, entry):
        doc["findings"][0]["message"] = escape + "fake"
        return json.dumps(doc)

    cold, warm = _poisoned_runs(tmp_path, poison)
    assert warm == cold and "\x1b" not in warm  # the entry is rejected: relinted
    # A file name with escapes is printed escaped, in text and in github annotations.
    name = "\x1b[31mred.py"
    (tmp_path / name).write_text(BAD)
    for fmt in ("text", "github"):
        result = run("--format", fmt, name, cwd=tmp_path)
        assert result.returncode == 1 and b"\x1b" not in result.stdout + result.stderr
        assert "\\x1b[31mred.py" in out(result)
    missing = run("\x1b[31mmissing.py", cwd=tmp_path)
    assert_one_line_error(missing, "path does not exist: \\x1b[31mmissing.py")
    assert b"\x1b" not in missing.stderr


def test_old_cache_entries_are_pruned(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(BAD)
    run_cached("--cache-dir", "c", "m.py", cwd=tmp_path)
    live = _entry(tmp_path / "c")
    old = live.parent.parent / "ab" / ("ab" + "0" * 62 + ".json")
    old.parent.mkdir()
    old.write_text("{}")
    stale = live.parent.parent.parent / "0.0.1" / "cd" / "tmp123.tmp"  # an older version's temporary
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    keep = tmp_path / "c" / "0.0.1" / "notes.txt"  # not a name the cache writes
    keep.write_text("mine")
    month_ago = time.time() - 40 * 86400
    for path in (old, stale, keep):
        os.utime(path, (month_ago, month_ago))
    (tmp_path / "c" / ".last-prune").unlink()
    run_cached("--cache-dir", "c", "m.py", cwd=tmp_path)
    assert live.exists() and keep.exists()
    assert not old.exists() and not stale.exists() and not stale.parent.exists()


# -- item 12: output ---------------------------------------------------------------------------------------


def test_fixable_findings_are_marked_and_counted(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(INPLACE + "key = jax.random.PRNGKey(0)\nimport jax\n")
    result = run("--select", "JAX103,JAX302", "m.py", cwd=tmp_path)
    assert result.returncode == 1
    lines = out(result).splitlines()
    assert lines[0].startswith("m.py:4:1: JAX103 [*] In-place update")
    assert lines[1].startswith("m.py:5:7: JAX302 ") and "[*]" not in lines[1]  # its fix is unsafe
    assert lines[2:] == [  # on stdout, as ruff's
        "Found 2 findings.",
        "[*] 1 fixable with `jaxlint --fix` (1 more with `--unsafe-fixes`).",
    ]
    unsafe = run("--select", "JAX103,JAX302", "--unsafe-fixes", "--diff", "m.py", cwd=tmp_path)
    assert unsafe.returncode == 1 and "jax.random.key" in out(unsafe)
    stats = run("--select", "JAX103,JAX302", "--statistics", "m.py", cwd=tmp_path)
    # As ruff's: the table in place of the findings, `[ ] ` before the unfixable when one is fixable.
    assert out(stats).startswith(
        "1\tJAX103\t[*] inplace-array-update\n1\tJAX302\t[ ] legacy-prng-key\nFound 2"
    )


def test_statistics_with_json_and_with_formats_that_cannot_hold_it(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(INPLACE + "y = jnp.zeros(2)\ny[1] = 2\n")
    result = run("--statistics", "--format", "json", "m.py", cwd=tmp_path)
    assert result.returncode == 1
    assert _json(result) == [
        {"code": "JAX103", "name": _json(run("--format", "json", "m.py", cwd=tmp_path))[0]["name"],
         "count": 2, "fixable": True, "fixable_count": 2}
    ]  # fmt: skip
    for args in (("--format", "sarif"), ("--format", "github"), ("--verify",)):
        assert_one_line_error(run("--statistics", *args, "m.py", cwd=tmp_path), "--statistics ")


def test_sarif_uris_are_percent_encoded(tmp_path: Path) -> None:
    folder = tmp_path / "my dir#1"
    folder.mkdir()
    (folder / "ü%.py").write_text(BAD)
    relative = run("--format", "sarif", "my dir#1/ü%.py", cwd=tmp_path)
    (location,) = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]
        for r in json.loads(out(relative))["runs"][0]["results"]
    ]
    assert location == {"uri": "my%20dir%231/%C3%BC%25.py", "uriBaseId": "%SRCROOT%"}
    absolute = run("--format", "sarif", str(folder / "ü%.py"), cwd=tmp_path)
    uri = json.loads(out(absolute))["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"
    ]
    assert uri == {"uri": (folder / "ü%.py").as_uri()} and "%20" in uri["uri"]


# -- item 14: what the README promises --------------------------------------------------------------------


def test_every_example_has_a_finding_except_the_opt_in_one() -> None:
    by_default = _json(run("--format", "json", "examples", cwd=ROOT))
    flagged = {Path(row["path"]).name.split("_")[0].upper() for row in by_default}
    examples = {path.name.split("_")[0].upper() for path in (ROOT / "examples").glob("jax*.py")}
    assert examples - flagged == {"JAX302"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "every example except that of the opt-in\nJAX302" in readme
    opt_in = _json(run("--format", "json", "--select", "JAX302", "examples", cwd=ROOT))
    assert {Path(row["path"]).name for row in opt_in} == {"jax302_legacy_prng_key.py"}


def test_install_routes_name_no_package_index_release_and_no_tag() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "not yet published on PyPI" in readme
    for text in (readme, hooks):
        # `rev:` must be a commit: no release tag exists.
        assert "rev: v" not in text and "rev: <commit sha>" in text
        # A bare requirement would go to the package index, where jaxlint-cst does not exist.
        for line in text.splitlines():
            if "pip install" in line and "jaxlint-cst" in line:
                assert "@ git+" in line, line


def test_jax201_fix_keeps_literal_braces(tmp_path: Path) -> None:
    source = 'import jax\n\n@jax.jit\ndef f(x):\n    print("a {} b {{c}}", x)\n    return x\n\nf(1.5)\n'
    (tmp_path / "m.py").write_text(source)
    fixed = run("--fix", "m.py", cwd=tmp_path)
    assert "Fixed 1 finding" in err(fixed), err(fixed)
    text = (tmp_path / "m.py").read_text()
    assert "jax.debug.print(\"{} {}\", 'a {} b {{c}}', x)" in text, text
    ran = subprocess.run(
        [sys.executable, "m.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "a {} b {{c}} 1.5\n"  # what print() showed, now on every call


def test_a_selector_string_instead_of_a_list_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nselect = "JAX1"\n')
    (tmp_path / "m.py").write_text("import jax\n")
    result = run(".", cwd=tmp_path)
    assert result.returncode == 2, err(result)
    assert "'select' must be a list" in err(result)
    assert "Traceback" not in err(result)


# -- issue 39, item 7: a worker's memory bound -------------------------------------------------------------


def _memory_run(folder: Path, *paths: str) -> dict[str, list[dict]]:
    """`jaxlint -j 2 --format json PATHS` with workers bounded to 100 MB (`JAXLINT_MEMORY_MB`)."""
    result = run("-j", "2", "--format", "json", *paths, cwd=folder, env={"JAXLINT_MEMORY_MB": "100"})
    assert result.returncode == 1, err(result)[-2000:]
    found: dict[str, list[dict]] = {}
    for finding in json.loads(out(result)):
        found.setdefault(Path(finding["path"]).name, []).append(finding)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the bound is RLIMIT_DATA, counted on Linux")
def test_a_file_over_the_memory_bound_is_jax000_and_the_other_files_are_linted(tmp_path: Path) -> None:
    """A 0.3 MB module needs ~300 MB: with workers bounded to 100 MB it gets one JAX000 that says so (whether
    the bound stopped Python, a MemoryError, or libcst's native parser, which aborts its process), and the
    other files are linted: in a directory run (a pool of workers) and in a run of two files (the large one
    goes to a worker all the same)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from hostile_inputs import long_module

    (tmp_path / "big.py").write_text(long_module(14_000))
    for i in range(8):
        (tmp_path / f"m{i}.py").write_text(BAD)
    for paths in ((".",), ("big.py", "m0.py")):
        found = _memory_run(tmp_path, *paths)
        ((refused),) = found["big.py"]
        assert refused["code"] == "JAX000", refused
        assert (
            refused["message"]
            == "cannot analyse: too large to analyse within 100 MB (a worker's memory bound)"
        )
        linted = [name for name in found if name != "big.py"]
        assert linted == ([f"m{i}.py" for i in range(8)] if paths == (".",) else ["m0.py"])
        assert all([f["code"] for f in found[name]] == ["JAX101"] for name in linted)
