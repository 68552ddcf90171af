"""Reading the model's text: plan sections, candidate numbers, completion verdicts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.planner import parse_choice, parse_verdict, split_plan_reply


def test_split_plan_reply_sections() -> None:
    raw = (
        "**Observation:** The Settings app is open.\n"
        "It lists Wi-Fi and Bluetooth.\n\n"
        "### Thought\nDark mode is under Display.\n\n"
        "Action: click text (Display & brightness)\n"
    )
    observation, thought, action = split_plan_reply(raw)
    assert observation == "The Settings app is open.\nIt lists Wi-Fi and Bluetooth."
    assert thought == "Dark mode is under Display."
    assert action == "click text (Display & brightness)"


def test_a_section_the_parser_knows_ends_the_one_before() -> None:
    # Planner and parser read the same section names: a Reflection (or Plan, Summary…)
    # between Thought and Action belongs to neither.
    raw = "Observation: a list\nThought: tap it\nReflection: last time nothing moved\nAction: Back"
    assert split_plan_reply(raw) == ("a list", "tap it", "Back")
    assert split_plan_reply("Thoughts: plural\nAction: Home")[1] == "plural"


def test_split_plan_reply_last_action_and_missing_sections() -> None:
    observation, thought, action = split_plan_reply("Action: back\nThoughts: no\nAction: stop")
    assert (observation, thought, action) == ("", "no", "stop")
    assert split_plan_reply("click text (OK)") == ("", "", "click text (OK)")
    assert split_plan_reply("") == ("", "", "")


@pytest.mark.parametrize(
    "reply,valid,expected",
    [
        ("2", {1, 2, 3}, 2),
        ("Candidate 3.", {1, 2, 3}, 3),
        ("I choose number 1 because it is the search bar", {1, 2}, 1),
        ("7", {1, 2, 3}, None),
        ("1.5", {1, 2}, None),
        ("none", {1, 2}, None),
        ("10 or 2", {1, 2}, 2),
    ],
)
def test_parse_choice(reply: str, valid: set[int], expected: int | None) -> None:
    assert parse_choice(reply, valid) == expected


@pytest.mark.parametrize(
    "reply,done",
    [
        ("Verdict: done\nReason: all set", True),
        ("Verdict: not done\nReason: the note is empty", False),
        ("Verdict: not yet complete", False),
        ("Verdict: incomplete", False),
        ("yes", True),
        ("No, the toggle is off.", False),
        ("maybe?", None),
    ],
)
def test_parse_verdict(reply: str, done: bool | None) -> None:
    assert parse_verdict(reply)[0] is done


def test_verdict_reason_is_read() -> None:
    assert parse_verdict("Verdict: not done\nReason: the note   is\nempty")[1] == "the note is empty"


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_readers_never_raise(text: str) -> None:
    split_plan_reply(text)
    assert parse_choice(text, {1, 2, 3}) in (None, 1, 2, 3)
    assert parse_verdict(text)[0] in (None, True, False)
