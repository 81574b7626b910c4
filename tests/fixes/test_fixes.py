"""Fixes: `.in.py`/`.out.py` pairs, idempotence, what must not be fixed, and the --fix/--diff command.

A pair is `tests/fixtures/fixes/<CODE>_<case>.in.py` and `.out.py`: fixing the input with only `<CODE>` selected
(unsafe fixes too when the case name contains "unsafe") gives exactly the output, the output parses and
compiles, re-linting it finds no `<CODE>` finding left, and fixing it again changes nothing.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import libcst as cst
import pytest

from jaxlint import lint_source
from jaxlint.autofix import fix_file, fix_source
from jaxlint.config import Config, with_overrides

FIXES = Path(__file__).resolve().parent.parent / "fixtures" / "fixes"
PAIRS = sorted(FIXES.glob("*.in.py"))


def _config(*codes: str) -> Config:
    return with_overrides(Config(), select=codes or ("JAX",))


def _pair(path: Path) -> tuple[str, bool, str, str]:
    stem = path.name.removesuffix(".in.py")
    code, case = stem.split("_", 1)
    out = path.with_name(stem + ".out.py")
    return code, "unsafe" in case, path.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")


def test_pairs_exist_for_every_rule_with_a_fix() -> None:
    from jaxlint.rules import ALL_RULES

    covered = {p.name.split("_")[0] for p in PAIRS}
    mine = {"JAX102", "JAX103", "JAX106", "JAX201", "JAX203"}
    with_fix = {r.code for r in ALL_RULES if r.fix_safety} & mine
    assert with_fix <= covered
    for path in PAIRS:
        assert path.with_name(path.name.replace(".in.py", ".out.py")).exists(), path.name


@pytest.mark.parametrize("path", PAIRS, ids=lambda p: p.name.removesuffix(".in.py"))
def test_fix_pair(path: Path) -> None:
    code, unsafe, source, expected = _pair(path)
    config = _config(code)
    result = fix_source(source, str(path), config, unsafe=unsafe)
    assert result.fixed == expected
    assert result.applied[code] > 0
    # The output parses (libcst and CPython) and no finding of the rule is left in it.
    cst.parse_module(result.fixed)
    compile(result.fixed, str(path), "exec", dont_inherit=True)
    remaining = [f for f in lint_source(result.fixed, str(path), select=[code]) if f.code == code]
    assert remaining == [], remaining
    assert [f for f in result.findings if f.code == code] == []
    # Idempotent: a second run changes nothing.
    again = fix_source(result.fixed, str(path), config, unsafe=unsafe)
    assert again.fixed == result.fixed
    assert not again.applied


UNSAFE_PAIRS = [p for p in PAIRS if "unsafe" in p.name]


@pytest.mark.parametrize("path", UNSAFE_PAIRS, ids=lambda p: p.name.removesuffix(".in.py"))
def test_safe_level_leaves_unsafe_fixes_alone(path: Path) -> None:
    code, _, source, _ = _pair(path)
    before = lint_source(source, str(path), select=[code])
    result = fix_source(source, str(path), _config(code), unsafe=False)
    safe = [f for f in before if f.fix_safety == "safe"]
    assert sum(result.applied.values()) <= len(safe)
    assert all(f.fix_safety == "unsafe" for f in result.findings if f.fix is not None)


def test_findings_carry_the_replacement_text() -> None:
    source = "import jax\n\n@jax.jit\ndef f(x):\n    print('x', x)\n    return x\n"
    (finding,) = lint_source(source, select=["JAX201"])
    assert finding.fix == "jax.debug.print('x {}', x)"
    assert finding.fix_safety == "safe"
    assert json.loads(json.dumps(finding.to_dict()))["fix"] == finding.fix


# -- no fix where a fix would be wrong ---------------------------------------------------------------------

NO_FIX = {
    "print to a file": "import jax, sys\n\n@jax.jit\ndef f(x):\n    print(x, file=sys.stderr)\n    return x\n",
    "print with end": "import jax\n\n@jax.jit\ndef f(x):\n    print(x, end='')\n    return x\n",
    "print with flush": "import jax\n\n@jax.jit\ndef f(x):\n    print(x, flush=True)\n    return x\n",
    "print with a computed sep": "import jax\n\n@jax.jit\ndef f(x, s=', '):\n    print(x, x, sep=s)\n    return x\n",
    "print of *args": "import jax\n\n@jax.jit\ndef f(*xs):\n    print(*xs)\n    return xs\n",
    "no jax binding to refer to": "import jax.numpy as jnp\nfrom jax import jit\n\n@jit\ndef f(x):\n    print(x)\n"
    "    return jnp.sin(x)\n",
    "jax imported for type checkers only": "import typing\nfrom jax import jit\n\nif typing.TYPE_CHECKING:\n"
    "    import jax\n\n@jit\ndef f(x):\n    print(x)\n    return x\n",
    "jax shadowed locally": "import jax\n\n@jax.jit\ndef f(x, jax=None):\n    print(x)\n    return x\n",
    "jax imported only inside another function": "from jax import jit\n\ndef g():\n    import jax\n\n@jit\n"
    "def f(x):\n    print(x)\n    return x\n",
    "a comment the rewrite would drop": "import jax\n\n@jax.jit\ndef f(x):\n    print(\n        x,  # why\n"
    "    )\n    return x\n",
    "a nested format spec": "import jax\n\n@jax.jit\ndef f(x, w=3):\n    print(f'{x:{w}}')\n    return x\n",
    "debug.print with other arguments": "import jax\n\n@jax.jit\ndef f(x, y):\n"
    "    jax.debug.print(f'{x} {{}}', y)\n    return x\n",
    "debug.print with braces in the text": "import jax\n\n@jax.jit\ndef f(x):\n"
    "    jax.debug.print(f'{{x}} {x}')\n    return x\n",
    "debug.print with % formatting": "import jax\n\n@jax.jit\ndef f(x):\n    jax.debug.print('%s' % x)\n"
    "    return x\n",
    "print of %-formatting": "import jax\n\n@jax.jit\ndef f(x):\n    print('x', '%s' % x)\n    return x\n",
    "print of str() arithmetic": "import jax\n\n@jax.jit\ndef f(x):\n    print(str(x) + '!')\n    return x\n",
    "f-string field formatted in Python": "import jax\n\n@jax.jit\ndef f(x):\n"
    "    jax.debug.print(f'{str(x)}')\n    return x\n",
    "update of a closure name": "import jax.numpy as jnp\n\nx = jnp.zeros(3)\n\ndef f():\n    x.at[0].set(1.0)\n",
    "update of an attribute": "import jax.numpy as jnp\n\ndef f(m):\n    m.x.at[0].set(1.0)\n",
    "item assignment on a closure name": "import jax.numpy as jnp\n\nx = jnp.zeros(3)\n\ndef f():\n"
    "    x[0] = 1.0\n",
    "floor-divide update": "import jax.numpy as jnp\n\ndef f():\n    x = jnp.ones(3)\n    x[0] //= 2\n",
    "chained assignment": "import jax.numpy as jnp\n\ndef f():\n    x = jnp.ones(3)\n    x[0] = y = 2.0\n",
    "deletion": "import jax.numpy as jnp\n\ndef f():\n    x = jnp.ones(3)\n    del x[0]\n",
    "np function with NumPy's out argument": "import jax\nimport numpy as np\n\n@jax.jit\ndef f(x):\n"
    "    return np.exp(x, None)\n",
    "np function with a keyword": "import jax\nimport numpy as np\n\n@jax.jit\ndef f(x):\n"
    "    return np.exp(x, where=True)\n",
    "np function without a jnp namesake in the table": "import jax\nimport numpy as np\n\n@jax.jit\ndef f(x):\n"
    "    return np.asarray(x)\n",
    "np function, the name jnp taken": "import numpy as np\nfrom jax import jit\n\njnp = np\n\n@jit\n"
    "def f(x):\n    return np.exp(x)\n",
    "update of a global in traced code": "import jax\nimport jax.numpy as jnp\n\nstate = jnp.zeros(3)\n\n"
    "@jax.jit\ndef f(x):\n    global state\n    state.at[0].set(x[0])\n    return x\n",
}


@pytest.mark.parametrize("source", list(NO_FIX.values()), ids=list(NO_FIX))
def test_no_fix(source: str) -> None:
    findings = lint_source(source)
    assert findings, "the case must still be flagged"
    result = fix_source(source, "case.py", _config(), unsafe=True)
    assert result.fixed == source
    assert all(f.fix is None for f in findings)


def test_noqa_suppressed_findings_are_not_fixed() -> None:
    source = (
        "import jax\n\n@jax.jit\ndef f(x):\n    print(x)  # noqa: JAX201\n    print('y', x)  # noqa\n"
        "    print('z', x)\n    return x\n"
    )
    result = fix_source(source, "case.py", _config(), unsafe=True)
    assert "print(x)  # noqa: JAX201" in result.fixed
    assert "print('y', x)  # noqa" in result.fixed
    assert "jax.debug.print('z {}', x)" in result.fixed
    assert result.applied == {"JAX201": 1}


def test_disabled_rules_are_not_fixed() -> None:
    source = "import jax\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
    result = fix_source(source, "case.py", with_overrides(Config(), ignore=("JAX201",)), unsafe=True)
    assert result.fixed == source


def test_overlapping_fixes_take_turns() -> None:
    # The inner update is fixed first; the statement it produces is fixed in the next round.
    source = (
        "import jax.numpy as jnp\n\ndef f():\n    g = jnp.zeros((2, 2))\n    g[0][1] = 1.0\n    return g\n"
    )
    result = fix_source(source, "case.py", _config(), unsafe=True)
    assert "g = g.at[0].set(g[0].at[1].set(1.0))" in result.fixed
    assert result.applied["JAX103"] == 2


def test_crlf_and_coding_are_kept(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\r\nimport jax\r\n\r\n@jax.jit\r\ndef f(x):\r\n    print('é', x)\r\n    return x\r\n"
    path = tmp_path / "legacy.py"
    path.write_bytes(source.encode("latin-1"))
    result = fix_file(str(path), _config(), unsafe=False)
    assert result.written
    data = path.read_bytes()
    assert data == source.replace("print('é', x)", "jax.debug.print('é {}', x)").encode("latin-1")


def test_bom_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfimport jax\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n")
    fix_file(str(path), _config())
    assert path.read_bytes().startswith(b"\xef\xbb\xbfimport jax\n")
    assert b'jax.debug.print("{}", x)' in path.read_bytes()


def test_atomic_write_keeps_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text("import jax\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n")
    path.chmod(0o640)
    link = tmp_path / "link.py"
    link.symlink_to(path)
    result = fix_file(str(link), _config())
    assert result.written
    assert link.is_symlink(), "the link stays a link; its target is rewritten"
    assert "jax.debug.print" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "mod.py"]


def test_clean_and_unfixable_files_are_not_rewritten(tmp_path: Path) -> None:
    clean = tmp_path / "clean.py"
    clean.write_text("import jax\n\n@jax.jit\ndef f(x):\n    return x\n")
    unfixable = tmp_path / "unfixable.py"
    unfixable.write_text(
        "import jax, sys\n\n@jax.jit\ndef f(x):\n    print(x, file=sys.stderr)\n    return x\n"
    )
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (clean, unfixable)}
    for path in before:
        result = fix_file(str(path), _config(), unsafe=True)
        assert not result.written
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before} == before


def test_notebooks_are_not_rewritten(tmp_path: Path) -> None:
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": ["import jax\n", "@jax.jit\n", "def f(x):\n", "    print(x)\n", "    return x\n"],
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    before = path.read_bytes()
    result = fix_file(str(path), _config(), unsafe=True)
    assert not result.written and path.read_bytes() == before


# -- the command ------------------------------------------------------------------------------------------


def _run(cmd: list[str], cwd: Path, env: dict, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, input=stdin, timeout=120)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "safe.py").write_text("import jax\n\n@jax.jit\ndef f(x):\n    print('x', x)\n    return x\n")
    (tmp_path / "unsafe.py").write_text(
        "import jax.numpy as jnp\n\ndef g(x):\n    x.at[0].set(1.0)\n    return x\n"
    )
    (tmp_path / "rest.py").write_text(
        "import jax, time\n\n@jax.jit\ndef h(x):\n    print(x)\n    time.time()\n    return x\n"
    )
    return tmp_path


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.py"))}


def test_cli_diff_writes_nothing(tmp_path: Path, jaxlint_cmd, clean_env) -> None:
    project = _project(tmp_path)
    before = _snapshot(project)
    done = _run([*jaxlint_cmd, "--diff", "."], project, clean_env)
    assert done.returncode == 1, done.stderr
    assert "+    jax.debug.print('x {}', x)" in done.stdout
    assert "x = x.at[0]" not in done.stdout, "unsafe fixes need --unsafe-fixes"
    assert "Would fix 2 findings in 2 files." in done.stderr
    assert _snapshot(project) == before
    done = _run([*jaxlint_cmd, "--diff", "--unsafe-fixes", "."], project, clean_env)
    assert "+    x = x.at[0].set(1.0)" in done.stdout
    assert _snapshot(project) == before


def test_cli_fix_then_reports_what_remains(tmp_path: Path, jaxlint_cmd, clean_env) -> None:
    project = _project(tmp_path)
    done = _run([*jaxlint_cmd, "--fix", "."], project, clean_env)
    assert done.returncode == 1, done.stderr  # JAX106 (unsafe) and JAX202 remain
    assert "Fixed 2 findings in 2 files." in done.stderr
    assert "1 more fixable with --unsafe-fixes." in done.stderr
    assert "JAX201" not in done.stdout and "JAX202" in done.stdout and "JAX106" in done.stdout
    assert "jax.debug.print('x {}', x)" in (project / "safe.py").read_text()
    again = _run([*jaxlint_cmd, "--fix", "."], project, clean_env)
    assert "Fixed" not in again.stderr
    done = _run([*jaxlint_cmd, "--unsafe-fixes", "--select", "JAX106,JAX201", "."], project, clean_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "x = x.at[0].set(1.0)" in (project / "unsafe.py").read_text()


def test_cli_fix_json_lists_remaining_findings(tmp_path: Path, jaxlint_cmd, clean_env) -> None:
    project = _project(tmp_path)
    done = _run([*jaxlint_cmd, "--fix", "--format", "json", "."], project, clean_env)
    rows = json.loads(done.stdout)
    assert {row["code"] for row in rows} == {"JAX106", "JAX202"}
    (unsafe,) = [row for row in rows if row["code"] == "JAX106"]
    assert unsafe["fix"] == "x = x.at[0].set(1.0)" and unsafe["fix_safety"] == "unsafe"


def test_cli_fix_stdin(tmp_path: Path, jaxlint_cmd, clean_env) -> None:
    source = "import jax\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
    done = _run([*jaxlint_cmd, "--fix", "-"], tmp_path, clean_env, stdin=source)
    assert done.returncode == 0, done.stderr
    assert done.stdout == source.replace("print(x)", 'jax.debug.print("{}", x)')
    done = _run([*jaxlint_cmd, "--diff", "-", "--stdin-filename", "m.py"], tmp_path, clean_env, stdin=source)
    assert done.returncode == 1 and "+++ b/m.py" in done.stdout


def test_cli_fix_keeps_going_past_unparsable_files(tmp_path: Path, jaxlint_cmd, clean_env) -> None:
    project = _project(tmp_path)
    (project / "broken.py").write_text("import jax\ndef f(:\n")
    done = _run([*jaxlint_cmd, "--fix", "."], project, clean_env)
    assert "JAX000" in done.stdout
    assert "jax.debug.print" in (project / "safe.py").read_text()
    assert (project / "broken.py").read_text() == "import jax\ndef f(:\n"
    assert os.path.exists(project / "broken.py")


def test_every_rule_doc_has_the_sections_and_states_its_fix_safety() -> None:
    from jaxlint.rules import ALL_RULES
    from jaxlint.rules.base import DOC_SECTIONS

    for rule in ALL_RULES:
        headings = [line[3:].strip() for line in rule.doc.splitlines() if line.startswith("## ")]
        assert headings == list(DOC_SECTIONS), rule.code
        safety = rule.doc.split("## Fix safety", 1)[1].split("## References", 1)[0]
        if rule.fix_safety:
            assert rule.fix_safety in safety.lower(), (
                f"{rule.code}: the doc must say when its fix is {rule.fix_safety}"
            )


def test_unsafe_fix_never_stores_a_traced_update_in_a_global(tmp_path: Path, jaxlint_cmd, clean_env) -> None:
    """Issue 30 item 9: assigning `state.at[0].set(x[0])` back to a `global state` inside jitted code would
    leak the tracer (a new JAX105); the eager function's global is fixed as any name."""
    source = (
        "import jax\nimport jax.numpy as jnp\n\nstate = jnp.zeros(3)\ncounter = jnp.zeros(3)\n\n\n"
        "@jax.jit\ndef step(x):\n    global state\n    state.at[0].set(x[0])\n    return x\n\n\n"
        "def reset():\n    global counter\n    counter.at[0].set(1.0)\n"
    )
    (tmp_path / "m.py").write_text(source)
    done = _run([*jaxlint_cmd, "--unsafe-fixes", "--fix", "--format", "json", "m.py"], tmp_path, clean_env)
    rows = [(r["line"], r["code"]) for r in json.loads(done.stdout)]
    assert rows == [(11, "JAX106")], done.stdout + done.stderr
    fixed = (tmp_path / "m.py").read_text()
    assert "    state.at[0].set(x[0])\n" in fixed and "    counter = counter.at[0].set(1.0)\n" in fixed


def test_cli_fix_reports_what_remains_in_the_text_it_gives_back(tmp_path: Path, jaxlint_cmd) -> None:
    """A chain of overlapping fixes longer than the fix rounds: what the fixed text still has is reported, as
    `jaxlint` reports it on that text, not what the text before the last round had."""
    depth = 14
    source = (
        "import jax.numpy as jnp\n\n\ndef f():\n"
        f"    g = jnp.zeros((2,) * {depth})\n    g{'[0]' * depth} = 1.0\n    return g\n"
    )
    env = dict(os.environ)  # this checkout's jaxlint (PYTHONPATH), whatever is installed
    args = ["-", "--stdin-filename", "deep.py", "--no-cache", "--format", "json"]
    fixed = _run([*jaxlint_cmd, "--unsafe-fixes", *args], tmp_path, env, stdin=source)
    assert fixed.returncode == 1, fixed.stderr
    assert "Fixed" in fixed.stderr and "[0]" * depth not in fixed.stdout
    remaining = json.loads(fixed.stderr[fixed.stderr.index("[") :])
    again = _run([*jaxlint_cmd, *args], tmp_path, env, stdin=fixed.stdout)
    assert remaining == json.loads(again.stdout), "the findings of the text given back"
    assert [row["code"] for row in remaining] == ["JAX103"]
