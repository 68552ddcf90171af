"""report.html opened from disk in a real headless chromium (Debian's, driven by
Playwright): self-contained, replays the run step by step with buttons and arrow keys.
Skipped only where chromium is not installed."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mobile_agent.agent import RunStatus, run_script
from tests.agent_helpers import agent_settings

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="chromium is not installed (make browser)"),
]


def test_report_replays_the_run_from_disk(adb_server, sim_phone, tmp_path):
    from playwright.sync_api import sync_playwright

    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    script = (ROOT / "scripts" / "demo_dark_mode.txt").read_text(encoding="utf-8")
    result = run_script(settings, script, instruction="Turn on the dark mode")
    assert result.status is RunStatus.COMPLETED
    # moved elsewhere: a self-contained page does not depend on the files beside it
    report = tmp_path / "elsewhere" / "report.html"
    report.parent.mkdir()
    shutil.copy(result.report_path, report)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            errors: list[str] = []
            fetched: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda req: fetched.append(req.url))
            page.goto(report.as_uri())
            assert page.text_content("#instruction") == "Turn on the dark mode"
            assert page.text_content("#status") == "completed"
            assert page.text_content("#meta").startswith(f"scripted (no model) · device: {sim_phone.serial} · 4 steps")
            assert page.text_content("#counter") == "step 1 / 4"
            assert "Open App (Settings)" in page.text_content("#details")
            assert page.evaluate("document.getElementById('shot').naturalWidth") > 0

            page.keyboard.press("ArrowRight")
            assert page.text_content("#counter") == "step 2 / 4"
            details = page.text_content("#details")
            assert "Click text (Display & brightness)" in details and "found" in details and "Timings" in details
            page.click("#next")
            page.click("#next")
            assert page.text_content("#counter") == "step 4 / 4"
            page.click("#next")  # past the end stays on the last step
            assert page.text_content("#counter") == "step 4 / 4"
            page.keyboard.press("ArrowLeft")
            page.click("#prev")
            assert page.text_content("#counter") == "step 2 / 4"
            page.click("#strip button:nth-child(3)")
            assert page.text_content("#counter") == "step 3 / 4"
            assert "Result: completed" in page.text_content("#result")

            png = page.screenshot(full_page=True)
            pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float32)
            assert pixels.std() > 10  # something is drawn, not a blank page
            assert not errors, errors
            assert all(url.startswith(("file:", "data:")) for url in fetched), fetched
        finally:
            browser.close()


def test_the_end_screen_is_not_counted_as_a_step(tmp_path):
    from playwright.sync_api import sync_playwright

    from mobile_agent.agent.report import render_report

    for name in ("step-001.png", "final.png"):
        Image.new("RGB", (108, 240), "grey").save(tmp_path / name)
    header = {"instruction": "Go home", "mode": "planned", "model": "gpt-4o", "device": {"serial": "phone-1"}}
    steps = [{"index": 1, "screenshot": "step-001.png", "action_text": "Home", "ok": True}]
    result = {"status": "budget_exhausted", "final_screenshot": "final.png", "duration_s": 1.5}
    report = tmp_path / "report.html"
    report.write_text(render_report(tmp_path, header, steps, result), encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(report.as_uri())
            assert page.text_content("#meta") == "model: gpt-4o · device: phone-1 · 1 step · 1.5 s"
        finally:
            browser.close()


def test_an_mcp_session_report_names_the_client_and_links_the_run_it_started(tmp_path):
    from playwright.sync_api import sync_playwright

    from mobile_agent.agent.report import render_report

    session, run = tmp_path / "20261124-120000-sess1", tmp_path / "20261124-120001-run1"
    for folder in (session, run):
        folder.mkdir()
        Image.new("RGB", (108, 240), "grey").save(folder / "step-001.png")
    (run / "report.html").write_text("<title>the run's own report</title>", encoding="utf-8")
    header = {"instruction": "MCP session of claude-ai 0.1.0", "mode": "mcp", "device": {"serial": "phone-1"}}
    steps = [{"index": 1, "screenshot": "step-001.png", "action_text": "Run instruction (Open Settings)", "ok": True,
              "by": "mcp", "linked_run": {"run_id": "run1", "status": "completed", "reason": "done", "folder": run.name}}]
    report = session / "report.html"
    report.write_text(render_report(session, header, steps, None), encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(report.as_uri())
            assert page.text_content("#meta") == "MCP session (the client's tool calls) · device: phone-1 · 1 step"
            assert page.text_content("#status") == "unfinished"
            details = page.text_content("#details")
            assert "the MCP client (a tool call)" in details and "run1: completed (done)" in details
            page.click("#details a")
            page.wait_for_url(f"**/{run.name}/report.html")
            assert page.title() == "the run's own report"
        finally:
            browser.close()
