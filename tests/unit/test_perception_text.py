"""Text localization: the matching rules on typed OCR lines (no model), then RapidOCR with
its real weights on Pillow-drawn screens and on real phone screenshots."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from reference_data import reference_file

from perception import (
    Box,
    InvalidInputError,
    LocateStatus,
    Perception,
    PerceptionConfig,
    TextLine,
)
from perception.text_match import (
    TIER_EXACT,
    TIER_FUZZY,
    TIER_JOINED,
    TIER_PARTIAL,
    TIER_SPAN,
    fold,
    locate_text,
    match_text,
)

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
SIZE = (1080, 2400)


def line(text: str, left: float, top: float, right: float, bottom: float, score: float = 0.99) -> TextLine:
    return TextLine(text=text, box=Box(left, top, right, bottom), score=score)


# --- matching rules on typed lines ---------------------------------------------------


def test_fold_handles_case_width_whitespace_and_punctuation() -> None:
    assert fold("Ｗｉ－Ｆｉ") == fold("wi-fi") == "wi fi"
    assert fold("  Display &  Brightness ") == "display brightness"


def test_exact_beats_span_and_fuzzy() -> None:
    lines = [
        line("Display", 100, 100, 300, 140),
        line("Display & brightness", 100, 300, 500, 340),
        line("Displey", 100, 500, 300, 540),
    ]
    matches = match_text(lines, "Display", SIZE, 0.25)
    assert [m.tier for m in matches] == [TIER_EXACT]
    assert matches[0].line.text == "Display"


def test_folded_equality_counts_as_exact() -> None:
    matches = match_text([line("ＷＩ-ＦＩ", 10, 10, 200, 50)], "wi fi", SIZE, 0.25)
    assert len(matches) == 1 and matches[0].tier == TIER_EXACT


def test_span_inside_merged_line_gets_proportional_sub_box() -> None:
    merged = line("Wi-Fi  On", 100, 200, 190, 240)  # 9 characters over 90 px
    matches = match_text([merged], "On", SIZE, 0.25)
    assert len(matches) == 1 and matches[0].tier == TIER_SPAN
    box = matches[0].box
    assert box.left == pytest.approx(170) and box.right == pytest.approx(190)
    assert (box.top, box.bottom) == (200, 240)
    wifi = match_text([merged], "Wi-Fi", SIZE, 0.25)[0].box
    assert wifi.left == pytest.approx(100) and wifi.right == pytest.approx(150)


def test_span_respects_word_boundaries() -> None:
    lines = [line("Location services", 0, 0, 400, 40), line("Online", 0, 100, 200, 140)]
    assert match_text(lines, "On", SIZE, 0.25) == []
    assert match_text(lines, "services", SIZE, 0.25)[0].tier == TIER_SPAN


def test_cjk_span_without_spaces() -> None:
    matches = match_text([line("打开蓝牙设置", 0, 0, 120, 40)], "蓝牙", SIZE, 0.25)
    assert len(matches) == 1
    assert matches[0].box.left == pytest.approx(40) and matches[0].box.right == pytest.approx(80)


def test_composed_and_decomposed_letters_fold_alike() -> None:
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "Café")
    assert fold(decomposed) == fold("café") == "café"  # the accent was split off as punctuation
    assert fold("ｶﾞｲﾄﾞ") == fold("ガイド")  # half-width kana with their voiced marks
    assert fold(unicodedata.normalize("NFD", "설정")) == "설정"  # Hangul as jamo
    matches = match_text([line("Café Wi-Fi", 0, 0, 300, 40)], decomposed, SIZE, 0.25)
    assert len(matches) == 1 and matches[0].box.right == pytest.approx(120)


def test_vowel_signs_are_part_of_the_word() -> None:
    hindi = line("हिन्दी सेटिंग्स", 0, 0, 300, 40)  # marks take no width: 3 + 1 + 4 letters
    (match,) = match_text([hindi], "सेटिंग्स", SIZE, 0.25)
    assert match.tier == TIER_SPAN
    assert (match.box.left, match.box.right) == (pytest.approx(150), pytest.approx(300))
    # a missing vowel sign is a misreading (fuzzy), no longer the same folded word (exact)
    assert fold("हन्दी") != fold("हिन्दी")
    assert [m.tier for m in match_text([line("हन्दी", 0, 0, 100, 40)], "हिन्दी", SIZE, 0.25)] == [TIER_FUZZY]


def test_thai_span_without_spaces() -> None:
    matches = match_text([line("ตั้งค่าบลูทูธ", 0, 0, 260, 40)], "บลูทูธ", SIZE, 0.25)
    assert len(matches) == 1 and matches[0].tier == TIER_SPAN
    assert matches[0].box.left > 80 and matches[0].box.right == pytest.approx(260)


def test_targets_of_symbols_only() -> None:
    lines = [line("+", 980, 100, 1020, 140), line("Add", 100, 300, 200, 340), line("...", 980, 500, 1020, 540)]
    (plus,) = match_text(lines, "＋", SIZE, 0.25)  # full-width plus
    assert plus.line.text == "+" and plus.tier == TIER_EXACT
    assert [m.line.text for m in match_text(lines, " ... ", SIZE, 0.25)] == ["..."]
    assert match_text(lines, "?", SIZE, 0.25) == []


def test_symbols_decide_between_folded_twins() -> None:
    lines = [line("C", 100, 100, 130, 140), line("C++", 100, 300, 170, 340), line("Wi-Fi", 100, 500, 220, 540)]
    assert [m.line.text for m in match_text(lines, "C++", SIZE, 0.25)] == ["C++"]
    assert [m.line.text for m in match_text(lines, "c", SIZE, 0.25)] == ["C"]
    assert [m.line.text for m in match_text(lines, "WiFi", SIZE, 0.25)] == ["Wi-Fi"]  # folding still counts


def test_fuzzy_by_length() -> None:
    lines = [line("Notifcations & status bar", 0, 0, 500, 40)]
    fuzzy = match_text(lines, "Notifications & status bar", SIZE, 0.25)
    assert len(fuzzy) == 1 and fuzzy[0].tier == TIER_FUZZY
    # three characters or fewer: exact only
    assert match_text([line("Off", 0, 0, 60, 40)], "Of", SIZE, 0.25) == []
    assert match_text([line("Orr", 0, 0, 60, 40)], "Off", SIZE, 0.25) == []


def test_boxes_above_size_limit_are_ignored() -> None:
    banner = line("Settings", 0, 0, 1080, 1000)  # 42% of the screen
    assert match_text([banner], "Settings", SIZE, 0.25) == []
    assert len(match_text([banner], "Settings", SIZE, 0.5)) == 1


def _blank() -> np.ndarray:
    return np.full((SIZE[1], SIZE[0], 3), 255, np.uint8)


def test_statuses_follow_the_hit_count() -> None:
    image = _blank()
    kwargs = {"max_candidates": 4, "max_box_fraction": 0.25, "crop_margin": 0.1}
    one = locate_text(image, [line("Save", 100, 100, 200, 140)], "Save", **kwargs)
    assert one.status is LocateStatus.FOUND and one.point == (150, 120)
    three = [line("Save", 100, 100 + 300 * i, 200, 140 + 300 * i) for i in range(3)]
    several = locate_text(image, three, "Save", **kwargs)
    assert several.status is LocateStatus.CANDIDATES
    assert [c.index for c in several.candidates] == [1, 2, 3]
    assert [c.box.top for c in several.candidates] == [100, 400, 700]  # reading order
    crop = several.candidates[0].crop
    assert crop is not None and crop.dtype == np.uint8 and crop.shape[2] == 3
    assert crop.shape[0] > 40 and crop.shape[1] > 100  # grown outward
    assert (crop[..., 0] == 255).any() and ((crop[..., 1] == 0) & (crop[..., 0] == 255)).any()  # red box drawn
    five = [line("Save", 100, 100 + 300 * i, 200, 140 + 300 * i) for i in range(5)]
    too_many = locate_text(image, five, "Save", **kwargs)
    assert too_many.status is LocateStatus.TOO_MANY and "choose other text" in too_many.feedback.lower()
    listed = locate_text(image, five, "Save", **kwargs, max_listed=8)  # more than N, still offered
    assert listed.status is LocateStatus.CANDIDATES and len(listed.candidates) == 5
    missing = locate_text(image, [line("Cancel", 0, 0, 100, 40), line("Saved items", 0, 100, 200, 140)], "Sage", **kwargs)
    assert missing.status is LocateStatus.NOT_FOUND
    assert missing.closest and "Sage" in missing.feedback


# --- RapidOCR with its real weights --------------------------------------------------


@pytest.fixture(scope="module")
def perception() -> Perception:
    return Perception(PerceptionConfig())


def draw_screen(items: list[tuple[str, int, int]], size: int = 44) -> tuple[np.ndarray, dict[int, Box]]:
    """A white 1080x2400 screen with black text; returns it and each item's drawn box."""
    image = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, size)
    boxes = {}
    for i, (text, x, y) in enumerate(items):
        draw.text((x, y), text, fill="black", font=font)
        boxes[i] = Box(*draw.textbbox((x, y), text, font=font))
    return np.asarray(image), boxes


@pytest.fixture(scope="module")
def settings_screen() -> tuple[np.ndarray, dict[int, Box], list[tuple[str, int, int]]]:
    items = [
        ("Settings", 60, 200),
        ("Wi-Fi", 60, 400),
        ("Bluetooth", 60, 560),
        ("Off", 900, 560),
        ("Display & brightness", 60, 720),
        ("Battery", 60, 880),
        ("Off", 900, 1040),
        ("About phone", 60, 1200),
    ]
    image, boxes = draw_screen(items)
    return image, boxes, items


def test_ocr_reads_drawn_text_with_boxes(perception: Perception, settings_screen) -> None:
    image, boxes, items = settings_screen
    lines = perception.ocr(image)
    texts = [ln.text for ln in lines]
    for i, (text, _, _) in enumerate(items):
        hit = [ln for ln in lines if ln.text == text and ln.box.iou(boxes[i]) > 0.3]
        assert hit, f"{text!r} not read at its place; OCR saw {texts}"
        assert 0.5 < hit[0].score <= 1.0


def test_find_text_on_drawn_screen(perception: Perception, settings_screen) -> None:
    image, boxes, _ = settings_screen
    found = perception.find_text(image, "display & Brightness")
    assert found.status is LocateStatus.FOUND and boxes[4].contains(*found.point)
    offs = perception.find_text(image, "Off")
    assert offs.status is LocateStatus.CANDIDATES and len(offs.candidates) == 2
    assert boxes[3].contains(*offs.candidates[0].box.center) and boxes[6].contains(*offs.candidates[1].box.center)
    gone = perception.find_text(image, "Airplane mode")
    assert gone.status is LocateStatus.NOT_FOUND and gone.closest


def test_ocr_runs_once_per_frame(perception: Perception, settings_screen) -> None:
    image, _, _ = settings_screen
    perception.ocr(image)
    misses = perception.cache.misses
    perception.find_text(image, "Battery")
    perception.find_text(image.copy(), "About phone")  # same bytes, another array
    assert perception.cache.misses == misses
    lines = perception.ocr(image)
    lines.clear()  # the caller's list, not the cache's
    assert perception.ocr(image) and perception.cache.misses == misses
    changed = image.copy()
    changed[5, 5] = 0  # one pixel differs: another frame
    key_before = perception.cache.misses
    perception.find_text(changed, "Battery")
    assert perception.cache.misses == key_before + 1


def test_thin_strips_are_read_in_place(perception: Perception) -> None:
    strip = Image.new("RGB", (3000, 24), "white")
    ImageDraw.Draw(strip).text((1500, 2), "Hello world", fill="black", font=ImageFont.truetype(FONT, 18))
    (hello,) = [ln for ln in perception.ocr(np.asarray(strip)) if ln.text == "Hello world"]
    assert 1480 < hello.box.left < 1510 and 1600 < hello.box.right < 1630
    assert 0 <= hello.box.top and hello.box.bottom <= 24  # clipped to the image, not the OCR padding
    # rapidocr rounded the short side of a 150:1 image to 0 px and raised ResizeImgError
    assert perception.ocr(np.full((3000, 20, 3), 255, np.uint8)) == []


def test_real_phone_screenshot(perception: Perception) -> None:
    path = reference_file("Settings", "1", "3.jpg")
    actions = json.loads(reference_file("Settings", "1", "data.json").read_text())
    assert actions["3"]["Action"] == "click text (Display & brightness)"
    image = np.asarray(Image.open(path).convert("RGB"))
    found = perception.find_text(image, "Display & brightness")
    assert found.status is LocateStatus.FOUND
    x, y = found.point
    # the row sits in the middle of the 540x1170 screenshot, left column
    assert 60 < x < 400 and 880 < y < 1020
    line_box = next(ln.box for ln in perception.ocr(image) if ln.text == "Display & brightness")
    assert line_box.contains(x, y)


def test_bad_input_is_a_typed_error(perception: Perception) -> None:
    for bad in (
        np.zeros((100, 100, 2), np.uint8),  # two channels
        np.zeros((100, 100, 5), np.uint8),
        np.zeros((2, 100, 100, 3), np.uint8),  # a batch
        np.zeros((7, 100, 3), np.uint8),  # too small
        [[0, 0, 0]],
    ):
        with pytest.raises(InvalidInputError):
            perception.ocr(bad)
    with pytest.raises(InvalidInputError):
        perception.find_text(np.zeros((100, 100, 3), np.float32), "x")
    with pytest.raises(InvalidInputError):
        perception.find_text(np.zeros((100, 100, 3), np.uint8), "   ")
    with pytest.raises(ValueError):  # also a ValueError for callers that catch that
        perception.find_icon(np.zeros((100, 100, 3), np.uint8), "")


def test_target_split_over_neighbouring_lines() -> None:
    side_by_side = [line("WhatsApp", 100, 500, 260, 540), line("Messenger", 275, 502, 450, 540)]
    matches = match_text(side_by_side, "WhatsApp Messenger", SIZE, 0.25)
    assert len(matches) == 1 and matches[0].tier == TIER_JOINED
    assert matches[0].box == Box(100, 500, 450, 540)
    stacked = [line("FULL GAME", 40, 900, 300, 940), line("HIGHLIGHTS", 40, 950, 320, 990)]
    assert match_text(stacked, "Full game highlights", SIZE, 0.25)[0].box == Box(40, 900, 320, 990)
    far_apart = [line("WhatsApp", 100, 500, 260, 540), line("Messenger", 100, 1500, 300, 1540)]
    # halves far apart are not one label; "Messenger" alone is at most offered as a candidate
    assert all(m.tier == TIER_PARTIAL for m in match_text(far_apart, "WhatsApp Messenger", SIZE, 0.25))


def test_span_boxes_are_proportional_property() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)

    @settings(max_examples=80, deadline=None)
    @given(st.lists(words, min_size=2, max_size=6, unique=True), st.data())
    def check(parts: list[str], data) -> None:
        i = data.draw(st.integers(0, len(parts) - 1))
        text = " ".join(parts)
        if any(parts[i] in p for j, p in enumerate(parts) if j != i):
            return  # the word also sits inside another one: not a single span
        whole = line(text, 100, 50, 100 + 10 * len(text), 80)
        (match,) = match_text([whole], parts[i], SIZE, 0.25)
        start = text.index(parts[i])
        assert match.tier == TIER_SPAN
        assert match.box.left == pytest.approx(100 + 10 * start)
        assert match.box.right == pytest.approx(100 + 10 * (start + len(parts[i])))
        assert (match.box.top, match.box.bottom) == (50, 80)

    check()
