"""Screens the pixels cannot see (issue 30): a FLAG_SECURE window captures black on a real
phone (``WindowManager.LayoutParams.FLAG_SECURE``; AOSP SurfaceFlinger's
``SecureLayerMode::Redact``), a frame caught before the app drew it is blank.

The simulated phone's Bitwarden (``simphone.apps.vault``) captures its content area
black over the real adb server, as AOSP's screencap does, while ``uiautomator dump``
still reads it. The agent captures a blank frame again (bounded), tells the model in
words that the screen is protected and what its tree lists, and locates by the tree
whatever the accessibility setting says: through `mobile-agent run --script` and a
planned run against the scripted model server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pytest

from mobile_agent.agent.protected import BLANK_LOOKS, look_again
from mobile_agent.device.hierarchy import split_dump_output
from mobile_agent.operations.context import AgentDevice
from perception import LocateStatus, Perception, PerceptionConfig
from perception.blank_screen import blank_app_area
from tests.agent_helpers import DONE, cli_env, plan_reply, run_cli, trajectory_of

VAULT = "com.x8bit.bitwarden"
pytestmark = pytest.mark.timeout(240)


def _open_vault(sim_phone: Any) -> None:
    sim_phone.phone.install(VAULT)
    sim_phone.device.shell(["monkey", "-p", VAULT, "-c", "android.intent.category.LAUNCHER", "1"])


def _frame(sim_phone: Any) -> np.ndarray:
    return np.asarray(sim_phone.device.screenshot().convert("RGB"))


def _tree(sim_phone: Any) -> str:
    xml = split_dump_output(sim_phone.device.shell(["uiautomator", "dump", "/dev/tty"])).xml
    assert xml is not None
    return xml


def _env(adb_port: int) -> dict[str, str]:
    return cli_env(adb_port, MOBILE_AGENT_PERCEPTION__ACCESSIBILITY="false", MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S="1.5",
                   MOBILE_AGENT_AGENT__SETTLE_INTERVAL_S="0.1")


def _steps(stdout: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in trajectory_of(stdout).read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line.get("type") == "step"]


def test_the_secure_app_captures_black_and_its_tree_stays(adb_server, sim_phone) -> None:
    _open_vault(sim_phone)
    frame = _frame(sim_phone)  # the raw framebuffer over adb
    assert blank_app_area(frame) and frame[400:2000].max() == 0
    assert frame[:60].max() > 0, "the status bar is SystemUI's own layer: it stays"
    dump = sim_phone.device.shell(["uiautomator", "dump", "/dev/tty"])
    assert 'text="Netflix"' in dump
    # the same app drawn without the flag is not blank: the check is the flag's, not the app's
    sim_phone.device.shell(["input", "keyevent", "KEYCODE_HOME"])
    assert not blank_app_area(_frame(sim_phone))


def test_perception_locates_by_the_tree_alone_on_a_blank_frame(adb_server, sim_phone) -> None:
    _open_vault(sim_phone)
    frame, dump = _frame(sim_phone), _tree(sim_phone)
    perception = Perception(PerceptionConfig(detector="proposals", ranker="heuristic", compute_device="cpu"))
    assert perception.find_text(frame, "Netflix").status is LocateStatus.NOT_FOUND  # the pixels alone: nothing
    where = perception.find_text(frame, "Netflix", dump)  # config.accessibility is off: the tree still answers
    assert where.status is LocateStatus.FOUND and "accessibility only" in where.backend
    truth = sim_phone.element("Netflix")["box"]
    assert truth[0] <= where.point[0] <= truth[2] and truth[1] <= where.point[1] <= truth[3]
    # an icon by its content-desc: the item page's back arrow
    sim_phone.device.shell(["input", "tap", str(where.point[0]), str(where.point[1])])
    frame, dump = _frame(sim_phone), _tree(sim_phone)
    back = perception.find_icon(frame, "back arrow", "top left", dump)
    assert back.status is LocateStatus.FOUND, (back.status, back.feedback)
    elements = json.loads(sim_phone.device.shell(["cmd", "simphone", "ground-truth"]))
    box = next(e for e in elements if e["kind"] == "icon" and e["description"] == "back arrow")["box"]
    assert box[0] <= back.point[0] <= box[2] and box[1] <= back.point[1] <= box[3]
    missing = perception.find_icon(frame, "red heart", None, dump)
    assert missing.status is LocateStatus.NOT_FOUND and "protected" in missing.feedback


def test_cli_script_clicks_through_a_protected_screen(adb_server, sim_phone, tmp_path) -> None:
    """The accessibility setting off: a blank frame still locates by the tree."""
    sim_phone.phone.install(VAULT)
    script = tmp_path / "vault.txt"
    script.write_text("Open App (Bitwarden)\nClick text (Netflix)\nClick text (Copy password)\n", encoding="utf-8")
    proc = run_cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                env=_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sim_phone.phone.state()["apps"][VAULT]["copied"] == "Netflix"
    located = [s["location"] for s in _steps(proc.stdout) if (s.get("location") or {}).get("status")]
    assert [(loc["status"], "accessibility only" in loc["backend"]) for loc in located] == [("found", True)] * 2


def test_planned_run_tells_the_model_the_screen_is_protected(adb_server, sim_phone, llm_server, tmp_path) -> None:
    _open_vault(sim_phone)
    llm_server.script([plan_reply("Click text (Netflix)"), plan_reply("Stop"), DONE])
    proc = run_cli("--serial", sim_phone.serial, "--base-url", llm_server.base_url, "--api-key", "k-1",
                "--model", "scripted-vlm", "-o", str(tmp_path / "runs"), "--instruction", "Open the Netflix login",
                env=_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = json.dumps(llm_server.chat_requests[0].json)
    assert "FLAG_SECURE" in first and "Netflix" in first and "Bank of Springfield" in first
    assert sim_phone.phone.state()["current"]["view"] == "item"


def test_rest_task_clicks_through_a_protected_screen(sim_phone, service) -> None:
    sim_phone.phone.install(VAULT)
    live = service([sim_phone], **{"perception.accessibility": False, "perception.detector": "proposals",
                                   "perception.ranker": "heuristic"})
    task = live.submit("[ops] copy a password", script="Open App (Bitwarden)\nClick text (Netflix)\nClick text (Copy password)\n")
    done = live.wait_task(task["id"], timeout=180)
    assert done["status"] == "completed", done
    assert sim_phone.phone.state()["apps"][VAULT]["copied"] == "Netflix"


def test_mcp_tools_find_and_click_on_a_protected_screen(adb_server, sim_phone, tmp_path) -> None:
    pytest.importorskip("mcp")  # the SDK (an extra); a broken helper module is an error, not a skip
    import anyio

    from tests import mcp_helpers as mcp

    _open_vault(sim_phone)
    env = mcp.mcp_env(adb_server.port, MOBILE_AGENT_PERCEPTION__ACCESSIBILITY="false")

    async def main() -> None:
        async with mcp.stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs")) as session:
            shot = await session.call_tool("screenshot", {})
            info = json.loads(next(c.text for c in shot.content if c.type == "text"))
            assert "FLAG_SECURE" in info["note"]  # the client model is told in words
            found = mcp.tool_json(await session.call_tool("find_text", {"text": "Netflix"}))
            assert found["status"] == "found", found
            truth = sim_phone.element("Netflix")["box"]
            assert truth[0] <= found["point"][0] <= truth[2] and truth[1] <= found["point"][1] <= truth[3]
            assert mcp.tool_json(await session.call_tool("click_text", {"text": "Netflix"}))["ok"]
            assert sim_phone.phone.state()["current"]["view"] == "item"

    anyio.run(main)


# A grounded model's tap (a point: UI-TARS, Qwen, AutoGLM; a script's "Tap (x, y)") just off a
# control of a protected screen: the pixels show nothing to snap to, the tree holds the control.
# Below "Copy password" (simphone.apps.vault: its button is 120 px tall, nothing under it).
_OFF_BELOW = 40


def _off_the_copy_button(sim_phone: Any) -> tuple[int, int]:
    box = sim_phone.element("Copy password")["box"]
    return (box[0] + box[2]) // 2, box[3] + _OFF_BELOW


def test_a_grounded_tap_on_a_protected_screen_snaps_to_the_tree(adb_server, sim_phone, tmp_path) -> None:
    """`run --script` with the accessibility setting off: the blank frame brings the tree, and
    the tap moves onto the control it was meant for (before: "nothing seen", a tap on nothing)."""
    _open_vault(sim_phone)
    sim_phone.device.shell(["input", "tap", *map(str, _centre(sim_phone.element("Netflix")["box"]))])
    x, y = _off_the_copy_button(sim_phone)
    script = tmp_path / "tap.txt"
    script.write_text(f"Tap ({x}, {y})\n", encoding="utf-8")
    proc = run_cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                env=_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sim_phone.phone.state()["apps"][VAULT]["copied"] == "Netflix"
    (step,) = [s for s in _steps(proc.stdout) if s.get("snap")]
    assert step["snap"]["moved"] and step["snap"]["target"]["source"] == "node", step["snap"]
    assert step["snap"]["target"]["label"] == "Copy password"


def test_rest_grounded_tap_on_a_protected_screen_snaps_to_the_tree(sim_phone, service) -> None:
    _open_vault(sim_phone)
    sim_phone.device.shell(["input", "tap", *map(str, _centre(sim_phone.element("Netflix")["box"]))])
    x, y = _off_the_copy_button(sim_phone)
    live = service([sim_phone], **{"perception.accessibility": False, "perception.detector": "proposals",
                                   "perception.ranker": "heuristic"})
    task = live.submit("[ops] copy a password by a point", script=f"Tap ({x}, {y})\n")
    done = live.wait_task(task["id"], timeout=180)
    assert done["status"] == "completed", done
    assert sim_phone.phone.state()["apps"][VAULT]["copied"] == "Netflix"


def _centre(box: list[int]) -> tuple[int, int]:
    return (box[0] + box[2]) // 2, (box[1] + box[3]) // 2


def test_the_trees_controls_join_the_snap_targets_only_where_something_is_drawn() -> None:
    """On a drawn frame with ``accessibility`` on, a control of the tree is a snap target only
    where the pixels show something inside it (a stale tree cannot move a tap to nothing);
    with the setting off, or no tree, the targets are the pixels' alone."""
    frame = np.full((2400, 1080, 3), 250, np.uint8)
    frame[1000:1090, 100:190] = 30  # a glyph
    frame[300:360, 100:900] = 120  # a banner: the frame is not blank (perception.blank_screen)
    dump = ('<hierarchy rotation="0"><node text="" class="android.widget.FrameLayout" clickable="false" '
            'enabled="true" bounds="[0,0][1080,2400]">'
            '<node text="" content-desc="drawn button" class="android.widget.ImageButton" clickable="true" '
            'enabled="true" bounds="[80,980][210,1110]" />'
            '<node text="" content-desc="stale button" class="android.widget.ImageButton" clickable="true" '
            'enabled="true" bounds="[700,1600][830,1730]" /></node></hierarchy>')
    on = Perception(PerceptionConfig(detector="proposals", ranker="heuristic", compute_device="cpu",
                                     accessibility=True))
    nodes = [t for t in on.snap_targets(frame, dump) if t.source == "node"]
    assert [t.label for t in nodes] == ["drawn button"]
    assert not [t for t in on.snap_targets(frame) if t.source == "node"]
    off = Perception(PerceptionConfig(detector="proposals", ranker="heuristic", compute_device="cpu"))
    assert not [t for t in off.snap_targets(frame, dump) if t.source == "node"]


@dataclass
class _Shot:
    pixels: np.ndarray
    width: int = 1080
    height: int = 2400


class _Transition:
    """A phone whose next captures are blank ``blank`` times, then drawn (the frames of a
    real transition; the device layer's own tests cover the wire)."""

    serial = "transition"

    def __init__(self, blank: int) -> None:
        self.blank, self.captures = blank, 0
        self.drawn = np.full((2400, 1080, 3), 250, np.uint8)
        self.drawn[600:700, 100:900] = 30  # something on it

    def screenshot(self) -> _Shot:
        self.captures += 1
        return _Shot(np.zeros_like(self.drawn) if self.captures <= self.blank else self.drawn)

    def accessibility_xml(self) -> str | None:
        raise AssertionError("a frame that gets drawn needs no tree")


def test_a_blank_frame_is_captured_again_and_the_wait_is_bounded() -> None:
    phone = _Transition(blank=2)
    frame, blank = look_again(cast(AgentDevice, phone), phone.screenshot())
    assert blank is None and not blank_app_area(frame.pixels) and phone.captures == 3
    # never drawn, and no tree (the phone's dump fails): bounded, and the model is told
    never = _NeverDrawn(blank=10**6)
    frame, blank = look_again(cast(AgentDevice, never), never.screenshot())
    assert never.captures == 1 + BLANK_LOOKS and blank is not None and "stayed blank" in blank.note


class _NeverDrawn(_Transition):
    def accessibility_xml(self) -> str | None:
        raise RuntimeError("no uiautomator on this phone")
