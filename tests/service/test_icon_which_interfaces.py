"""Click icon told which of several look-alikes to tap (issue 30, round 4), through every
interface: `mobile-agent run --script`, a REST task and the MCP ``find_icon`` tool. Amazon
Music's recently played list on the simulated phone has one grey play triangle per song
row, identical; "the second grey play triangle" or "grey play triangle in the '<song>'
row" must play that song (checked in the phone's state, not only the exit code), and so
must the title written without quotes ("in the Mojito row"), as planners often write it. The
plain description is candidates, never a tap.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402

from tests.agent_helpers import cli_env, run_cli  # noqa: E402
from tests.mcp_helpers import mcp_env, stdio_session, tool_json  # noqa: E402

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
MUSIC = "com.amazon.mp3"


def _rows(sim_phone: Any) -> list[tuple[str, list[float]]]:
    """(song, its play triangle's box) of each row on the open Music screen, top to bottom."""
    elements = json.loads(sim_phone.device.shell(["cmd", "simphone", "ground-truth"]))
    plays = [e for e in elements if e["kind"] == "icon" and e["description"].startswith("play triangle: play ")]
    plays.sort(key=lambda e: e["box"][1])
    return [(e["description"].removeprefix("play triangle: play "), e["box"]) for e in plays]


def _open_music(sim_phone: Any) -> list[tuple[str, list[float]]]:
    sim_phone.device.shell(["monkey", "-p", MUSIC, "1"])
    rows = _rows(sim_phone)
    assert len(rows) >= 3, rows
    return rows


def _playing(sim_phone: Any) -> str | None:
    playing = sim_phone.phone.state()["apps"][MUSIC]["playing"]
    return playing["title"] if playing else None


def _env(adb_port: int, **extra: str) -> dict[str, str]:
    return cli_env(adb_port, MOBILE_AGENT_PERCEPTION__DETECTOR="proposals", MOBILE_AGENT_PERCEPTION__RANKER="heuristic",
                   MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S="1.5", MOBILE_AGENT_AGENT__SETTLE_INTERVAL_S="0.1", **extra)


def test_cli_script_clicks_the_counted_and_the_anchored_play_button(adb_server, sim_phone, tmp_path):
    rows = _open_music(sim_phone)
    script = tmp_path / "ops.txt"
    script.write_text("Click icon (the second grey play triangle)\n", encoding="utf-8")
    proc = run_cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                   env=_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _playing(sim_phone) == rows[1][0]

    script.write_text(f"Click icon (grey play triangle in the '{rows[2][0]}' row)\n", encoding="utf-8")
    proc = run_cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                   env=_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _playing(sim_phone) == rows[2][0]

    # the song's title without quotes, as planners often write it: it is on the screen, so it anchors
    script.write_text(f"Click icon (grey play triangle in the {rows[0][0]} row)\n", encoding="utf-8")
    proc = run_cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                   env=_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _playing(sim_phone) == rows[0][0]


def test_rest_task_clicks_the_anchored_play_button(sim_phone, service):
    rows = _open_music(sim_phone)
    live = service([sim_phone], **{"perception.detector": "proposals", "perception.ranker": "heuristic"})
    task = live.submit("[ops] play a song", script=f"Click icon (grey play triangle in the '{rows[1][0]}' row)\n")
    done = live.wait_task(task["id"], timeout=180)
    assert done["status"] == "completed", done
    assert _playing(sim_phone) == rows[1][0]
    task = live.submit("[ops] play another song", script=f"Click icon (grey play triangle in the {rows[2][0]} row)\n")
    done = live.wait_task(task["id"], timeout=180)
    assert done["status"] == "completed", done
    assert _playing(sim_phone) == rows[2][0]  # unquoted: the title on the screen anchors the row


def test_mcp_find_icon_tells_look_alikes_apart(adb_server, sim_phone, tmp_path):
    rows = _open_music(sim_phone)
    env = _env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))
    env.update(mcp_env(adb_server.port))

    def inside(point: list[int], box: list[float]) -> bool:
        return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]

    async def main() -> None:
        async with stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs")) as session:
            plain = tool_json(await session.call_tool("find_icon", {"icon": "grey play triangle"}))
            assert plain["status"] != "found", plain  # six alike: not a guess
            last = tool_json(await session.call_tool("find_icon", {"icon": "the last grey play triangle"}))
            assert last["status"] == "found" and inside(last["point"], rows[-1][1]), (last, rows)
            anchored = tool_json(await session.call_tool("find_icon", {"icon": f"grey play triangle in the '{rows[0][0]}' row"}))
            assert anchored["status"] == "found" and inside(anchored["point"], rows[0][1]), (anchored, rows)
            unquoted = tool_json(await session.call_tool("find_icon", {"icon": f"grey play triangle in the {rows[1][0]} row"}))
            assert unquoted["status"] == "found" and inside(unquoted["point"], rows[1][1]), (unquoted, rows)
            absent = tool_json(await session.call_tool("find_icon", {"icon": "grey play triangle next to Premier League"}))
            assert absent["status"] != "found", absent  # not on the screen: plain words, six alike
            half_said = tool_json(await session.call_tool("find_icon", {"icon": "the second grey play triangle next to 'Home'"}))
            assert half_said["status"] == "not_found" and "quot" in json.dumps(half_said), half_said

    anyio.run(main)
