"""Progress and pictures: `--verify`'s progress on stderr (one line per module off a terminal, stdout left to
the report), and the self-contained HTML report `--verify --run CMD --html FILE` writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "verify"


def _jaxlint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_verify_off_a_terminal_says_one_line_per_module_on_stderr_and_keeps_stdout_json(tmp_path):
    for name in ("verify_jax101.py", "verify_jax103.py"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    result = _jaxlint(tmp_path, "--verify", "--no-cache", "--format", "json", ".")
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)  # nothing but the report on stdout
    assert {f["verdict"] for f in findings} == {"CONFIRMED"}
    lines = [line for line in result.stderr.splitlines() if line.startswith("verify: [")]
    assert len(lines) == 2, result.stderr
    by_module = {line.split("] ", 1)[1].split(":", 1)[0]: line for line in lines}
    assert set(by_module) == {"verify_jax101", "verify_jax103"}
    assert sorted(line.split("] ", 1)[0] for line in lines) == ["verify: [1/2", "verify: [2/2"]
    per_file = {m: sum(1 for f in findings if Path(f["path"]).stem == m) for m in by_module}
    for module, line in by_module.items():
        count = per_file[module]
        assert f"{count} finding{'s' if count != 1 else ''}: {count} confirmed" in line
    assert "\r" not in result.stderr  # no terminal redraws in a log


def test_quiet_verify_prints_no_progress(tmp_path):
    shutil.copy(FIXTURES / "verify_jax103.py", tmp_path / "verify_jax103.py")
    result = _jaxlint(tmp_path, "--verify", "--no-cache", "-q", ".")
    assert result.returncode == 1, result.stderr
    assert "verify: [" not in result.stderr and "CONFIRMED" in result.stdout


SCRIPT = """\
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    return x * 2


def hostile(x):
    return x + 1


hostile.__name__ = hostile.__qualname__ = "<script>alert(1)</script>"
hostile_jit = jax.jit(hostile)

for n in (3, 4, 5):
    step(jnp.ones(n))
    hostile_jit(jnp.ones(n))

for i in range(3):
    jax.jit(lambda x: x * 3)(jnp.ones(2))
"""


class _Page(HTMLParser):
    """What a browser would build from the page: its tags, the functions table's cells, the timeline's bars."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.rows: list[dict[str, str]] = []
        self.bars: list[str] = []  # the <title> of each compile bar
        self._cell: str | None = None
        self._in_bar_title = False
        self._in_bar = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs
        classes = (dict(attrs).get("class") or "").split()
        if tag == "tr":
            self.rows.append({})
        elif tag == "td" and classes:
            self._cell = classes[-1]
            self.rows[-1][self._cell] = ""
        elif tag == "rect" and "compile" in classes:
            self._in_bar = True
        elif tag == "title" and self._in_bar:
            self._in_bar_title = True
            self.bars.append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None
        elif tag == "rect":
            self._in_bar = False
        elif tag == "title":
            self._in_bar_title = False

    def handle_data(self, data):
        if self._cell is not None and self.rows:
            self.rows[-1][self._cell] += data
        if self._in_bar_title:
            self.bars[-1] += data


def test_run_writes_a_self_contained_html_report_with_escaped_names(tmp_path):
    from tests.conftest import exact_recompiles

    (tmp_path / "script.py").write_text(SCRIPT)
    result = _jaxlint(
        tmp_path, "--verify", "--run", f"{sys.executable} script.py", "--html", "out/report.html"
    )
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    page.close()
    # Self-contained: no script, no external file, nothing fetched.
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert not any(name in ("src", "href") for name, _ in page.attrs)
    # The name holding `<script>` is text on the page, never markup.
    assert "<script>alert(1)</script>" not in text
    functions = {row["function"].strip(): row for row in page.rows if "function" in row}
    assert set(functions) == {"__main__:step", "__main__:<script>alert(1)</script>", "__main__:<lambda>"}
    for row in functions.values():
        assert (row["compiles"], row["traces"]) == ("3", "3")
    # The timeline: a bar per compile, in the lane of its function.
    assert "svg" in page.tags
    assert sorted(bar.split(":")[0] for bar in page.bars) == sorted(
        ["<script>alert(1)</script>", "<lambda>", "step"] * 3
    )
    # The static finding the run proved: the lambda jitted in the loop (JAX401) recompiled.
    (verdict,) = [row for row in page.rows if "rule" in row]
    assert (verdict["rule"], verdict["at"], verdict["verdict"]) == ("JAX401", "script.py:22:5", "CONFIRMED")
    assert "compiled 3 times" in verdict["seen"]
    if exact_recompiles():  # before JAX 0.9 `--run` keeps no retrace reasons (README: Supported JAX)
        assert "retrace 2: arg 'x': f32[3] → f32[4]" in functions["__main__:step"]["reasons"]


def test_html_needs_run(tmp_path):
    result = _jaxlint(tmp_path, "--verify", "--html", "out.html", ".")
    assert result.returncode == 2 and "--html needs --verify --run" in result.stderr
    assert not (tmp_path / "out.html").exists()
