"""The accessibility tree where the pixels cannot check it (issue 30): a blank frame (a
FLAG_SECURE window captures black) leaves the tree alone to place a tap, so it taps only
on a whole label or a control's own content-desc and offers anything weaker as one
candidate; and with the pixels there, a tree that holds a target only inside a longer
label (the URL bar's ``https://m.youtube.com/...`` for "YouTube") leaves it to vision."""

from __future__ import annotations

import numpy as np

from perception import Box, LocateStatus, Location, Perception, PerceptionConfig, TextLine
from perception.accessibility import AccessibilityNode
from perception.tree_source import tree_location

W, H = 1080, 2400


def node(text: str, box: Box, *, desc: str = "", rid: str = "", clickable: bool = True) -> AccessibilityNode:
    return AccessibilityNode(text=text, content_desc=desc, resource_id=rid, class_name="android.widget.TextView",
                             package="com.example", clickable=clickable, enabled=True, password=False, bounds=box,
                             depth=2)  # fmt: skip


ROOT = node("", Box(0, 0, W, H), clickable=False)
BLACK = np.zeros((H, W, 3), np.uint8)
BLACK[:60] = 90  # the status bar stays: SystemUI's own layer


def perception() -> Perception:
    return Perception(PerceptionConfig(detector="proposals", ranker="heuristic", compute_device="cpu"))


def test_a_whole_label_is_a_tap_a_part_of_one_is_a_candidate() -> None:
    tree = [ROOT, node("Netflix", Box(0, 400, W, 560)), node("https://m.youtube.com/watch?v=1", Box(140, 63, 800, 200))]
    p = perception()
    assert p.blank(BLACK)
    found = p.find_text(BLACK, "Netflix", tree)
    assert found.status is LocateStatus.FOUND and found.point == (540, 480) and "accessibility only" in found.backend
    part = p.find_text(BLACK, "YouTube", tree)
    assert part.status is LocateStatus.CANDIDATES and len(part.candidates) == 1, part.status
    assert p.find_text(BLACK, "Amazon", tree).status is LocateStatus.NOT_FOUND


def test_a_control_and_its_text_with_one_label_are_one_place() -> None:
    button = Box(60, 900, 620, 1020)
    tree = [ROOT, node("Copy password", button), node("Copy password", Box(150, 930, 530, 990), clickable=False)]
    where = perception().find_text(BLACK, "Copy password", tree)
    assert where.status is LocateStatus.FOUND and button.contains(*where.point)


def test_icons_by_content_desc_tap_by_resource_id_only_offer() -> None:
    tree = [ROOT, node("", Box(0, 80, 120, 200), desc="Navigate up"), node("", Box(900, 80, 1040, 200), rid="com.example:id/search_btn")]
    p = perception()
    up = p.find_icon(BLACK, "back arrow", "top left", tree)
    assert up.status is LocateStatus.FOUND and Box(0, 80, 120, 200).contains(*up.point)
    search = p.find_icon(BLACK, "search", "top right", tree)
    assert search.status is LocateStatus.CANDIDATES and len(search.candidates) == 1
    # with the pixels drawn, the tree alone decides nothing (accessibility off: vision only)
    drawn = np.full((H, W, 3), 250, np.uint8)
    drawn[1000:1100, 200:800] = 20
    assert not p.blank(drawn)
    assert p.find_icon(drawn, "search", "top right", tree).backend != search.backend


def test_a_tree_that_holds_the_target_only_inside_a_longer_label_leaves_it_to_vision() -> None:
    url = node("https://m.youtube.com/watch?v=MdBvId4DyIg", Box(140, 63, 804, 200))
    image = np.full((H, W, 3), 250, np.uint8)

    def read(crop: np.ndarray) -> list[TextLine]:
        raise AssertionError("no spot check: the tree's match is not a whole label")

    def locate(image: np.ndarray, lines: list[TextLine], target: str, backend: str) -> Location:
        raise AssertionError("the tree's place is not used")

    assert tree_location(image, "YouTube", [ROOT, url], read, locate) is None
