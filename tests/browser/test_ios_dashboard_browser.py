"""The dashboard with an iPhone (issue 33), in a real headless chromium: the simulated iPhone
(``simphone.ios.WdaFrontEnd``, configured in ``ios.devices``) beside a simulated Android phone;
its card shows its platform and its live screen, the phone list offers "any free iPhone", and a
script run on it from the form opens Settings on the iPhone. Skipped only where chromium is
not installed."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.browser_support import BROWSER_MARKS, TOKEN, sign_in
from tests.server_fixtures import PhoneSerial

pytestmark = BROWSER_MARKS


def test_the_dashboard_shows_the_iphone_and_runs_a_script_on_it(service, sim_phone, front, browser) -> None:
    live = service([sim_phone, PhoneSerial("ios:sim-1")], **{"ios.devices": {"sim-1": front.url}, "server.api_token": TOKEN})
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, live.url, TOKEN)

    card = page.locator(".device[data-serial='ios:sim-1']")
    card.wait_for()
    assert card.get_attribute("data-platform") == "ios"
    assert card.locator(".model").inner_text().startswith("iOS")
    assert page.locator(f".device[data-serial='{sim_phone.serial}'] .model").inner_text().startswith("Android")
    page.wait_for_function(
        "() => { const i = document.querySelector(\".device[data-serial='ios:sim-1'] img\");"
        " return i && i.complete && i.naturalWidth > 0; }", timeout=30_000)
    size = page.evaluate("() => { const i = document.querySelector(\".device[data-serial='ios:sim-1'] img\");"
                         " return [i.naturalWidth, i.naturalHeight]; }")
    assert abs(size[0] / size[1] - 1080 / 2400) < 0.01  # the iPhone's own screen
    options = page.locator("#device option").evaluate_all("os => os.map(o => [o.value, o.textContent])")
    assert ["any:ios", "any free iPhone"] in options and ["ios:sim-1", "ios:sim-1"] in options

    page.fill("#script", "Open App (Settings)\nStop")
    page.select_option("#device", "any:ios")
    page.click("#submit-button")
    page.wait_for_selector("#run-section:not([hidden])")
    page.wait_for_function("() => document.querySelector('#run-status').textContent === 'completed'", timeout=90_000)
    assert "ios:sim-1" in page.inner_text("#run-device")
    assert front.phone.foreground == "com.android.settings"
    task_id = int(page.inner_text("#run-id").lstrip("#"))
    task = live.client.get(f"/v1/tasks/{task_id}").json()
    assert (task["device"], task["options"]["platform"]) == ("ios:sim-1", "ios")
    page.wait_for_function(
        "() => document.querySelector('#run-screen').complete && document.querySelector('#run-screen').naturalWidth > 0")
    shot = page.screenshot(full_page=True)
    pixels = np.asarray(Image.open(io.BytesIO(shot)).convert("L"), dtype=np.float32)
    assert float(pixels.std()) > 10
    assert errors == []
