"""Large screens (issue 28): Settings in two panes on the Pixel Tablet (AOSP's activity
embedding: a window 720dp wide and 600dp at its smallest), one pane drawn at the screen's
density on the Z Fold5's inner screen (690dp wide), a page scroll that keeps part of the
last page on every profile, and reference scripts that page down to what they tap.
Through the real adb server; read from the phone's ground truth and state."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mobile_agent.device import open_device
from mobile_agent.operations import OperationContext, execute, parse_action
from mobile_agent.operations.catalog import PAGE_SCROLL
from mobile_agent.settings import AdbSettings, Settings
from simphone import profile_names
from simphone.apps.settings import MAIN_ROWS, SPLIT_RATIO
from tests.agent_helpers import cli, cli_env

pytestmark = pytest.mark.timeout(240)
SETTINGS_PKG = "com.android.settings"
PROFILES = profile_names()  # every simulator profile: a new one is paged through too


def _elements(handle: Any) -> list[dict[str, Any]]:
    return handle.phone.ground_truth()  # what is on the screen (Android 6 has no `cmd` to ask over adb)


def _box(handle: Any, text: str) -> list[int]:
    return next(e["box"] for e in _elements(handle) if e["text"] == text)


def _tap(handle: Any, text: str) -> None:
    left, top, right, bottom = _box(handle, text)
    handle.device.shell(["input", "tap", str((left + right) // 2), str((top + bottom) // 2)])


def _settings_stack(handle: Any) -> list[dict[str, Any]]:
    return handle.adb_state()["tasks"][SETTINGS_PKG]


def test_the_tablet_shows_settings_in_two_panes(adb_server, sim_phones) -> None:
    (tablet,) = sim_phones(1, profile="pixel-tablet-14")
    tablet.device.shell(["am", "start", "-n", f"{SETTINGS_PKG}/.Settings"])
    split = round(tablet.phone.width * SPLIT_RATIO)
    # the homepage on the left, every entry down to Display & brightness on the first screen
    for _, title, *_ in MAIN_ROWS[:8]:
        assert _box(tablet, title)[2] <= split, title
    # the first entry's page on the right until another is chosen
    assert [e for e in _elements(tablet) if e["text"] == "HomeNet-5G" and e["box"][0] > split]
    _tap(tablet, "Display & brightness")
    assert _settings_stack(tablet) == [{"view": "main"}, {"view": "page", "page": "display"}]
    assert _box(tablet, "Dark mode")[0] > split and _box(tablet, "Bluetooth")[2] <= split  # side by side
    _tap(tablet, "Sound & vibration")  # another entry takes the right pane's place: one page on the stack
    assert _settings_stack(tablet) == [{"view": "main"}, {"view": "page", "page": "sound"}]
    _tap(tablet, "Display & brightness")
    _tap(tablet, "Dark mode")
    assert tablet.adb_state()["theme"] == "dark"


def test_a_large_screen_keeps_a_row_as_many_dp_as_a_phone(adb_server, sim_phones) -> None:
    fold, pixel = sim_phones(1, profile="galaxy-fold5-14")[0], sim_phones(1, profile="pixel7-14")[0]
    rows = {}
    for handle in (fold, pixel):
        handle.device.shell(["am", "start", "-n", f"{SETTINGS_PKG}/.Settings"])
        top = _box(handle, "Wi-Fi")[1]
        rows[handle.phone.profile.name] = (_box(handle, "Bluetooth")[1] - top) * 160 / handle.phone.density
    # 690dp wide: one pane (AOSP splits from 720dp), at the density, not stretched by 1812/1080
    assert rows["galaxy-fold5-14"] == pytest.approx(rows["pixel7-14"], rel=0.02)
    assert _box(fold, "Display & brightness")[3] < fold.phone.height * 0.9
    assert _box(pixel, "Display & brightness") == [190, 1586, 688, 1632]  # a phone as before


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
def test_page_down_keeps_part_of_the_last_page_and_skips_no_row(adb_server, sim_phones, profile: str) -> None:
    (handle,) = sim_phones(1, profile=profile)
    device = open_device(AdbSettings(server_port=adb_server.port), serial=handle.serial)
    settings = Settings().with_overrides({"agent.settle_timeout_s": 1.0, "agent.settle_interval_s": 0.05})
    device.swipe(handle.phone.width // 2, int(handle.phone.height * 0.9), handle.phone.width // 2,
                 int(handle.phone.height * 0.2))  # a lock screen (the Pixel 8's) goes first
    handle.device.shell(["am", "start", "-n", f"{SETTINGS_PKG}/.Settings"])
    titles = [title for _, title, *_ in MAIN_ROWS]
    seen: list[set[str]] = []
    for _ in range(12):
        shown = {e["text"] for e in _elements(handle) if e["text"] in titles}
        seen.append(shown)
        if titles[-1] in shown:
            break
        if profile == "pixel-tablet-14":  # two panes: Page down's stroke, at the homepage's pane
            x, (y1, y2) = round(handle.phone.width * SPLIT_RATIO / 2), _page_stroke(handle.phone.height)
            device.swipe(x, y1, x, y2, duration_ms=400)
        else:
            ctx = OperationContext(device, _NoLocator(), device.screenshot(), settings)
            assert execute(parse_action("Page down"), ctx).swipe[1::2] == _page_stroke(handle.phone.height)
        device.wait_settled(1.0, 0.05, 0.002)
    assert set().union(*seen) == set(titles), f"rows never on screen: {set(titles) - set().union(*seen)}"
    for before, after in zip(seen, seen[1:], strict=False):
        assert before & after, f"a page shares no row with the one before it: {sorted(before)} then {sorted(after)}"


def _page_stroke(height: int) -> tuple[int, int]:
    return int(height * (0.5 + PAGE_SCROLL / 2)), int(height * (0.5 - PAGE_SCROLL / 2))


class _NoLocator:
    """Page down locates nothing."""

    def find_text(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Page down looked for a text")

    def find_icon(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Page down looked for an icon")


def test_a_script_pages_down_until_its_text_shows_and_no_further(adb_server, sim_phones, tmp_path) -> None:
    (short,) = sim_phones(1, width=720, height=960)  # a short screen: About phone is pages below
    script = tmp_path / "about.txt"
    script.write_text("Open App (Settings)\nPage down until (About phone)\nClick text (About phone)\n", encoding="utf-8")
    proc = cli("run", "--serial", short.serial, "--script", str(script), "--json", "-o", str(tmp_path / "runs"),
                env=cli_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _settings_stack(short)[-1] == {"view": "page", "page": "about"}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    pages = result["steps"] - 2
    assert 1 <= pages < 10

    missing = tmp_path / "missing.txt"
    missing.write_text("Open App (Settings)\nPage down until (Teleporter)\n", encoding="utf-8")
    proc = cli("run", "--serial", short.serial, "--script", str(missing), "-o", str(tmp_path / "runs"),
                env=cli_env(adb_server.port))
    assert proc.returncode == 1 and "'Teleporter' is not on the screen after 10 pages" in proc.stdout


def test_the_reference_solutions_reach_a_row_below_the_first_page(adb_server, sim_phones, tmp_path) -> None:
    (short,) = sim_phones(1, width=720, height=960)
    out = tmp_path / "eval"
    proc = cli("eval", "mobile-eval", "--task", "settings-3", "--script-reference", "--device", short.serial,
                "-o", str(out), env=cli_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (record,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()]
    assert record["success"] and record["judged_by"] == "state", record["reasons"]
    assert short.adb_state()["network_speed_shown"] is True  # read from the phone


def test_the_tablet_keyboard_fits_and_a_search_is_typed(adb_server, sim_phones, tmp_path) -> None:
    """The keyboard of a large screen is as many dp high as a phone's (it was 1848 of the
    tablet's 1600 pixels, and an app under it drew a negative box): Chrome's reference types
    and submits its search."""
    (tablet,) = sim_phones(1, profile="pixel-tablet-14")
    out = tmp_path / "eval"
    proc = cli("eval", "mobile-eval", "--task", "chrome-1", "--script-reference", "--device", tablet.serial,
                "-o", str(out), env=cli_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (record,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()]
    assert record["success"] and record["judged_by"] == "state", record["reasons"]
    assert tablet.adb_state()["apps"]["com.android.chrome"]["searches"][-1]["query"].lower() == "lakers game today"
