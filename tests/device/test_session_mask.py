"""A ``RunSession`` made without a locator (the pytest plugin's failure screenshot,
``mobile_agent.testing.pytest_plugin``) still masks what it keeps: ``SecretMask`` reads the
frames through this process's locator for the settings, so a secret the phone shows is
never saved unread."""

from __future__ import annotations

import numpy as np
from PIL import Image

from mobile_agent.agent import RunSession, RunStatus
from mobile_agent.device import open_device
from mobile_agent.locate import build_locator
from perception.text_match import fold
from tests.agent_helpers import agent_settings

SHOWN = "Settings"  # the home screen's label of the Settings app, taken for a secret the phone shows


def test_a_session_without_a_locator_masks_its_saved_frames(adb_server, sim_phone, tmp_path) -> None:
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path / "runs", secrets=[SHOWN])
    device = open_device(settings.adb, sim_phone.serial)
    seen = build_locator(settings)
    raw = device.screenshot().pixels
    assert any(fold(SHOWN) in fold(line.text) for line in seen.ocr(raw)), "the home screen shows the label"
    session = RunSession(settings, instruction="pytest: a failing test", mode="pytest", device=device,
                         on_event=None, output_dir=None, cancel=None)  # no locator, as the pytest plugin
    draft = session.capture(device, None, session.take_index())
    draft.begun, draft.by, draft.ok = True, "pytest", False
    session.record(draft)
    result = session.finish(RunStatus.NOT_COMPLETED, "the test failed")
    saved = np.asarray(Image.open(result.trajectory_dir / draft.screenshot).convert("RGB"))
    assert not any(fold(SHOWN) in fold(line.text) for line in seen.ocr(saved))
