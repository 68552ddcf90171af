"""Mobile-Eval reports: Table 2 layout in Markdown and HTML, SVG plots, comparisons."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from eval.mobile_eval.metrics import summarize
from eval.mobile_eval.records import load_paper_results
from eval.mobile_eval.report import compare_markdown, render_markdown, write_reports


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs)["href"])
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def test_markdown_lays_out_table_2_with_the_avg_row():
    table = summarize(load_paper_results())
    text = render_markdown(table, table)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    gmail = next(r for r in rows if r.startswith("| Gmail "))
    assert [c.strip() for c in gmail.split("|")[1:-1]] == [
        "Gmail", "✓", "1.00", "4/4", "100.0%", "×", "0.56", "9/8", "37.5%", "×", "0.56", "9/8", "37.5%"]
    avg = next(r for r in rows if r.startswith("| **Avg.**"))
    assert "0.91 | 0.89 | 4.9 / 4.2 | 98.2%" in avg
    assert "Avg. (paper)" in text
    assert "published: 33" in text


def test_html_report_is_self_contained_with_links_plots_and_json(tmp_path):
    paper = load_paper_results()
    run_dir = tmp_path / "runs" / "notes-1"
    run_dir.mkdir(parents=True)
    (run_dir / "report.html").write_text("<html></html>")
    ours = [r.model_copy(update={"judged_by": "state", "label": "run A", "replay": str(run_dir / "report.html")})
            if r.task_id == "notes-1" else r.model_copy(update={"label": "run A"}) for r in paper]
    paths = write_reports(ours, tmp_path / "report", paper=paper)
    page = paths["html"].read_text()
    assert "<link" not in page and "src=" not in page  # nothing fetched from elsewhere
    collector = _Collector()
    collector.feed(page)
    assert set(collector.links) == {"../runs/notes-1/report.html"}  # its ✓ and its row in the task list
    assert (paths["html"].parent / collector.links[0]).resolve() == (run_dir / "report.html").resolve()
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    assert len(svgs) == 2
    for svg in svgs:
        ET.fromstring(svg)  # well-formed
    circles = ET.fromstring(svgs[1]).findall("{http://www.w3.org/2000/svg}circle")
    assert len(circles) == 33
    embedded = json.loads(collector.scripts[0])
    assert embedded["run"]["levels"]["1"]["su"] == 0.91
    assert json.loads(paths["json"].read_text())["paper"]["levels"]["3"]["cr_percent"] == 91.3
    markdown = paths["markdown"].read_text()
    assert "| Notes |" in markdown
    assert "| [notes-1](<../runs/notes-1/report.html>) | state |" in markdown  # a link to its replay
    for name in ("success-by-level.svg", "agent-vs-human-steps.svg"):  # plots the Markdown shows
        assert f"(<{name}>)" in markdown
        ET.fromstring((paths["html"].parent / name).read_text())


def test_compare_lists_fixed_and_regressed_tasks():
    before = load_paper_results()
    after = [r.model_copy(update={"success": True, "cr": 1.0}) if r.task_id == "gmail-2"
             else r.model_copy(update={"success": False, "cr": 0.5}) if r.task_id == "notes-1" else r
             for r in before]
    text = compare_markdown(summarize(before, "before"), summarize(after, "after"))
    assert "Fixed (1): `gmail-2`" in text
    assert "Regressed (1): `notes-1`" in text
    su_row = next(line for line in text.splitlines() if line.startswith("| 2 | su |"))
    assert su_row == "| 2 | su | 0.82 | 0.91 | +0.09 |"


def test_html_compares_with_an_earlier_run(tmp_path):
    before = load_paper_results()
    after = [r.model_copy(update={"success": True, "cr": 1.0, "label": "after"}) if r.task_id == "gmail-2"
             else r.model_copy(update={"label": "after"}) for r in before]
    paths = write_reports(after, tmp_path, before=before)
    page = paths["html"].read_text()
    assert "Compared with Mobile-Agent (GPT-4V), paper Table 2" in page
    assert "<tr><td>2</td><td>su</td><td>0.82</td><td>0.91</td><td>+0.09</td></tr>" in page
    assert "Fixed: gmail-2. Regressed: none." in page
    assert "Fixed (1): `gmail-2`" in paths["compare"].read_text()
    svg = re.findall(r"<svg.*?</svg>", page, flags=re.S)[0]
    assert len(ET.fromstring(svg).findall("{http://www.w3.org/2000/svg}rect")) == 3 * 2 + 2  # bars + legend


def test_a_legend_of_three_long_names_stays_inside_the_plot(tmp_path):
    paper = load_paper_results()
    after = [r.model_copy(update={"label": "gpt-4o-2024-08-06, reflection on"}) for r in paper]
    before = [r.model_copy(update={"label": "gpt-4o-2024-08-06, reflection off"}) for r in paper]
    paths = write_reports(after, tmp_path, paper=paper, before=before)
    svg = ET.fromstring(paths["plot_success"].read_text())
    ns = "{http://www.w3.org/2000/svg}"
    legend = [t for t in svg.findall(f"{ns}text") if t.get("y") == "15"]
    assert len(legend) == 3
    last = legend[-1]
    assert float(last.get("x")) + 6.5 * len(last.text) <= float(svg.get("width"))
    # each run keeps its colour whatever else is drawn: this run blue, the earlier orange, the paper grey
    swatches = [r.get("fill") for r in svg.findall(f"{ns}rect") if r.get("y") == "6"]
    assert [t.text for t in legend] == ["gpt-4o-2024-08-06, reflection off", "gpt-4o-2024-08-06, reflection on",
                                        "Mobile-Agent (GPT-4V), paper Table 2"]
    assert swatches == ["#ff9900", "#3366cc", "#aaaaaa"]
