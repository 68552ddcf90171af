"""Each dialect's prompt names the phone ``PlanRequest.platform`` says (``planner.phones``):
an Android phone keeps its prompt, an iPhone's says it is one and how Back and Home work
there. The devices say which they are through the device protocol (``DeviceLike.platform``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mobile_agent.device import Device
from mobile_agent.device.ios import IosDevice, WdaClient
from mobile_agent.operations.context import AgentDevice, Platform
from mobile_agent.planner import Planner
from mobile_agent.planner.dialects import AutoGlmDialect, MobileUseDialect, UiTarsDialect
from mobile_agent.planner.dialects.base import OwnPromptDialect
from mobile_agent.planner.geometry import viewport_for
from mobile_agent.planner.models import PAPER
from mobile_agent.planner.phones import IOS_NOTE
from mobile_agent.planner.types import PlanRequest
from mobile_agent.settings import AdbSettings, PlannerSettings

SCREEN = np.zeros((2400, 1080, 3), dtype=np.uint8)


def _text(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message["content"]
        parts += [content] if isinstance(content, str) else [p["text"] for p in content if p.get("type") == "text"]
    return "\n".join(parts)


def _prompt(platform: Platform, dialect: str) -> str:
    """The text of the first planning request's messages in ``dialect``."""
    if dialect in ("paper", "function_calling"):  # the planner's own prompt files
        settings = PlannerSettings(base_url="http://127.0.0.1:9/v1", api_key="k", model="gpt-4o", dialect=dialect)
        return _text(Planner(settings).plan_messages(PlanRequest("Open Settings", SCREEN, platform=platform)))
    grounded: dict[str, OwnPromptDialect] = {"ui_tars": UiTarsDialect(), "mobile_use": MobileUseDialect(),
                                             "autoglm": AutoGlmDialect()}
    chosen = grounded[dialect]
    viewport = viewport_for(1080, 2400, chosen.image_rule(PAPER.image), chosen.space)
    return _text(chosen.messages("Open Settings", [], [], viewport, lambda: {"type": "image_url"}, platform=platform))


DIALECTS = ["paper", "function_calling", "ui_tars", "mobile_use", "autoglm"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_iphone_is_named_with_its_back_and_home(dialect: str) -> None:
    text = _prompt("ios", dialect)
    assert "iPhone" in text and IOS_NOTE in text
    assert "Android" not in text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_android_phone_keeps_its_prompt(dialect: str) -> None:
    text = _prompt("android", dialect)
    assert "iPhone" not in text and "no Back key" not in text
    if dialect != "autoglm":  # AutoGLM's prompt says "a phone operation agent"
        assert "an Android phone" in text


def test_the_devices_say_which_phone_they_are() -> None:
    android: AgentDevice = Device("emulator-5554", AdbSettings())
    client = WdaClient("http://127.0.0.1:9")
    try:
        iphone: AgentDevice = IosDevice("sim-1", client)
        assert (android.platform, iphone.platform) == ("android", "ios")
    finally:
        client.close()
