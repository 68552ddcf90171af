"""Reports of a Mobile-Eval run: Markdown, a self-contained HTML page, JSON, comparisons.

The layout is the paper's Table 2 — an app per row, per level Su, PS, RE (agent / human
steps), CR — with the Avg. row, the paper's published Avg. row beside the run's, GPT4Tools'
step rates, links to each task's replay (``report.html`` in its trajectory folder), and
two plots drawn as inline SVG (success by level; agent steps against human steps).

May import: mobile_eval.metrics, mobile_eval.records.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.mobile_eval.metrics import LEVELS, LevelSummary, ResultTable, round_half_up, summarize
from eval.mobile_eval.records import TaskResult

__all__ = [
    "compare_markdown",
    "render_html",
    "render_markdown",
    "summary_json",
    "write_reports",
]

CHECK, CROSS = "✓", "×"


# --- cells ------------------------------------------------------------------------------


def _num(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{round_half_up(value, digits):.{digits}f}"


def _cell(record: TaskResult | None) -> list[str]:
    if record is None:
        return ["", "", "", ""]
    return [
        CHECK if record.success else CROSS,
        _num(record.ps, 2),
        f"{record.agent_steps}/{record.human_steps}",
        f"{_num(record.cr * 100, 1)}%",
    ]


def _avg(summary: LevelSummary | None) -> list[str]:
    if summary is None or summary.n == 0:
        return ["", "", "", ""]
    r = summary.rounded()
    return [
        f"{r['su']:.2f}",
        "–" if r["ps"] is None else f"{r['ps']:.2f}",
        f"{r['agent_steps']:.1f} / {r['human_steps']:.1f}",
        f"{r['cr_percent']:.1f}%",
    ]


def _step_rates(summary: LevelSummary | None) -> list[str]:
    if summary is None:
        return ["–", "–", "–"]
    r = summary.rounded()
    return ["–" if r[k] is None else f"{r[k]:.2f}" for k in ("sr_act", "sr_args", "sr")]


def _judges(table: ResultTable) -> str:
    counts: dict[str, int] = {}
    for record in table.cells.values():
        counts[record.judged_by] = counts.get(record.judged_by, 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"


# --- Markdown ---------------------------------------------------------------------------


def render_markdown(
    table: ResultTable, paper: ResultTable | None = None, *, base: Path | None = None, plots: Sequence[str] = ()
) -> str:
    """Table 2 in Markdown; task ids link to their replays (relative to ``base``, the
    report's folder); ``plots``: image files beside the report to show under the tables."""
    header = "| App | " + " | ".join(f"Su{n} | PS{n} | RE{n} | CR{n}" for n in LEVELS) + " |"
    rule = "|---|" + "---|" * (4 * len(LEVELS))
    lines = [f"# Mobile-Eval: {table.label or 'results'}", "", f"Judged by: {_judges(table)}.", "", header, rule]
    for app in table.apps:
        cells = [c for level in LEVELS for c in _cell(table.cells.get((app, level)))]
        lines.append(f"| {app} | " + " | ".join(cells) + " |")
    lines.append("| **Avg.** | " + " | ".join(c for n in LEVELS for c in _avg(table.averages.get(n))) + " |")
    if paper is not None:
        lines.append(
            "| Avg. (paper) | " + " | ".join(c for n in LEVELS for c in _avg(paper.averages.get(n))) + " |"
        )
    lines += ["", "RE is agent steps / human steps; CR is 100% when the task succeeded.", ""]
    lines += ["## Step metrics (GPT4Tools, against the reference actions)", ""]
    lines += ["| Level | n | SR_act | SR_args | SR |", "|---|---|---|---|---|"]
    for n in LEVELS:
        summary = table.averages.get(n)
        lines.append(f"| {n} | {summary.n if summary else 0} | " + " | ".join(_step_rates(summary)) + " |")
    if table.overall is not None:
        lines.append(f"| all | {table.overall.n} | " + " | ".join(_step_rates(table.overall)) + " |")
    if table.pending:
        lines += ["", f"Waiting for a judge (`mobile-agent eval annotate`): {', '.join(table.pending)}."]
    lines += ["", "## Tasks", "", "| Task | Judged by | Status | Steps | Why |", "|---|---|---|---|---|"]
    for r in sorted(table.cells.values(), key=lambda r: (table.apps.index(r.app), r.level)):
        why = "; ".join(r.reasons).replace("|", "/")[:200]
        href = _link(r, base)
        name = f"[{r.task_id}](<{href}>)" if href else r.task_id
        lines.append(f"| {name} | {r.judged_by} | {r.status or ''} | {r.agent_steps}/{r.human_steps} | {why} |")
    if plots:
        lines += ["", "## Plots", ""] + [f"![{Path(p).stem.replace('-', ' ')}](<{p}>)" for p in plots]
    failures = [r for r in table.cells.values() if r.error or r.status == "crashed"]
    if failures:
        lines += ["", "## Tasks that crashed", ""]
        lines += [f"- `{r.task_id}`: {(r.error or {}).get('message', r.status)}" for r in failures]
    return "\n".join(lines) + "\n"


def _compare_rows(before: ResultTable, after: ResultTable) -> list[tuple[int, str, str, str, str]]:
    """(level, metric, before, after, delta) for each level and metric."""
    rows = []
    for n in LEVELS:
        b = before.averages.get(n)
        a = after.averages.get(n)
        for key, digits in (("su", 2), ("ps", 2), ("agent_steps", 1), ("cr", 3), ("sr", 2)):
            bv = getattr(b, key) if b else None
            av = getattr(a, key) if a else None
            delta = _num(av - bv, digits) if av is not None and bv is not None else "–"
            if delta != "–" and not delta.startswith("-"):
                delta = "+" + delta
            rows.append((n, key, _num(bv, digits), _num(av, digits), delta))
    return rows


def compare_markdown(before: ResultTable, after: ResultTable) -> str:
    """Per-level averages of two result sets side by side, and the tasks that changed."""
    lines = [f"# Mobile-Eval: {before.label or 'before'} → {after.label or 'after'}", ""]
    lines += ["| Level | Metric | Before | After | Δ |", "|---|---|---|---|---|"]
    lines += [f"| {n} | {key} | {b} | {a} | {d} |" for n, key, b, a, d in _compare_rows(before, after)]
    fixed, broken = _changes(before, after)
    lines += ["", f"Fixed ({len(fixed)}): " + (", ".join(f"`{t}`" for t in fixed) or "none")]
    lines += [f"Regressed ({len(broken)}): " + (", ".join(f"`{t}`" for t in broken) or "none"), ""]
    return "\n".join(lines)


def _compare_html(before: ResultTable, after: ResultTable) -> str:
    e = html.escape
    rows = "".join(f"<tr><td>{n}</td><td>{key}</td><td>{b}</td><td>{a}</td><td>{d}</td></tr>"
                   for n, key, b, a, d in _compare_rows(before, after))
    fixed, broken = _changes(before, after)
    return (f"<h2>Compared with {e(before.label or 'before')}</h2>"
            "<table><tr><th>Level</th><th>Metric</th><th>Before</th><th>After</th><th>Δ</th></tr>"
            f"{rows}</table><p>Fixed: {e(', '.join(fixed) or 'none')}. Regressed: {e(', '.join(broken) or 'none')}.</p>")


def _changes(before: ResultTable, after: ResultTable) -> tuple[list[str], list[str]]:
    b = {r.task_id: r.success for r in before.cells.values()}
    a = {r.task_id: r.success for r in after.cells.values()}
    fixed = sorted(t for t in a if a[t] and b.get(t) is False)
    broken = sorted(t for t in a if not a[t] and b.get(t) is True)
    return fixed, broken


# --- JSON ---------------------------------------------------------------------------------


def summary_json(table: ResultTable, paper: ResultTable | None = None) -> dict[str, Any]:
    def block(t: ResultTable) -> dict[str, Any]:
        return {
            "label": t.label,
            "levels": {str(n): s.rounded() for n, s in t.averages.items()},
            "overall": t.overall.rounded() if t.overall else None,
            "tasks": [r.model_dump(mode="json", exclude={"steps"}) for r in t.cells.values()],
        }

    data = {"run": block(table)}
    if paper is not None:
        data["paper"] = {"label": paper.label, "levels": {str(n): s.rounded() for n, s in paper.averages.items()}}
    return data


# --- SVG plots ------------------------------------------------------------------------------


_LEGEND_CHAR_PX = 6.5  # a generous width of an 11 px sans-serif character


def _svg_success_by_level(series: Sequence[tuple[str, ResultTable, str]]) -> str:
    width, height, pad = 420, 220, 36
    group = (width - 2 * pad) / len(LEVELS)
    bar = group / (len(series) + 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             'aria-label="success by level">']
    base = height - pad
    parts.append(f'<line x1="{pad}" y1="{base}" x2="{width - pad}" y2="{base}" stroke="#333"/>')
    for tick in (0, 0.5, 1.0):
        y = base - tick * (height - 2 * pad)
        parts.append(f'<text x="{pad - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{tick:.1f}</text>')
    for li, level in enumerate(LEVELS):
        x0 = pad + li * group + bar / 2
        parts.append(f'<text x="{x0 + bar * len(series) / 2:.1f}" y="{base + 14}" font-size="11" '
                     f'text-anchor="middle">Instruction {level}</text>')
        for si, (name, table, color) in enumerate(series):
            summary = table.averages.get(level)
            value = float(summary.su) if summary and summary.su is not None else 0.0
            h = value * (height - 2 * pad)
            x = x0 + si * bar
            parts.append(f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{bar * 0.9:.1f}" height="{h:.1f}" '
                         f'fill="{color}"><title>{html.escape(name)}: {value:.2f}</title></rect>')
    # legend: one row, each entry as wide as its name (three long names used to run off the right edge)
    x = pad
    for name, _, color in series:
        name = name[:48]  # long enough to tell "model, reflection on" from "... off"
        parts.append(f'<rect x="{x:.0f}" y="6" width="10" height="10" fill="{color}"/>'
                     f'<text x="{x + 14:.0f}" y="15" font-size="11">{html.escape(name)}</text>')
        x += 14 + _LEGEND_CHAR_PX * len(name) + 16
    if x > width:
        parts[0] = parts[0].replace(f'width="{width}"', f'width="{x:.0f}"', 1)
    parts.append("</svg>")
    return "".join(parts)


def _svg_steps(table: ResultTable) -> str:
    records = list(table.cells.values())
    size, pad = 260, 34
    top = max([r.agent_steps for r in records] + [r.human_steps for r in records] + [1])
    scale = (size - 2 * pad) / top

    def xy(human: float, agent: float) -> tuple[float, float]:
        return pad + human * scale, size - pad - agent * scale

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" role="img" '
             'aria-label="agent steps against human steps">']
    x1, y1 = xy(0, 0)
    x2, y2 = xy(top, top)
    parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#999" stroke-dasharray="4"/>')
    for tick in sorted({0, top // 2, top}):
        tx, ty = xy(tick, 0)
        parts.append(f'<text x="{tx:.1f}" y="{ty + 13:.1f}" font-size="10" text-anchor="middle">{tick}</text>')
        tx, ty = xy(0, tick)
        parts.append(f'<text x="{tx - 5:.1f}" y="{ty + 4:.1f}" font-size="10" text-anchor="end">{tick}</text>')
    parts.append(f'<text x="{size / 2}" y="{size - 6}" font-size="11" text-anchor="middle">human steps</text>')
    parts.append(f'<text x="10" y="{size / 2}" font-size="11" transform="rotate(-90 10 {size / 2})" '
                 'text-anchor="middle">agent steps</text>')
    for r in records:
        x, y = xy(r.human_steps, r.agent_steps)
        color = "#109618" if r.success else "#dc3912"
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}" fill-opacity="0.7">'
                     f'<title>{html.escape(r.task_id)}: {r.agent_steps}/{r.human_steps}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


# --- HTML -------------------------------------------------------------------------------------


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:3px 7px;text-align:center}
th{background:#f3f3f3}td.app{text-align:left}.ok{color:#109618}.ko{color:#dc3912}
.paper{color:#888;font-size:85%}tr.avg td{font-weight:bold}.plots{display:flex;gap:2em;flex-wrap:wrap}"""


# the run in blue, an earlier run in orange, the paper in grey, whichever are drawn
RUN_COLOR, BEFORE_COLOR, PAPER_COLOR = "#3366cc", "#ff9900", "#aaaaaa"


def _series(
    table: ResultTable, paper: ResultTable | None, before: ResultTable | None
) -> list[tuple[str, ResultTable, str]]:
    """The runs drawn side by side, each with its colour: the earlier one, this one, the paper's."""
    series = [(table.label or "run", table, RUN_COLOR)] + ([(paper.label, paper, PAPER_COLOR)] if paper else [])
    if before is not None:
        series.insert(0, (before.label or "before", before, BEFORE_COLOR))
    return series


def _link(record: TaskResult, base: Path | None) -> str | None:
    if not record.replay:
        return None
    target = Path(record.replay)
    if base is not None and target.is_absolute():
        try:
            return Path(os.path.relpath(target, base)).as_posix()
        except ValueError:  # another drive
            return target.as_uri()
    return target.as_posix()


def render_html(
    table: ResultTable, paper: ResultTable | None = None, *, base: Path | None = None, before: ResultTable | None = None
) -> str:
    """One page, no external assets; replay links relative to ``base`` (the report's folder);
    ``before``: an earlier run, compared level by level and drawn beside this one."""
    e = html.escape
    head = "".join(f'<th colspan="4">Instruction {n}</th>' for n in LEVELS)
    sub = "".join("<th>Su</th><th>PS</th><th>RE</th><th>CR</th>" for _ in LEVELS)
    rows = []
    for app in table.apps:
        tds = [f'<td class="app">{e(app)}</td>']
        for level in LEVELS:
            record = table.cells.get((app, level))
            published = paper.cells.get((app, level)) if paper else None
            values = _cell(record)
            old = _cell(published) if published else None
            for i, value in enumerate(values):
                css = ""
                if i == 0 and record is not None:
                    css = ' class="ok"' if record.success else ' class="ko"'
                content = e(value)
                if i == 0 and record is not None:
                    href = _link(record, base)
                    title = e("; ".join(record.reasons)[:300])
                    content = f'<a href="{e(href)}" title="{title}">{content}</a>' if href else content
                if old is not None:
                    content += f'<br><span class="paper">{e(old[i])}</span>'
                tds.append(f"<td{css}>{content}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    rows.append('<tr class="avg"><td class="app">Avg.</td>'
                + "".join(f"<td>{e(c)}</td>" for n in LEVELS for c in _avg(table.averages.get(n))) + "</tr>")
    if paper is not None:
        rows.append('<tr class="paper"><td class="app">Avg. (paper)</td>'
                    + "".join(f"<td>{e(c)}</td>" for n in LEVELS for c in _avg(paper.averages.get(n))) + "</tr>")
    step_rows = "".join(
        f"<tr><td>{n}</td>" + "".join(f"<td>{v}</td>" for v in _step_rates(table.averages.get(n))) + "</tr>"
        for n in LEVELS
    )
    task_rows = []
    for r in sorted(table.cells.values(), key=lambda r: (table.apps.index(r.app), r.level)):
        href = _link(r, base)
        name = f'<a href="{e(href)}">{e(r.task_id)}</a>' if href else e(r.task_id)
        task_rows.append(
            f'<tr><td class="app">{name}</td><td>{e(r.judged_by)}</td><td>{e(r.status or "")}</td>'
            f"<td>{r.agent_steps}/{r.human_steps}</td><td>{_num(r.ps, 2)}</td><td>{_num(r.sr, 2)}</td>"
            f'<td class="app">{e("; ".join(r.reasons)[:400])}</td></tr>'
        )
    pending = f"<p>Waiting for a judge: {e(', '.join(table.pending))}.</p>" if table.pending else ""
    series = _series(table, paper, before)
    comparison = _compare_html(before, table) if before is not None else ""
    note = " Grey figures under a cell are the paper's." if paper else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Mobile-Eval: {e(table.label)}</title>
<style>{_CSS}</style></head><body>
<h1>Mobile-Eval: {e(table.label)}</h1>
<p>Judged by: {e(_judges(table))}. RE is agent steps / human steps; CR is 100% when the task
succeeded. A ✓ / × links to the task's replay.{note}</p>
<table><tr><th rowspan="2">App</th>{head}</tr><tr>{sub}</tr>{"".join(rows)}</table>
{comparison}
<h2>Step metrics (GPT4Tools, against the reference actions)</h2>
<table><tr><th>Level</th><th>SR_act</th><th>SR_args</th><th>SR</th></tr>{step_rows}</table>
<h2>Tasks</h2>{pending}
<table><tr><th>Task</th><th>Judged by</th><th>Status</th><th>Steps</th><th>PS</th><th>SR</th><th>Why</th></tr>
{"".join(task_rows)}</table>
<h2>Plots</h2>
<div class="plots"><figure>{_svg_success_by_level(series)}<figcaption>Success by level</figcaption></figure>
<figure>{_svg_steps(table)}<figcaption>Agent steps against human steps (dashed: equal)</figcaption></figure></div>
<script type="application/json" id="results">{_script_json(summary_json(table, paper))}</script>
</body></html>
"""


def _script_json(data: Any) -> str:
    # Script content is raw text: entities are not decoded there, only "</" must not appear.
    return json.dumps(data).replace("</", "<\\/")


def write_reports(
    records: Sequence[TaskResult],
    folder: Path,
    *,
    paper: Sequence[TaskResult] | None = None,
    label: str | None = None,
    before: Sequence[TaskResult] | None = None,
) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``summary.json``, the two plots as SVG files
    (shown by the Markdown; the HTML has them inline) and ``compare.md`` when ``before``
    is given, into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table = summarize(records, label)
    published = summarize(paper) if paper else None
    earlier = summarize(before) if before is not None else None
    paths = {"markdown": folder / "report.md", "html": folder / "report.html", "json": folder / "summary.json",
             "plot_success": folder / "success-by-level.svg", "plot_steps": folder / "agent-vs-human-steps.svg"}
    paths["plot_success"].write_text(_svg_success_by_level(_series(table, published, earlier)), encoding="utf-8")
    paths["plot_steps"].write_text(_svg_steps(table), encoding="utf-8")
    plots = [paths["plot_success"].name, paths["plot_steps"].name]
    paths["markdown"].write_text(render_markdown(table, published, base=folder, plots=plots), encoding="utf-8")
    paths["html"].write_text(render_html(table, published, base=folder, before=earlier), encoding="utf-8")
    if earlier is not None:
        paths["compare"] = folder / "compare.md"
        paths["compare"].write_text(compare_markdown(earlier, table), encoding="utf-8")
    paths["json"].write_text(json.dumps(summary_json(table, published), indent=2), encoding="utf-8")
    return paths
