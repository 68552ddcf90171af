"""Icon localization by the paper's rules: detector -> size filter -> overlap dedupe
(NMS) -> position filter -> ranker against the description -> the best box's centre.

Backends (chosen once, on first use; ``describe()`` says which):

- detector ``grounding-dino`` / ``groundingdino-py`` (torch), or ``proposals`` — the
  weight-free OpenCV proposer; ``auto`` = Grounding DINO when a GPU and local weights are
  there, proposals otherwise (full Grounding DINO costs ~16 s a screen on 2 CPU cores);
- ranker ``clip`` (open_clip) or ``heuristic`` (colour/shape words); ``auto`` = CLIP when
  its weights are local, heuristic otherwise.

Models are shared process-wide (``perception.registry``); detections are cached per frame.
When the heuristic ranker cannot judge the description (no colour or shape word it
knows, or no box scores above a floor) or cannot separate the best boxes (scores within
a margin), those boxes go back as numbered candidates for the planner, not a guess; so
does a lone box it did not recognise. Where its evidence is thin it widens the field
(issue 30, wrong taps on apps it had never seen): a description judged by colour alone
("grey folder") keeps every box of that colour; a list's or a row's other icons of the
same size, in the same third of the screen, not on two different flat surfaces (a
toolbar and the page below it), stay candidates at 70% of the best score (30% when judged
by colour alone), unless the best clearly shows the shape named and they show none of it (a
lens beside a gamepad cross); when the description let a system bar in ("back"),
so does the same glyph across the bar's edge; and a box scoring 80% of the best is a tie
whatever the margin. The best box is offered, not tapped, when it shows none of a hue named
("purple": a grey lens for "a plus in a purple circle"), none of the container its glyph is
said to be in ("a white circle with a dark arrow": a lone glyph), or is smaller than any
control's glyph (a lock's keyhole); a glyph the ranker has no shape for in a named container
("crop icon in a green circle") is judged by colour and container alone, as colour alone
is. Two overlapping halves of one glyph that tie (a refresh sign's arcs,
proposed apart) are one place: the tap goes to the whole glyph. A description that says
which of several look-alikes it means, by count ("the second play button") or by a quoted
text beside it ("the play button in the 'News' row"; ``perception.icon_which``), taps that
one when the count or the text leaves no doubt, and offers candidates when it does.
The glyph matcher (``perception.glyph_match``: which Material icon a box shows) checks the
heuristic's answer where the description names a glyph of its vocabulary: a tap is vetoed
(both offered) when the box shows another glyph and a sibling clearly shows the one named
(redo's box for "undo"); among look-alikes offered, the one that alone clearly shows the
glyph named is tapped.

May import: numpy, the standard library, ``perception.*``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from perception.accessibility import AccessibilityNode
from perception.cache import FrameCache
from perception.config import PerceptionConfig
from perception.crops import numbered_candidates
from perception.glyph_match import Verdict, verdict
from perception.heuristic_ranker import HUE_UNSEEN, SHAPE_UNSEEN, HeuristicRanker, flat_surface, names_a_shape
from perception.icon_tree import tree_icon_boxes, tree_votes
from perception.icon_which import Which, WhichError, in_relation, read_which, reading_order
from perception.position import UnknownPositionError, parse_position
from perception.proposals import filter_icon_boxes, nms, propose_ui_elements
from perception.registry import shared
from perception.system_bars import AppArea, app_area
from perception.text_match import TIER_FUZZY, TextMatch, match_text
from perception.types import Box, IconRegion, LocateStatus, Location, TextLine

__all__ = ["IconLocator"]

log = logging.getLogger(__name__)

# Below this heuristic score the best box is a guess: show candidates instead; boxes
# within the margin of the best are a tie.
_HEURISTIC_FLOOR = 0.25
_HEURISTIC_MARGIN = 0.08
# ... or score this share of the best: a box that matches the colour and a loosely named
# shape ("stack" read as bars) fully can outscore the icon meant by more than the margin
_TIE_SHARE = 0.8
# judged by colour alone (the description's shape is a word the ranker cannot test), a box
# holding this share of the best one's colour is as likely: a toolbar chevron and a row's
# folder are both "grey"
_COLOUR_ONLY_SHARE = 0.5
# a look-alike in the same row or list column scoring this share of the best is a candidate
_SIBLING_SHARE = 0.7
# ... and, judged by colour alone, one showing this share of the best's colour score
_COLOUR_SIBLING_SHARE = 0.3
# two icons on surfaces this far apart (largest RGB channel difference) are not one list's
_SURFACE_APART = 40
# how much "nearest the named edge" adds to a ranker's score (0..1 scale)
_POSITION_WEIGHT = 0.06
# the accessibility tree's vote: what it adds, the largest node that counts as a control
# (share of the screen), and how close to the best pixel score a backed box must be
_TREE_WEIGHT = 0.5
_TREE_NODE_AREA = 0.06
_TREE_PIXEL_SHARE = 0.5
# tree alone: the agreement a content-desc gives (icon_tree: 0.8 a shared word, 1.0 a shape)
_TREE_NAMED = 0.8
# picking one look-alike by count or anchor (perception.icon_which): a sibling of the counted
# group scoring this share of the best is a doubt; in relation to the anchor, icons within
# this factor of the nearest one's distance are as near
_PICK_DOUBT = 0.5
_PICK_NEAR = 1.5
_RELATION_SAID = {"row": "in the row of", "next": "next to", "above": "above", "below": "below",
                  "left": "left of", "right": "right of"}  # fmt: skip
# a best box whose longer side is under this share of the screen's short side is a detail of
# a glyph (a keyhole, a dot), not a control: a 24 dp glyph is ~6% of a phone's width, the
# smallest drawn (a status bar's, 12 dp) ~3%
_DETAIL_SIDE = 0.02
# a best box whose score for the shape named is at least this shows it clearly (a lens's 0.4
# against its toolbar neighbours' ~0)
_SHAPE_SHOWN = 0.3
# proposals kept per frame before the place filters (a photo gives hundreds of blobs)
_PROPOSAL_LIMIT = 400
# the glyph matcher (``perception.glyph_match``): a box shows the glyph named clearly when it
# correlates this well with it and no worse than with any unrelated glyph; another box shows it
# clearly better when this much lower
_GLYPH_CLEAR = 0.9
_GLYPH_APART = 0.15
# ... and a sibling that vetoes a tap shows it this well (a veto only offers candidates)
_GLYPH_RIVAL = 0.8


# a capture of a phone with rounded display corners shows each corner's mask (a small
# quarter-disc of another colour) hard in the image's corner: a box touching two edges within
# this share of the short side, and no larger than a glyph, is that mask, never a control
_CORNER_REACH = 0.01
_CORNER_SIDE = 0.04


def _screen_corner(box: Box, width: int, height: int) -> bool:
    reach = _CORNER_REACH * min(width, height)
    at_side = box.left <= reach or box.right >= width - reach
    at_end = box.top <= reach or box.bottom >= height - reach
    return at_side and at_end and max(box.width, box.height) <= _CORNER_SIDE * min(width, height)


def _nested(inner: Box, outer: Box) -> bool:
    """``inner`` is a piece of the icon ``outer`` (a glyph on its plate, one of three dots,
    a cell of a grid): inside it, and not so much smaller that ``outer`` is a panel."""
    ix = max(0.0, min(inner.right, outer.right) - max(inner.left, outer.left))
    iy = max(0.0, min(inner.bottom, outer.bottom) - max(inner.top, outer.top))
    return inner.area > 0 and ix * iy >= 0.9 * inner.area and outer.area <= 12 * inner.area and outer.area > inner.area


def _one_per_place(indices: list[int], boxes: list[Box]) -> list[int]:
    """Proposals keep nested boxes; among the ones the ranker could not tell apart, the
    pieces of one icon are one place: keep the whole icon, in rank order."""
    chosen = [i for i in indices if not any(j != i and _nested(boxes[i], boxes[j]) for j in indices)]
    # a box far larger than a glyph inside it that came as close (a labelled button, a card:
    # its glyph is what it was judged by) is that glyph's place: the glyph stays
    chosen = [j for j in chosen if not any(i != j and _holds_small(boxes[j], boxes[i]) for i in chosen)]
    return chosen or indices[:1]


def _holds_glyph(plate: Box, glyph: Box) -> bool:
    """``glyph`` lies on ``plate`` (a floating button's plus on its rounded square): inside
    it and not lost in a panel (the plate at most 20x its area)."""
    ix = max(0.0, min(glyph.right, plate.right) - max(glyph.left, plate.left))
    iy = max(0.0, min(glyph.bottom, plate.bottom) - max(glyph.top, plate.top))
    return glyph.area > 0 and ix * iy >= 0.9 * glyph.area and glyph.area < plate.area <= 20 * glyph.area


def _pieces_of_one(a: Box, b: Box) -> bool:
    """Two boxes that are halves of one glyph (the two arcs of a refresh sign, proposed
    apart): they overlap, and together they are no bigger than one icon, squarish."""
    ix = min(a.right, b.right) - max(a.left, b.left)
    iy = min(a.bottom, b.bottom) - max(a.top, b.top)
    if ix <= 0 or iy <= 0 or _nested(a, b) or _nested(b, a):
        return False
    whole = _union(a, b)
    return whole.area <= 2.5 * max(a.area, b.area) and 0.5 <= whole.width / max(whole.height, 1e-6) <= 2.0


def _whole_glyph(close: list[int], boxes: list[Box], scores: list[float]) -> tuple[list[int], Box]:
    """The halves of one glyph proposed apart are one place: ``close`` without the best's
    other halves, and the best's whole box. Both halves must tie by their own look: a
    look-alike let in at a lower score is another icon, even where it overlaps."""
    whole = boxes[close[0]]
    tie = scores[close[0]] - _HEURISTIC_MARGIN
    pieces = []
    for i in close[1:]:
        if scores[i] >= tie and _pieces_of_one(whole, boxes[i]):
            pieces.append(i)
            whole = _union(whole, boxes[i])
    return [close[0], *(i for i in close[1:] if i not in pieces)], whole


def _union(a: Box, b: Box) -> Box:
    return Box(min(a.left, b.left), min(a.top, b.top), max(a.right, b.right), max(a.bottom, b.bottom))


def _holds_small(outer: Box, inner: Box) -> bool:
    ix = max(0.0, min(inner.right, outer.right) - max(inner.left, outer.left))
    iy = max(0.0, min(inner.bottom, outer.bottom) - max(inner.top, outer.top))
    return inner.area > 0 and ix * iy >= 0.9 * inner.area and outer.area > 12 * inner.area


def _siblings(a: Box, b: Box) -> bool:
    """Two icons of one list or one row: the same size (one drawable size, within what the
    proposals' edges add or lose: area within 1.5x), side by side in a row or stacked in a
    column, apart. A toolbar's glyph and a content tile's are not."""
    if not 2 / 3 <= a.area / max(b.area, 1e-6) <= 1.5 or a.iou(b) > 0.3:
        return False
    (ax, ay), (bx, by) = a.center, b.center
    return abs(ay - by) <= 0.5 * max(a.height, b.height) or abs(ax - bx) <= 0.5 * max(a.width, b.width)


def _two_surfaces(first: np.ndarray | None, second: np.ndarray | None) -> bool:
    """Two icons sit on two different flat surfaces (``flat_surface``: None over a photo):
    a browser toolbar's close X on its dark bar and the page's menu just below it on the
    page's blue header are not one list's. Over a photo nothing tells them apart."""
    return first is not None and second is not None and int(np.abs(first - second).max()) > _SURFACE_APART


def _cell(box: Box, width: int, height: int) -> tuple[int, int]:
    """The box centre's third of the screen, down and across (how planners say where)."""
    x, y = box.center
    return min(2, int(3 * y / height)), min(2, int(3 * x / width))


def _look_alikes(
    best: int,
    boxes: list[Box],
    scores: list[float],
    app: AppArea | None,
    size: tuple[int, int] | None,
    colour_only: bool = False,
    image: np.ndarray | None = None,
    shapes: list[float] | None = None,
) -> list[int]:
    """Boxes the heuristic's win over the best is too thin against, beyond the margin:
    - a row's or a list's other icons (same size, same row or column): colour and size are
      shared there, and a shape score decides alone, which is weak evidence on a glyph it
      was not drawn for; one scoring ``_SIBLING_SHARE`` of the best is a candidate, unless
      the description's position words put them apart (``size``: the frame's width and
      height when a position was given; the sibling then must share the best's third);
      judged by colour alone (``colour_only``), every such sibling drawn in that colour
      (``_COLOUR_SIBLING_SHARE``) is one: a list's icons share one colour, and how much of
      it a small glyph shows is its stroke's thickness, not which glyph it is (a settings
      list's icons each on its own colour's plate stay apart); with the ``image``, not
      one on another flat surface than the best's (a list's rows share their background);
    - when the description let a system bar in ("back", "bluetooth"), the same glyph on
      the other side of the bar's edge (the app's own back arrow and the navigation bar's,
      a settings row's Bluetooth glyph and the status bar's): ``_COLOUR_ONLY_SHARE``.
    ``shapes``: each box's score for the shape named, when one was: a sibling showing none of
    it (under ``SHAPE_UNSEEN``) beside a best that clearly shows it (``_SHAPE_SHOWN``) is
    another glyph drawn in the same colour (a gamepad cross beside a lens), not a look-alike."""
    top = scores[best]
    clear = shapes is not None and shapes[best] >= _SHAPE_SHOWN

    def on(j: int) -> np.ndarray | None:
        return flat_surface(image, boxes[j]) if image is not None else None

    found = [
        j for j, box in enumerate(boxes)
        if j != best and scores[j] >= (_COLOUR_SIBLING_SHARE if colour_only else _SIBLING_SHARE) * top
        and _siblings(box, boxes[best])
        and not _two_surfaces(on(j), on(best))
        and not _nested(box, boxes[best]) and not _nested(boxes[best], box)
        and (size is None or _cell(box, *size) == _cell(boxes[best], *size))
        and not (clear and shapes is not None and shapes[j] < SHAPE_UNSEEN)
    ]  # fmt: skip
    if app is not None:
        inside = app.holds(boxes[best])
        found += [j for j, box in enumerate(boxes)
                  if j != best and j not in found and app.holds(box) != inside and scores[j] >= _COLOUR_ONLY_SHARE * top]  # fmt: skip
    return sorted(found, key=lambda j: -scores[j])


def _shows(v: Verdict | None, floor: float = _GLYPH_CLEAR) -> bool:
    """The box shows the glyph named clearly (``floor``, and looks no more like an unrelated
    glyph)."""
    return v is not None and v.named >= floor and v.named >= v.other


def _glyph_rival(best: int, boxes: list[Box], glyph: Callable[[int], Verdict | None]) -> int | None:
    """The glyph matcher's veto of a tap: a sibling of the box about to be tapped (same size,
    same row or column) that clearly shows the glyph named, while the box itself shows it
    ``_GLYPH_APART`` less and looks more like another glyph (undo's box beside redo's, sort's
    beside filter's). None: no veto (the matcher abstains on custom art and on descriptions
    that name no glyph of its vocabulary)."""
    own = glyph(best)
    if own is None or _shows(own) or own.other < own.named + _GLYPH_APART:
        return None
    rivals = []
    for j, box in enumerate(boxes):
        if j != best and _siblings(box, boxes[best]):
            v = glyph(j)
            if v is not None and _shows(v, _GLYPH_RIVAL) and v.named >= own.named + _GLYPH_APART:
                rivals.append((v.named, j))
    return max(rivals)[1] if rivals else None


def _glyph_pick(close: list[int], glyph: Callable[[int], Verdict | None]) -> int | None:
    """The glyph matcher's tie-break among look-alikes: exactly one clearly shows the glyph
    named and every other shows it ``_GLYPH_APART`` less (or holds no glyph it can read); not
    when the description means a more particular glyph than the one it names ("rain cloud")."""
    shown = [j for j in close if _shows(glyph(j))]
    if len(shown) != 1 or any(v.particular for j in shown if (v := glyph(j)) is not None):
        return None
    top = glyph(shown[0])
    assert top is not None
    rest = [glyph(j) for j in close if j != shown[0]]
    return shown[0] if all(v is None or v.named <= top.named - _GLYPH_APART for v in rest) else None


class Ranker(Protocol):
    name: str

    def understands(self, description: str) -> bool: ...

    def score(self, image: np.ndarray, boxes: list[Box], description: str, prior: list[float]) -> list[float]: ...


class IconLocator:
    def __init__(
        self,
        config: PerceptionConfig,
        cache: FrameCache,
        ocr: Callable[[np.ndarray, str], list[TextLine]],
        timings: dict[str, float],
    ) -> None:
        self.config = config
        self._cache = cache
        self._ocr = ocr
        self._timings = timings
        self._lock = threading.Lock()
        # (detector, ranker, device), set once as one tuple: a thread never sees half a choice
        self._backends: tuple[str, str, str] | None = None

    # --- backend choice ---------------------------------------------------------------

    def _choose(self) -> tuple[str, str, str]:
        chosen = self._backends
        if chosen is not None:
            return chosen
        with self._lock:
            if self._backends is None:
                self._backends = self._resolve()
                log.info("icon backends: detector=%s ranker=%s device=%s", *self._backends)
            return self._backends

    def _resolve(self) -> tuple[str, str, str]:
        from perception import ml

        c = self.config
        torch_ok = ml.torch_installed()
        device = ml.resolve_torch_device(c) if torch_ok and (c.detector != "proposals" or c.ranker != "heuristic") else "cpu"
        detector = c.detector
        if detector == "auto":
            gpu_dino = torch_ok and device == "cuda" and ml.grounding_dino_weights_available(c)
            detector = "grounding-dino" if gpu_dino else "proposals"
        ranker = c.ranker
        if ranker == "auto":
            ranker = "clip" if torch_ok and ml.clip_weights_available(c) else "heuristic"
        return detector, ranker, device

    def _detector(self) -> Any:
        from perception import ml

        c = self.config
        if self._choose()[0] == "grounding-dino":
            key = ("grounding-dino", c.grounding_dino_path, c.compute_device, c.half_precision, c.allow_hub_downloads)
            return shared(key, lambda: ml.GroundingDinoDetector(c))
        py_key = ("groundingdino-py", c.groundingdino_py_checkpoint, c.groundingdino_py_config, c.compute_device)
        return shared(py_key, lambda: ml.GroundingDinoPyDetector(c))

    def _ranker(self) -> Ranker:
        if self._choose()[1] == "clip":
            from perception import ml

            c = self.config
            key = ("clip", c.clip_model, c.clip_checkpoint, c.compute_device, c.half_precision, c.allow_hub_downloads)
            return shared(key, lambda: ml.ClipRanker(c))
        return HeuristicRanker()

    def describe(self) -> dict[str, str]:
        detector_name, ranker_name, device = self._choose()
        precision = "fp32"
        if detector_name != "proposals" or ranker_name == "clip":
            from perception import ml

            precision = ml.precision_name(ml.uses_half_precision(self.config, device))
        detector = {
            "proposals": "proposals (OpenCV edges + contours, weight-free)",
            "grounding-dino": f"grounding-dino ({self.config.grounding_dino_path}, {device}, {precision})",
            "groundingdino-py": f"groundingdino-py ({self.config.groundingdino_py_checkpoint}, {device}, fp32)",
        }[detector_name]
        ranker = (
            f"clip ({self.config.clip_model}, {self.config.clip_checkpoint}, {device}, {precision})"
            if ranker_name == "clip"
            else "heuristic (colour + shape words, weight-free)"
        )
        return {"icon_detector": detector, "icon_ranker": ranker, "compute_device": device}

    # --- locating ---------------------------------------------------------------------

    def regions(self, image: np.ndarray, key: str) -> list[IconRegion]:
        """Icon boxes on the frame after size filter and NMS (cached per frame)."""
        detector_name = self._choose()[0]
        height, width = image.shape[:2]
        c = self.config

        def detect() -> list[IconRegion]:
            started = time.perf_counter()
            if detector_name == "proposals":
                lines = self._ocr(image, key)
                started = time.perf_counter()
                found = propose_ui_elements(
                    image,
                    lines,
                    min_side_fraction=c.icon_min_side_fraction,
                    max_area_fraction=c.icon_max_area_fraction,
                    nms_iou=c.nms_iou,
                    limit=_PROPOSAL_LIMIT,
                )
            else:
                raw = self._detector().detect(image, c)
                found = filter_icon_boxes(
                    raw, width, height,
                    min_side_fraction=c.icon_min_side_fraction, max_area_fraction=c.icon_max_area_fraction,
                )
                found = nms(found, c.nms_iou)
            self._timings["detect"] = time.perf_counter() - started
            return found

        return self._cache.get_or_compute(key, f"icons:{detector_name}", detect)

    @staticmethod
    def _tree_vote(
        nodes: list[AccessibilityNode], description: str, boxes: list[Box], scores: list[float], ranker: Ranker, area: float
    ) -> set[int]:
        """Add the tree's agreement to the scores (in place) where the pixels do not
        disagree: the proposal must not be ruled out by the pixel ranker when that ranker
        understood the description. Returns the boxes the tree backed."""
        votes = tree_votes(nodes, description, boxes, max_node_area=_TREE_NODE_AREA * area)
        understood = ranker.name != "heuristic" or ranker.understands(description)
        top = max(scores)
        backed = set()
        for i, vote in enumerate(votes):
            if vote > 0 and (not understood or scores[i] >= _TREE_PIXEL_SHARE * top):
                scores[i] += _TREE_WEIGHT * vote
                backed.add(i)
        return backed

    def _app_area(self, image: np.ndarray, key: str) -> AppArea:
        def find() -> AppArea:
            # words, not a navigation glyph OCR read as "<" or "O"
            lines = self._ocr(image, key) if self._choose()[0] == "proposals" else []
            texts = [line.box for line in lines if sum(ch.isalnum() for ch in line.text) >= 3]
            return app_area(image, texts)

        return self._cache.get_or_compute(key, "app-area", find)

    def locate_in_tree(
        self, image: np.ndarray, description: str, position: str | None, nodes: list[AccessibilityNode]
    ) -> Location:
        """Where the icon is by the tree's names alone, for a frame captured blank (a
        FLAG_SECURE window: ``perception.blank_screen``): the agreeing control, or the
        agreeing ones as candidates when more than one agrees as well."""
        backend = "accessibility only (the capture is blank)"
        try:
            where = parse_position(position)
        except UnknownPositionError as exc:
            return Location(LocateStatus.NOT_FOUND, description, feedback=str(exc), backend=backend)
        height, width = image.shape[:2]
        found = tree_icon_boxes(nodes, description, _TREE_NODE_AREA * width * height)
        if where is not None:
            found = [(b, a) for b, a in found if where.accepts(b, width, height, (0.0, float(height)))]
        if not found:
            return Location(LocateStatus.NOT_FOUND, description, backend=backend,
                            feedback=f'The screen is protected from capture and no control in its accessibility tree '
                                     f'is named like "{description}". Click text instead.')  # fmt: skip
        best = [b for b, a in found if a >= found[0][1]]
        # a content-desc is what the control says it is; a resource id only a developer's
        # name for it ("tvBackTitle" is the title beside the back chevron): a tap wants the first
        if len(best) == 1 and found[0][1] >= _TREE_NAMED:
            return Location(LocateStatus.FOUND, description, point=best[0].center, box=best[0], backend=backend)
        top = best[: self.config.max_text_candidates]
        candidates = numbered_candidates(image, [(b, None, found[0][1]) for b in top], self.config.crop_margin)
        return Location(LocateStatus.CANDIDATES, description, candidates=candidates, backend=backend,
                        feedback=f'Several controls could be "{description}"; choose one by number (1..{len(candidates)}).')  # fmt: skip

    def _offer(
        self, image: np.ndarray, description: str, chosen: list[int], boxes: list[Box], scores: list[float], feedback: str,
        backend: str,
    ) -> Location:
        top = chosen[: self.config.max_text_candidates]
        candidates = numbered_candidates(image, [(boxes[j], None, scores[j]) for j in top], self.config.crop_margin)
        return Location(LocateStatus.CANDIDATES, description, candidates=candidates, feedback=feedback, backend=backend)

    def _anchor_matches(self, image: np.ndarray, key: str, anchor: str) -> list[TextMatch]:
        """Where the anchor text is on the screen, found by OCR as Click text finds it (tiers
        up to fuzzy)."""
        height, width = image.shape[:2]
        return [m for m in match_text(self._ocr(image, key), anchor, (width, height), self.config.max_box_fraction)
                if m.tier <= TIER_FUZZY]  # fmt: skip

    def _pick(
        self, image: np.ndarray, key: str, which: Which, description: str, boxes: list[Box], scores: list[float],
        best: int, understood: bool, place: str, backend: str, unsure: list[int], plain: list[int],
    ) -> Location | None:
        """One of several look-alikes, by the planner's count or anchor text
        (``perception.icon_which``). A count needs every look-alike: the best's group (boxes
        of its size, in a row or column with one of the group, scoring ``_SIBLING_SHARE`` of
        it); a sibling of the group that scores nearly as well is a doubt, and a doubt means
        candidates, never a tap that the count might have shifted. An anchor text is found by
        OCR as Click text finds it; among the icons in its relation to that text (its row,
        next to it, above ...), the one that looks most like the description, and when
        several tie on look, the nearest, unless another is about as near. None when a text
        written without quotes has no icon in that relation: the caller reads plain words."""
        def offer(chosen: list[int], feedback: str) -> Location:
            # what the which-words could not decide: their own choice first, then the boxes
            # the plain description would have offered
            merged = chosen + [i for i in plain if i not in chosen]
            return self._offer(image, description, merged, boxes, scores, feedback, backend)

        order = sorted(range(len(boxes)), key=lambda i: -scores[i])
        look = f'"{which.look}"'
        if not understood:
            return offer(order,
                         f"No icon{place} surely looks like {look}; choose one by number, or describe its colour "
                         "and shape.")  # fmt: skip
        if which.ordinal is not None and any(not _siblings(boxes[i], boxes[best]) for i in unsure):
            # the ranker could not tell the best from boxes of another kind (not its
            # look-alikes): which kind to count is unsure, so nothing is counted
            return offer([],
                         f"Icons of different kinds{place} could be {look}; choose one by number.")  # fmt: skip
        top = scores[best]
        if which.ordinal is not None:
            group = [best]
            for i in order:  # best first: each joins when it is a sibling of one already in
                if i not in group and scores[i] >= _SIBLING_SHARE * top and any(_siblings(boxes[i], boxes[j]) for j in group):
                    group.append(i)
            group = _one_per_place(group, boxes)
            doubtful = [i for i in order if i not in group and scores[i] >= _PICK_DOUBT * top
                        and any(_siblings(boxes[i], boxes[j]) for j in group)
                        and not any(_nested(boxes[i], boxes[j]) or _nested(boxes[j], boxes[i]) for j in group)]  # fmt: skip
            counted = [group[k] for k in reading_order([boxes[j] for j in group], which.origin)]
            n = which.ordinal
            if doubtful:
                return offer(sorted(group + doubtful, key=lambda j: -scores[j]),
                             f"Not every icon{place} like {look} is sure, so counting them could miss; "
                             "choose one by number.")  # fmt: skip
            if n > len(counted):
                return offer(counted,
                             f"Only {len(counted)} icon(s){place} look like {look}; choose one by number.")  # fmt: skip
            picked = boxes[counted[n - 1] if n > 0 else counted[-1]]
            return Location(LocateStatus.FOUND, description, point=picked.center, box=picked, backend=backend)
        anchor, relation = which.anchor or "", which.relation or "next"
        matches = self._anchor_matches(image, key, anchor)
        if not matches:
            return Location(LocateStatus.NOT_FOUND, description, backend=backend,
                            feedback=f'The text "{anchor}" is not on the screen, so it cannot tell which icon '
                                     f"is {look}. Quote a text you see, or count (the second ...).")  # fmt: skip
        # the anchor is strong evidence of where: boxes that look half as much like it are
        # looked at, but only one that looks like it as much as a look-alike is tapped
        pool = [i for i in order if scores[i] >= _PICK_DOUBT * top]
        chosen: list[int] = []
        for match in matches:
            there = [(d, j) for j in pool if (d := in_relation(boxes[j], match.box, relation)) is not None]
            if not there:
                continue
            # the look decides among the boxes there (a row's cover beside its title is
            # nearer than the row's play button); nearness only among those that tie
            strongest = max(scores[j] for _, j in there)
            there = sorted((d, j) for d, j in there if scores[j] >= _TIE_SHARE * strongest)
            nearest = there[0][0]
            chosen += [j for d, j in there if d <= _PICK_NEAR * nearest + 0.5 * boxes[j].height and j not in chosen]
        chosen = _one_per_place(chosen, boxes) if chosen else chosen
        if len(chosen) == 1 and scores[chosen[0]] >= _SIBLING_SHARE * top:
            box = boxes[chosen[0]]
            return Location(LocateStatus.FOUND, description, point=box.center, box=box, backend=backend)
        if len(chosen) == 1:
            return offer(chosen,
                         f'One icon {_RELATION_SAID[relation]} "{anchor}" might be {look}, but its look does not '
                         "confirm it; choose 1 if its crop shows it.")  # fmt: skip
        if chosen:
            return offer(chosen,
                         f'Several icons like {look} are {_RELATION_SAID[relation]} "{anchor}"; '
                         "choose one by number.")  # fmt: skip
        if not which.quoted:
            return None  # an unquoted text said loosely where ("under the X post"): plain words
        return offer([],
                     f'No icon like {look} is {_RELATION_SAID[relation]} "{anchor}"; '
                     "choose one by number.")  # fmt: skip

    def locate(
        self,
        image: np.ndarray,
        key: str,
        description: str,
        position: str | None,
        nodes: list[AccessibilityNode] | None = None,
    ) -> Location:
        """``nodes``: the accessibility tree's named nodes for this frame (``perception.icon_tree``),
        or None: a node whose name agrees with the description lifts the proposal inside it.

        A planner's position is sometimes the wrong part of the screen (the real Mobile-Agent
        runs: "center" for a launcher tile at the top left). When the named part offers only
        candidates and the whole screen has one sure answer outside it, that answer joins the
        candidates, last and said to be elsewhere: never a tap outside the part named."""
        found = self._locate(image, key, description, position, nodes)
        if found.status is not LocateStatus.CANDIDATES or position is None:
            return found
        try:
            where = parse_position(position)
            counted = read_which(description).picks
        except (UnknownPositionError, WhichError):
            return found
        if where is None or counted:
            return found
        anywhere = self._locate(image, key, description, None, nodes)
        box = anywhere.box
        if anywhere.status is not LocateStatus.FOUND or box is None:
            return found
        height, width = image.shape[:2]
        area = self._app_area(image, key).for_description(read_which(description).look, height)
        if where.accepts(box, width, height, (area.top, area.bottom)) or any(
                c.box.contains(*box.center) for c in found.candidates):
            return found
        places = [(c.box, c.text, c.score) for c in found.candidates][: self.config.max_text_candidates - 1]
        places.append((box, None, min((c.score for c in found.candidates), default=0.0)))
        candidates = numbered_candidates(image, places, self.config.crop_margin)
        feedback = (f"{found.feedback} {len(candidates)} is not in the {where.text} part of the screen, but is "
                    f'the one clear match for "{description}" anywhere on it.')  # fmt: skip
        return Location(LocateStatus.CANDIDATES, description, candidates=candidates, feedback=feedback,
                        backend=found.backend)

    def _locate(
        self,
        image: np.ndarray,
        key: str,
        description: str,
        position: str | None,
        nodes: list[AccessibilityNode] | None = None,
    ) -> Location:
        backend = "+".join(self._choose()[:2])
        try:
            where = parse_position(position)
            which = read_which(description)
        except (UnknownPositionError, WhichError) as exc:
            return Location(LocateStatus.NOT_FOUND, description, feedback=str(exc), backend=backend)
        if which.anchor is not None and not which.quoted and not self._anchor_matches(image, key, which.anchor):
            # a text written without quotes that is not on the screen ("next to the text box"):
            # not a text, so the description is its look alone, as plain words
            which = Which(which.look)
        look = which.look  # what the ranker judges: the which-words are not colour or shape words
        regions = self.regions(image, key)
        height, width = image.shape[:2]
        # targets live in the app's area unless the description names a system control
        app = self._app_area(image, key)
        area = app.for_description(look, height)
        span = (area.top, area.bottom)
        regions = [r for r in regions if area.holds(r.box) and not _screen_corner(r.box, width, height)]
        if where is not None and which.ordinal is None:  # a count is over the whole screen: its pick is checked after
            regions = [r for r in regions if where.accepts(r.box, width, height, span)]
        regions = regions[: self.config.max_icon_candidates]  # after the place filters: they cut most
        place = f" in the {where.text} part of the screen" if where is not None else ""
        if not regions:
            return Location(
                LocateStatus.NOT_FOUND,
                description,
                feedback=f'No icon was detected{place} for "{description}". Try another position, or click text instead.',
                backend=backend,
            )
        ranker = self._ranker()
        started = time.perf_counter()
        boxes = [r.box for r in regions]
        scores = ranker.score(image, boxes, look, [r.score for r in regions])
        tree_backed = self._tree_vote(nodes, look, boxes, scores, ranker, width * height) if nodes else set()
        if where is not None:  # among look-alikes, the one nearest the named edge
            scores = [s + _POSITION_WEIGHT * where.closeness(b, width, height, span) for s, b in zip(scores, boxes, strict=True)]
        self._timings["rank"] = time.perf_counter() - started
        order = sorted(range(len(regions)), key=lambda i: -scores[i])
        best = order[0]
        understood = True
        if ranker.name == "heuristic":
            understood = (ranker.understands(look) and scores[best] >= _HEURISTIC_FLOOR) or best in tree_backed
            if isinstance(ranker, HeuristicRanker) and ranker.shape_scores and best not in tree_backed:
                # the best does not show the shape named: its colour alone won it, and a box
                # holding more of that colour (a toolbar chevron beside a row's folder) is not
                # the glyph: candidates
                understood = understood and ranker.shape_scores[best] >= SHAPE_UNSEEN
            if isinstance(ranker, HeuristicRanker) and ranker.hue_scores and best not in tree_backed:
                # ... nor the hue named: its shape alone won it (a grey lens in the bottom bar
                # for "a plus in a purple circle")
                understood = understood and ranker.hue_scores[best] >= HUE_UNSEEN
            if isinstance(ranker, HeuristicRanker) and ranker.plates and best not in tree_backed:
                # ... nor the container it is said to be in: a lone glyph elsewhere that half
                # looks like the one in the circle (a lens for "a circle with a down arrow")
                plates = ranker.plates
                fits = max([plates[best]] + [plates[j] for j in range(len(boxes)) if _holds_glyph(boxes[j], boxes[best])])
                understood = understood and fits >= SHAPE_UNSEEN
            if max(boxes[best].width, boxes[best].height) < _DETAIL_SIDE * min(width, height) and best not in tree_backed:
                # smaller than any control's glyph: a detail of one (a lock's keyhole for "two
                # circular arrows"), never tapped on its own
                understood = False
            # boxes the heuristic cannot tell apart from the best go to the planner to choose
            floor = min(scores[best] - _HEURISTIC_MARGIN, _TIE_SHARE * scores[best])
            if best not in tree_backed and not names_a_shape(look):
                floor = min(floor, _COLOUR_ONLY_SHARE * scores[best])
            close = [i for i in order if scores[i] >= floor] if understood else order
            if understood and best not in tree_backed:
                bars = app if area != app else None  # the description let a system bar in
                size = (width, height) if where is not None else None
                colour_only = not names_a_shape(look)
                # the shape named (the glyph's, or when it has none the container's: a look-alike
                # container shows the container's shape)
                shapes = ranker.shape_scores if isinstance(ranker, HeuristicRanker) and ranker.shape_scores else None
                close += [i for i in _look_alikes(best, boxes, scores, bars, size, colour_only, image, shapes)
                          if i not in close]  # fmt: skip
        else:
            close = [best]
        if which.picks:
            plain = _one_per_place(close, boxes)
            unsure = [i for i in plain if i != best]
            picked = self._pick(image, key, which, description, boxes, scores, best, understood, place, backend, unsure,
                                plain)
            chosen = picked if picked is not None else self._plain(image, description, look, close, boxes, scores,
                                                                   understood, place, backend)
            if chosen.box is not None and where is not None and not where.accepts(chosen.box, width, height, span):
                return self._offer(image, description, [boxes.index(chosen.box)], boxes, scores,
                                   f'The icon "{description}" names is not in the {where.text} part of the screen; '
                                   "choose 1 if its crop shows what you meant.", backend)  # fmt: skip
            return chosen
        return self._plain(image, description, look, close, boxes, scores, understood, place, backend)

    def _plain(
        self, image: np.ndarray, description: str, look: str, close: list[int], boxes: list[Box],
        scores: list[float], understood: bool, place: str, backend: str,
    ) -> Location:
        """The tap or the candidates of the description's look alone: the best, or the boxes
        that come ``close`` to it; the glyph matcher vetoes the tap or picks one of them."""
        close = _one_per_place(close, boxes)
        close, whole = _whole_glyph(close, boxes, scores)
        glyphs: dict[int, Verdict | None] = {}

        def glyph(j: int) -> Verdict | None:
            if j not in glyphs:
                glyphs[j] = verdict(image, boxes[j], look)
            return glyphs[j]

        if len(close) == 1 and understood:
            rival = _glyph_rival(close[0], boxes, glyph)
            if rival is None:
                return Location(LocateStatus.FOUND, description, point=whole.center, box=whole, backend=backend)
            shown, wanted = glyph(close[0]), glyph(rival)
            assert shown is not None and wanted is not None
            return self._offer(image, description, [rival, close[0]], boxes, scores,
                               f'The icon that best fits "{description}" by colour and shape looks like '
                               f'"{shown.other_name}", and the one beside it like "{wanted.named_name}"; choose one by '
                               "number.", backend)  # fmt: skip
        if len(close) > 1 and (sure := _glyph_pick(close, glyph)) is not None:
            box = boxes[sure]
            return Location(LocateStatus.FOUND, description, point=box.center, box=box, backend=backend)
        top = close[: self.config.max_text_candidates]
        candidates = numbered_candidates(image, [(boxes[j], None, scores[j]) for j in top], self.config.crop_margin)
        if len(candidates) == 1:
            # the only box left, but its look did not confirm the description: a guess,
            # so the planner looks at its crop before anything is tapped
            feedback = (f'One icon{place} might be "{description}", but its look does not confirm it; '
                        "choose 1 if its crop shows it, or use another operation.")  # fmt: skip
        else:
            feedback = f'Several icons{place} could be "{description}"; choose one by number (1..{len(candidates)}).'
        return Location(LocateStatus.CANDIDATES, description, candidates=candidates, feedback=feedback, backend=backend)
