"""The accessibility tree as a second text source, on published real ``uiautomator dump``s.

Fixtures (real dumps from a real phone, kept as published):
- ``tests/fixtures/uiautomator_dump_compose.xml``: a Jetpack Compose app
  (``com.photon.startup.app``), 1080x2194 window, nodes scrolled away dumped with
  ``bounds="[0,0][0,0]"``; from github.com/gezihua123/phoneagent,
  ``tests/fixtures/window_dump.xml`` at commit df9789dd9393d048260d2cbb2fd73362529eb1e5.
- ``tests/fixtures/uiautomator_dump_chrome.xml``: Chrome showing a Google Groups page
  (WebView content in the tree); same repository and commit, ``tests/fixtures/ui.xml``.

Device outputs quoted from tools that drive real phones (found with the code search):
``UI hierchary dumped to: /dev/tty`` (AOSP DumpCommand's confirmation, typo included),
``ERROR: null root node returned by UiTestAutomationBridge.`` and
``ERROR: could not get idle state.``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from mobile_agent.device.hierarchy import split_dump_output
from perception import InvalidInputError, LocateStatus, Perception, PerceptionConfig
from perception.accessibility import parse_uiautomator_dump, text_lines, tree_fits_image

FIXTURES = Path(__file__).parent.parent / "fixtures"
COMPOSE = (FIXTURES / "uiautomator_dump_compose.xml").read_text(encoding="utf-8")
CHROME = (FIXTURES / "uiautomator_dump_chrome.xml").read_text(encoding="utf-8")
CJK_FONT = "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"
SIZE = (1080, 2194)


def test_real_compose_dump_parses_into_typed_nodes() -> None:
    nodes = parse_uiautomator_dump(COMPOSE)
    title = next(n for n in nodes if n.text == "五行分布")
    assert (title.bounds.left, title.bounds.top, title.bounds.right, title.bounds.bottom) == (454, 1568, 626, 1633)
    assert title.class_name == "android.widget.TextView" and title.package == "com.photon.startup.app"
    assert not title.clickable and title.enabled and not title.password
    back = next(n for n in nodes if n.content_desc == "返回")
    assert back.label == "返回" and back.text == ""
    assert any(n.clickable for n in nodes)
    # "Fortune" is dumped with bounds [0,0][0,0]: scrolled away, not on screen
    assert "Fortune" in COMPOSE and all(n.text != "Fortune" for n in nodes)
    assert tree_fits_image(nodes, SIZE)
    assert not tree_fits_image(nodes, (540, 1097))  # a half-size screenshot is another screen
    assert not tree_fits_image([], SIZE)


def test_real_chrome_dump_and_its_text_lines() -> None:
    nodes = parse_uiautomator_dump(CHROME.encode("utf-8"))  # bytes as adb returns them
    lines = text_lines(nodes, SIZE)
    assert "groups.google.com/g/loglogic-testing" in [ln.text for ln in lines]
    assert all(0 <= ln.box.left < ln.box.right <= SIZE[0] and ln.box.bottom <= SIZE[1] for ln in lines)
    assert all(ln.score == 1.0 for ln in lines)


@pytest.mark.parametrize(
    "output",
    [
        "ERROR: null root node returned by UiTestAutomationBridge.",
        "ERROR: could not get idle state.",
        "",
        '<?xml version="1.0"?><hierarchy rotation="0"><node bounds="[0,0][10,10]">',  # cut short
        "<html><body>not a dump</body></html>",
    ],
)
def test_device_error_outputs_are_not_trees(output: str) -> None:
    with pytest.raises(InvalidInputError):
        parse_uiautomator_dump(output)


def test_dump_to_dev_tty_output_is_split_from_its_confirmation() -> None:
    dump = split_dump_output(COMPOSE + "UI hierchary dumped to: /dev/tty\n")
    assert dump.error is None and dump.xml is not None and dump.xml.endswith("</hierarchy>")
    assert len(parse_uiautomator_dump(dump.xml)) == len(parse_uiautomator_dump(COMPOSE))
    failed = split_dump_output("ERROR: null root node returned by UiTestAutomationBridge.\n")
    assert failed.xml is None and failed.error == "ERROR: null root node returned by UiTestAutomationBridge."


# --- the tree against the pixels (RapidOCR with its real weights) ----------------------------


def _draw(nodes, shift: int = 0) -> np.ndarray:
    """A screen drawn from the tree's text nodes (each text filling its node's height)."""
    image = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(image)
    for node in nodes:
        if node.text.strip() and node.bounds.height < 200:
            font = ImageFont.truetype(CJK_FONT, int(node.bounds.height * 0.7))
            draw.text((node.bounds.left + 4, node.bounds.top + shift + 4), node.text, fill="black", font=font)
    return np.asarray(image)


@pytest.fixture(scope="module")
def tree_on() -> Perception:
    return Perception(PerceptionConfig(accessibility=True, compute_device="cpu"))


def test_tree_that_agrees_gives_exact_bounds_without_full_ocr(tree_on: Perception) -> None:
    nodes = parse_uiautomator_dump(COMPOSE)
    image = _draw(nodes)
    where = tree_on.find_text(image, "五行分布", hierarchy=COMPOSE)
    assert where.status is LocateStatus.FOUND and where.backend == "accessibility"
    assert where.point == (540, 1600)
    assert "ocr" not in tree_on.timings  # no full-screen OCR pass ran


def test_stale_tree_leaves_it_to_vision(tree_on: Perception) -> None:
    nodes = parse_uiautomator_dump(COMPOSE)
    image = _draw(nodes, shift=400)  # the screen scrolled after the dump
    where = tree_on.find_text(image, "五行分布", hierarchy=COMPOSE)
    assert where.backend != "accessibility"
    assert where.status is LocateStatus.FOUND and 1968 <= where.point[1] <= 2033  # where the pixels have it


def test_text_missing_from_tree_is_found_by_vision_and_tree_off_means_vision(tree_on: Perception) -> None:
    nodes = parse_uiautomator_dump(COMPOSE)
    image = Image.fromarray(_draw(nodes))
    ImageDraw.Draw(image).text((100, 1400), "Canvas only", fill="black", font=ImageFont.truetype(CJK_FONT, 48))
    pixels = np.asarray(image)
    where = tree_on.find_text(pixels, "Canvas only", hierarchy=COMPOSE)
    assert where.status is LocateStatus.FOUND and where.backend != "accessibility"
    assert 1400 <= where.point[1] <= 1460
    vision = Perception(PerceptionConfig(compute_device="cpu"))  # default: accessibility off
    assert vision.find_text(pixels, "五行分布", hierarchy=COMPOSE).backend != "accessibility"
    broken = tree_on.find_text(pixels, "五行分布", hierarchy="ERROR: could not get idle state.")
    assert broken.status is LocateStatus.FOUND and broken.backend != "accessibility"
    with pytest.raises(InvalidInputError):
        tree_on.find_text(pixels, "五行分布", hierarchy=42)


# --- end to end: the simulated phone over the real adb server --------------------------------


@pytest.fixture
def device(sim_phone, adb_server):
    from mobile_agent.device import open_device
    from mobile_agent.settings import AdbSettings

    return open_device(AdbSettings(server_port=adb_server.port, command_timeout_s=20), serial=sim_phone.serial)


def test_simulated_phone_tree_over_adb_gives_the_ground_truth_place(sim_phone, device, tree_on) -> None:
    from mobile_agent.device.hierarchy import dump_hierarchy

    sim_phone.device.shell(["monkey", "-p", "com.android.settings", "-c", "android.intent.category.LAUNCHER", "1"])
    shot = device.screenshot()
    dump = dump_hierarchy(device)
    assert dump.error is None and dump.xml is not None
    truth = sim_phone.element("Display & brightness")
    where = tree_on.find_text(shot.pixels, "Display & brightness", hierarchy=dump.xml)
    assert where.status is LocateStatus.FOUND and where.backend == "accessibility"
    left, top, right, bottom = truth["box"]
    assert left <= where.point[0] <= right and top <= where.point[1] <= bottom
    # the screen turned off: the phone answers its real error, and there is no tree
    sim_phone.device.shell(["input", "keyevent", "POWER"])
    off = dump_hierarchy(device)
    assert off.xml is None and off.error == "ERROR: null root node returned by UiTestAutomationBridge."
