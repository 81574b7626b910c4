"""`jaxlint --verify --run CMD --html FILE`: the run as one self-contained HTML page.

Per jitted function its traces, compiles, compile seconds, signatures and retrace reasons; a timeline of the
compiles during the run (inline SVG); the static findings the run confirmed or did not observe. No server, no
network, no script, no external file: the styles are inline. Every string that comes from the run or the
code (the command, function names, paths, reasons, signatures) goes through `html.escape`.
"""

from __future__ import annotations

import html
import os
from typing import Any

from .aggregate import RunTotals
from .crossref import Verdict
from .function_record import FunctionRecord
from .render import display_callsite, display_path, group_reasons, is_library, seen_text

_LANES = 20  # functions given a lane of their own on the timeline; the others share the last one
_WIDTH, _LABEL, _LANE, _AXIS = 960, 250, 22, 30  # SVG geometry, in pixels
_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7")
_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
code, .mono { font-family: ui-monospace, monospace; font-size: 13px; }
table { border-collapse: collapse; margin-top: .5em; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.over td { background: #fde8e8; }
.tag { font-size: 11px; padding: 1px 5px; border-radius: 3px; background: #eee; color: #555; }
.over-tag { background: #e15759; color: white; }
.confirmed { color: #1a7f37; font-weight: 600; } .unobserved { color: #777; }
details summary { cursor: pointer; color: #555; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; }
dt { color: #666; } dd { margin: 0; }
"""


def write_html(path: str, **parts: Any) -> None:
    """`render_html(**parts)` into `path`, its folder made. OSError when it cannot be written."""
    text = render_html(**parts)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def render_html(
    *,
    command: str,
    exit_code: int,
    run: RunTotals,
    verdicts: list[Verdict],
    default_budget: int,
    started: float,
    ended: float,
) -> str:
    """The page. `started` and `ended` (time.time()) bound the command: the timeline's origin and end."""
    e = html.escape
    jax_version = next((p["jax_version"] for p in run.processes if p.get("jax_version")), None)
    compiles = sum(f.compiles for f in run.functions)
    seconds = sum(f.compile_seconds for f in run.functions)
    facts = [
        ("command", f"<code>{e(command)}</code>"),
        ("exit code", str(exit_code)),
        ("duration", f"{max(ended - started, 0.0):.1f} s"),
        (
            "backend",
            e(run.backend or "none (nothing compiled)")
            + e(f" ({', '.join(run.devices)})" if run.devices else ""),
        ),
        ("jax", e(jax_version or "not imported")),
        ("Python processes with jax", str(len(run.processes))),
        ("budget", f"{default_budget} compiles per function and process"),
        ("jitted functions", f"{len(run.functions)}: {compiles} compiles, {seconds:.2f} s compiling"),
    ]
    over = run.over_budget
    body = [
        "<h1>jaxlint --run report</h1>",
        "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>",
    ]
    if over:
        names = ", ".join(
            f"<code>{e(f.qualname)}</code> ({f.max_compiles_in_process} &gt; {f.budget})" for f in over
        )
        body.append(f"<p><span class='tag over-tag'>FAILED</span> over the compile budget: {names}</p>")
    body += ["<h2>Compiles during the run</h2>", timeline_svg(run.functions, started, ended)]
    body += ["<h2>Jitted functions</h2>", _functions_table(run.functions)]
    body += ["<h2>Static findings the run can prove</h2>", _verdicts_table(verdicts)]
    others = _others(run)
    if others:
        body += ["<h2>Not attributed to a function</h2>", "<ul>" + others + "</ul>"]
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>jaxlint --run: {e(command)}</title><style>{_STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def timeline_svg(functions: list[FunctionRecord], started: float, ended: float) -> str:
    """One lane per function (the most compiled first), a bar per compile from its start to its end."""
    e = html.escape
    timed = sorted((f for f in functions if f.compile_times), key=lambda f: (-f.compiles, f.path, f.line))
    if not timed:
        return "<p>No compile of a traced function was recorded.</p>"
    lanes: list[tuple[str, list[tuple[FunctionRecord, list[float]]]]] = [
        (f.qualname, [(f, t) for t in f.compile_times]) for f in timed[:_LANES]
    ]
    rest = timed[_LANES:]
    if rest:
        lanes.append((f"{len(rest)} other functions", [(f, t) for f in rest for t in f.compile_times]))
    last = max(end for f in timed for end, _ in f.compile_times)
    span = max(ended, last) - started
    span = span if span > 0 else 1.0
    plot = _WIDTH - _LABEL - 10
    height = len(lanes) * _LANE + _AXIS

    def x(at: float) -> float:
        return _LABEL + min(max(at - started, 0.0), span) / span * plot

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='timeline' width='{_WIDTH}' height='{height}'"
        f" viewBox='0 0 {_WIDTH} {height}' role='img' aria-label='compiles over the run'>"
    ]
    for row, (label, compiles) in enumerate(lanes):
        y = row * _LANE
        shown = label if len(label) <= 34 else label[:33] + "…"
        parts.append(
            f"<text x='{_LABEL - 8}' y='{y + 15}' text-anchor='end' font-size='12'>{e(shown)}</text>"
            f"<line x1='{_LABEL}' x2='{_WIDTH - 10}' y1='{y + _LANE}' y2='{y + _LANE}' stroke='#eee'/>"
        )
        colour = _COLOURS[row % len(_COLOURS)]
        numbered: dict[int, int] = {}
        for f, (end, took) in sorted(compiles, key=lambda c: c[1][0]):
            numbered[id(f)] = numbered.get(id(f), 0) + 1
            left = x(end - took)
            width = max(x(end) - left, 2.0)
            tip = f"{f.qualname}: compile {numbered[id(f)]} ended at {end - started:.2f} s, took {took:.3f} s"
            parts.append(
                f"<rect class='compile' x='{left:.1f}' y='{y + 4}' width='{width:.1f}' height='{_LANE - 8}'"
                f" fill='{colour}'><title>{e(tip)}</title></rect>"
            )
    axis = len(lanes) * _LANE
    parts.append(f"<line x1='{_LABEL}' x2='{_WIDTH - 10}' y1='{axis}' y2='{axis}' stroke='#999'/>")
    for i in range(6):
        at = span * i / 5
        tick = _LABEL + plot * i / 5
        parts.append(
            f"<line x1='{tick:.1f}' x2='{tick:.1f}' y1='{axis}' y2='{axis + 4}' stroke='#999'/>"
            f"<text x='{tick:.1f}' y='{axis + 18}' text-anchor='middle' font-size='11'>{at:.1f} s</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _functions_table(functions: list[FunctionRecord]) -> str:
    e = html.escape
    if not functions:
        return "<p>No jitted function was traced.</p>"
    rows = [
        "<table class='functions'><tr><th>function</th><th>defined at</th><th class='n'>compiles</th>"
        "<th class='n'>traces</th><th class='n'>compile s</th><th class='n'>signatures</th>"
        "<th>retrace reasons</th></tr>"
    ]
    for f in functions:
        tags = " <span class='tag'>library</span>" if is_library(f) else ""
        if f.over_budget:
            tags += f" <span class='tag over-tag'>over budget ({f.max_compiles_in_process} &gt; {f.budget})</span>"
        rows.append(
            f"<tr class='{'over' if f.over_budget else ''}'>"
            f"<td class='mono function'>{e(f.module)}:{e(f.qualname)}{tags}</td>"
            f"<td class='mono'>{e(display_path(f.path))}:{f.line}</td>"
            f"<td class='n compiles'>{f.compiles}</td><td class='n traces'>{f.traces}</td>"
            f"<td class='n'>{f.compile_seconds:.3f}</td>"
            f"<td class='n'>{len(f.signatures) + f.signatures_dropped}</td><td class='reasons'>{_reasons(f)}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _reasons(f: FunctionRecord) -> str:
    e = html.escape
    items = []
    for which, reason, callsite in group_reasons(f.reasons):
        at = f" <span class='mono'>[{e(display_callsite(callsite) or '')}]</span>" if callsite else ""
        items.append(f"<li>{e(which)}: {e(reason)}{at}</li>")
    if f.reasons_dropped:
        items.append(f"<li>… {f.reasons_dropped} more not kept</li>")
    signatures = "".join(f"<li class='mono'>{e(s)}</li>" for s in f.signatures)
    if f.signatures_dropped:
        signatures += f"<li>… {f.signatures_dropped} more</li>"
    text = f"<ul>{''.join(items)}</ul>" if items else ""
    if signatures:
        text += f"<details><summary>signatures seen</summary><ul>{signatures}</ul></details>"
    return text


def _verdicts_table(verdicts: list[Verdict]) -> str:
    e = html.escape
    if not verdicts:
        return "<p>No static finding of a kind a run can prove (recompiles, errors, printed tracers).</p>"
    rows = [
        "<table class='verdicts'><tr><th>rule</th><th>at</th><th>verdict</th><th>what the run did</th></tr>"
    ]
    for v in sorted(verdicts, key=lambda v: (not v.confirmed, v.finding.path, v.finding.line)):
        f = v.finding
        status = (
            f"<span class='confirmed'>{e(v.status)}</span>"
            if v.confirmed
            else "<span class='unobserved'>not observed</span>"
        )
        seen = e(seen_text(v)) if v.confirmed else ""
        rows.append(
            f"<tr><td class='mono rule'>{e(f.code)}</td>"
            f"<td class='mono at'>{e(display_path(f.path))}:{f.line}:{f.column}</td>"
            f"<td class='verdict'>{status}</td><td class='seen'>{seen}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _others(run: RunTotals) -> str:
    e = html.escape
    items = []
    if run.internal_compiles or run.internal_traces:
        items.append(
            f"<li>JAX's own functions (eager op-by-op dispatch, jnp helpers): {run.internal_traces} traces,"
            f" {run.internal_compiles} compiles</li>"
        )
    for name, count in sorted(run.unattributed_compiles.items()):
        items.append(f"<li><code>{e(name)}</code>: {count} compiles</li>")
    items += [f"<li>instrumentation error: {e(error)}</li>" for error in run.errors]
    return "".join(items)
