"""The `jaxlint` command end to end, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlint.docs import rule_table

ROOT = Path(__file__).resolve().parent.parent
BAD = textwrap.dedent(
    """\
    import jax

    @jax.jit
    def f(x):
        if x > 0:
            return x
        return -x
    """
)
GOOD = "import jax\n\n@jax.jit\ndef f(x):\n    return x * 2\n"


def run(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text(GOOD)
    return tmp_path


def test_exit_codes(project: Path) -> None:
    assert run(str(project / "good.py")).returncode == 0
    result = run(str(project))
    assert result.returncode == 1
    assert result.stdout == f"{project / 'bad.py'}:5:8: JAX101 " + result.stdout.split(" JAX101 ", 1)[1]
    assert run(str(project), "--exit-zero").returncode == 0


def test_missing_path_is_a_usage_error(project: Path) -> None:
    result = run(str(project / "nope.py"))
    assert result.returncode == 2
    assert "path does not exist" in result.stderr and "Traceback" not in result.stderr


def test_bad_files_are_reported_and_others_still_linted(project: Path) -> None:
    (project / "syntax.py").write_text("import jax\ndef f(:\n")
    (project / "latin1.py").write_bytes(b"import jax\nx = '\xff'\n")
    (project / "binary.py").write_bytes(b"\x00\x01jax\x00")
    result = run(str(project), "--format", "json")
    found = {(Path(f["path"]).name, f["code"]) for f in json.loads(result.stdout)}
    assert found == {
        ("bad.py", "JAX101"),
        ("syntax.py", "JAX000"),
        ("latin1.py", "JAX000"),
        ("binary.py", "JAX000"),
    }
    syntax = next(f for f in json.loads(result.stdout) if f["path"].endswith("syntax.py"))
    assert syntax["line"] == 2 and "invalid syntax" in syntax["message"]


def test_json_keys_are_stable(project: Path) -> None:
    (finding,) = json.loads(run(str(project / "bad.py"), "--format", "json").stdout)
    assert {
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "code",
        "name",
        "message",
        "severity",
        "fix",
    } <= set(finding)
    assert (finding["line"], finding["column"], finding["code"], finding["fix"]) == (5, 8, "JAX101", None)


def test_github_and_sarif(project: Path) -> None:
    line = run(str(project / "bad.py"), "--format", "github").stdout.strip()
    assert line.startswith(f"::error file={project / 'bad.py'},line=5,col=8,")
    assert "title=JAX101 traced-control-flow::" in line
    sarif = json.loads(run(str(project / "bad.py"), "--format", "sarif").stdout)
    assert sarif["version"] == "2.1.0"
    run_ = sarif["runs"][0]
    rule_ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    (result,) = run_["results"]
    assert rule_ids[result["ruleIndex"]] == "JAX101"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (5, 8)


def test_select_ignore_prefixes(project: Path) -> None:
    assert run(str(project), "--ignore", "JAX1").returncode == 0
    assert run(str(project), "--select", "JAX10").returncode == 1
    assert run(str(project), "--select", "JAX102").returncode == 0
    result = run(str(project), "--select", "NOPE1")
    assert result.returncode == 2 and "unknown rule selector" in result.stderr


def test_noqa(project: Path) -> None:
    (project / "bad.py").write_text(BAD.replace("if x > 0:", "if x > 0:  # noqa: JAX101"))
    assert run(str(project / "bad.py")).returncode == 0
    (project / "bad.py").write_text(BAD.replace("if x > 0:", "if x > 0:  # noqa: JAX102"))
    assert run(str(project / "bad.py")).returncode == 1
    (project / "bad.py").write_text(BAD.replace("if x > 0:", "if x > 0:  # noqa"))
    assert run(str(project / "bad.py")).returncode == 0
    (project / "bad.py").write_text("# jaxlint: noqa\n" + BAD)
    assert run(str(project / "bad.py")).returncode == 0


def test_config_in_pyproject(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.jaxlint]\nper-file-ignores = { "bad.py" = ["JAX101"] }\n')
    assert run(str(project)).returncode == 0
    (project / "pyproject.toml").write_text('[tool.jaxlint]\nignore = ["JAX101"]\n')
    assert run(str(project)).returncode == 0
    assert run(str(project), "--select", "JAX101").returncode == 1  # the CLI overrides the file
    (project / "pyproject.toml").write_text('[tool.jaxlint]\nextend-exclude = ["bad.py"]\n')
    assert run(str(project)).returncode == 0
    (project / "pyproject.toml").write_text("[tool.jaxlint]\nselekt = []\n")
    result = run(str(project))
    assert result.returncode == 2 and "unknown setting 'selekt'" in result.stderr


def test_jit_decorators_setting(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\njit-decorators = ["mylib.smart_jit"]\n')
    (tmp_path / "m.py").write_text(
        "from mylib import smart_jit\nimport jax.numpy as jnp\n\n@smart_jit\ndef f(x):\n    if x > 0:\n        return x\n"
    )
    assert run(str(tmp_path)).returncode == 1


def test_gitignore_is_honoured(project: Path) -> None:
    (project / ".gitignore").write_text("bad.py\n")
    assert run(str(project)).returncode == 0
    assert run(str(project / "bad.py")).returncode == 1  # named explicitly: linted


def test_stdin(project: Path) -> None:
    result = run("-", "--stdin-filename", "mod.py", stdin=BAD)
    assert result.returncode == 1 and result.stdout.startswith("mod.py:5:8: JAX101")


def test_statistics_list_and_explain(project: Path) -> None:
    assert "JAX101\ttraced-control-flow" in run(str(project), "--statistics").stdout
    assert run("--list-rules").stdout == rule_table()
    explained = run("--explain", "jax101").stdout
    for section in ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety", "References"):
        assert f"## {section}" in explained
    assert run("--explain", "JAX999").returncode == 2


def test_explain_imports_only_its_rule() -> None:
    script = (
        "import sys; from jaxlint.cli import main; code = main(['--explain', 'JAX402']); "
        "print(code, sorted(m for m in sys.modules if m.startswith('jaxlint.rules.')"
        " and m not in ('jaxlint.rules.base',)))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    last = result.stdout.splitlines()[-1]
    assert "# JAX402 unhashable-static-arg" in result.stdout
    assert last.startswith("0 ") and "jaxlint.rules.unhashable_static_arg" in last
    assert "jaxlint.rules.traced_control_flow" not in last and "jaxlint.rules.jit_in_loop" not in last


def test_parallel_jobs_give_the_same_findings(tmp_path: Path) -> None:
    for i in range(12):
        (tmp_path / f"m{i}.py").write_text(BAD if i % 2 else GOOD)
    one = run(str(tmp_path), "-j", "1", "--format", "json").stdout
    two = run(str(tmp_path), "-j", "2", "--format", "json").stdout
    assert one == two and len(json.loads(one)) == 6


def test_static_mode_never_imports_jax(project: Path) -> None:
    code = (
        "import sys, jaxlint.cli\n"
        f"code = jaxlint.cli.main([{str(project)!r}, '-j', '1'])\n"
        "assert code == 1\n"
        "bad = sorted(m for m in sys.modules if m == 'jax' or m.startswith(('jax.', 'jaxlib')))\n"
        "print('IMPORTED', bad)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "IMPORTED []" in result.stdout, result.stdout + result.stderr


def test_readme_rule_table_matches_registry() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert rule_table() in readme, "README rule table is out of date: paste `jaxlint --list-rules` into it"


def test_python_api(project: Path) -> None:
    import jaxlint

    (finding,) = jaxlint.lint_source(BAD, path="m.py")
    assert (finding.path, finding.line, finding.column, finding.code) == ("m.py", 5, 8, "JAX101")
    found = jaxlint.lint_paths([str(project)])
    assert [f.code for f in found] == ["JAX101"]


@pytest.mark.slow
def test_verify_run_forms(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nimport jax, jax.numpy as jnp\nf = jax.jit(lambda x: x * 2)\n"
        "for n in (1, 2, 3):\n    f(jnp.ones(n))\nsys.exit(int(sys.argv[1]))\n"
    )
    argv_form = run(
        "--verify", "--format", "json", "--run", "--", sys.executable, str(script), "0", cwd=tmp_path
    )
    assert argv_form.returncode == 0, argv_form.stderr
    report = json.loads(argv_form.stdout)
    assert [f["compiles"] for f in report["functions"] if f["qualname"] == "<lambda>"] == [3]
    shell_form = run("--verify", "--run", f"{sys.executable} {script} 2", cwd=tmp_path)
    assert shell_form.returncode == 2
