"""The words planners use for common Material / iOS icons, mapped to the shapes the
heuristic ranker can test ("hamburger", "three lines", "menu" -> ``menu``; "three vertical
dots", "more options", "kebab" -> ``kebab``; "navigate up", "back arrow" -> ``arrow``
pointing left ...).

Phrases are read before single words, so "three dots" is a kebab, not a circle, and
"navigate up" points left (it is Android's back affordance), not up. A description may
name several shapes ("plus in a circle"); the ranker takes the best.

May import: the standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["IconWords", "read_icon_words"]

# phrase -> (shape, direction); checked first, longest first
_PHRASES: dict[str, tuple[str, str | None]] = {
    "three vertical dots": ("kebab", None),
    "vertical dots": ("kebab", None),
    "vertical ellipsis": ("kebab", None),
    "three horizontal dots": ("meatballs", None),
    "horizontal dots": ("meatballs", None),
    "horizontal ellipsis": ("meatballs", None),
    "three dots": ("kebab", None),  # Android's overflow button: vertical unless said otherwise
    "more options": ("kebab", None),
    "more vert": ("kebab", None),
    "more horiz": ("meatballs", None),
    # bars each shorter than the one above (read before "horizontal lines"): a filter list when
    # centred, a sort glyph when they share one end; said without "sort" or "filter", either
    "lines getting shorter": ("shorter", None),
    "bars getting shorter": ("shorter", None),
    "shortening lines": ("shorter", None),
    "decreasing lines": ("shorter", None),
    "lines of decreasing length": ("shorter", None),
    "lines of decreasing width": ("shorter", None),
    "filter list": ("filter", None),
    "curved arrow": ("curved", None),
    "three lines": ("menu", None),
    "three bars": ("menu", None),
    "horizontal lines": ("menu", None),
    "stacked lines": ("menu", None),
    "navigate up": ("arrow", "left"),
    "go back": ("arrow", "left"),
    "back arrow": ("arrow", "left"),
    "left arrow": ("arrow", "left"),
    "right arrow": ("arrow", "right"),
    "up arrow": ("arrow", "up"),
    "down arrow": ("arrow", "down"),
    "arrow back": ("arrow", "left"),
    "arrow forward": ("arrow", "right"),
    "left chevron": ("chevron", "left"),
    "right chevron": ("chevron", "right"),
    "magnifying glass": ("magnifier", None),
    "signal bars": ("signal", None),
    "signal strength": ("signal", None),
    "cell bars": ("signal", None),
    "shopping cart": ("cart", None),
    "photo camera": ("camera", None),
    "shopping bag": ("cart", None),
    "paper plane": ("plane", None),
    "speech bubble": ("bubble", None),
    "thumbs up": ("thumb", None),
    # a map's or a viewer's zoom-out button draws a minus
    "zoom out": ("minus", None),
}
# single word -> shape (words of the old table in perception.heuristic_ranker keep working)
WORDS: dict[str, str] = {
    "hamburger": "menu", "menu": "menu", "lines": "menu", "bars": "menu", "list": "menu", "drawer": "menu",
    "stack": "menu", "layers": "menu",
    "kebab": "kebab", "overflow": "kebab", "ellipsis": "kebab", "dots": "kebab",
    "meatball": "meatballs", "meatballs": "meatballs",
    "chevron": "chevron", "caret": "chevron",
    "arrow": "arrow",
    "cart": "cart", "basket": "cart", "trolley": "cart", "bag": "cart",
    "trash": "trash", "bin": "trash", "delete": "trash", "garbage": "trash", "remove": "trash",
    "pencil": "pencil", "edit": "pencil", "pen": "pencil", "compose": "pencil",
    "mic": "mic", "microphone": "mic", "voice": "mic",
    "camera": "camera",
    "download": "download",
    "signal": "signal", "cellular": "signal", "reception": "signal",
    "filter": "filter", "funnel": "filter", "sort": "sort", "sorting": "sort",
    "undo": "curved", "redo": "curved", "curved": "curved",
    "refresh": "refresh", "reload": "refresh", "sync": "refresh", "rescan": "refresh",
    "minus": "minus", "subtract": "minus",
}  # fmt: skip
# words that give the direction of an arrow / chevron
_DIRECTIONS = {
    "left": "left", "back": "left", "previous": "left", "prev": "left", "backward": "left",
    "right": "right", "forward": "right", "next": "right",
    "up": "up", "upward": "up", "down": "down", "downward": "down",
    # Material's undo arrow bends round to point left, its redo to the right
    "undo": "left", "redo": "right",
    # corner to corner (a resize or open-in-full arrow): its axis, either way
    "diagonal": "diagonal", "diagonally": "diagonal",
}  # fmt: skip
_VERTICAL = {"vertical", "vertically"}
_HORIZONTAL = {"horizontal", "horizontally"}


@dataclass(frozen=True)
class IconWords:
    shapes: tuple[str, ...]  # piece / vocabulary shapes named, in order
    direction: str | None  # where an arrow or chevron points, when said
    rest: str  # the description with the phrases taken out (for colour and older shape words)


# two opposite directions said of arrows ("up-down arrows", "left and right arrows": Material's
# swap_vert, import_export, unfold_more): a pair of arrows, not one pointing either way; the
# one-arrow test cannot judge a pair, so neither the direction nor the arrow is tested
_PAIR = re.compile(r" (?:up(?: and)? down|down(?: and)? up|left(?: and)? right|right(?: and)? left)"
                   r" (?:arrows?|chevrons?|carets?|triangles?)(?= )")


def read_icon_words(description: str) -> IconWords:
    text = " " + " ".join(re.findall(r"[a-z]+", description.lower())) + " "
    text = _PAIR.sub(" ", text)
    shapes: list[str] = []
    direction: str | None = None
    for phrase in sorted(_PHRASES, key=len, reverse=True):
        if f" {phrase} " in text:
            shape, way = _PHRASES[phrase]
            if shape not in shapes:
                shapes.append(shape)
            direction = direction or way
            text = text.replace(f" {phrase} ", " ")
    words = text.split()
    for word in words:
        named = WORDS.get(word)
        if named and named not in shapes:
            shapes.append(named)
    if direction is None:
        direction = next((_DIRECTIONS[w] for w in words if w in _DIRECTIONS), None)
    # "dots" alone are vertical unless the description says horizontal; and the other way
    if "kebab" in shapes and set(words) & _HORIZONTAL:
        shapes[shapes.index("kebab")] = "meatballs"
    if "meatballs" in shapes and set(words) & _VERTICAL:
        shapes[shapes.index("meatballs")] = "kebab"
    # bars getting shorter that the description calls a sort or a filter are that one (a sort
    # glyph beside a filter list is its look-alike); a curved arrow is not tested as a straight one
    if "shorter" in shapes and ("sort" in shapes or "filter" in shapes):
        shapes.remove("shorter")
    if "curved" in shapes and "arrow" in shapes:
        shapes.remove("arrow")
    # "back" or "next" alone name an arrow
    if not shapes and direction and set(words) & {"back", "forward", "next", "previous"}:
        shapes.append("arrow")
    return IconWords(tuple(shapes), direction, " ".join(words))
