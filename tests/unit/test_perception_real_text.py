"""Kinds of failure seen on real screens (issue 11), each pinned by a test: the layout
rules on typed OCR lines (no model), then RapidOCR with its real weights for the zoomed
second look and the reuse of unchanged rows between frames."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from perception import Box, LocateStatus, Perception, PerceptionConfig, TextLine
from perception.ocr import RapidOcrBackend, ReusingReader, detector_side
from perception.text_layout import merge_tile_pairs, status_bar_bottom
from perception.text_match import TIER_FUZZY, TIER_PARTIAL, locate_text, match_text

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
SIZE = (1080, 2400)
KW = {"max_candidates": 4, "max_box_fraction": 0.25, "crop_margin": 0.05, "max_listed": 12}


def line(text: str, left: float, top: float, right: float, bottom: float) -> TextLine:
    return TextLine(text, Box(left, top, right, bottom), 0.95)


def blank() -> np.ndarray:
    return np.full((SIZE[1], SIZE[0], 3), 255, np.uint8)


def clock() -> TextLine:
    return line("12:35", 40, 20, 150, 60)


def test_app_tile_with_its_name_in_the_logo_taps_the_label() -> None:
    logo = line("Spotify", 130, 700, 330, 760)  # the name drawn inside the icon
    label = line("Spotify", 160, 800, 300, 840)  # the label under it
    other = line("Maps", 460, 800, 560, 840)
    where = locate_text(blank(), [clock(), logo, label, other], "Spotify", **KW)
    assert where.status is LocateStatus.FOUND and label.box.contains(*where.point)
    # two rows of a list (same size, same left edge, close together) are not a tile
    two_rows = [line("Partly cloudy", 441, 1373, 718, 1429), line("Partly cloudy", 441, 1504, 716, 1560)]
    assert locate_text(blank(), two_rows, "Partly cloudy", **KW).status is LocateStatus.CANDIDATES
    # the same word in three rows of a list is a list, not a tile: all three are offered
    rows = [line("Spotify", 100, 500 + 200 * i, 300, 540 + 200 * i) for i in range(3)]
    assert locate_text(blank(), rows, "Spotify", **KW).status is LocateStatus.CANDIDATES
    assert merge_tile_pairs([r.box for r in rows]) == [0, 1, 2]


def test_ellipsized_text_matches_the_full_title() -> None:
    lines = [line("Best of 2023 (Tay…", 40, 900, 600, 950), line("Best of 2022", 40, 1100, 400, 1150)]
    where = locate_text(blank(), lines, "Best of 2023 (Taylor's Version)", **KW)
    assert where.status is LocateStatus.FOUND and where.point == (320, 925)
    assert match_text(lines, "Best of 2023 (Taylor's Version)", SIZE, 0.25)[0].tier == TIER_FUZZY
    dots = [line("Notifications and sta...", 40, 900, 600, 950)]
    assert locate_text(blank(), dots, "Notifications and status bar", **KW).status is LocateStatus.FOUND
    # wrapped over two lines and cut on the second
    wrapped = [line("Frankieiz12", 46, 102, 128, 122), line("Black Ho...", 44, 117, 128, 140)]
    where = locate_text(blank(), wrapped, "Frankieiz12 Black Hoodie With XL Arms", **KW)
    assert where.status is LocateStatus.FOUND and where.box == Box(44, 102, 128, 140)
    # a URL bar shows the start of a long URL, cut by the field's edge (no ellipsis)
    url = [line("https://www.walmart.com/sear", 126, 103, 818, 162), line("Walmart", 402, 219, 618, 282)]
    where = locate_text(blank(), url, "https://www.walmart.com/search/?query=cereal&cat_id=976759&typeahead=cere", **KW)
    assert where.status is LocateStatus.CANDIDATES and where.candidates[0].text.startswith("https://www.walmart")
    # the kept part must start the target: another title cut the same way is not it
    assert locate_text(blank(), [line("Best of 2021 (Ed…", 40, 900, 600, 950)], "Best of 2023 (Taylor's Version)",
                       **KW).status is LocateStatus.NOT_FOUND  # fmt: skip


def test_paraphrased_or_extended_target_is_offered_never_tapped() -> None:
    lines = [clock(), line("Display & brightness", 40, 900, 500, 950), line("Sound", 40, 1100, 200, 1150)]
    where = locate_text(blank(), lines, "Display & brightness settings menu", **KW)
    assert where.status is LocateStatus.CANDIDATES and len(where.candidates) == 1
    assert where.candidates[0].text == "Display & brightness" and "nearest" in where.feedback
    assert match_text(lines, "Display & brightness settings menu", SIZE, 0.25)[0].tier == TIER_PARTIAL
    # a line that covers too little of the target is no candidate
    assert locate_text(blank(), lines, "Sound and vibration settings", **KW).status is LocateStatus.NOT_FOUND


def test_lone_digit_never_matches_the_status_bar() -> None:
    lines = [line("5", 60, 22, 80, 58), clock(), line("Quantity", 40, 900, 300, 950)]  # "5" sits in the bar
    assert status_bar_bottom(lines, SIZE[1]) > 58
    assert locate_text(blank(), lines, "5", **KW).status is LocateStatus.NOT_FOUND
    # a request that names the bar, or is the clock's own text, keeps it searchable
    assert locate_text(blank(), lines, "12:35", **KW).status is LocateStatus.FOUND
    named = [line("Battery 80%", 800, 20, 1040, 60), clock()]
    assert locate_text(blank(), named, "Battery 80%", **KW).status is LocateStatus.FOUND
    # a full-screen app (no clock up there): its top line is an ordinary target
    game = [line("0", 250, 18, 280, 52), line("Score", 40, 18, 200, 52)]
    assert locate_text(blank(), game, "0", **KW).status is LocateStatus.FOUND


def test_the_same_word_more_often_than_the_limit_is_still_offered() -> None:
    lives = [line("LIVE", 65, 750 + 227 * i, 106, 790 + 227 * i) for i in range(6)]
    where = locate_text(blank(), [clock(), *lives], "LIVE", **KW)
    assert where.status is LocateStatus.CANDIDATES and len(where.candidates) == 6
    assert [c.box.top for c in where.candidates] == sorted(c.box.top for c in where.candidates)
    many = [line("LIVE", 65, 100 + 100 * i, 106, 140 + 100 * i) for i in range(14)]
    assert locate_text(blank(), many, "LIVE", **KW).status is LocateStatus.TOO_MANY  # over the listed cap
    paper = dict(KW, max_listed=None)
    assert locate_text(blank(), lives, "LIVE", **paper).status is LocateStatus.TOO_MANY


def test_label_wrapped_over_two_lines_matches_fuzzily() -> None:
    lines = [line("Adjust the default", 40, 900, 400, 940), line("windw transparency", 40, 945, 420, 985)]
    matches = match_text(lines, "Adjust the default window transparency", SIZE, 0.25)
    assert matches and matches[0].box == Box(40, 900, 420, 985) and matches[0].tier == TIER_FUZZY
    apart = [line("Adjust the default", 40, 900, 400, 940), line("windw transparency", 40, 1400, 420, 1440)]
    assert all(m.tier != TIER_FUZZY for m in match_text(apart, "Adjust the default window transparency", SIZE, 0.25))


# --- RapidOCR with its real weights -----------------------------------------------------------


def _screen(texts: list[tuple[str, int, int, int, str]]) -> np.ndarray:
    image = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(image)
    for text, x, y, size, colour in texts:
        draw.text((x, y), text, fill=colour, font=ImageFont.truetype(FONT, size))
    return np.asarray(image)


SETTINGS = [
    ("Network & internet", 80, 300, 44, "black"),
    ("Connected devices", 80, 500, 44, "black"),
    ("Apps", 80, 700, 44, "black"),
    ("Battery", 80, 900, 44, "black"),
    ("Display", 80, 1100, 44, "black"),
    ("Light grey hint on white", 80, 1300, 30, "#b8b8b8"),
    ("Tiny footnote text", 80, 1500, 20, "#555555"),
]


@pytest.fixture(scope="module")
def backend() -> RapidOcrBackend:
    return RapidOcrBackend(PerceptionConfig(compute_device="cpu"))


def test_reused_rows_give_the_lines_of_a_full_read(backend: RapidOcrBackend) -> None:
    before = _screen(SETTINGS)
    after = _screen([*SETTINGS[:3], ("Battery saver on", 80, 900, 44, "black"), *SETTINGS[4:]])
    reader = ReusingReader(backend)
    reader.read(before)
    assert reader.read(before) == reader._last[1] and reader.reused_rows == 1.0  # same frame: nothing read
    reused = reader.read(after)
    assert 0.8 < reader.reused_rows < 1.0  # one strip read again
    full = backend.read(after)
    assert sorted(ln.text for ln in reused) == sorted(ln.text for ln in full)
    for ln in reused:
        twin = next(f for f in full if f.text == ln.text)
        assert abs(twin.box.top - ln.box.top) <= 6 and abs(twin.box.left - ln.box.left) <= 6
    scrolled = np.roll(after, 300, axis=0)  # a scroll changes most rows: one full read
    reader.read(scrolled)
    assert reader.reused_rows == 0.0


def test_light_grey_and_tiny_text_are_found(backend: RapidOcrBackend) -> None:
    perception = Perception(PerceptionConfig(compute_device="cpu"))
    image = _screen(SETTINGS)
    for target, top in (("Light grey hint on white", 1300), ("Tiny footnote text", 1500)):
        where = perception.find_text(image, target)
        assert where.status is LocateStatus.FOUND and top <= where.point[1] <= top + 40, target


def test_short_target_gets_a_zoomed_second_look() -> None:
    # a stepper: "-", a small "1" and "+" in one row of buttons; at screen scale the lone
    # digit is a few pixels wide
    image = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(image)
    for x in (700, 800, 900):
        draw.rectangle((x, 1000, x + 80, 1060), outline="#888888", width=2)
    draw.text((732, 1016), "–", fill="black", font=ImageFont.truetype(FONT, 22))
    draw.text((834, 1019), "1", fill="black", font=ImageFont.truetype(FONT, 14))
    draw.text((930, 1016), "+", fill="black", font=ImageFont.truetype(FONT, 22))
    draw.text((80, 1016), "Quantity", fill="black", font=ImageFont.truetype(FONT, 40))
    pixels = np.asarray(image)
    zoomed = Perception(PerceptionConfig(compute_device="cpu"))
    where = zoomed.find_text(pixels, "1")
    assert where.status is LocateStatus.FOUND and 800 <= where.point[0] <= 880 and 1000 <= where.point[1] <= 1060


@pytest.mark.parametrize(("batch", "arena"), [(1, True), (6, False)])
def test_recognition_settings_reach_the_engine(batch: int, arena: bool) -> None:
    """Crops one at a time (no padding to a batch's widest crop) and ONNX Runtime's memory
    arena are the speed settings of issue 11: a rapidocr that renamed its keys would drop
    them silently and OCR would be slower with no error."""
    backend = RapidOcrBackend(PerceptionConfig(compute_device="cpu", ocr_rec_batch=batch, ocr_memory_arena=arena))
    lines = backend.read(_screen(SETTINGS[:2]))
    assert sorted(ln.text for ln in lines) == sorted(s[0] for s in SETTINGS[:2])
    engine = backend._load()
    for model in (engine.text_det, engine.text_rec):
        assert model.session.session.get_session_options().enable_cpu_mem_arena == arena
    assert engine.text_rec.rec_batch_num == batch


@pytest.mark.parametrize(
    ("size", "side"),
    [
        ((1920, 1080), 1088),  # Rico 1080x1920: shrunk to the screen side, 612 px across
        ((2400, 1080), 1200),  # 1088 would leave 490 px across: held at 540
        ((1170, 540), 1170),  # Mobile-Agent's 540x1170: not shrunk at all
        ((960, 540), 1088),  # under the screen side: RapidOCR leaves it as it is
        ((1080, 1920), 1088),  # landscape: the short side is the height
        ((3120, 1440), 1170),  # a 1440x3120 phone: 540 across
        ((120, 1440), 1280),  # a strip of changed rows: its short side is not a screen's width
        ((24, 3000), 1280),
    ],
)
def test_detector_side_keeps_text_readable(size: tuple[int, int], side: int) -> None:
    assert detector_side(*size, PerceptionConfig()) == side
    assert detector_side(*size, PerceptionConfig(ocr_limit_side_len=960)) == 960  # the limit caps all


def test_each_frame_gets_its_own_detector_side() -> None:
    backend = RapidOcrBackend(PerceptionConfig(compute_device="cpu"))
    backend.read(_screen(SETTINGS[:1]))  # 1080x2400
    assert backend._load().text_det.limit_side_len == 1200
    small = np.asarray(Image.fromarray(_screen(SETTINGS[:2])).resize((540, 1170)))
    assert {ln.text for ln in backend.read(small)} == {"Network & internet", "Connected devices"}
    assert backend._load().text_det.limit_side_len == 1170
