"""Weight-free UI element proposals (the CPU default detector) and box utilities.

Canny edges at half size, then the blobs of that edge map at two growths (strokes alone,
strokes grouped): every widget with a visible outline or a contrasting fill becomes a
box, and so does every glyph, so boxes that are mostly OCR text are dropped (not an icon
that a label's box merely reaches over); then a size filter and NMS that keeps nested boxes.

May import: numpy, OpenCV, the standard library, ``perception.*``.
"""

from __future__ import annotations

import re

import cv2
import numpy as np

from perception.types import Box, IconRegion, TextLine

__all__ = ["filter_icon_boxes", "nms", "propose_ui_elements"]


def _same_element(a: Box, b: Box) -> bool:
    """One box inside the other with nearly the same centre: a plate and its glyph."""
    small, big = (a, b) if a.area <= b.area else (b, a)
    ix = max(0.0, min(small.right, big.right) - max(small.left, big.left))
    iy = max(0.0, min(small.bottom, big.bottom) - max(small.top, big.top))
    if small.area <= 0 or ix * iy < 0.9 * small.area:
        return False
    (ax, ay), (bx, by) = small.center, big.center
    return abs(ax - bx) <= 0.15 * big.width and abs(ay - by) <= 0.15 * big.height


def nms(regions: list[IconRegion], iou: float, *, keep_nested: bool = False) -> list[IconRegion]:
    """Non-maximum suppression, best score first; a box nested in a kept one around the
    same centre (an icon's glyph inside its plate) is the same element and goes too,
    unless ``keep_nested``: then both stay, for the ranker to judge each."""
    kept: list[IconRegion] = []
    for region in sorted(regions, key=lambda r: (-r.score, -r.box.area)):
        if all(not _suppresses(k.box, region.box, iou, keep_nested) for k in kept):
            kept.append(region)
    return kept


def _suppresses(kept: Box, other: Box, iou: float, keep_nested: bool) -> bool:
    overlap = kept.iou(other)
    if not keep_nested:
        return overlap >= iou or _same_element(other, kept)
    # two of three dots inside the three: both stay, unless they are nearly the same box
    nested = _same_element(other, kept) or _inside(other, kept) or _inside(kept, other)
    return overlap >= (max(iou, 0.8) if nested else iou)


def _inside(small: Box, big: Box) -> bool:
    return small.left >= big.left - 1 and small.top >= big.top - 1 and small.right <= big.right + 1 and small.bottom <= big.bottom + 1


def filter_icon_boxes(
    regions: list[IconRegion], width: int, height: int, *, min_side_fraction: float, max_area_fraction: float
) -> list[IconRegion]:
    """Drop boxes too thin to be an icon, or big enough to be a panel."""
    short = min(width, height)
    min_side = max(6.0, min_side_fraction * short)
    max_area = max_area_fraction * width * height
    out = []
    for r in regions:
        b = r.box
        # a column of three dots is half as wide as other icons: the short side may be half
        if max(b.width, b.height) < min_side or min(b.width, b.height) < min_side / 2 or b.area > max_area:
            continue
        # bars and dividers; a glyph-sized column of three dots may be 4.5:1 (Material's more_vert
        # is 4 x 16 dp, and its edges' box loses a pixel or two across)
        slim = 5 if max(b.width, b.height) <= 0.06 * short else 4
        if max(b.width, b.height) > slim * min(b.width, b.height):
            continue
        out.append(r)
    return out


def _text_share(box: Box, text_boxes: list[Box]) -> float:
    covered = 0.0
    for t in text_boxes:
        ix = max(0.0, min(box.right, t.right) - max(box.left, t.left))
        iy = max(0.0, min(box.bottom, t.bottom) - max(box.top, t.top))
        covered += ix * iy
    return covered / box.area if box.area else 1.0


def _beside_label(box: Box, line: TextLine) -> bool:
    """An icon the OCR line's box reaches over (a label's box often runs into the icon
    before it, or OCR reads the icon as a letter): square, as tall as the line or taller,
    at one end of the line. Inner letters are narrower than tall and never at an end."""
    t = line.box
    squareish = min(box.width, box.height) >= 0.75 * max(box.width, box.height)
    tall = box.height >= 0.8 * t.height
    at_end = box.left <= t.left + 0.25 * t.height or box.right >= t.right - 0.25 * t.height
    return squareish and tall and at_end and len(line.text.strip()) >= 3


def _leads_row(box: Box, line: TextLine, edges: np.ndarray, scale: float) -> bool:
    """A row's icon read into its label's OCR line ("  Messages" whose box starts at the
    envelope): at one end of the line, its longer side at least 0.45 of the line's height, and set apart from
    the letters by a gap wider than letters are spaced (~0.3 of the line's height; a first
    letter touches its neighbour's spacing) and wider than any space between the line's own
    words (a line's last short word, "to" ending "beats to", is square and past a space)."""
    t = line.box
    if max(box.width, box.height) < 0.45 * t.height or min(box.width, box.height) < 0.6 * max(box.width, box.height):
        return False
    if box.width > 0.4 * t.width:  # the line's own word ("NFL"), not an icon leading it
        return False
    gap = 0.3 * t.height
    top, bottom = int(t.top * scale), int(np.ceil(t.bottom * scale))
    if box.left <= t.left + 0.25 * t.height:  # leading icon: nothing right after it
        x0, x1 = box.right, box.right + gap
    elif box.right >= t.right - 0.25 * t.height:  # trailing icon: nothing right before it
        x0, x1 = box.left - gap, box.left
    else:
        return False
    strip = edges[top:bottom, max(0, int(x0 * scale)): int(np.ceil(x1 * scale))]
    if strip.size == 0 or strip.any():
        return False
    # a gap no wider than the spaces between the line's own words is a word space: the box
    # is the line's first or last word ("to" ending "beats to"), not an icon set apart
    ink: np.ndarray = np.asarray(edges[top:bottom, max(0, int(t.left * scale)): int(np.ceil(t.right * scale))].any(axis=0))
    offset = max(0, int(t.left * scale))
    inside = np.zeros_like(ink)
    inside[max(0, int(box.left * scale) - offset): int(np.ceil(box.right * scale)) - offset] = True
    own_gap = _gap_beside(ink, inside, leading=x0 >= box.right)
    return own_gap > _widest_gap(ink & ~inside, ~inside)


def _gap_beside(ink: np.ndarray, inside: np.ndarray, leading: bool) -> int:
    """Empty columns between the box (``inside``) and the next ink of the line, after the
    box (``leading``) or before it."""
    columns = np.nonzero(inside)[0]
    if len(columns) == 0:
        return 0
    if leading:
        rest = ink[columns[-1] + 1:]
        hits = np.nonzero(rest)[0]
        return int(hits[0]) if len(hits) else len(rest)
    rest = ink[: columns[0]][::-1]
    hits = np.nonzero(rest)[0]
    return int(hits[0]) if len(hits) else len(rest)


def _widest_gap(ink: np.ndarray, part: np.ndarray) -> int:
    """The widest run of empty columns between two inked columns of ``part`` of a line."""
    columns = np.nonzero(ink & part)[0]
    if len(columns) < 2:
        return 0
    runs = np.diff(columns) - 1
    # a run across the excluded box is not a gap of the rest
    across = ~part[columns[:-1] + 1]
    runs[across] = 0
    return int(runs.max()) if len(runs) else 0


# a count badge: a number of up to three digits, or "99+"
_COUNT = re.compile(r"^\d{1,3}\+?$")


def _badge_on(box: Box, line: TextLine) -> bool:
    """The OCR line is a count badge on the icon ``box`` (a bell's "14", a cart's "3"): a
    number on the icon's top edge, smaller than it, the glyph going on below it. The icon is
    no less an icon for the number read on its corner."""
    t = line.box
    return (bool(_COUNT.match(line.text.strip())) and t.top <= box.top + 0.15 * box.height
            and box.bottom - t.bottom >= 0.25 * box.height and t.area <= 0.6 * box.area)  # fmt: skip


def _is_text(box: Box, lines: list[TextLine], edges: np.ndarray | None = None, scale: float = 1.0) -> bool:
    covering = [line for line in lines if _text_share(box, [line.box]) > 0.4 and not _badge_on(box, line)]
    if not covering:
        return False
    return not all(
        _beside_label(box, line) or (edges is not None and _leads_row(box, line, edges, scale)) for line in covering
    )


# a lone character read this surely and a digit is a number, not a glyph OCR guessed at
# (icons it reads as letters come back below ~0.7: a chevron as "く" 0.68, ">" 0.69)
_SURE_DIGIT = 0.95


# characters that are one upright stroke: a pause glyph's two bars read as "II", "ll", "||"
_STROKES = frozenset("Il|!ǀ")


def _is_text_line(line: TextLine) -> bool:
    text = line.text.strip()
    if len(text) <= 3 and all(c in _STROKES or c.isspace() for c in text):
        return False  # bars OCR spelled as strokes (a pause button), not a word
    if len(text) >= 2:
        return line.score >= 0.7
    return text.isdigit() and line.score >= _SURE_DIGIT


def _components(edges: np.ndarray, radius: int, min_side: float, max_area: float) -> list[tuple[int, int, int, int, int]]:
    """(x, y, w, h, pixels) of each blob of the edge map grown by ``radius``, less the
    growth, that could be an icon (sizes at this scale: specks and panels are dropped here,
    in numpy, since a photo gives thousands of blobs)."""
    grown = cv2.dilate(edges, np.ones((2 * radius + 1, 2 * radius + 1), np.uint8)) if radius else edges
    count, _, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    stats = stats[1:count].astype(np.int64)
    stats[:, 0:2] += radius
    stats[:, 2:4] -= 2 * radius
    w, h = stats[:, 2], stats[:, 3]
    keep = (np.maximum(w, h) >= min_side) & (np.minimum(w, h) >= min_side / 2) & (w * h <= max_area)
    return [tuple(int(v) for v in row) for row in stats[keep]]  # type: ignore[misc]


# Canny thresholds of the strong-edge pass (the main map's are 40 / 120)
_STRONG_EDGES = (100, 250)


def _isolated(edges: np.ndarray, x: int, y: int, w: int, h: int) -> bool:
    """A strong-edge blob that stands alone: squarish (a glyph, a ring), with no strong
    edge in a margin of a third of its size around it (a photo's own shapes touch others)."""
    if min(w, h) < 0.8 * max(w, h):
        return False
    pad = max(2, max(w, h) // 3)
    height, width = edges.shape
    x0, y0, x1, y1 = max(0, x - pad), max(0, y - pad), min(width, x + w + pad), min(height, y + h + pad)
    around = edges[y0:y1, x0:x1].copy()
    around[y - y0: y - y0 + h, x - x0: x - x0 + w] = 0
    return not around.any()


# a minus sign (Material's "remove": a 14 x 2 dp bar in a 24 dp drawable; a stepper's or a map's
# zoom-out "−") is one thin horizontal bar, far slimmer than any other glyph, so the size and
# slimness filters drop it: a lone bar this long (share of the short side: ~8 to ~26 dp on a
# 400 dp phone; a sheet's 32 dp drag handle and a divider are longer) and at least this many
# times as long as thick is proposed as its square drawable
_BAR_LENGTH = (0.02, 0.065)
_BAR_SLIM = 3


def _lone_bars(edges: np.ndarray, scale: float, width: int, height: int) -> list[Box]:
    """Square boxes (image pixels) around each glyph-sized horizontal bar of the edge map that
    is alone in the square a glyph of its length would fill (nothing else drawn there: a
    minus, not a letter's stroke, a tab's underline below its icon or a slider's track)."""
    short = min(width, height) * scale
    low, high = _BAR_LENGTH[0] * short, _BAR_LENGTH[1] * short
    # grown by a pixel: a bar's two long edges are one blob
    grown = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    w_all, h_all = stats[:, 2] - 2, stats[:, 3] - 2
    bars = np.nonzero((w_all >= low) & (w_all <= high) & (h_all > 0) & (w_all >= _BAR_SLIM * h_all))[0]
    found: list[Box] = []
    for label in bars[bars > 0]:
        x, y, w, h, _ = (int(v) for v in stats[label])
        x, y, w, h = x + 1, y + 1, w - 2, h - 2
        cx, cy = x + w / 2, y + h / 2
        x0, y0 = max(0, int(cx - w / 2) - 1), max(0, int(cy - w / 2) - 1)
        x1, y1 = min(edges.shape[1], int(np.ceil(cx + w / 2)) + 2), min(edges.shape[0], int(np.ceil(cy + w / 2)) + 2)
        window = labels[y0:y1, x0:x1]
        if ((window != 0) & (window != label)).any():
            continue
        side = w / scale
        centre_x, centre_y = cx / scale, cy / scale
        found.append(Box(centre_x - side / 2, centre_y - side / 2, centre_x + side / 2, centre_y + side / 2))
    return found


def propose_ui_elements(
    image: np.ndarray,
    text_lines: list[TextLine],
    *,
    min_side_fraction: float,
    max_area_fraction: float,
    nms_iou: float,
    limit: int,
) -> list[IconRegion]:
    """Candidate icon/widget boxes (image pixels) on an RGB image, text boxes removed.

    Edge blobs at two scales: each stroke on its own (an icon drawn in one piece, or a
    plate), and strokes grouped across gaps up to ~2 dp (the three bars of a menu icon,
    three dots, a list's bullets). Connected components rather than outer contours, so
    an icon inside a toolbar, a card or a photo is found even though an outline surrounds
    it; nested boxes are kept as separate candidates (a glyph and its round button).
    """
    height, width = image.shape[:2]
    scale = 0.5 if min(width, height) >= 600 else 1.0
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale != 1 else image
    gray = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)
    edges = cv2.Canny(gray, 40, 120)
    dp = width / 400 * scale  # pixels per dp at the working scale
    # OCR also "reads" icons (a blue square as "M", a glyph as "A"): only confident lines of
    # two or more characters count as text to remove, and lone digits read with certainty
    # (a calendar's days, a counter: a "4" scored as a left chevron)
    text = [line for line in text_lines if _is_text_line(line)]
    min_side = max(6.0, min_side_fraction * min(width, height))
    max_area = max_area_fraction * width * height
    regions: list[IconRegion] = []
    seen: set[tuple[int, int, int, int]] = set()
    # grouping radii: ~1 dp joins a dot column, ~2 dp the bars of a menu icon; a larger
    # one alone would also swallow a progress line or a divider touching the icon
    passes = [(edges, radius) for radius in sorted({1, max(2, int(round(1.1 * dp))), max(2, int(round(2.2 * dp)))})]
    # strong edges only, grown by one pixel: a glyph drawn over a photo (a white check ring
    # over a dimmed picture) joins the photo's faint texture in the edge map above and is
    # never a blob of its own; with the texture's weak edges gone it is
    passes.append((cv2.Canny(gray, _STRONG_EDGES[0], _STRONG_EDGES[1]), 1))
    strong = passes[-1][0]
    for edge_map, radius in passes:
        for x, y, w, h, pixels in _components(edge_map, radius, min_side * scale, max_area * scale * scale):
            if w <= 0 or h <= 0 or (x, y, w, h) in seen:
                continue
            if edge_map is strong and not _isolated(strong, x, y, w, h):
                continue
            seen.add((x, y, w, h))
            box = Box(x / scale, y / scale, (x + w) / scale, (y + h) / scale)
            # specks and panels go before the costlier text test (a photo has thousands of blobs)
            if max(box.width, box.height) < min_side or min(box.width, box.height) < min_side / 2 or box.area > max_area:
                continue
            if _is_text(box, text, edges, scale):
                continue
            # a compact icon is square and full of edges; a panel's outline is long and empty
            squareness = min(w, h) / max(w, h)
            fill = min(1.0, pixels / max(1.0, w * h) * 2)
            regions.append(IconRegion(box=box, score=0.5 * squareness + 0.5 * fill, source="proposals"))
    for box in _lone_bars(edges, scale, width, height):
        if not _is_text(box, text, edges, scale):
            regions.append(IconRegion(box=box, score=0.75, source="proposals"))
    regions = filter_icon_boxes(
        regions, width, height, min_side_fraction=min_side_fraction, max_area_fraction=max_area_fraction
    )
    regions = nms(regions, nms_iou, keep_nested=True)
    return regions[:limit]  # the caller filters by place first: a busy photo gives hundreds
