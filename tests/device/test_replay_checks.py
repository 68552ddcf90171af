"""What a replayed step checks before it acts: the password check of a replayed Type read
around its recorded field (``replay.field``), and a dialog on top of the recorded screen
(``replay.overlay``).

Screens are the simulated phone's own frames: rendered in process for the units, over
the real adb server for the runs; the planner is the scripted model server over HTTP;
the person a ``QueueChannel``. The password rule's words come from a rules file
(``agent.safety.rules_file``) naming the Maps search field's hint: the simulated apps
have no login screen, and the rule is the guard's real one either way.
"""

from __future__ import annotations

import numpy as np
import pytest

from mobile_agent.agent import Agent, RunStatus
from mobile_agent.agent.people import QueueChannel, UserReply
from mobile_agent.locate import build_locator
from mobile_agent.replay import PlanStore, fingerprint
from mobile_agent.replay.field import (
    FieldCheck,
    band_signature,
    field_point,
    same_band,
    shrunk_grey,
    stored_signature,
)
from mobile_agent.replay.fingerprint import fold_text, grey_thumbnail
from mobile_agent.replay.overlay import on_top
from perception.types import Box, TextLine
from simphone import Phone
from tests.agent_helpers import DONE, agent_settings, plan_reply

MAPS = "com.google.android.apps.maps"
SEARCH = ["Open App (Google Maps)", "Click text (Search here)", "Type (Hangzhou West Lake)"]
INSTRUCTION = "Search for Hangzhou West Lake in Google Maps"


# -- a dialog on top ------------------------------------------------------------------


def _frame(phone: Phone) -> np.ndarray:
    return np.asarray(phone.screenshot().convert("RGB"))


def _maps(*, revoked: bool = False, size: tuple[int, int] | None = None) -> np.ndarray:
    phone = Phone()
    if size is not None:
        phone.force_size(size)
    if revoked:  # as `pm revoke` leaves it: Maps asks when it opens (simphone.permissions)
        for permission in ("ACCESS_FINE_LOCATION", "ACCESS_COARSE_LOCATION"):
            phone.change_permission("revoke", MAPS, f"android.permission.{permission}")
    phone.launch(MAPS)
    assert (phone.permission_request is not None) is revoked
    return _frame(phone)


def test_a_dialogs_scrim_over_the_recorded_screen_is_seen():
    recorded = fingerprint(_maps(), [])
    search_rows = (0.0, 0.1)  # the band around the search field, the replayed tap's target
    why = on_top(recorded, grey_thumbnail(_maps(revoked=True)), rows=search_rows)
    assert why is not None and "dimmed" in why
    assert on_top(recorded, grey_thumbnail(_maps()), rows=search_rows) is None
    assert on_top(recorded, grey_thumbnail(_maps(size=(720, 1600))), rows=search_rows) is None  # another phone


def test_other_changes_of_the_screen_are_no_dialog():
    phone = Phone()
    phone.launch("com.android.settings")
    light = _frame(phone)
    phone.settings_put("secure", "ui_night_mode", "2")
    dark = _frame(phone)
    recorded = fingerprint(light, [])
    assert on_top(recorded, grey_thumbnail(dark)) is None  # the other theme: not a scrim
    phone.settings_put("secure", "ui_night_mode", "1")
    phone.run(["input", "swipe", "540", "1500", "540", "1150", "400"])  # the list scrolled
    assert on_top(recorded, grey_thumbnail(_frame(phone)), rows=(0.2, 0.3)) is None
    assert on_top(recorded, grey_thumbnail(_maps())) is None  # another app altogether


def test_a_system_dialogs_texts_that_were_not_recorded_are_a_dialog():
    plain = _maps()
    recorded = fingerprint(plain, [])  # no level kept (as in plans stored before): texts only
    recorded = type(recorded)(texts=frozenset({"search here", "restaurants"}), thumb=recorded.thumb)
    grey = grey_thumbnail(plain)
    assert on_top(recorded, grey, texts={"search here", "restaurants"}) is None
    why = on_top(recorded, grey, texts={"search here", fold_text("While using the app"), fold_text("Don’t allow")})
    assert why is not None and "while using the app" in why


# -- the password check around the field ----------------------------------------------


def test_a_field_band_with_its_recorded_pixels_is_told_from_a_changed_one():
    phone = Phone()
    phone.launch(MAPS)
    (hint,) = [e for e in phone.ground_truth() if e["text"] == "Search here"]
    frame = _frame(phone)
    field = ((hint["box"][0] + hint["box"][2]) / 2 / frame.shape[1], (hint["box"][1] + hint["box"][3]) / 2 / frame.shape[0])
    recorded = band_signature(shrunk_grey(frame), field)
    assert recorded is not None and same_band(recorded, stored_signature(recorded.tobytes()))
    caret = frame.copy()
    caret[hint["box"][1] - 5 : hint["box"][3] + 5, hint["box"][0] - 8 : hint["box"][0] - 5] = 30  # a text caret
    assert same_band(recorded, band_signature(shrunk_grey(caret), field))
    other = frame.copy()  # another word where the hint was: the pixels of the category chips below it
    (chips,) = [e for e in phone.ground_truth() if e["text"] == "Restaurants"]
    rows = slice(chips["box"][1] - 10, chips["box"][3] + 10)
    other[hint["box"][1] - 10 : hint["box"][1] - 10 + (rows.stop - rows.start)] = frame[rows]
    assert not same_band(recorded, band_signature(shrunk_grey(other), field))


def _line(text: str, top: int) -> TextLine:
    return TextLine(text, Box(100, top, 700, top + 50), 0.99)


def _shows_password(texts: list[str]) -> str | None:
    return next((t for t in texts if "password" in t.casefold() or "pin code" in t.casefold()), None)


def _check(recorded_texts: set[str], band_lines: list[TextLine]) -> tuple[FieldCheck, list[Box]]:
    reads: list[Box] = []

    def read_region(pixels: np.ndarray, box: Box) -> list[TextLine]:
        reads.append(box)
        return band_lines

    recorded = fingerprint(np.zeros((2400, 1080, 3), np.uint8), [])
    recorded = type(recorded)(texts=frozenset(recorded_texts), thumb=recorded.thumb)
    return FieldCheck(recorded, (0.5, 0.5), read_region, _shows_password), reads


def test_the_field_band_settles_the_check_only_when_it_is_as_recorded():
    frame = np.zeros((2400, 1080, 3), np.uint8)
    check, reads = _check({"email", "sign in"}, [_line("Email", 1180)])
    assert check(frame) == [("Email", (100, 1180, 700, 1230))] and check.settled == "band"
    (box,) = reads
    assert box.top == 1200 - 96 and box.bottom == 1200 + 96  # 8% of the screen around the field

    became, _ = _check({"email", "sign in"}, [_line("Password", 1180)])  # the field is a password field now
    assert _shows_password([t for t, _ in became(frame) or []]) == "Password"

    new, _ = _check({"email", "sign in"}, [_line("Enter the code we sent", 1180)])
    assert new(frame) is None and new.settled is None  # a new text near the field: the whole screen decides

    recorded_password, _ = _check({"password", "sign in"}, [_line("Sign in", 1180)])
    assert recorded_password(frame) is None  # the recording saw a password word elsewhere: full read again


def _count_full_reads(settings) -> tuple[object, list[str]]:
    """The run's perception, with every request for the whole screen's text counted, and
    every OCR of a band alone (``ocr_region``: what a Type's check reads)."""
    inner = build_locator(settings)
    asked: list[str] = []

    class Counting:
        def find_text(self, image, text, hierarchy=None):
            asked.append(f"find_text {text}")
            return inner.find_text(image, text, hierarchy)

        def find_icon(self, image, description, position=None, hierarchy=None):
            return inner.find_icon(image, description, position, hierarchy)

        def ocr(self, image):
            asked.append("ocr")
            return inner.ocr(image)

        def ocr_region(self, image, region):
            asked.append("ocr_region")
            return inner.ocr_region(image, region)

        def find_text_in_region(self, image, text, region, label="region"):
            return inner.find_text_in_region(image, text, region, label)

        def snap_targets(self, image, hierarchy=None):
            return inner.snap_targets(image, hierarchy)

        def snap(self, point, image, *, max_distance, drift_tolerance, hierarchy=None):
            return inner.snap(point, image, max_distance=max_distance, drift_tolerance=drift_tolerance,
                              hierarchy=hierarchy)

    return Counting(), asked


def _typed(sim_phone) -> str:
    """What the Maps search field holds (its view's ``fields``, simphone/STATE.md)."""
    view = sim_phone.phone.state()["tasks"][MAPS][-1]
    return str(view.get("fields", {}).get("search", ""))


def _password_rules(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[categories.password]\nwhy = "types into a password field"\nwords = ["search here"]\n')
    return {"agent.safety.rules_file": str(rules)}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_replayed_type_reads_only_around_its_field(adb_server, sim_phone, llm_server, tmp_path):
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server).with_overrides(
        {"cache.enabled": True})
    llm_server.script([*(plan_reply(a) for a in SEARCH), plan_reply("Stop"), DONE])
    assert Agent(settings).run(INSTRUCTION).status is RunStatus.COMPLETED
    (plan,) = PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}").list()
    typed = plan.steps[2]
    assert typed.operation == "type" and typed.field_at is not None
    assert typed.field_at[1] * sim_phone.phone.height < 320  # the search field at the top, not the keyboard

    sim_phone.phone.reset()
    locator, asked = _count_full_reads(settings)
    requests_before = len(llm_server.chat_requests)
    result = Agent(settings, locator=locator).run(INSTRUCTION)
    assert result.status is RunStatus.COMPLETED, result.reason
    assert len(llm_server.chat_requests) == requests_before and {s.by for s in result.steps} == {"replay"}
    # no whole-screen read: the tap's target was read in its band; the Type's band had its
    # recorded pixels, on a screen recorded clear of password words: nothing to read at all
    assert asked == []
    assert _typed(sim_phone) == "Hangzhou West Lake"

    sim_phone.phone.reset()  # the field became a password field (its hint is a password word now): asked
    channel = QueueChannel()
    channel.reply(UserReply("approve", by="test"))
    guarded = settings.with_overrides(_password_rules(tmp_path))
    again = Agent(guarded, channel=channel).run(INSTRUCTION)
    assert again.status is RunStatus.COMPLETED, again.reason
    assert [(r.kind, r.reason) for r in channel.requests] == [("confirm", "password: search here")]
    assert next(s for s in again.steps if s.operation_name == "type").by == "replay"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_password_field_of_the_recording_is_asked_about_again(adb_server, sim_phone, llm_server, tmp_path):
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server).with_overrides(
        {"cache.enabled": True, **_password_rules(tmp_path)})
    llm_server.script([*(plan_reply(a) for a in SEARCH), plan_reply("Stop"), DONE])
    first = QueueChannel()
    first.reply(UserReply("approve", by="test"))
    assert Agent(settings, channel=first).run(INSTRUCTION).status is RunStatus.COMPLETED
    assert [r.kind for r in first.requests] == ["confirm"]

    sim_phone.phone.reset()
    refused = QueueChannel()
    refused.reply(UserReply("deny", "not that field", by="test"))
    llm_server.script([plan_reply("Stop"), DONE])  # after the refusal the model has the run
    requests_before = len(llm_server.chat_requests)
    result = Agent(settings, channel=refused).run(INSTRUCTION)
    assert [(r.kind, r.reason) for r in refused.requests] == [("confirm", "password: search here")]
    typed = next(s for s in result.steps if s.operation_name == "type")
    assert typed.by == "replay" and not typed.ok and "refused" in typed.feedback
    assert len(llm_server.chat_requests) > requests_before
    assert _typed(sim_phone) == ""  # nothing typed into it


def test_a_typed_fields_place_is_where_its_text_showed_up_else_the_tap_before():
    after = [_line("Hangzhou West Lake", 190), _line("Hangzhou West Lake Scenic Area", 420), _line("q w e r t", 1570)]
    x, y = field_point("Hangzhou West Lake", after, (1080, 2400), before=(0.9, 0.9))
    assert abs(y * 2400 - 215) < 2 and abs(x * 1080 - 400) < 2  # the top-most line that shows it: the field
    assert field_point("{{secret:pin}}", after, (1080, 2400), before=(0.5, 0.3)) == (0.5, 0.3)  # dots: the tap
    assert field_point("anything", None, (1080, 2400), before=None) is None
