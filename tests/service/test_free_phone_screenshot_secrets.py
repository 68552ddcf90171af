"""A free phone's screen shows what the last run left there; a secret that run typed is hidden
from a non-admin's ``GET /v1/devices/{serial}/screenshot`` (review8 #2, its second line of
defence): every OCR line of the capture that shows the value, or four characters of it in a row,
is filled black (``hide_secrets_shown``, the masking step's rule). An admin sees the screen as it
is (that is how the test knows the value is there). Real uvicorn, the simulated phone over the
real adb server; the captures are read with the agent's own OCR."""

from __future__ import annotations

import functools
import io
from typing import Any

import numpy as np
import pytest
from PIL import Image

from perception.text_match import fold

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

VALUE = "Quokka7731Zz"
ADMIN = {"Authorization": "Bearer free-admin-1"}
BOB = {"Authorization": "Bearer free-bob-1"}
SETTINGS = {"server.api_token": "free-admin-1",
            "server.tokens": {"bob": {"token": "free-bob-1", "role": "user"}},
            "agent.named_secrets": {"pin": VALUE}}


@functools.cache
def _ocr() -> Any:
    from mobile_agent.locate import build_locator
    from mobile_agent.settings import Settings

    return build_locator(Settings())


def _shows_value(png: bytes) -> list[str]:
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    fragments = {fold(VALUE)[i:i + 4] for i in range(len(VALUE) - 3)}
    return [line.text for line in _ocr().ocr(pixels) if any(f in fold(line.text).replace(" ", "") for f in fragments)]


def test_a_free_phones_screenshot_hides_the_secret_the_last_run_typed(service, sim_phone) -> None:
    live = service([sim_phone], **SETTINGS)
    typed = live.client.post("/v1/tasks", headers=ADMIN, json={
        "script": "Open App (Notes)\nClick icon (orange plus, bottom right)\nType ({{secret:pin}})"})
    assert typed.status_code == 202, typed.text
    assert live.wait_task(typed.json()["id"], timeout=120)["status"] == "completed"
    url = f"/v1/devices/{sim_phone.serial}/screenshot"
    as_admin = live.client.get(url, headers=ADMIN)
    assert as_admin.status_code == 200 and _shows_value(as_admin.content), "the value is not on the screen"
    as_bob = live.client.get(url, headers=BOB)
    assert as_bob.status_code == 200
    assert not _shows_value(as_bob.content), "bob reads the admin's secret on the free phone"  # (before: he did)
    assert _ocr().ocr(np.asarray(Image.open(io.BytesIO(as_bob.content)).convert("RGB")))  # the rest still shows
