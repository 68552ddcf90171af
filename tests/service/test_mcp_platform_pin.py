"""MCP's ``open_app`` with an app id of the other platform than its phone's is a tool error in
REST's words (``mobile_agent.apps.platforms.PinnedApps``: REST answers the same script a 422
``unroutable``), and nothing is opened; an id of the phone's own platform opens as before. The
official SDK's client over stdio (a ``mobile-agent mcp`` subprocess), the simulated iPhone
(``simphone.ios.WdaFrontEnd``) named in ``ios.devices``; no adb."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mobile_agent.device.ios import WdaClient  # noqa: E402
from simphone.ios import WdaFrontEnd  # noqa: E402
from tests.mcp_helpers import mcp_env, stdio_session, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def test_open_app_of_an_android_package_on_the_iphone_is_refused(front: WdaFrontEnd, tmp_path: Path) -> None:
    env = mcp_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"),
                  MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-p": front.url}))
    active = WdaClient(front.url, timeout_s=20)
    before = active.active_app()

    async def main() -> None:
        async with stdio_session(env, "--serial", "ios:sim-p", "--runs-dir", str(tmp_path / "runs")) as session:
            refused = await session.call_tool("open_app", {"app": "com.android.settings"})
            texts = [c.text for c in refused.content if c.type == "text"]
            # before: the iPhone was asked to open it and answered ok=false feedback, not a refusal
            assert refused.is_error, texts
            assert texts == ["Error executing tool open_app: the operation opens com.android.settings (an Android app): device 'ios:sim-p' "
                             "is not an Android phone"], texts
            assert active.active_app() == before

            opened = tool_json(await session.call_tool("open_app", {"app": "com.apple.Preferences"}))
            assert opened["ok"], opened
            assert active.active_app() == "com.apple.Preferences"

    anyio.run(main)
