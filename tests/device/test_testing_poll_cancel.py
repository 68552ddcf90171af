"""A wait of ``mobile_agent.testing.Phone`` (``wait_for_text``, ``Agent.wait_for``: ``Phone.poll``)
whose cancel is set ends with ``RunCancelled``, also when its deadline passes while the screen is
being judged (an OCR pass, a model's judgement, slow on a loaded machine): it ended as a wait that
timed out ("did not appear"), and a cancelled REST flow task said so as its reason. The
simulated phone over the real adb server; the judge sets the cancel itself (no clock involved)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mobile_agent.errors import RunCancelled
from mobile_agent.testing import Phone
from tests.agent_helpers import agent_settings


def test_a_wait_cancelled_while_its_screen_is_judged_past_its_deadline_is_cancelled(
    adb_server: Any, sim_phone: Any, tmp_path: Path
) -> None:
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    cancel = threading.Event()
    phone = Phone.open(settings)
    try:
        phone.cancel = cancel
        judged: list[object] = []

        def judge(frame: Any) -> None:  # the cancel comes while the screen is judged
            judged.append(frame)
            cancel.set()

        # timeout 0: the deadline has passed by the time the first judgement ends
        with pytest.raises(RunCancelled):
            phone.poll(0.0, judge, lambda answer: False)
        assert len(judged) == 1  # judged once: the deadline had passed, the cancel was set

        cancel.clear()  # not cancelled: the same wait times out as it always did
        held, _, _ = phone.poll(0.0, lambda frame: None, lambda answer: False)
        assert held is False
    finally:
        phone.close()
