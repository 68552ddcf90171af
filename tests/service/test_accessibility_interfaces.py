"""The accessibility source (``MOBILE_AGENT_PERCEPTION__ACCESSIBILITY``) on and off, through
every interface that locates something on the screen: `mobile-agent run --script`, a REST
task, the MCP tools (``find_text``, ``find_icon``, ``click_text``) and the plan cache's
re-location (`run --cache` twice). Each checks the phone's state, not only the exit code.

Before the one ``Locator`` protocol (``mobile_agent.operations.context``), the run's lazy
locator took no accessibility tree, and every one of these crashed with the setting on
(``LazyLocator.find_text() takes 3 positional arguments but 4 were given``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402

from tests.agent_helpers import DONE, cli_env, plan_reply, run_cli, trajectory_of  # noqa: E402
from tests.mcp_helpers import mcp_env, stdio_session, tool_json  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
NOTES = "com.google.android.keep"
SETTINGS = "com.android.settings"
ON_OFF = [pytest.param("true", id="accessibility-on"), pytest.param("false", id="accessibility-off")]

# Every operation that locates: Click icon, Type into the field it opened, Long press and
# Click text (the simulated phone treats a long press where nothing handles one as a tap).
SCRIPT = (
    "Open App (Notes)\n"
    "Click icon (orange plus, bottom right)\n"
    "Type (Milk and eggs)\n"
    "Back\n"
    "Back\n"
    "Open App (Settings)\n"
    "Long press (Mobile network)\n"
    "Back\n"
    "Click text (Display & brightness)\n"
)


def _env(adb_port: int, accessibility: str, **extra: str) -> dict[str, str]:
    return cli_env(adb_port, MOBILE_AGENT_PERCEPTION__ACCESSIBILITY=accessibility,
                   MOBILE_AGENT_PERCEPTION__DETECTOR="proposals", MOBILE_AGENT_PERCEPTION__RANKER="heuristic",
                   MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S="1.5", MOBILE_AGENT_AGENT__SETTLE_INTERVAL_S="0.1", **extra)


def _notes(phone: Any) -> list[str]:
    return [n["title"] for n in phone.state()["apps"][NOTES]["notes"]]


def _shows_display_page(sim_phone: Any) -> bool:
    state = sim_phone.adb_state()
    return state["foreground"] == SETTINGS and "display" in json.dumps(state["current"]).lower()


def _steps(stdout: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in trajectory_of(stdout).read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line.get("type") == "step"]


@pytest.mark.parametrize("accessibility", ON_OFF)
def test_cli_script_locates_with_the_accessibility_source(adb_server, sim_phone, tmp_path, accessibility):
    script = tmp_path / "ops.txt"
    script.write_text(SCRIPT, encoding="utf-8")
    proc = run_cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                env=_env(adb_server.port, accessibility))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "TypeError" not in proc.stdout + proc.stderr
    assert _notes(sim_phone.phone) == ["Milk and eggs"]
    assert _shows_display_page(sim_phone), sim_phone.adb_state()
    located = [s for s in _steps(proc.stdout) if (s.get("location") or {}).get("status")]
    assert [s["location"]["status"] for s in located] == ["found"] * 3, located


@pytest.mark.parametrize("accessibility", ON_OFF)
def test_rest_task_locates_with_the_accessibility_source(sim_phone, service, accessibility):
    live = service([sim_phone], **{"perception.accessibility": accessibility == "true",
                                   "perception.detector": "proposals", "perception.ranker": "heuristic"})
    task = live.submit("[ops] note and display", script=SCRIPT)
    done = live.wait_task(task["id"], timeout=180)
    assert done["status"] == "completed", done
    assert _notes(sim_phone.phone) == ["Milk and eggs"]
    assert _shows_display_page(sim_phone), sim_phone.adb_state()


@pytest.mark.parametrize("accessibility", ON_OFF)
def test_mcp_tools_locate_with_the_accessibility_source(adb_server, sim_phone, tmp_path, accessibility):
    env = _env(adb_server.port, accessibility, MCP_TEST_LOG=str(tmp_path / "server.log"))
    env.update(mcp_env(adb_server.port))

    async def main() -> None:
        async with stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs")) as session:
            assert tool_json(await session.call_tool("open_app", {"app": "Notes"}))["ok"]
            icon = tool_json(await session.call_tool("find_icon", {"icon": "orange plus", "position": "bottom right"}))
            assert icon["status"] == "found", icon
            elements = json.loads(sim_phone.device.shell(["cmd", "simphone", "ground-truth"]))
            truth = next(e for e in elements if e["kind"] == "icon" and "plus" in e["description"])["box"]
            assert truth[0] <= icon["point"][0] <= truth[2] and truth[1] <= icon["point"][1] <= truth[3]

            assert tool_json(await session.call_tool("open_app", {"app": "Settings"}))["ok"]
            found = tool_json(await session.call_tool("find_text", {"text": "Display & brightness"}))
            assert found["status"] == "found", found
            truth = sim_phone.element("Display & brightness")["box"]
            assert truth[0] <= found["point"][0] <= truth[2] and truth[1] <= found["point"][1] <= truth[3]
            clicked = tool_json(await session.call_tool("click_text", {"text": "Display & brightness"}))
            assert clicked["ok"], clicked
            assert _shows_display_page(sim_phone), sim_phone.adb_state()

    anyio.run(main)


@pytest.mark.parametrize("accessibility", ON_OFF)
def test_plan_cache_relocates_with_the_accessibility_source(adb_server, sim_phone, llm_server, tmp_path,
                                                            accessibility):
    replies = [plan_reply("Open App (Settings)"), plan_reply("Click text (Display & brightness)"),
               plan_reply("Stop"), DONE]
    llm_server.script(replies)
    env = _env(adb_server.port, accessibility, MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url,
               MOBILE_AGENT_PLANNER__API_KEY="test-key", MOBILE_AGENT_PLANNER__MODEL="gpt-4o",
               MOBILE_AGENT_AGENT__COMPLETION_CHECK="false")
    runs = tmp_path / "runs"
    instruction = "Open the display settings"
    first = run_cli("--serial", sim_phone.serial, "--cache", "-o", str(runs), "--instruction", instruction, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert _shows_display_page(sim_phone)
    cold_calls = len(llm_server.chat_requests)
    assert cold_calls >= 3

    sim_phone.phone.reset()
    second = run_cli("--serial", sim_phone.serial, "--cache", "-o", str(runs), "--instruction", instruction, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "TypeError" not in second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold_calls, second.stdout  # all replayed: no model call
    assert _shows_display_page(sim_phone), sim_phone.adb_state()


# --- the protocol, checked without a phone ------------------------------------------------


def _protocol_methods() -> dict[str, Any]:
    import inspect

    from mobile_agent.operations.context import Locator

    return {name: inspect.signature(member) for name, member in vars(Locator).items()
            if callable(member) and not name.startswith("_")}


@pytest.mark.parametrize("wrapper", ["mobile_agent.locate:PerceptionLocator", "mobile_agent.locate:LazyLocator",
                                     "mobile_agent.agent.parts:TimedLocator"])
def test_every_locator_wrapper_takes_what_the_protocol_declares(wrapper: str) -> None:
    """Each wrapper defines every method of ``Locator`` itself (no ``__getattr__`` forwarding),
    with the protocol's parameters: a wrapper that dropped ``hierarchy`` is what crashed."""
    import importlib
    import inspect

    module, name = wrapper.split(":")
    cls = getattr(importlib.import_module(module), name)
    assert "__getattr__" not in vars(cls)
    methods = _protocol_methods()
    assert {"find_text", "find_icon", "ocr", "ocr_region", "find_text_in_region", "snap_targets", "snap"} <= set(methods)
    for method, declared in methods.items():
        assert method in vars(cls), f"{name} does not define {method}"
        given = inspect.signature(vars(cls)[method])
        assert list(given.parameters) == list(declared.parameters), (name, method, given, declared)


def test_no_call_site_probes_or_silences_the_locator() -> None:
    """Where the operations, the agent and the plan cache call a locator or dump the tree:
    no ``getattr``/``hasattr`` probing and no ``# type: ignore`` (the type checker must see
    a mismatch)."""
    files = ["mobile_agent/agent/parts.py", "mobile_agent/operations/catalog.py", "mobile_agent/operations/coordinates.py",
             "mobile_agent/replay/relocate.py", "mobile_agent/replay/replayer.py", "mobile_agent/locate.py",
             "mobile_agent/agent/guard.py", "mobile_agent/agent/loop.py", "mobile_agent/mcp_server/phone.py"]
    probing = re.compile(r"\b(?:getattr|hasattr)\([^)]*(?:locator|ctx\.device)")
    for path in files:
        text = (ROOT / path).read_text(encoding="utf-8")
        assert not probing.search(text), (path, probing.search(text))
        silenced = [line for line in text.splitlines()
                    if "type: ignore" in line and re.search(r"locator|hierarchy|find_text|find_icon|snap", line)]
        assert not silenced, (path, silenced)


def test_plan_cache_replays_through_a_protected_screen(adb_server, sim_phone, llm_server, tmp_path):
    """A cached step's target is found again the way the operation finds it: on a screen the
    pixels cannot see (FLAG_SECURE: the capture is black, the tree is there), by the tree.
    Before, the replay looked with vision alone, found nothing and handed over to the model."""
    vault = "com.x8bit.bitwarden"
    sim_phone.phone.install(vault)
    replies = [plan_reply("Open App (Bitwarden)"), plan_reply("Click text (Netflix)"), plan_reply("Stop"), DONE]
    llm_server.script(replies)
    env = _env(adb_server.port, "false", MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url,
               MOBILE_AGENT_PLANNER__API_KEY="test-key", MOBILE_AGENT_PLANNER__MODEL="gpt-4o",
               MOBILE_AGENT_AGENT__COMPLETION_CHECK="false")
    args = ("--serial", sim_phone.serial, "--cache", "-o", str(tmp_path / "runs"),
            "--instruction", "Open the Netflix login")
    first = run_cli(*args, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert sim_phone.phone.state()["current"]["view"] == "item"
    cold_calls = len(llm_server.chat_requests)

    sim_phone.phone.reset()
    sim_phone.phone.install(vault)
    second = run_cli(*args, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold_calls, second.stdout  # replayed: no model call
    state = sim_phone.phone.state()
    assert state["foreground"] == vault and state["current"]["view"] == "item", state["current"]
