"""Operations executed on the simulated phone, over the real adb server, with real perception.

The phone's own state (``Phone.state()``) says whether an operation did what it should.
Two tests use small stand-ins where perception is not what is tested: a locator that
reports candidates (to drive the choice callback) and a phone whose package manager
gives no labels (to drive Open App's home-screen fallback).
"""

from __future__ import annotations

from typing import Any

import pytest

from mobile_agent.device import open_device
from mobile_agent.errors import RunCancelled
from mobile_agent.locate import build_locator
from mobile_agent.operations import Locator, OperationContext, Outcome, execute, parse_action
from mobile_agent.settings import AdbSettings, Settings
from perception.types import Candidate, LocateStatus, Location

SETTINGS_PKG = "com.android.settings"
NOTES_PKG = "com.google.android.keep"
LAUNCHER_PKG = "com.android.launcher3"


@pytest.fixture(scope="module")
def settings() -> Settings:
    return Settings().with_overrides({"agent.settle_timeout_s": 2.0, "agent.settle_interval_s": 0.05})


@pytest.fixture(scope="module")
def locator(settings: Settings) -> Locator:
    return build_locator(settings)


@pytest.fixture
def device(sim_phone: Any, adb_server: Any) -> Any:
    return open_device(AdbSettings(server_port=adb_server.port), serial=sim_phone.serial)


def _run(text: str, device: Any, locator: Locator, settings: Settings, choose: Any = None) -> Outcome:
    ctx = OperationContext(device, locator, device.screenshot(), settings, choose=choose)
    return execute(parse_action(f"Action: {text}"), ctx)


def _current(sim_phone: Any) -> dict[str, Any]:
    return sim_phone.phone.state()["current"]


def _top_view(sim_phone: Any, package: str) -> dict[str, Any]:
    return sim_phone.phone.state()["tasks"][package][-1]


def test_locator_protocol_is_satisfied_by_perception(locator: Locator) -> None:
    assert isinstance(locator, Locator)


def test_open_app_by_label(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    outcome = _run("Open App (Settings)", device, locator, settings)
    assert outcome.ok and not outcome.terminal
    assert SETTINGS_PKG in outcome.feedback
    assert sim_phone.phone.state()["foreground"] == SETTINGS_PKG


def test_open_unknown_app_is_feedback(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    outcome = _run("Open App (Teleporter)", device, locator, settings)
    assert not outcome.ok
    assert "Teleporter" in outcome.feedback
    assert sim_phone.phone.state()["foreground"] == LAUNCHER_PKG


class _NoLabels:
    """The phone, except that its package manager lists no launcher app, so that no layer
    of the resolver (listing, alias, heuristic, APK labels) can answer: only the screen."""

    def __init__(self, device: Any) -> None:
        self._device = device

    def resolve_app_label(self, label: str) -> None:
        return None

    def launcher_apps(self, *, max_age_s: float = 0.0) -> list:
        return []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._device, name)


def test_open_app_falls_back_to_the_home_screen_label(
    sim_phone: Any, device: Any, locator: Locator, settings: Settings
) -> None:
    assert _run("Open App (Settings)", device, locator, settings).ok
    outcome = _run("Open App (Notes)", _NoLabels(device), locator, settings)
    assert outcome.ok, outcome.feedback
    assert outcome.tap_point is not None and outcome.location is not None
    assert outcome.location.status is LocateStatus.FOUND
    assert sim_phone.phone.state()["foreground"] == NOTES_PKG


def test_click_text_opens_the_page(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    assert _run("Open App (Settings)", device, locator, settings).ok
    outcome = _run("click text (Display & brightness)", device, locator, settings)
    assert outcome.ok, outcome.feedback
    assert outcome.location is not None and outcome.location.status is LocateStatus.FOUND
    assert outcome.tap_point == outcome.location.point
    assert _top_view(sim_phone, SETTINGS_PKG).get("page") == "display"

    assert _run("Back", device, locator, settings).ok
    assert _top_view(sim_phone, SETTINGS_PKG).get("page") is None


def test_click_text_not_on_screen_is_feedback_and_no_tap(
    sim_phone: Any, device: Any, locator: Locator, settings: Settings
) -> None:
    assert _run("Open App (Settings)", device, locator, settings).ok
    before = sim_phone.phone.state()
    outcome = _run("Click text (Quantum flux capacitor)", device, locator, settings)
    assert not outcome.ok
    assert outcome.tap_point is None
    assert "Quantum flux capacitor" in outcome.feedback
    assert outcome.location is not None and outcome.location.status is LocateStatus.NOT_FOUND
    assert sim_phone.phone.state()["tasks"] == before["tasks"]


def test_note_written_with_icon_text_type_enter_and_back(
    sim_phone: Any, device: Any, locator: Locator, settings: Settings
) -> None:
    assert _run("Open App (Notes)", device, locator, settings).ok
    outcome = _run("Click icon (orange plus, bottom right)", device, locator, settings, choose=lambda loc: 1)
    assert outcome.ok, outcome.feedback
    x, y = outcome.tap_point
    assert x > 540 and y > 1200
    assert _current(sim_phone)["view"] == "edit"

    assert _run("Click text (Title)", device, locator, settings).ok
    assert _run('Type ("Groceries, today")', device, locator, settings).ok
    assert _run("Enter", device, locator, settings).ok
    assert sim_phone.phone.state()["focus"] == "body"
    assert _run("Type (milk; eggs & 'bread' $HOME `x`)", device, locator, settings).ok
    assert _run("Back", device, locator, settings).ok  # hides the keyboard
    assert not sim_phone.phone.state()["keyboard_visible"]
    assert _run("Back", device, locator, settings).ok  # leaves the editor, saving
    assert _current(sim_phone)["view"] == "main"

    notes = sim_phone.phone.state()["apps"][NOTES_PKG]["notes"]
    assert [(n["title"], n["body"]) for n in notes] == [("Groceries, today", "milk; eggs & 'bread' $HOME `x`")]


def test_page_down_and_up_scroll_the_list(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    assert _run("Open App (Settings)", device, locator, settings).ok
    down = _run("Page down", device, locator, settings)
    assert down.ok and down.swipe == (540, 1680, 540, 720)  # 40% of the screen: pages overlap
    scrolled = _top_view(sim_phone, SETTINGS_PKG).get("scroll", 0)
    assert scrolled > 0
    up = _run("Page up", device, locator, settings)
    assert up.swipe == (540, 720, 540, 1680)
    assert _top_view(sim_phone, SETTINGS_PKG).get("scroll", 0) < scrolled


def test_home_and_exit_go_to_the_launcher(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    for name in ("Home", "Exit"):
        assert _run("Open App (Settings)", device, locator, settings).ok
        assert sim_phone.phone.state()["foreground"] == SETTINGS_PKG
        assert _run(name, device, locator, settings).ok
        assert sim_phone.phone.state()["foreground"] == LAUNCHER_PKG


def test_swipes_on_the_home_screen(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    left = _run("Swipe left", device, locator, settings)
    assert left.swipe == (864, 1200, 216, 1200)
    assert _top_view(sim_phone, LAUNCHER_PKG).get("page") == 1
    right = _run("Swipe right", device, locator, settings)
    assert right.swipe == (216, 1200, 864, 1200)
    assert _top_view(sim_phone, LAUNCHER_PKG).get("page") == 0


def test_stop_and_wait_touch_nothing(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    before = sim_phone.phone.state()
    stop = _run("stop.", device, locator, settings)
    assert stop.ok and stop.terminal
    wait = _run("Wait (0.1)", device, locator, settings)
    assert wait.ok and not wait.terminal
    assert sim_phone.phone.state() == before


class _ReportsCandidates:
    """A locator that reports the given candidates (the choice flow is under test, not OCR)."""

    def __init__(self, location: Location) -> None:
        self.location = location

    def find_text(self, image: Any, text: str, hierarchy: str | None = None) -> Location:
        return self.location

    def find_icon(self, image: Any, description: str, position: str | None = None,
                  hierarchy: str | None = None) -> Location:
        return self.location


def _rows(device: Any, locator: Locator, *texts: str) -> Location:
    shot = device.screenshot()
    cands = []
    for i, text in enumerate(texts, start=1):
        found = locator.find_text(shot.pixels, text)
        assert found.status is LocateStatus.FOUND and found.box is not None
        cands.append(Candidate(index=i, box=found.box, text=text, score=0.9))
    return Location(status=LocateStatus.CANDIDATES, target="row", candidates=tuple(cands))


def test_candidates_go_through_choose(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    assert _run("Open App (Settings)", device, locator, settings).ok
    location = _rows(device, locator, "Wi-Fi", "Bluetooth")
    asked: list[Location] = []

    def choose(loc: Location) -> int | None:
        asked.append(loc)
        return 2

    outcome = _run("Click text (row)", device, _ReportsCandidates(location), settings, choose=choose)
    assert asked == [location]
    assert outcome.ok and outcome.tap_point == location.candidates[1].box.center
    assert _top_view(sim_phone, SETTINGS_PKG).get("page") == "bluetooth"


@pytest.mark.parametrize("choose", [None, lambda loc: None, lambda loc: 7])
def test_candidates_without_a_choice_are_feedback(
    sim_phone: Any, device: Any, locator: Locator, settings: Settings, choose: Any
) -> None:
    assert _run("Open App (Settings)", device, locator, settings).ok
    location = _rows(device, locator, "Wi-Fi", "Bluetooth")
    before = sim_phone.phone.state()["tasks"]
    outcome = _run("Click text (row)", device, _ReportsCandidates(location), settings, choose=choose)
    assert not outcome.ok and outcome.tap_point is None
    assert "Several places" in outcome.feedback and "1: Wi-Fi" in outcome.feedback
    assert sim_phone.phone.state()["tasks"] == before


def test_too_many_is_feedback(sim_phone: Any, device: Any, settings: Settings) -> None:
    loc = Location(status=LocateStatus.TOO_MANY, target="OK", closest=("OK",))
    before = sim_phone.phone.state()
    ctx = OperationContext(device, _ReportsCandidates(loc), device.screenshot(), settings)
    outcome = execute(parse_action("Click text (OK)"), ctx)
    assert not outcome.ok and "too many times" in outcome.feedback and outcome.tap_point is None
    assert sim_phone.phone.state() == before
    assert outcome.to_dict()["location"]["status"] == "too_many"


def test_long_press_uses_a_long_touch(sim_phone: Any, device: Any, locator: Locator, settings: Settings) -> None:
    calls: list[tuple[str, tuple[Any, ...]]] = []

    class Recording:
        def __getattr__(self, name: str) -> Any:
            real = getattr(device, name)

            def call(*args: Any, **kwargs: Any) -> Any:
                calls.append((name, args))
                return real(*args, **kwargs)

            return call

    outcome = _run("Long press (Settings)", Recording(), locator, settings)
    assert outcome.ok and outcome.tap_point is not None
    assert [c for c in calls if c[0] in ("tap", "long_press")] == [("long_press", outcome.tap_point)]


def test_wait_ends_early_when_the_run_is_cancelled(device: Any, locator: Locator, settings: Settings) -> None:
    import threading

    cancel = threading.Event()
    cancel.set()
    ctx = OperationContext(device, locator, device.screenshot(), settings, cancel=cancel)
    with pytest.raises(RunCancelled):
        execute(parse_action("Action: Wait (10)"), ctx)
