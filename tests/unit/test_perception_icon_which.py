"""Which of several look-alike icons: by count or by a quoted text beside it (issue 30,
round 4). NBC Sports' live list (a Rico development screen, tests/data/rico-dev) has six
identical yellow play buttons, one per row: colour and shape cannot pick one, and the
plain description is rightly answered with candidates; the planner's count ("the second")
or the row's text ("in the 'CSN Philly Live' row", or unquoted when it is on the screen) can.
The boxes are the items of benchmarks/data/rico_icon_anchored.json (from the screen's view
hierarchy)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from perception import Box, LocateStatus, Perception, PerceptionConfig
from perception.icon_which import Which, WhichError, in_relation, read_which, reading_order

ROOT = Path(__file__).resolve().parents[2]
SCREEN = "air.com.nbcuni.com.nbcsports.liveextra/trace_0/868.jpg"
ROWS = ["Watch Golf Channel Live", "NBC Sports California Live", "TCN Philly Live", "CSN Philly Live",
        "CSN Mid-Atlantic Live", "CSN Chicago Live"]  # fmt: skip


def test_which_words_are_read_and_taken_out_of_the_look() -> None:
    assert read_which("yellow play button") == Which("yellow play button")
    assert read_which("the second yellow play circle") == Which("yellow play circle", 2)
    assert read_which("the last star") == Which("star", -1)
    assert read_which("the 3rd play button from the bottom") == Which("play button", 3, "bottom")
    assert read_which("the play button in the second row") == Which("play button", 2, "top")
    assert read_which("play button in the 'Premier League' row") == Which("play button", None, "reading", "row",
                                                                           "Premier League")  # fmt: skip
    assert read_which('the gear next to "Settings"') == Which("gear", None, "reading", "next", "Settings")
    assert read_which("grey check to the left of 'Wi-Fi'") == Which("grey check", None, "reading", "left", "Wi-Fi")
    assert read_which("arrow below ‘Inbox’") == Which("arrow", None, "reading", "below", "Inbox")
    # the quoted words are never colour or shape words for the ranker
    assert "house" not in read_which("red dot next to 'Home'").look and "home" not in read_which("red dot next to 'Home'").look


def test_what_planners_often_write_is_read_as_a_plain_description() -> None:
    # a relation to a text written without quotes: the text is tried on the screen (below), the
    # look is what comes before it, and the relation's words are never the look's
    assert read_which("the send button next to the text box") == Which("send button", None, "reading", "next",
                                                                       "text box", quoted=False)  # fmt: skip
    assert read_which("heart below the photo").look == "heart"  # "photo" would name a picture
    assert read_which("the second play button next to Settings") == Which("play button", 2)  # the count says which
    # a quoted text with no relation is part of the look, without its quotes
    assert read_which("the '+' button") == Which("the + button")
    assert read_which("play button 'News'") == Which("play button News")


@pytest.mark.parametrize(
    ("description", "which"),
    [
        ("three vertical dots in the NetHack server row", Which("three vertical dots", None, "reading", "row",
                                                                "NetHack server", quoted=False)),
        ("down arrow in a circle, right of 97 - A Simple Plan", Which("down arrow in circle", None, "reading",
                                                                      "right", "97 - A Simple Plan", quoted=False)),
        ("grey magnifying glass right of the Today button", Which("grey magnifying glass", None, "reading", "right",
                                                                  "Today", quoted=False)),
        ("dark folder next to Pause Folder", Which("dark folder", None, "reading", "next", "Pause Folder",
                                                   quoted=False)),
        ("grey heart under the Gigi post", Which("grey heart", None, "reading", "below", "Gigi", quoted=False)),
        # a count or a position is no text: "in the second row" counts, "in the top row" is where
        ("the play button in the second row", Which("play button", 2, "top")),
        ("play button in the top row", Which("play button in the top row")),
    ],
)  # fmt: skip
def test_a_text_written_without_quotes_is_an_anchor_to_look_for(description: str, which: Which) -> None:
    assert read_which(description) == which


@pytest.mark.parametrize(
    "description",
    [
        "icon above the keyboard",  # where it is from something unquoted, and no look
        "the second play button next to 'News'",  # a count and a text together
        "the second one",  # which one, but not what it looks like
        "the second third play button",  # two counts
        "the play button from the left",  # where to count from, without a count
        "play button in the 'A' row next to 'B'",  # two texts
    ],
)
def test_half_said_which_words_are_an_error_not_a_guess(description: str) -> None:
    with pytest.raises(WhichError):
        read_which(description)


def test_counting_order_and_relations() -> None:
    grid = [Box(300, 100, 350, 150), Box(100, 110, 150, 160), Box(100, 300, 150, 350), Box(300, 300, 350, 350)]
    assert reading_order(grid) == [1, 0, 2, 3]  # rows top to bottom, each left to right
    assert reading_order(grid, "right")[:2] == [0, 3]
    text = Box(200, 310, 500, 340)
    assert in_relation(grid[2], text, "row") == 0 and in_relation(grid[1], text, "row") is None  # any end of it
    assert in_relation(grid[2], text, "left") == 50 and in_relation(grid[2], text, "right") is None
    assert in_relation(Box(220, 200, 270, 250), text, "above") == 60
    assert in_relation(Box(220, 0, 270, 20), text, "above") is None  # far above: not "above" it


@functools.cache
def _screen() -> tuple[Perception, np.ndarray, list[Box]]:
    document = json.loads((ROOT / "benchmarks" / "data" / "rico_icon_anchored.json").read_text())
    rows = [Box(*i["box"]) for i in document["items"] if i["image"] == SCREEN and i["says"] == "count"]
    path = ROOT / "tests" / "data" / "rico-dev" / SCREEN
    if not path.is_file():
        raise FileNotFoundError(f"test data missing: {path} (committed with the tests; restore it with git)")
    perception = Perception(PerceptionConfig(detector="proposals", ranker="heuristic", compute_device="cpu"))
    return perception, np.asarray(Image.open(path).convert("RGB")), rows


def _tapped(description: str, position: str | None = None) -> int | None:
    """The row tapped (0-based), None for candidates; fails on a tap outside every row."""
    perception, pixels, rows = _screen()
    where = perception.find_icon(pixels, description, position)
    if where.status is not LocateStatus.FOUND:
        return None
    assert where.point is not None
    (row,) = [i for i, box in enumerate(rows) if box.contains(*where.point)]
    return row


def test_six_look_alike_play_buttons_are_candidates_when_not_told_which() -> None:
    assert _tapped("yellow play button") is None


@pytest.mark.parametrize("row", range(6))
def test_the_row_text_picks_the_play_button(row: int) -> None:
    assert _tapped(f"yellow play button in the '{ROWS[row]}' row") == row


def test_a_count_picks_the_play_button() -> None:
    assert _tapped("the second yellow play button") == 1
    assert _tapped("the 4th yellow play button", "bottom left") == 3  # counted over the screen, then checked
    assert _tapped("the last yellow play button") == 5
    assert _tapped("the first yellow play button from the bottom") == 5


def test_a_count_or_text_that_does_not_fit_is_no_tap() -> None:
    perception, pixels, _ = _screen()
    seventh = perception.find_icon(pixels, "the seventh yellow play button", None)  # only six: candidates
    assert seventh.status is LocateStatus.CANDIDATES and "Only 6" in seventh.feedback, seventh.feedback
    assert _tapped("the first yellow play button", "bottom right") is None  # the first is not there: no tap
    missing = perception.find_icon(pixels, "yellow play button in the 'Premier League' row", None)
    assert missing.status is LocateStatus.NOT_FOUND and "Premier League" in missing.feedback
    # a text written without quotes that is not on the screen: plain words, six alike, no tap
    unclear = perception.find_icon(pixels, "yellow play button next to Premier League", None)
    assert unclear.status is LocateStatus.CANDIDATES and len(unclear.candidates) >= 2, unclear


@pytest.mark.parametrize("row", range(6))
def test_the_row_text_without_quotes_picks_the_play_button(row: int) -> None:
    """Planners often leave the quotes out ("in the CSN Chicago Live row"): the text is on the
    screen, so it anchors the row as the quoted one does."""
    assert _tapped(f"yellow play button in the {ROWS[row]} row") == row
    assert _tapped(f"yellow play button left of {ROWS[row]}") == row  # the button starts the row


def test_the_click_icon_card_tells_the_model_it_may_say_which_one() -> None:
    """The planner only says "the second" or "in the 'News' row" when its prompt says it may:
    the paper prompt's card block, the function-calling schema's icon parameter, and an
    example the parser reads into an icon and no position."""
    from mobile_agent.operations import REGISTRY, parse_action

    block = REGISTRY.cards_prompt(["click_icon"])
    assert "by count" in block and "'News' row" in block and "next to 'Settings'" in block
    icon = REGISTRY.get("click_icon").schema()["properties"]["params"]["properties"]["icon"]
    assert "by count" in icon["description"] and "quoted text" in icon["description"]
    example = "Click icon (yellow play button in the 'Premier League' row)"
    assert example in block
    params = parse_action(f"Action: {example}").params.model_dump()
    assert params == {"icon": "yellow play button in the 'Premier League' row", "position": None}
    assert read_which(params["icon"]).anchor == "Premier League"


def test_a_chevron_written_as_its_character_is_its_words() -> None:
    """OpenBible's chapter bar (the sixth fresh set, development data since 00:20): "> right
    of John 3" was an error (a text without quotes and no look: '>' is no word), so the
    chevron was never looked for. A lone '>' or '<' is a chevron; in an arrow ("->") or a
    comparison (">=") it is not."""
    assert read_which("> right of John 3") == Which("right chevron", None, "reading", "right", "John 3", False)
    assert read_which("the '<' button").look == "the left chevron button"
    assert read_which("arrow -> x").look == "arrow -> x" and read_which(">=").look == ">="
    image = np.asarray(Image.open(ROOT / "benchmarks" / "data" / "fresh6" / "openbible" / "1.png").convert("RGB"))
    where = Perception(PerceptionConfig(detector="proposals", ranker="heuristic", compute_device="cpu")).find_icon(
        image, "> right of John 3", "top right")
    assert where.status is LocateStatus.FOUND and Box(933, 230, 1059, 356).contains(*where.point), where
