"""Which glyph a box shows, from a real icon vocabulary (issue 30: look-alikes the colour and
coarse shape tests cannot tell apart: undo beside redo, sort beside filter).

Vocabulary: Google's Material Icons (Apache-2.0), the glyphs most Android apps draw (or
redraw: Pictogrammers' MDI follows them), in two styles: filled ("Regular", from Debian's
``fonts-material-design-icons-iconfont``) and outlined (from the npm package
``material-icons``), each shipped with its name -> codepoint map; the names are the words an
app's icon is called by. The product reads a compact table derived from them,
``perception/data/material_icons.npz`` (every glyph's mask at ``SIDE`` x ``SIDE``, one bit a
pixel, with its name and style), rebuilt by ``benchmarks/build_glyph_table.py``; the fonts'
licence is copied beside it (``perception/data/README.md`` says why these sources). A name's
drawings in both styles are one glyph: an outlined gear shows "settings" as a filled one does.

Matching: a box's foreground (pixels unlike the colour around it, and, on a filled plate, the
glyph unlike the plate: both polarities) is cut to its tight box, scaled without changing its
aspect to ``SIDE`` px, blurred (a stroke a pixel thicker or thinner is the same glyph) and
compared with every glyph by normalised correlation: one matrix product, a few ms a box. No
flip and no rotation: a mirror pair (undo/redo, arrow_back/arrow_forward) stays two glyphs.

A description names glyphs by their names' words ("undo", "open in new") and a few everyday
words for them ("gear", "trash can", "three dots", "magnifying glass"); a glyph also names its
own outlined/border variants. A word of state ("open padlock", "half star", "crossed-out eye")
names the state's near-twin instead of the plain glyph, which then counts as another glyph.
``verdict`` gives the box's best score among the glyphs named
and among every other glyph (what the box looks like instead), or None (abstain) when the
description names no glyph of the vocabulary or the box holds no glyph-sized foreground.

May import: numpy, OpenCV, the standard library, ``perception.types``, ``perception.heuristic_ranker``'s
colour words and its glyph masks.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from perception.heuristic_ranker import COLOUR_WORDS, box_masks
from perception.types import Box

__all__ = ["SIDE", "TABLE_PATH", "GlyphTable", "Verdict", "glyph_masks", "kin_glyphs", "named_glyphs", "qualified", "normalise", "table"]

SIDE = 32
TABLE_PATH = Path(__file__).resolve().parent / "data" / "material_icons.npz"
# a glyph's longer side fills this much of the SIDE square (a margin so the blur stays inside)
_FILL = SIDE - 4
_BLUR_SIGMA = 1.2
# descriptions whose reading a table remembers (a locate call asks once per box)
_READINGS = 256
# a foreground smaller than this many pixels is no glyph
_MIN_PIXELS = 12
# the colour around a box: a ring this many px wide outside it; a plate's glyph of that colour
# within this many levels is the page showing through an outlined glyph (``_holes``)
_RING = 3
_HOLE_LEVELS = 24

# everyday words for glyphs, checked before the names' own words (a phrase -> names)
_SAID = {
    "three dots": ("more_vert", "more_horiz"),
    "vertical dots": ("more_vert",),
    "horizontal dots": ("more_horiz",),
    "kebab": ("more_vert",),
    "overflow": ("more_vert",),
    "meatballs": ("more_horiz",),
    "hamburger": ("menu",),
    "magnifying glass": ("search",),
    "magnifier": ("search",),
    "lens": ("search",),
    "gear": ("settings",),
    "cog": ("settings",),
    "trash": ("delete", "delete_outline"),
    "bin": ("delete", "delete_outline"),
    "garbage": ("delete", "delete_outline"),
    "pencil": ("edit", "create", "mode_edit"),
    "plus": ("add", "add_circle", "add_circle_outline", "add_box"),
    "cross": ("close", "clear", "cancel"),
    "heart": ("favorite", "favorite_border"),
    "funnel": ("filter_alt", "filter_list"),
    "filter": ("filter_list", "filter_alt", "filter_list_alt"),
    "magnify": ("search",),
    "left arrow": ("arrow_back", "arrow_back_ios", "arrow_back_ios_new", "west", "chevron_left"),
    "back arrow": ("arrow_back", "arrow_back_ios", "arrow_back_ios_new"),
    "arrow pointing left": ("arrow_back", "arrow_back_ios", "arrow_back_ios_new", "west"),
    "right arrow": ("arrow_forward", "arrow_forward_ios", "east", "chevron_right"),
    "arrow pointing right": ("arrow_forward", "arrow_forward_ios", "east"),
    "up arrow": ("arrow_upward", "north", "expand_less", "keyboard_arrow_up"),
    "down arrow": ("arrow_downward", "south", "expand_more", "keyboard_arrow_down"),
    "back": ("arrow_back", "arrow_back_ios", "arrow_back_ios_new"),
    "forward": ("arrow_forward", "arrow_forward_ios"),
    "curved arrow pointing left": ("undo", "reply"),
    "curved arrow pointing right": ("redo", "forward"),
    "pin": ("place", "location_on", "push_pin"),
    "marker": ("place", "location_on"),
    "location": ("place", "location_on", "my_location", "near_me"),
    "crosshair": ("my_location", "gps_fixed", "gps_not_fixed"),
    "bell": ("notifications", "notifications_none"),
    "envelope": ("mail", "email", "mail_outline"),
    "speaker": ("volume_up",),
    "microphone": ("mic", "mic_none"),
    "camera": ("photo_camera", "camera_alt"),
    "clock": ("schedule", "access_time"),
    "house": ("home",),
    "person": ("person", "person_outline"),
    "people": ("people", "group"),
    "padlock": ("lock", "lock_outline"),
    "lock": ("lock", "lock_outline"),
    "eye": ("visibility",),
    "globe": ("language", "public"),
    "calendar": ("calendar_today", "event", "date_range"),
    "question mark": ("help", "help_outline"),
    "info": ("info", "info_outline"),
    "checkmark": ("check", "done"),
    "x": ("close", "clear", "cancel"),
    "lightning": ("bolt", "flash_on"),
    "clipboard": ("content_paste", "assignment"),
    "compass": ("explore",),
    "paper plane": ("send",),
    "thumbs up": ("thumb_up",),
    "thumb up": ("thumb_up",),
    "thumbs down": ("thumb_down",),
    "gift": ("card_giftcard", "redeem"),
    "play": ("play_arrow", "play_circle", "play_circle_filled"),
    "log out": ("logout", "exit_to_app"),
    "music note": ("music_note", "audiotrack"),
    "open book": ("menu_book", "auto_stories", "import_contacts"),
    "power symbol": ("power_settings_new",),
    "power button": ("power_settings_new",),
    "antenna": ("cell_tower", "settings_input_antenna"),
    "check mark": ("check", "done"),
    "tick": ("check", "done"),
    # a planner's words by meaning: menus and overflow
    "three vertical dots": ("more_vert",),
    "three horizontal dots": ("more_horiz",),
    "ellipsis": ("more_horiz", "more_vert"),
    "more options": ("more_vert", "more_horiz"),
    "three lines": ("menu",),
    "three horizontal lines": ("menu",),
    "three bars": ("menu",),
    "three horizontal bars": ("menu",),
    # tools and objects
    "floppy": ("save",),
    "floppy disk": ("save",),
    "diskette": ("save",),
    "cogwheel": ("settings",),
    "wrench": ("build",),
    "spanner": ("build",),
    "wastebasket": ("delete", "delete_outline"),
    "dustbin": ("delete", "delete_outline"),
    "pen": ("edit", "create", "mode_edit"),
    "loupe": ("search",),
    "stopwatch": ("timer",),
    "picture": ("image", "photo", "insert_photo"),
    "paperclip": ("attach_file", "attachment"),
    "paper clip": ("attach_file", "attachment"),
    "sliders": ("tune",),
    "cart": ("shopping_cart", "add_shopping_cart"),
    "basket": ("shopping_basket",),
    "handset": ("call", "phone"),
    "telephone": ("call", "phone"),
    "dial pad": ("dialpad",),
    "keypad": ("dialpad",),
    "speech bubble": ("chat_bubble", "chat_bubble_outline", "chat", "comment", "mode_comment", "sms", "message"),
    "smiley": ("mood", "sentiment_satisfied", "emoji_emotions", "insert_emoticon", "tag_faces"),
    "smiling face": ("mood", "sentiment_satisfied", "emoji_emotions", "insert_emoticon", "tag_faces"),
    "sun": ("light_mode", "wb_sunny", "brightness_high", "brightness_7"),
    "moon": ("dark_mode", "nightlight", "bedtime", "brightness_2", "brightness_3"),
    "user": ("person", "account_circle"),
    "profile": ("person", "account_circle"),
    "avatar": ("account_circle", "person"),
    "earth": ("public", "language"),
    "i in a circle": ("info", "info_outline"),
    # edit actions
    "copy": ("content_copy", "file_copy", "filter_none"),
    "two overlapping rectangles": ("content_copy", "file_copy", "filter_none"),
    "two overlapping squares": ("content_copy", "file_copy", "filter_none"),
    "minus": ("remove", "remove_circle", "remove_circle_outline", "horizontal_rule"),
    "reload": ("refresh",),
    "external link": ("open_in_new",),
    "crossed arrows": ("shuffle",),
    "repost": ("repeat",),
    "retweet": ("repeat",),
    # chevrons and dropdown triangles
    "left chevron": ("chevron_left", "navigate_before", "keyboard_arrow_left", "arrow_back_ios", "arrow_back_ios_new"),
    "right chevron": ("chevron_right", "navigate_next", "keyboard_arrow_right", "arrow_forward_ios"),
    "up chevron": ("expand_less", "keyboard_arrow_up"),
    "down chevron": ("expand_more", "keyboard_arrow_down"),
    "chevron pointing left": ("chevron_left", "navigate_before", "keyboard_arrow_left", "arrow_back_ios"),
    "chevron pointing right": ("chevron_right", "navigate_next", "keyboard_arrow_right", "arrow_forward_ios"),
    "chevron pointing up": ("expand_less", "keyboard_arrow_up"),
    "chevron pointing down": ("expand_more", "keyboard_arrow_down"),
    "dropdown": ("arrow_drop_down", "expand_more"),
    "drop down": ("arrow_drop_down", "expand_more"),
    "triangle pointing down": ("arrow_drop_down",),
    "triangle pointing up": ("arrow_drop_up",),
    "down triangle": ("arrow_drop_down",),
    "up triangle": ("arrow_drop_up",),
    "triangle pointing right": ("arrow_right", "play_arrow"),
    "right pointing triangle": ("arrow_right", "play_arrow"),
    "triangle pointing left": ("arrow_left",),
    "left pointing triangle": ("arrow_left",),
    # arrows by what they do
    "return arrow": ("keyboard_return", "subdirectory_arrow_left"),
    "enter arrow": ("keyboard_return", "subdirectory_arrow_left"),
    # shapes people name by what they show
    "square brackets": ("data_array",),
    "curly braces": ("data_object",),
    "line chart": ("show_chart", "insights", "timeline", "stacked_line_chart"),
    "four squares": ("grid_view", "apps", "window", "widgets", "dashboard"),
    "puzzle piece": ("extension",),
    "puzzle": ("extension",),
    # everyday objects
    "cup": ("local_cafe", "coffee", "emoji_food_beverage"),
    "mug": ("local_cafe", "coffee"),
    "books": ("library_books", "menu_book", "collections_bookmark"),
    "cocktail": ("local_bar", "liquor"),
    "wine glass": ("wine_bar",),
    "pizza": ("local_pizza",),
    "burger": ("lunch_dining", "fastfood"),
}
# where an icon stands, not what it shows: these words name no glyph ("in the title bar" is no
# "title" glyph, "next to the search bar" no magnifier)
_PLACES = {"toolbar", "title", "status", "app", "top", "bottom", "tab", "navigation", "nav", "tool", "action", "search",
           "message", "side", "address", "url", "menu", "bar"}
# names that are a container or a plain word of a description, not the glyph it describes
# ("a plus in a purple circle": the glyph is the plus); never named, never a look-alike
_NOT_GLYPHS = {"circle", "square", "rectangle", "lens", "hexagon", "pentagon", "crop_square", "brightness_1",
               "noise_control_off", "fiber_manual_record", "stop", "note", "code", "face", "badge", "today", "new"}
# variants a name also names: the same glyph drawn as an outline
_VARIANTS = ("_outline", "_border", "_none", "_outlined")
# words that say a glyph is struck through: its "_off" variant is named too
_STRUCK = {"crossed", "slashed", "struck", "strikethrough", "disabled"}
# of those, the words that say only that ("disabled" may mean greyed out): the "_off" glyph
# then replaces the plain one, as a state word's does (``_STATES``)
_STRUCK_THROUGH = _STRUCK - {"disabled"}
# words that say a glyph is in another state, drawn as a near-twin the table names apart
# ("open padlock": lock_open beside lock; "half star": star_half): the word -> the name's suffix.
# The state's glyph replaces the plain one, which becomes another glyph (its twin must not win)
_STATES = {"open": "open", "opened": "open", "unlocked": "open", "half": "half", "active": "active",
           "ringing": "active"}
# a name's words that say how it is drawn, not what: sharing one is no kinship
_STYLE_WORDS = {"alt", "outline", "border", "new", "ios", "none", "sharp", "rounded", "outlined", "filled", "off",
                "on", "in", "of", "and", "the", "to", "a", "1", "2", "3"}
_TOKEN = re.compile(r"[a-z0-9]+")
# words that may stand before a glyph's name and leave it that glyph ("white stacked layers");
# any other ("rain cloud", "phone rotating with a padlock") makes it a more particular glyph
_HOW_DRAWN = {*COLOUR_WORDS, "gray", "dark", "light", "bright", "pale", "small", "large", "big", "little", "thin",
              "thick", "bold", "round", "rounded", "circular", "filled", "solid", "outlined", "outline", "empty",
              "hollow", "stacked", "curved", "a", "an", "the", "one", "two", "three", "four"}
# words that say what kind of thing a glyph is, never which glyph: before a glyph's words
# ("white shuffle icon (crossed arrows)") they leave it that glyph
_UI_NOUNS = {"icon", "icons", "button", "buttons", "symbol", "sign", "glyph"}


@dataclass(frozen=True)
class Verdict:
    """How a box's glyph fits a description: its best correlation among the glyphs the
    description names (``named``, with that glyph's name) and among every other glyph
    (``other``, ``other_name``)."""

    named: float
    named_name: str
    other: float
    other_name: str
    # the description means a more particular glyph than the one it names (``qualified``)
    particular: bool = False


def normalise(mask: np.ndarray) -> np.ndarray | None:
    """A binary mask cut to its tight box and scaled, aspect kept, so its longer side is
    ``_FILL`` px, centred in a ``SIDE`` square (uint8 0/1); None when it holds too few pixels."""
    ys, xs = np.nonzero(mask)
    if len(ys) < _MIN_PIXELS:
        return None
    cut = mask[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1].astype(np.float32)
    h, w = cut.shape
    scale = _FILL / max(h, w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    small = cv2.resize(cut, (nw, nh), interpolation=cv2.INTER_AREA)
    out = np.zeros((SIDE, SIDE), np.uint8)
    top, left = (SIDE - nh) // 2, (SIDE - nw) // 2
    out[top: top + nh, left: left + nw] = small >= 0.5
    return out


def _vectors(masks: np.ndarray) -> np.ndarray:
    """(n, SIDE, SIDE) 0/1 masks -> (n, SIDE*SIDE) blurred, zero-mean, unit-length rows."""
    blurred = np.stack([cv2.GaussianBlur(m.astype(np.float32), (0, 0), _BLUR_SIGMA) for m in masks])
    flat = blurred.reshape(len(masks), -1)
    flat -= flat.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)
    out: np.ndarray = flat / np.maximum(norms, 1e-6)
    return out


class GlyphTable:
    """The vocabulary's glyphs as correlation-ready vectors, and their names."""

    def __init__(self, names: list[str], masks: np.ndarray, styles: list[str] | None = None) -> None:
        self.names = names
        self.styles = styles or ["filled"] * len(names)
        # a name's first row (its filled glyph where the table has one); ``drawings`` gives all
        self.index: dict[str, int] = {}
        for i, name in enumerate(names):
            self.index.setdefault(name, i)
        self.vectors = _vectors(masks)
        # glyphs drawn the same (launch and open_in_new): one glyph under several names
        groups: dict[bytes, list[int]] = {}
        for i, mask in enumerate(masks):
            groups.setdefault(np.packbits(mask).tobytes(), []).append(i)
        self._twins = {i: group for group in groups.values() for i in group}
        # one name drawn in several styles (settings filled and outlined): one glyph
        rows: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            rows.setdefault(name, []).append(i)
        self._drawings = {i: group for group in rows.values() for i in group}
        self._readings: dict[str, tuple[set[int], set[int], bool]] = {}

    def reading(self, description: str) -> tuple[set[int], set[int], bool]:
        """The glyphs a description names (with their twins), the glyphs it is kin to
        (``kin_glyphs``, with the named ones: not another glyph) and whether it means a more
        particular glyph (``qualified``), remembered for the last ``_READINGS`` descriptions."""
        if (known := self._readings.get(description)) is not None:
            return known
        named = self.drawings(named_glyphs(description, self.index))
        named |= self.twins(named)
        kin = self.drawings(kin_glyphs(description, self.index))
        plain = self.twins(self.drawings(superseded_glyphs(description, self.index))) - named
        reading = (named, (named | kin) - plain, qualified(description, self.index))
        if len(self._readings) >= _READINGS:
            self._readings.clear()
        self._readings[description] = reading
        return reading

    def twins(self, glyphs: set[int]) -> set[int]:
        """The glyphs drawn exactly as any of ``glyphs``."""
        return {j for i in glyphs for j in self._twins[i]}

    def drawings(self, glyphs: set[int]) -> set[int]:
        """Every style's drawing of the names of ``glyphs``."""
        return {j for i in glyphs for j in self._drawings[i]}

    @classmethod
    def load(cls, path: Path = TABLE_PATH) -> GlyphTable:
        with np.load(path) as data:
            side = int(data["side"])
            bits = np.unpackbits(data["bits"], axis=1)[:, : side * side]
            styles = [str(s) for s in data["styles"]] if "styles" in data.files else None
            return cls([str(n) for n in data["names"]], bits.reshape(-1, side, side), styles)

    def each(self, masks: list[np.ndarray]) -> np.ndarray:
        """Each glyph's correlation with each of the (normalised) masks: glyphs x masks."""
        crops = _vectors(np.stack(masks))
        out: np.ndarray = self.vectors @ crops.T
        return out

    def scores(self, masks: list[np.ndarray]) -> np.ndarray:
        """Each glyph's best correlation with any of the (normalised) masks."""
        best: np.ndarray = self.each(masks).max(axis=1)
        return best


_table: GlyphTable | None = None
_lock = threading.Lock()


def table() -> GlyphTable:
    """The committed table, read once per process."""
    global _table
    with _lock:
        if _table is None:
            _table = GlyphTable.load()
        return _table


def _words_of(description: str) -> list[str]:
    """The description's words, less the words of a bar it names as a place ("title bar",
    "bottom bar", "search bar": ``_PLACES``)."""
    words = _TOKEN.findall(description.lower().replace("-", " "))
    return [w for i, w in enumerate(words)
            if not (w in _PLACES and (w == "toolbar" or (i + 1 < len(words) and words[i + 1] == "bar")
                                      or (w == "bar" and i > 0 and words[i - 1] in _PLACES)))]  # fmt: skip


def _spans(words: list[str], phrase: list[str]) -> list[tuple[int, int]]:
    """Where ``phrase`` stands in ``words``, its words in order with only words of how it is
    drawn (``_HOW_DRAWN``, "to") between them: "three vertical white dots" holds "three
    vertical dots"; "three vertical lines of dots" does not."""
    found = []
    for i in range(len(words) - len(phrase) + 1):
        if words[i] != phrase[0]:
            continue
        j, k = i + 1, 1
        while k < len(phrase) and j < len(words):
            if words[j] == phrase[k]:
                k += 1
            elif words[j] not in _HOW_DRAWN and words[j] != "to":
                break
            j += 1
        if k == len(phrase):
            found.append((i, j))
    return found


def named_glyphs(description: str, names: dict[str, int]) -> set[int]:
    """The glyphs a description names: everyday words (``_SAID``, whose words may have words
    of how the glyph is drawn between them: "three vertical white dots"), then every name whose
    words all stand in the description in order ("open in new" -> open_in_new), with its
    outline variants (and its struck-through one when the description says so)."""
    words = _words_of(description)
    found = _said(words, names)
    plain = _superseded(found, words, names)
    states = {_STATES[w] for w in words if w in _STATES} | ({"off"} if _STRUCK_THROUGH & set(words) else set())
    found = (found - plain) | {f"{name}_{state}" for name in plain for state in states if f"{name}_{state}" in names}
    for name in list(found):
        found.update(name + v for v in _VARIANTS)
        if _STRUCK & set(words):
            found.add(name + "_off")
    return {names[n] for n in found - _with_variants(plain) if n in names and n not in _NOT_GLYPHS}


def _said(words: list[str], names: dict[str, int]) -> set[str]:
    """The names a description's words say: its everyday phrases' and every name whose words
    all stand in it in order."""
    padded = f" {' '.join(words)} "
    found = {name for phrase, glyphs in _SAID.items() if _spans(words, phrase.split()) for name in glyphs}
    return found | {name for name in names if name not in _NOT_GLYPHS and f" {name.replace('_', ' ')} " in padded}


def _superseded(found: set[str], words: list[str], names: dict[str, int]) -> set[str]:
    """The glyphs named whose state the description says (``_STATES``: "open padlock" names
    lock, and lock_open is in the table): the plain glyph is then not the one meant."""
    states = {_STATES[w] for w in words if w in _STATES} | ({"off"} if _STRUCK_THROUGH & set(words) else set())
    return {name for name in found if any(f"{name}_{state}" in names for state in states)}


def _with_variants(glyphs: set[str]) -> set[str]:
    return glyphs | {name + v for name in glyphs for v in _VARIANTS}


def superseded_glyphs(description: str, names: dict[str, int]) -> set[int]:
    """The plain glyphs (with their outline variants) a state word in the description
    replaces by their state's twin: never named nor kin, so the twin counts as another glyph."""
    words = _words_of(description)
    return {names[n] for n in _with_variants(_superseded(_said(words, names), words, names)) if n in names}


def qualified(description: str, names: dict[str, int]) -> bool:
    """A glyph's name in the description stands after a word that is not how it is drawn, nor
    another glyph's word, nor what kind of thing it is ("icon", "button"): "blue rain cloud"
    means a rain cloud, not the cloud glyph, a more particular glyph than the one named."""
    words = _words_of(description)
    covered = [False] * len(words)
    starts = []
    spans = [span for p in _SAID for span in _spans(words, p.split())]
    for phrase in [n.split("_") for n in names if n not in _NOT_GLYPHS]:
        spans += [(i, i + len(phrase)) for i in range(len(words) - len(phrase) + 1) if words[i: i + len(phrase)] == phrase]
    for i, j in spans:
        covered[i:j] = [True] * (j - i)
        starts.append(i)
    # a state word the reading takes as the glyph's own ("open padlock": lock_open; "crossed-out
    # eye": visibility_off) says which glyph, not a more particular one
    said = (set(_STATES) | _STRUCK_THROUGH | {"out"}) if _superseded(_said(words, names), words, names) else set()
    return any(i > 0 and not covered[i - 1] and words[i - 1] not in _HOW_DRAWN | _UI_NOUNS | said for i in starts)


def kin_glyphs(description: str, names: dict[str, int]) -> set[int]:
    """Glyphs whose name shares a word with the description (an "arrow" description and
    arrow_forward): not named, but not another glyph either."""
    words = set(_words_of(description)) - _STYLE_WORDS
    return {i for name, i in names.items() if words & (set(name.split("_")) - _STYLE_WORDS) or name in _NOT_GLYPHS}


def glyph_masks(image: np.ndarray, box: Box) -> list[np.ndarray]:
    """A box's glyph as normalised masks, each reading the ranker judges its shape by
    (``heuristic_ranker.box_masks``): on a filled plate the glyph against the plate (the
    plate's outline is a container, not the glyph), else its foreground against the colour
    around it. A box cut tight round an outlined glyph (an eye's outline filling it) looks like
    a plate too, whose "glyph" is the page showing through its holes (``_holes``): then both
    readings are kept and ``verdict`` takes the one that fits best."""
    masks = box_masks(image, box)
    readings = masks if len(masks) > 1 and _holes(image, box, masks[-1]) else masks[-1:]
    return [glyph for mask in readings if (glyph := normalise(mask)) is not None]


def _holes(image: np.ndarray, box: Box, glyph: np.ndarray) -> bool:
    """The glyph a "plate" shows has the colour around the box: the plate is an outlined
    glyph's own body (an eye's outline, a gear's ring, cut tight by its box) and that glyph
    the holes in it, where the page shows through. A real plate (a tinted button) differs."""
    height, width = image.shape[:2]
    left, top = int(box.left), int(box.top)
    right, bottom = min(width, left + glyph.shape[1]), min(height, top + glyph.shape[0])
    outer = image[max(0, top - _RING): min(height, bottom + _RING), max(0, left - _RING): min(width, right + _RING)]
    ring = np.ones(outer.shape[:2], bool)
    ring[top - max(0, top - _RING): bottom - max(0, top - _RING), left - max(0, left - _RING): right - max(0, left - _RING)] = False
    inner = image[top:bottom, left:right][glyph[: bottom - top, : right - left].astype(bool)]
    if not ring.any() or not len(inner):
        return False
    around = np.median(outer[ring].reshape(-1, image.shape[2]), axis=0)
    return float(np.abs(np.median(inner, axis=0) - around).max()) <= _HOLE_LEVELS


def verdict(image: np.ndarray, box: Box, description: str, glyphs: GlyphTable | None = None) -> Verdict | None:
    """The box's best score among the glyphs ``description`` names and among all others; None
    when it names none or the box shows no glyph."""
    glyphs = glyphs or table()
    named, related, particular = glyphs.reading(description)
    if not named:
        return None
    masks = glyph_masks(image, box)
    if not masks:
        return None
    inside = np.zeros(len(glyphs.names), bool)
    inside[list(named)] = True
    apart = np.ones(len(glyphs.names), bool)
    apart[list(related)] = False
    readings = []
    # the glyph on its plate first: it wins a tie with the plate's own outline
    for scores in reversed(glyphs.each(masks).T):
        i = int(np.argmax(np.where(inside, scores, -2.0)))
        o = int(np.argmax(np.where(apart, scores, -2.0)))
        readings.append(Verdict(float(scores[i]), glyphs.names[i], float(scores[o]), glyphs.names[o], particular))
    return max(readings, key=lambda v: v.named - v.other)
