"""A person in the loop, at the agent: a hand-over pauses the run until the person replies
(an answer, or "done" after acting on the phone themselves), a sensitive operation waits for
a yes, the app policy refuses what it denies, and a ``{{secret:name}}`` reaches the phone
but no file, prompt or log. The simulated phone over the real adb server, the planner
through the real openai client against the scripted server; the person is a
``QueueChannel`` fed from another thread. Outcomes are read from the phone's state."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from mobile_agent.agent import Agent, RunStatus
from mobile_agent.agent.guard import Guard
from mobile_agent.agent.people import QueueChannel, UserReply
from mobile_agent.errors import ConfigError
from mobile_agent.operations import REGISTRY, parse_action
from mobile_agent.settings import SafetySettings
from tests.agent_helpers import agent_settings, plan_reply, request_text

NOTES = "com.google.android.keep"
pytestmark = [pytest.mark.timeout(300)]


def _settings(adb_server, sim_phone, tmp_path, llm, **agent):
    agent.setdefault("completion_check", False)
    return agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm, **agent)


def _person(channel: QueueChannel, *replies: UserReply, asks: int = 1) -> threading.Thread:
    """Replies once the run has asked ``asks`` times (the person reads the question first)."""

    def act() -> None:
        for _ in range(asks):
            assert channel.asked.wait(30)
            channel.asked.clear()
        for reply in replies:
            channel.reply(reply)

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    return thread


def _centre(element: dict) -> dict[str, int]:
    left, top, right, bottom = element["box"]
    return {"x": (left + right) // 2, "y": (top + bottom) // 2}


def test_the_person_takes_over_on_the_phone_and_the_run_goes_on(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Ask user (Please open the Notes app for me)"), plan_reply("Stop")])
    channel = QueueChannel()
    events = []
    notes_icon = _centre(sim_phone.element("Notes"))
    person = _person(channel, UserReply("touch", touch=notes_icon, by="test"), UserReply("done", "opened it"))
    agent = Agent(_settings(adb_server, sim_phone, tmp_path, llm_server), channel=channel, on_event=events.append)

    result = agent.run("Open my notes")
    person.join(5)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert sim_phone.phone.foreground == NOTES  # the person's tap, on the phone
    assert [(s.by, s.operation_name) for s in result.steps] == [
        ("model", "ask_user"), ("person", "tap_point"), ("person", "user_reply"), ("model", "stop")
    ]
    assert [s.index for s in result.steps] == [1, 2, 3, 4]
    assert result.steps[1].tap_point == (notes_icon["x"], notes_icon["y"]) and result.steps[1].screen_changed
    assert result.steps[2].asked_user["reply"]["kind"] == "done"
    assert channel.requests[0].kind == "question" and "open the Notes app" in channel.requests[0].question
    second = request_text(llm_server.chat_requests[1])
    assert "The user took over" in second and "opened it" in second and "done by the user" in second
    kinds = [e.kind for e in events]
    assert kinds.index("waiting_for_user") < kinds.index("user_replied")
    lines = (result.trajectory_path).read_text(encoding="utf-8")
    assert '"by": "person"' in lines and '"asked_user"' in lines


def test_an_answer_goes_back_to_the_model(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Ask user (Which note title do you want?)"), plan_reply("Stop")])
    channel = QueueChannel()
    _person(channel, UserReply("answer", "Groceries"))
    result = Agent(_settings(adb_server, sim_phone, tmp_path, llm_server), channel=channel).run("Write a note")
    assert result.status is RunStatus.COMPLETED, result.reason
    assert "The user answered: Groceries" in request_text(llm_server.chat_requests[1])


def test_no_reply_in_time_ends_the_run_not_completed(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Ask user (Type the SMS code please)")])
    settings = _settings(adb_server, sim_phone, tmp_path, llm_server, user_timeout_s=0.4)
    result = Agent(settings, channel=QueueChannel()).run("Log in")
    assert result.status is RunStatus.NOT_COMPLETED
    assert "SMS code" in result.reason and "no reply within 0.4 s" in result.reason


def test_with_nobody_to_ask_a_hand_over_ends_at_once(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Ask user (Solve the captcha)")])
    result = Agent(_settings(adb_server, sim_phone, tmp_path, llm_server)).run("Log in")
    assert result.status is RunStatus.NOT_COMPLETED
    assert "handed over to the user: Solve the captcha" in result.reason and "no way to ask" in result.reason


@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_the_models_own_sensitive_tap_waits_for_a_yes(adb_server, sim_phone, llm_server, tmp_path, answer):
    # AutoGLM's sensitive Tap: do(action="Tap", element=[x,y], message="...") (zai-org/Open-AutoGLM
    # phone_agent/config/prompts_en.py; handler.py asks confirmation_callback(message) first)
    phone = sim_phone.phone
    x, y = _centre(sim_phone.element("Notes")).values()
    gx, gy = round(x / phone.width * 1000), round(y / phone.height * 1000)
    llm_server.model = "autoglm-phone-9b"
    llm_server.script([
        f'<think>Open it.</think><answer>do(action="Tap", element=[{gx},{gy}], message="Opens private notes")</answer>',
        '<think>Done.</think><answer>finish(message="ok")</answer>',
    ])
    settings = _settings(adb_server, sim_phone, tmp_path, llm_server).with_overrides(
        {"planner.model": "autoglm-phone-9b", "planner.snap": False}
    )
    channel = QueueChannel()
    _person(channel, UserReply(answer, "" if answer == "approve" else "not now"))
    result = Agent(settings, channel=channel).run("Open my notes")

    request = channel.requests[0]
    assert request.kind == "confirm" and "Opens private notes" in request.question
    first = result.steps[0]
    assert first.asked_user["reply"]["kind"] == answer
    if answer == "approve":
        assert phone.foreground == NOTES and first.ok
    else:
        assert phone.foreground != NOTES and not first.ok
        assert "the user refused it: not now" in request_text(llm_server.chat_requests[1])


def test_a_denied_app_is_never_opened(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Open App (Notes)"), plan_reply("Stop")])
    settings = _settings(adb_server, sim_phone, tmp_path, llm_server).with_overrides(
        {"agent.safety.deny_apps": [NOTES]}
    )
    result = Agent(settings).run("Open my notes")
    assert sim_phone.phone.foreground != NOTES
    assert not result.steps[0].ok and "app policy denies it" in result.steps[0].feedback
    assert "app policy denies it" in request_text(llm_server.chat_requests[1])


def test_a_secret_is_typed_but_never_written_shown_or_logged(adb_server, sim_phone, llm_server, tmp_path, caplog):
    from PIL import Image

    from mobile_agent.locate import build_locator

    secret = "Zebra4812Qx"
    llm_server.script([
        plan_reply("Open App (Notes)"),
        plan_reply("Click icon (orange plus, bottom right)"),
        plan_reply("Type ({{secret:note_pin}})", thought="The pin goes in the title."),
        plan_reply("Stop"),
    ])
    settings = _settings(adb_server, sim_phone, tmp_path, llm_server).with_overrides(
        {"agent.named_secrets": {"note_pin": secret}, "log_level": "DEBUG"}
    )
    with caplog.at_level(logging.DEBUG):
        result = Agent(settings).run("Write a note whose title is {{secret:note_pin}}")
    assert result.status is RunStatus.COMPLETED, result.reason
    assert sim_phone.phone.task(NOTES)[-1]["fields"]["title"] == secret  # the phone got the value

    # the model saw the name only
    assert all(secret not in request_text(r) for r in llm_server.chat_requests)
    assert "{{secret:note_pin}}" in request_text(llm_server.chat_requests[0])
    # no file of the run holds it, text or image bytes; the frame after typing does not show it
    for path in result.trajectory_dir.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    typed = result.trajectory_dir / result.steps[3].screenshot
    read = " ".join(line.text for line in build_locator(settings).ocr(np.asarray(Image.open(typed).convert("RGB"))))
    assert "zebra4812" not in read.lower().replace(" ", "")
    assert secret not in caplog.text


def test_an_instruction_naming_an_unset_secret_is_a_config_error(adb_server, sim_phone, llm_server, tmp_path):
    with pytest.raises(ConfigError, match="card_pin"):
        Agent(_settings(adb_server, sim_phone, tmp_path, llm_server)).run("Pay with {{secret:card_pin}}")


# --- the guard's rules, on screens read as text ---------------------------------------------------


def _guard(lines: list[tuple[str, tuple[int, int, int, int]]], **safety) -> Guard:
    return Guard(SafetySettings(**safety), read_screen=lambda pixels: lines)


BLANK = np.zeros((10, 10, 3), np.uint8)


@pytest.mark.parametrize(
    ("action", "category"),
    [
        ("Click text (Pay now)", "pay"),
        ("Click text (立即购买)", "pay"),
        ("Click text (Senden)", "send"),
        ("Click text (Supprimer)", "delete"),
        ("Click text (Install)", "install"),
        ("Click text (Publicar)", "post"),
        ("Click text (Screen lock)", "security"),
        ("Click text (Display & brightness)", None),
        ("Click text (Sender name)", None),  # whole words only
    ],
)
def test_words_make_an_operation_sensitive(action, category):
    verdict = _guard([]).check(parse_action(f"Action: {action}", REGISTRY), BLANK)
    assert (verdict.category or None) == category
    assert (verdict.confirm is not None) == (category is not None)


def test_a_tap_on_a_sensitive_word_and_typing_into_a_password_screen():
    from mobile_agent.operations.coordinates import COORDINATE_REGISTRY
    from mobile_agent.planner.dialects.base import build_action

    lines = [("Delete account", (100, 500, 400, 560)), ("Password", (100, 900, 300, 950))]
    guard = _guard(lines)
    on_delete = build_action(COORDINATE_REGISTRY, "tap_point", {"x": 250, "y": 530}, "tap")
    elsewhere = build_action(COORDINATE_REGISTRY, "tap_point", {"x": 900, "y": 2000}, "tap")
    assert guard.check(on_delete, BLANK).category == "delete"
    assert guard.check(elsewhere, BLANK).clear
    typed = parse_action("Action: Type (hunter2)", REGISTRY)
    assert guard.check(typed, BLANK).category == "password"
    # a secret the person gave is theirs to type
    assert guard.check(parse_action("Action: Type ({{secret:pw}})", REGISTRY), BLANK).clear
    assert _guard(lines, confirm_sensitive=False).check(on_delete, BLANK).clear


def test_extra_rules_from_a_file(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[categories.pay]\nwhy = "spends money"\nwords = ["spend"]\n', encoding="utf-8")
    guard = _guard([], rules_file=rules)
    verdict = guard.check(parse_action("Action: Click text (Spend 5 coins)", REGISTRY), BLANK)
    assert verdict.category == "pay" and "spends money" in verdict.confirm
    assert guard.check(parse_action("Action: Click text (Pay)", REGISTRY), BLANK).clear  # replaced
    rules.write_text("[categories.pay]\nwords = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        _guard([], rules_file=rules)


def test_password_fields_are_blacked_out_in_kept_frames(adb_server, sim_phone):
    """The phone's own accessibility dump (AOSP's uiautomator format, over adb) with one node
    marked password="true" as a login field would be: its box, and only it, goes black."""
    import re

    from mobile_agent.agent.mask import black_out, password_boxes
    from mobile_agent.device import open_device
    from mobile_agent.device.hierarchy import dump_hierarchy
    from mobile_agent.settings import AdbSettings
    from perception.accessibility import parse_uiautomator_dump

    device = open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)
    assert password_boxes(device) == []  # the simulated home screen has no password field
    xml = dump_hierarchy(device).xml
    marked, n = re.subn(r'(<node [^>]*text="Notes"[^>]*?)password="false"', r'\1password="true"', xml, count=1)
    assert n == 1
    (field,) = [x for x in parse_uiautomator_dump(marked) if x.password]
    box = (int(field.bounds.left), int(field.bounds.top), int(field.bounds.right), int(field.bounds.bottom))
    frame = device.screenshot().pixels
    kept = black_out(frame, [box])
    left, top, right, bottom = box
    assert not kept[top:bottom, left:right].any()
    outside = np.ones(frame.shape[:2], bool)
    outside[top:bottom, left:right] = False
    assert (kept[outside] == frame[outside]).all() and frame[top:bottom, left:right].any()


@pytest.mark.parametrize("policy", ["approve", "deny"])
def test_under_a_confirmation_policy_a_hand_over_with_nobody_says_so(adb_server, sim_phone, llm_server, tmp_path,
                                                                    policy):
    """``agent.safety.confirmations`` = approve/deny answers confirmations only; a question
    still goes to the run's channel, here nobody: the result says there is no way to ask (it
    said "no reply within 300 s", a wait that never happened)."""
    llm_server.script([plan_reply("Ask user (Solve the captcha)")])
    settings = _settings(adb_server, sim_phone, tmp_path, llm_server).with_overrides(
        {"agent.safety.confirmations": policy})
    result = Agent(settings).run("Log in")
    assert result.status is RunStatus.NOT_COMPLETED
    assert "no way to ask" in result.reason and "no reply within" not in result.reason
