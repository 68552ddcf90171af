"""What the browser tests share (tests/browser/): Debian's chromium, its flags, the dashboard's
test token, the marks of a browser test, the ``browser`` fixture (one headless chromium per
test, driven by Playwright) and the dashboard's sign-in (``sign_in``, ``signed_in``)."""

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


def sign_in(page: Any, url: str, token: str) -> Any:
    """Sign ``page`` in to the dashboard at ``url`` as a person does: the sign-in form at
    /dashboard/, the token typed into it (sent in the form's body), back on /dashboard/ with
    the session cookie. Returns ``page``."""
    page.goto(f"{url}/dashboard/")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/dashboard/")
    return page


def signed_in(browser: Any, url: str, token: str, *, height: int = 1000) -> Any:
    """A new page of ``browser``, in a context of its own (its own cookies: one principal per
    page), 1280 wide, signed in to the dashboard with ``token``."""
    return sign_in(browser.new_page(viewport={"width": 1280, "height": height}), url, token)
