"""``Perception``: the library's one entry point (OCR, text and icon localization).

Every text match goes through ``Perception._locate`` with the config's settings, whether the
lines come from the whole frame (``find_text``) or a region (``find_text_in_region``):
callers never hold their own copy of those settings.

Thread-safe; models load lazily, once per process (``perception.registry``), and results
are cached per screenshot (``perception.cache``).

May import: numpy, the standard library, ``perception.*``.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from perception.accessibility import nodes_from, tap_targets, tree_fits_image
from perception.blank_screen import blank_app_area
from perception.cache import FrameCache, frame_key
from perception.config import PerceptionConfig
from perception.errors import InvalidInputError
from perception.icon_tree import icon_nodes
from perception.icons import IconLocator
from perception.ocr import OcrBackend, ReusingReader, make_ocr_backend
from perception.proposals import propose_ui_elements
from perception.registry import shared
from perception.snapping import SnapTarget, targets_from
from perception.text_match import locate_text
from perception.tree_source import tree_location, tree_only_location
from perception.types import Box, IconRegion, LocateStatus, Location, TextLine
from perception.zoom import is_short_target, read_zoomed, zoom_regions

__all__ = ["Perception", "check_image"]

log = logging.getLogger(__name__)


def check_image(image: object) -> np.ndarray:
    """``image`` as a C-contiguous RGB uint8 HxWx3 array, else ``InvalidInputError``.

    Also taken, and converted: RGBA (alpha dropped, e.g. a PNG read without ``convert``),
    grey HxW or HxWx1, and any memory layout (views, crops, Fortran order), which OpenCV
    would otherwise reject deep inside a backend.
    """
    if not isinstance(image, np.ndarray):
        raise InvalidInputError(
            f"image must be a numpy array (RGB uint8 HxWx3), got {type(image).__name__}", backend="input"
        )
    if image.dtype != np.uint8 or image.ndim not in (2, 3) or (image.ndim == 3 and image.shape[2] not in (1, 3, 4)):
        raise InvalidInputError(
            f"image must be RGB uint8 HxWx3 (or RGBA / grey), got dtype={image.dtype} shape={image.shape}",
            backend="input",
        )
    if image.shape[0] < 8 or image.shape[1] < 8:
        raise InvalidInputError(f"image too small: {image.shape[1]}x{image.shape[0]}", backend="input")
    if image.ndim == 2:
        image = image[:, :, None]
    if image.shape[2] == 1:
        return np.repeat(image, 3, axis=2)
    if image.shape[2] == 4:
        image = image[:, :, :3]
    return np.ascontiguousarray(image)


def _clipped(region: Box, width: int, height: int) -> tuple[int, int, int, int]:
    if not isinstance(region, Box):
        raise InvalidInputError(f"region must be a perception.types.Box, got {type(region).__name__}", backend="input")
    return (max(0, int(region.left)), max(0, int(region.top)), min(width, int(region.right)), min(height, int(region.bottom)))


def _check_target(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{what} must be a non-empty string, got {value!r}", backend="input")
    return value.strip()


class Perception:
    """Where is text X / icon Y on this screenshot?  Images are RGB uint8 HxWx3 numpy."""

    def __init__(self, config: PerceptionConfig | None = None) -> None:
        self.config = config or PerceptionConfig()
        self._cache = FrameCache(self.config.cache_size)
        c = self.config
        ocr_key = ("ocr", c.ocr_backend, c.paddle_det_dir, c.paddle_rec_dir, c.ocr_limit_side_len, c.ocr_screen_side_len,
                   c.ocr_min_short_side,
                   c.ocr_rec_min_width, c.ocr_rec_batch, c.ocr_memory_arena, c.ocr_use_cls, c.ocr_min_score, c.ocr_threads,
                   c.ocr_spinning, c.compute_device)
        self._ocr: OcrBackend = shared(ocr_key, lambda: make_ocr_backend(c))
        # full-screen reads go through this one (previous frame's lines reused where the
        # pixels did not change); crops (zoom, tree spot checks) go to the backend directly
        self._reader: OcrBackend = ReusingReader(self._ocr) if c.ocr_reuse_unchanged else self._ocr
        self.timings: dict[str, float] = {}  # seconds spent in the last call of each stage
        # cheap: it chooses and loads its backends on first use
        self._icons = IconLocator(self.config, self._cache, self._ocr_cached, self.timings)

    # --- public API -------------------------------------------------------------------

    def ocr(self, image: np.ndarray) -> list[TextLine]:
        """Every text line on the image (image pixels), cached per frame."""
        image = check_image(image)
        return list(self._ocr_cached(image, frame_key(image)))  # a copy: the caller may sort or edit it

    def find_text(self, image: np.ndarray, text: str, hierarchy: object = None) -> Location:
        """Where ``text`` is on ``image``. ``hierarchy``: the phone's ``uiautomator dump``
        (XML, or nodes from ``perception.accessibility``), used when ``config.accessibility``
        is on and the tree agrees with the pixels; else vision alone decides. On a frame
        whose app area is blank (``blank``: a FLAG_SECURE window) a given tree answers alone."""
        image = check_image(image)
        target = _check_target(text, "text")
        key = frame_key(image)
        if hierarchy is not None and self.blank(image):  # nothing to read: the tree alone answers
            alone = tree_only_location(image, target, hierarchy, self._locate, self.config.crop_margin)
            if alone is not None:
                return alone
        if hierarchy is not None and self.config.accessibility:
            found = tree_location(image, target, hierarchy, self._ocr.read, self._locate)
            if found is not None:
                return found
        lines = self._ocr_cached(image, key)
        location = self._locate(image, lines, target, self._ocr.name)
        if location.status is LocateStatus.NOT_FOUND and self.config.zoom_short_targets and is_short_target(target):
            started = time.perf_counter()
            regions = zoom_regions(lines, target, (image.shape[1], image.shape[0]), self._empty_widgets(image, key, lines))
            extra = read_zoomed(self._ocr.read, image, regions)
            self.timings["zoom"] = time.perf_counter() - started
            if extra:
                location = self._locate(image, lines + extra, target, f"{self._ocr.name}+zoom")
        return location

    def ocr_region(self, image: np.ndarray, region: Box) -> list[TextLine]:
        """The text lines of ``region`` of ``image`` (image pixels), read from that crop
        alone: a strip of the screen costs a fraction of a full read. Cached per crop."""
        image = check_image(image)
        left, top, right, bottom = _clipped(region, image.shape[1], image.shape[0])
        if right - left < 8 or bottom - top < 8:
            return []
        crop = np.ascontiguousarray(image[top:bottom, left:right])
        read = self._cache.get_or_compute(frame_key(crop), "ocr-region", lambda: self._ocr.read(crop))
        return [
            TextLine(line.text, Box(line.box.left + left, line.box.top + top, line.box.right + left,
                                    line.box.bottom + top), line.score)
            for line in read
        ]

    def find_text_in_region(self, image: np.ndarray, text: str, region: Box, label: str = "region") -> Location:
        """Where ``text`` is among the lines ``ocr_region`` reads in ``region``, matched by
        the same rules and settings as ``find_text`` (no zoom, no tree); ``label`` names the
        region in the location's ``backend``."""
        target = _check_target(text, "text")
        image = check_image(image)
        return self._locate(image, self.ocr_region(image, region), target, f"{self._ocr.name} of the {label}")

    def _locate(self, image: np.ndarray, lines: list[TextLine], target: str, backend: str) -> Location:
        c = self.config
        return locate_text(
            image,
            lines,
            target,
            max_candidates=c.max_text_candidates,
            max_box_fraction=c.max_box_fraction,
            crop_margin=c.crop_margin,
            backend=backend,
            max_listed=c.max_text_candidates_listed or None,
        )

    def _empty_widgets(self, image: np.ndarray, key: str, lines: list[TextLine]) -> list[Box]:
        """Small widgets OCR read nothing in (cached per frame with the icon proposals' settings)."""
        c = self.config

        def run() -> list[Box]:
            regions = propose_ui_elements(image, lines, min_side_fraction=c.icon_min_side_fraction,
                                          max_area_fraction=c.icon_max_area_fraction, nms_iou=c.nms_iou,
                                          limit=c.max_icon_candidates)  # fmt: skip
            return [r.box for r in regions]

        return self._cache.get_or_compute(key, "empty-widgets", run)

    def find_icon(
        self, image: np.ndarray, description: str, position: str | None = None, hierarchy: object = None
    ) -> Location:
        """Where the icon ``description`` is. ``hierarchy`` (as for ``find_text``): a node whose
        content-desc agrees with the description, over a proposal the pixels allow, wins
        when ``config.accessibility`` is on."""
        image = check_image(image)
        target = _check_target(description, "description")
        if position is not None and not isinstance(position, str):
            raise InvalidInputError(f"position must be a string or None, got {position!r}", backend="input")
        key = frame_key(image)
        icons = self._icon_locator()
        nodes = None
        if hierarchy is not None and (self.config.accessibility or self.blank(image)):
            nodes = icon_nodes(hierarchy, image.shape[1], image.shape[0])
        if nodes is not None and self.blank(image):  # nothing drawn to rank: the tree's names answer
            return icons.locate_in_tree(image, target, position or None, nodes)
        return icons.locate(image, key, target, position or None, nodes)

    def blank(self, image: np.ndarray) -> bool:
        """Whether the frame's app area is one colour (``perception.blank_screen``): a
        FLAG_SECURE window captured black, or a frame caught before it was drawn. Then a
        tree given to ``find_text`` / ``find_icon`` answers alone, whatever
        ``config.accessibility`` says: the pixels cannot disagree with it. Cached per frame."""
        image = check_image(image)
        return self._cache.get_or_compute(frame_key(image), "blank", lambda: blank_app_area(image))

    def snap_targets(self, image: np.ndarray, hierarchy: object = None) -> list[SnapTarget]:
        """What a grounded model's tap may be snapped to (``perception.snapping``): the OCR
        lines and the weight-free UI-element proposals of the frame, both cached per frame.

        ``hierarchy`` (as for ``find_text``; used when ``config.accessibility`` is on, or the
        frame's app area is blank): the tree's controls join them (``tap_targets``: a button,
        a row, a field), each only where something is drawn inside it (a text line or a
        proposal), so a stale or partial tree cannot move a tap to where nothing is; on a
        blank frame, where nothing is drawn, the tree alone answers."""
        image = check_image(image)
        key = frame_key(image)
        lines = self._ocr_cached(image, key)
        c = self.config

        def propose() -> list[IconRegion]:
            return propose_ui_elements(image, lines, min_side_fraction=c.icon_min_side_fraction,
                                       max_area_fraction=c.icon_max_area_fraction, nms_iou=c.nms_iou, limit=200)  # fmt: skip

        regions = self._cache.get_or_compute(key, "snap_proposals", propose)
        targets = targets_from(lines, regions)
        if hierarchy is None:
            return targets
        blank = self.blank(image)
        if not (c.accessibility or blank):
            return targets
        size = (image.shape[1], image.shape[0])
        nodes = nodes_from(hierarchy)
        if not nodes or not tree_fits_image(nodes, size):
            return targets
        controls = tap_targets(nodes, size)
        if not blank:
            drawn = [t.box for t in targets]
            controls = [(box, label) for box, label in controls if any(_mostly_within(d, box) for d in drawn)]
        return targets + targets_from(nodes=controls)

    def describe_backends(self) -> dict[str, str]:
        """Which backends are (or will be) active, for ``doctor`` and logs."""
        icons = self._icon_locator()
        return {"ocr": self._ocr.describe(), **icons.describe()}

    @property
    def cache(self) -> FrameCache:
        return self._cache

    # --- internals --------------------------------------------------------------------

    def _ocr_cached(self, image: np.ndarray, key: str) -> list[TextLine]:
        def run() -> list[TextLine]:
            started = time.perf_counter()
            lines = self._reader.read(image)
            self.timings["ocr"] = time.perf_counter() - started
            log.debug("OCR %s: %d lines in %.2f s", self._ocr.name, len(lines), self.timings["ocr"])
            return lines

        return self._cache.get_or_compute(key, "ocr", run)

    def _icon_locator(self) -> IconLocator:
        return self._icons

    def __repr__(self) -> str:
        return f"Perception({self.config.ocr_backend}, detector={self.config.detector}, ranker={self.config.ranker})"


def _mostly_within(inner: Box, outer: Box) -> bool:
    """At least 80 % of ``inner`` lies in ``outer`` (something drawn inside a tree node)."""
    ix = max(0.0, min(inner.right, outer.right) - max(inner.left, outer.left))
    iy = max(0.0, min(inner.bottom, outer.bottom) - max(inner.top, outer.top))
    return inner.area > 0 and ix * iy >= 0.8 * inner.area
