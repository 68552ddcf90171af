"""The action parser on real model output (Mobile-Agent v1 runs) and adversarial variants."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_data import reference_steps

from mobile_agent.errors import (
    InvalidParametersError,
    OperationError,
    OperationParseError,
    UnknownOperationError,
)
from mobile_agent.operations import REGISTRY, extract_action_section, parse_action
from mobile_agent.operations.coordinates import COORDINATE_REGISTRY

REFERENCE_STEPS = reference_steps()
_PAPER_RE = re.compile(r"^\s*(?P<name>[A-Za-z ]+?)\s*(?:\((?P<args>.*)\))?\s*\.?\s*$")
_PAPER_NAMES = {
    "open app": "open_app",
    "click text": "click_text",
    "click icon": "click_icon",
    "type": "type",
    "page down": "page_down",
    "page up": "page_up",
    "back": "back",
    "exit": "exit",
    "stop": "stop",
}


def test_reference_runs_hold_every_step() -> None:
    assert len(REFERENCE_STEPS) == 118  # the README's count: a lost file shows here


@pytest.mark.parametrize("where,step", REFERENCE_STEPS, ids=[w for w, _ in REFERENCE_STEPS])
def test_every_reference_action_parses(where: str, step: dict[str, str]) -> None:
    action = parse_action(step["Action"])
    # Independent reading of the paper's syntax: name, then the arguments in parentheses.
    m = _PAPER_RE.match(step["Action"])
    assert m is not None
    assert action.name == _PAPER_NAMES[m.group("name").strip().lower()]
    args = (m.group("args") or "").strip()
    if action.name in ("click_text", "open_app"):
        value = action.params.text if action.name == "click_text" else action.params.app
        assert value == args
    elif action.name == "type":
        assert action.params.text == args.strip('"')
    elif action.name == "click_icon":
        icon, _, position = args.rpartition(",")
        assert action.params.icon == icon.strip()
        assert action.params.position == " ".join(position.split())


@pytest.mark.parametrize("where,step", REFERENCE_STEPS[::7], ids=[w for w, _ in REFERENCE_STEPS[::7]])
def test_reference_full_replies_parse(where: str, step: dict[str, str]) -> None:
    reply = f"Observation: {step['Observation']}\nThought: {step['Thought']}\nAction: {step['Action']}"
    assert parse_action(reply) == parse_action(step["Action"])


@pytest.mark.parametrize(
    "text,name,params",
    [
        ("stop.", "stop", {}),
        ("STOP", "stop", {}),
        ("  Stop (the task is done) ", "stop", {}),
        ("click text (Settings)", "click_text", {"text": "Settings"}),
        ("Click the text (Settings)", "click_text", {"text": "Settings"}),
        ("click_text(Settings)", "click_text", {"text": "Settings"}),
        ("ClickText(Settings)", "click_text", {"text": "Settings"}),
        ("CLICK   TEXT   ( Settings )", "click_text", {"text": "Settings"}),
        ("**Click text (Settings)**", "click_text", {"text": "Settings"}),
        ("`click text (Settings)`", "click_text", {"text": "Settings"}),
        ('click text ("Settings")', "click_text", {"text": "Settings"}),
        ("click text ('Wi-Fi')", "click_text", {"text": "Wi-Fi"}),
        ("click text （设置）", "click_text", {"text": "设置"}),
        ("click text “Display & brightness”", "click_text", {"text": "Display & brightness"}),
        ('click_text(text="Wi-Fi")', "click_text", {"text": "Wi-Fi"}),
        ("click text Settings", "click_text", {"text": "Settings"}),
        ("tap on the text (OK)", "click_text", {"text": "OK"}),
        ("click text (Add (optional))", "click_text", {"text": "Add (optional)"}),
        ("- click text (Settings);", "click_text", {"text": "Settings"}),
        ("1. click text (Settings)", "click_text", {"text": "Settings"}),
        ("open App (YouTube).", "open_app", {"app": "YouTube"}),
        ("open_app(app='Play Store')", "open_app", {"app": "Play Store"}),
        ("Open Settings", "open_app", {"app": "Settings"}),
        ("click icon (checkmark, top right)", "click_icon", {"icon": "checkmark", "position": "top right"}),
        ("Click icon (red, round button, Bottom-Left)", "click_icon", {"icon": "red, round button", "position": "bottom left"}),
        ("click icon（gear，top）", "click_icon", {"icon": "gear", "position": "top"}),
        ("click icon (gear, right, top)", "click_icon", {"icon": "gear", "position": "top right"}),
        ("click icon (blue circle)", "click_icon", {"icon": "blue circle", "position": None}),
        ("click icon (left arrow, upper left)", "click_icon", {"icon": "left arrow", "position": "top left"}),
        ("click icon (checkmark, top-right corner of the screen)", "click_icon", {"icon": "checkmark", "position": "top right"}),
        ("click icon (the screen, center)", "click_icon", {"icon": "the screen", "position": "center"}),
        ('click_icon(icon="gear", position="middle")', "click_icon", {"icon": "gear", "position": "center"}),
        ('type ("Oh, chef, your spirit")', "type", {"text": "Oh, chef, your spirit"}),
        ("type (Your note content here.)", "type", {"text": "Your note content here."}),
        ("type (today's Lakers games)", "type", {"text": "today's Lakers games"}),
        ("type (:))", "type", {"text": ":)"}),
        ('type ("  two leading spaces")', "type", {"text": "  two leading spaces"}),
        ('click text (" Settings ")', "click_text", {"text": "Settings"}),
        ('click_icon(icon=" gear ", position=" top ")', "click_icon", {"icon": "gear", "position": "top"}),
        ("Type (Hello, world)", "type", {"text": "Hello, world"}),
        ("input text (abc)", "type", {"text": "abc"}),
        ("page_down", "page_down", {}),
        ("scroll down", "page_down", {}),
        ("Page Up", "page_up", {}),
        ("go back", "back", {}),
        ("exit.", "exit", {}),
        ("press home", "home", {}),
        ("Long press (Notes)", "long_press", {"text": "Notes"}),
        ("swipe left", "swipe_left", {}),
        ("Swipe_Right", "swipe_right", {}),
        ("press enter", "enter", {}),
        ("wait", "wait", {"seconds": 2.0}),
        ("Wait (5)", "wait", {"seconds": 5.0}),
        ("Wait (3s)", "wait", {"seconds": 3.0}),
        ("wait 2.5 seconds", "wait", {"seconds": 2.5}),
        ("Wait (1 Second).", "wait", {"seconds": 1.0}),
        ('{"action": "click_text", "params": {"text": "Settings"}}', "click_text", {"text": "Settings"}),
        ('{"action": "Click icon", "icon": "gear", "position": "top"}', "click_icon", {"icon": "gear", "position": "top"}),
    ],
)
def test_variants(text: str, name: str, params: dict[str, object]) -> None:
    action = parse_action(text)
    assert action.name == name
    assert action.params.model_dump() == params


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("Observation: x\nThought: y\nAction: click text (A)\nAction: click text (B)", "B"),
        ("Thought: I'll Action: click text (A)\n**Action:** `click text (B)`", "B"),
        ("### Action\n```\nclick text (C)\n```", "C"),
        ("Observation: the screen\n\nAction:\n\nclick text (D)\n", "D"),
        ("Action：click text (E)", "E"),
        ("Observation: x\nAction: I will tap it.\nclick text (F)", "F"),
        ("Sure!\nclick text (G)", "G"),
        ("Observation: a list\nThought: tap it\n\nclick text (H)", "H"),
    ],
)
def test_action_section_choice(reply: str, expected: str) -> None:
    action = parse_action(reply)
    assert action.name == "click_text"
    assert action.params.text == expected


def test_extract_action_section_last_wins() -> None:
    reply = "Action: back\nThought: no wait\nAction: stop\nSummary: done"
    assert extract_action_section(reply) == "stop"
    assert extract_action_section("Observation: nothing") is None


@pytest.mark.parametrize(
    "reply,error",
    [
        ("", OperationParseError),
        ("   \n\n", OperationParseError),
        ("Observation: a\nThought: b", OperationParseError),
        ("Observation: a\nThought: I would click text (X) here, but no", OperationParseError),
        ("Action:", OperationParseError),
        ("Action: dance (wildly)", UnknownOperationError),
        ("Action: fly away", UnknownOperationError),
        ("I am not sure what to do.\nMaybe later.", OperationParseError),
        ("click text ()", InvalidParametersError),
        ("click text", InvalidParametersError),
        ("type ()", InvalidParametersError),
        ("open app", InvalidParametersError),
        ("click icon (gear, top, bottom)", InvalidParametersError),
        ("Wait (100)", InvalidParametersError),
        ("Wait (soon)", InvalidParametersError),
        ('{"action": "fly"}', UnknownOperationError),
        ('{"action": "click text", "params": [1, 2]}', InvalidParametersError),
        ("click text (" + "x" * 300 + ")", InvalidParametersError),
    ],
)
def test_errors_are_typed(reply: str, error: type[OperationError]) -> None:
    with pytest.raises(error) as info:
        parse_action(reply)
    assert info.value.message
    assert info.value.to_dict()["type"] == error.__name__


def test_error_messages_speak_to_the_model() -> None:
    with pytest.raises(UnknownOperationError) as info:
        parse_action("Action: dance (wildly)")
    assert info.value.message.startswith("Your action 'dance (wildly)' is not one of:")
    assert "Click text (Text)" in info.value.message
    assert info.value.operation == "dance (wildly)"

    with pytest.raises(InvalidParametersError) as info2:
        parse_action("click icon (gear, top bottom)")
    assert "Position" in info2.value.message and "top right" in info2.value.message
    assert info2.value.operation == "click_icon"

    with pytest.raises(InvalidParametersError) as info3:
        parse_action("click text ()")
    assert "Click text (Text)" in info3.value.message

    with pytest.raises(OperationParseError) as info4:
        parse_action("Observation: only")
    assert "Action:" in info4.value.message
    assert info4.value.reply == "Observation: only"


def test_non_string_reply_is_a_parse_error() -> None:
    with pytest.raises(OperationParseError):
        parse_action(None)  # type: ignore[arg-type]


def test_canonical_text_round_trips() -> None:
    for text in ["Click icon (gear, top right)", "Type (a, b)", "Open App (Settings)", "Page down", "Wait (3.0)"]:
        action = parse_action(text)
        assert action.text == text
        assert parse_action(action.text) == action


_WORDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="()（）\n\r"),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() and s.strip()[0] not in "\"'`“‘「『«„" and s.strip()[-1] not in "\"'`”’」』»“")


_TYPED_ERRORS = (OperationParseError, UnknownOperationError, InvalidParametersError)
# every card's own examples, as (operation, example): each one parses to its card
_EXAMPLES = [(card.name, example) for card in REGISTRY.cards() for example in card.examples]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_an_action_or_a_typed_error(text: str) -> None:
    try:
        action = parse_action(text)
    except OperationError as exc:
        assert isinstance(exc, _TYPED_ERRORS) and exc.message.strip()  # one of the three, said in words
    else:
        assert action.name in REGISTRY.names()


@settings(max_examples=200, deadline=None)
@given(noise=st.text(max_size=300), example=st.sampled_from(_EXAMPLES))
def test_an_action_after_any_text_is_found(noise: str, example: tuple[str, str]) -> None:
    # whatever the model wrote before it, a last Action section holding a valid
    # operation is read (a parser that refuses everything fails here)
    name, line = example
    assert parse_action(f"{noise}\nAction: {line}").name == name


@settings(max_examples=150, deadline=None)
@given(
    value=_WORDS,
    name=st.sampled_from(["click text", "Click the text", "click_text", "CLICK TEXT", "ClickText", "tap"]),
    wrap=st.sampled_from(["{}", "**{}**", "`{}`", "{}.", "  {}  ", "- {}"]),
    quote=st.sampled_from(['{}', '"{}"', "'{}'", "“{}”"]),
    paren=st.sampled_from(["({})", "（{}）", " ( {} ) "]),
)
def test_click_text_variants_keep_the_text(value: str, name: str, wrap: str, quote: str, paren: str) -> None:
    line = wrap.format(name + " " + paren.format(quote.format(value)))
    action = parse_action(f"Observation: o\nThought: t\nAction: {line}")
    assert action.name == "click_text"
    assert action.params.text == value.strip()[:200] or len(value.strip()) > 200


_POSITIONISH = {
    "top", "bottom", "left", "right", "center", "centre", "middle", "upper", "lower", "up", "down", "central",
    "corner", "side", "of", "the", "screen", "part", "area", "edge", "at", "on", "in",
}


@settings(max_examples=100, deadline=None)
@given(
    icon=_WORDS.filter(lambda s: "," not in s and "，" not in s and not all(
        w in _POSITIONISH for w in s.lower().replace("-", " ").replace("_", " ").replace("/", " ").split()
    )),
    vertical=st.sampled_from(["top", "bottom", "upper", "lower", ""]),
    horizontal=st.sampled_from(["left", "right", "center", ""]),
)
def test_click_icon_split(icon: str, vertical: str, horizontal: str) -> None:
    position = " ".join(p for p in (vertical, horizontal) if p)
    text = f"click icon ({icon}, {position})" if position else f"click icon ({icon})"
    action = parse_action(text)
    assert action.name == "click_icon"
    assert action.params.icon == icon.strip()
    if position:
        canonical = {"upper": "top", "lower": "bottom"}.get(vertical, vertical)
        expected = sorted({canonical, horizontal} - {""}, key=("top", "bottom", "center", "left", "right").index)
        assert action.params.position == " ".join(expected)
    else:
        assert action.params.position is None


def test_typed_text_is_declared_by_the_operations_that_type_and_only_them() -> None:
    """``ParsedAction.typed_text`` (what the secret mask arms on) reads the Type card's declared
    parameters: every written form of a Type gives its text whole, secret references kept; an
    action that only names a text (Click text, Long press) types nothing."""
    for reply in ("Type ({{secret:pin}})", 'type(text="{{secret:pin}}")',
                  '{"action": "type", "params": {"text": "{{secret:pin}}"}}', "Action: Input ({{secret:pin}})"):
        assert parse_action(reply).typed_text == "{{secret:pin}}", reply
    for registry in (REGISTRY, COORDINATE_REGISTRY):  # the grounded dialects' actions too
        for card in registry:
            for example in card.examples:
                typed = registry.parse(example).typed_text
                assert (typed is not None) == (card.name == "type"), (card.name, example, typed)
