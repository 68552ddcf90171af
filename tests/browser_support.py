"""What the browser tests share (tests/test_*_browser.py): Debian's chromium, its flags, the
dashboard's test token, the marks of a browser test and the ``browser`` fixture (one headless
chromium per test, driven by Playwright)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# headless, and none of chromium's own traffic (this machine's network refuses it)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
TOKEN = "dashboard-test-token"
# a browser test: slow; skipped only where chromium is not installed
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="chromium is not installed (make browser)"),
]


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
