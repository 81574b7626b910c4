"""The flake8 plugin, run as the real `flake8` command in a subprocess, against `jaxlint --format json`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.rules import ALL_RULES

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "rules").glob("*.py"))
SEP = "\x1f"
FORMAT = SEP.join(["%(path)s", "%(row)d", "%(col)d", "%(code)s", "%(text)s"])

pytestmark = pytest.mark.skipif(
    shutil.which("flake8", path=str(Path(sys.executable).parent)) is None and shutil.which("flake8") is None,
    reason="flake8 is not installed",
)


def flake8(*args: str, cwd: Path = ROOT, isolated: bool = True) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "flake8",
        *(["--isolated"] if isolated else []),
        f"--format={FORMAT}",
        *args,
    ]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=_env())


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def flake8_findings(result: subprocess.CompletedProcess) -> list[tuple[str, int, int, str, str]]:
    assert result.returncode in (0, 1), result.stderr
    rows = []
    for line in result.stdout.splitlines():
        path, row, col, code, text = line.split(SEP)
        rows.append((path, int(row), int(col), code, text))
    return sorted(rows)


def jaxlint_findings(*args: str, cwd: Path = ROOT) -> list[tuple[str, int, int, str, str]]:
    result = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert result.returncode in (0, 1), result.stderr
    return sorted(
        (r["path"], r["line"], r["column"], r["code"], r["message"]) for r in json.loads(result.stdout)
    )


def test_plugin_is_registered() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, env=_env()
    )
    assert "jaxlint" in result.stdout


@pytest.fixture
def defaults(tmp_path: Path) -> list[str]:
    """jaxlint's default settings, whatever a pyproject.toml above the fixtures says (flake8 runs --isolated)."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return ["--config", str(tmp_path / "pyproject.toml")]


def test_fixtures_same_findings_as_jaxlint(defaults: list[str]) -> None:
    """`flake8 --select JAX` and `jaxlint` agree finding for finding: line, column, code and message."""
    paths = [str(p.relative_to(ROOT)) for p in FIXTURES]
    from_flake8 = flake8_findings(flake8("--select", "JAX", *paths))
    from_jaxlint = jaxlint_findings(*defaults, "--select", "JAX", *paths)
    assert from_flake8, "the fixtures must have findings"
    assert from_flake8 == from_jaxlint


OPT_IN = [r.code for r in ALL_RULES if not r.default_enabled]


def test_fixtures_with_opt_in_rules_same_findings(defaults: list[str]) -> None:
    paths = [str(p.relative_to(ROOT)) for p in FIXTURES]
    select = ["--select", "JAX", "--extend-select", ",".join(OPT_IN)]
    assert flake8_findings(flake8(*select, *paths)) == jaxlint_findings(*defaults, *select, *paths)


BAD = """\
import jax
import jax.numpy as jnp


@jax.jit
def f(x):
    if x > 0:  # noqa: JAX101
        return float(x)
    return x


@jax.jit
def g(x):
\tλ = jnp.nonzero(x)
\twhile x.sum() > 0:  # noqa
\t\tx = x - 1
\treturn λ
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    return tmp_path


def test_columns_are_not_off_by_one(project: Path) -> None:
    rows = flake8_findings(flake8("--select", "JAX", "bad.py", cwd=project))
    assert [(r[1], r[2], r[3]) for r in rows] == [(8, 16, "JAX102"), (14, 6, "JAX104")]
    assert [r[:4] for r in rows] == [r[:4] for r in jaxlint_findings("bad.py", cwd=project)]


def test_flake8_owns_noqa(project: Path) -> None:
    """The plugin reports the lines under `# noqa`; flake8 drops them, and shows them with --disable-noqa."""
    rows = flake8_findings(flake8("--select", "JAX", "--disable-noqa", "bad.py", cwd=project))
    assert [(r[1], r[3]) for r in rows] == [(7, "JAX101"), (8, "JAX102"), (14, "JAX104"), (15, "JAX101")]
    (project / "skip.py").write_text("# flake8: noqa\n" + BAD)
    assert flake8_findings(flake8("--select", "JAX", "skip.py", cwd=project)) == []


def test_select_ignore_and_per_file_ignores(project: Path) -> None:
    (project / "other.py").write_text(BAD)

    def codes(*args: str) -> list[tuple[str, str]]:
        rows = flake8_findings(flake8(*args, "bad.py", "other.py", cwd=project))
        return [(r[0], r[3]) for r in rows if r[3].startswith("JAX")]

    everything = [("bad.py", "JAX102"), ("bad.py", "JAX104"), ("other.py", "JAX102"), ("other.py", "JAX104")]
    assert codes() == everything  # on by default
    assert codes("--select", "JAX104") == [("bad.py", "JAX104"), ("other.py", "JAX104")]
    assert codes("--select", "JAX", "--ignore", "JAX1") == []
    assert codes("--select", "JAX", "--extend-ignore", "JAX102") == [
        ("bad.py", "JAX104"),
        ("other.py", "JAX104"),
    ]
    assert codes("--select", "E", "--extend-select", "JAX102") == [
        ("bad.py", "JAX102"),
        ("other.py", "JAX102"),
    ]
    assert codes("--select", "JAX", "--per-file-ignores", "other.py:JAX10") == everything[:2]


def test_flake8_config_file_and_jobs(project: Path) -> None:
    (project / "other.py").write_text(BAD)
    (project / "setup.cfg").write_text("[flake8]\nselect = JAX\nper-file-ignores =\n    other.py: JAX102\n")
    rows = flake8_findings(flake8("-j", "2", "bad.py", "other.py", cwd=project, isolated=False))
    assert [(r[0], r[3]) for r in rows] == [
        ("bad.py", "JAX102"),
        ("bad.py", "JAX104"),
        ("other.py", "JAX104"),
    ]


def test_stdin(project: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "--select",
            "JAX",
            "--stdin-display-name",
            "s.py",
            "-",
        ],
        input=BAD,
        capture_output=True,
        text=True,
        cwd=project,
        env=_env(),
    )
    assert result.stdout.splitlines() == [
        "s.py:8:16: JAX102 float() on traced value 'x' inside jax.jit-compiled 'f': raises ConcretizationTypeError;"
        " use x.astype(jnp.float32) and keep it an array",
        "s.py:14:6: JAX104 jnp.nonzero() without size= on traced value 'x' inside jax.jit-compiled 'g': its output"
        " shape depends on values (ConcretizationTypeError); pass size= (and fill_value=)",
    ]


WRAPPED = """\
from mylib import smart_jit


@smart_jit
def f(x):
    if x > 0:
        return x
    return -x
"""


def test_jit_decorators_from_flake8_options(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(WRAPPED)
    assert flake8_findings(flake8("--select", "JAX", "m.py", cwd=tmp_path)) == []
    rows = flake8_findings(
        flake8("--select", "JAX", "--jaxlint-jit-decorators", "mylib.smart_jit", "m.py", cwd=tmp_path)
    )
    assert [(r[1], r[2], r[3]) for r in rows] == [(6, 8, "JAX101")]
    (tmp_path / ".flake8").write_text(
        "[flake8]\nselect = JAX\njaxlint-jit-decorators = other.jit, mylib.smart_jit\n"
    )
    rows = flake8_findings(flake8("m.py", cwd=tmp_path, isolated=False))
    assert [(r[1], r[3]) for r in rows] == [(6, "JAX101")]


def test_jit_decorators_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\njit-decorators = ["mylib.smart_jit"]\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(WRAPPED)
    rows = flake8_findings(flake8("--select", "JAX", "pkg/m.py", cwd=tmp_path))
    assert [(r[1], r[3]) for r in rows] == [(6, "JAX101")]
    assert [r[:4] for r in rows] == [r[:4] for r in jaxlint_findings("pkg/m.py", cwd=tmp_path)]
    # flake8's own option wins over [tool.jaxlint]
    rows = flake8_findings(
        flake8("--select", "JAX", "--jaxlint-jit-decorators", "x.y", "pkg/m.py", cwd=tmp_path)
    )
    assert rows == []


def test_bad_pyproject_is_reported_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\njit-decorators = 3\n")
    (tmp_path / "m.py").write_text(WRAPPED)
    rows = flake8_findings(flake8("--select", "JAX", "m.py", cwd=tmp_path))
    assert [(r[1], r[3]) for r in rows] == [(1, "JAX000")]
    assert "jit-decorators" in rows[0][4]


def test_opt_in_rules_stay_off_unless_selected(tmp_path: Path) -> None:
    """Opt-in rules (JAX302) are in flake8's default ignore, and `--select JAX` does not switch them on (as in
    jaxlint): only a selector that names them does."""
    (tmp_path / "legacy.py").write_text("import jax\n\nkey = jax.random.PRNGKey(0)  # noqa: JAX302\n")

    def codes(*args: str) -> set[str]:
        return {row[3] for row in flake8_findings(flake8("-j", "1", *args, "legacy.py", cwd=tmp_path))}

    assert "JAX302" not in codes()
    assert "JAX302" not in codes("--select", "JAX")
    assert "JAX302" not in codes("--select", "JAX", "--extend-select", "JAX302")  # flake8 owns the noqa
    assert "JAX302" in codes("--select", "JAX", "--disable-noqa", "--extend-select", "JAX302")
    assert "JAX302" in codes("--select", "JAX3", "--disable-noqa")
    assert "JAX302" in codes("--extend-select", "JAX302", "--disable-noqa")
    assert "JAX302" not in codes("--extend-select", "JAX302", "--extend-ignore", "JAX302", "--disable-noqa")


def test_a_notebook_named_to_flake8_is_reported_where_its_json_holds_the_code(tmp_path: Path) -> None:
    """flake8 shows an `.ipynb` as its JSON lines: each finding sits on the JSON line and column that hold its
    code (as `jaxlint --format github` puts it), its message names the cell, and a `# noqa` typed in the cell
    (on that JSON line) is flake8's to honour."""
    from tests.integrations.test_notebooks import THREE_CELLS

    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "nb.ipynb").write_text(THREE_CELLS)
    env = {**_env(), "PYTHONPATH": str(ROOT)}  # this checkout's plugin, whatever cwd is
    command = [sys.executable, "-m", "flake8", "--isolated", f"--format={FORMAT}", "--select", "JAX"]
    result = subprocess.run([*command, "nb.ipynb"], cwd=tmp_path, capture_output=True, text=True, env=env)
    rows = flake8_findings(result)
    github = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--format", "github", "nb.ipynb"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    ).stdout.splitlines()
    stored = [tuple(int(part.split("=")[1]) for part in line.split(",")[1:3]) for line in github]
    assert [(row, col) for _, row, col, _, _ in rows] == stored
    cells = [(code, text.split(": ", 1)[0]) for _, _, _, code, text in rows]
    assert cells == [("JAX101", "cell 3:5:8"), ("JAX102", "cell 5:4:12"), ("JAX104", "cell 7:5:12")]
    # `# noqa: JAX101` in cell 3: flake8 finds it on the JSON line of that code line.
    (tmp_path / "nb.ipynb").write_text(THREE_CELLS.replace("if x > 0:\\n", "if x > 0:  # noqa: JAX101\\n"))
    result = subprocess.run([*command, "nb.ipynb"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert [row[3] for row in flake8_findings(result)] == ["JAX102", "JAX104"]
    result = subprocess.run(
        [*command, "--disable-noqa", "nb.ipynb"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert [row[3] for row in flake8_findings(result)] == ["JAX101", "JAX102", "JAX104"]
