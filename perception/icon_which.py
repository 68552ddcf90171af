"""Which one of several look-alike icons a description means: by count ("the second
yellow play circle", "the last star", "the third play button from the bottom", "the play
button in the second row") or by a text on the screen next to it ("the play button in the
'Premier League' row", "the gear next to 'Settings'", "the check mark right of 'Wi-Fi'").

Six play buttons in six rows look alike; colour and shape cannot pick one, the planner's
words about where it is can. The anchor text must be quoted (single, double or typographic
quotes): the words inside are a text to find on the screen, never colour or shape words
for the ranker ("next to 'Home'" names no house). Which-words that cannot be read are an
error that says how to say them, not a guess: a count and a text together, two counts, two
texts, a count with nothing else to describe the icon. Two forms a planner often writes are
read as plain descriptions, as before which-words: a relation to something unquoted ("the
send button next to the text box": the look is what comes before the relation) and a quoted
text with no relation ("the '+' button": the words without their quotes).

Relations to the anchor text's box: ``row`` (in its row: "in the 'X' row", "in the row of
'X'"), ``next`` (nearest to it: "next to", "beside", "near", "by"), ``above``, ``below``,
``left`` and ``right`` ("left of 'X'", "to the right of 'X'").

May import: the standard library, ``perception.types``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perception.types import Box

__all__ = ["ORDINAL_WORDS", "RELATIONS", "Which", "WhichError", "in_relation", "read_which", "reading_order"]

ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
    "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1,
}  # fmt: skip
_NUMBERED = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")
_QUOTED = r"(?:'(?P<q1>[^']+)'|\"(?P<q2>[^\"]+)\"|‘(?P<q3>[^’]+)’|“(?P<q4>[^”]+)”)"
# relation -> phrases before the quoted text (and, for rows, the word after it)
_RELATION_PATTERNS: list[tuple[str, str]] = [
    ("row", r"\b(?:in|on|of)\s+the\s+" + _QUOTED + r"\s+(?:row|line|item|entry|card)\b"),
    ("row", r"\b(?:in|on)\s+the\s+(?:row|line|item|entry)\s+(?:of|with|for|named|labell?ed|that\s+says)\s+" + _QUOTED),
    ("left", r"\b(?:to\s+the\s+)?left\s+of\s+(?:the\s+text\s+)?" + _QUOTED),
    ("right", r"\b(?:to\s+the\s+)?right\s+of\s+(?:the\s+text\s+)?" + _QUOTED),
    ("next", r"\b(?:next\s+to|beside|besides|near|nearest\s+to|close\s+to|by)\s+(?:the\s+text\s+)?" + _QUOTED),
    ("above", r"\b(?:above|over)\s+(?:the\s+text\s+)?" + _QUOTED),
    ("below", r"\b(?:below|under|underneath|beneath)\s+(?:the\s+text\s+)?" + _QUOTED),
]
# the same relations to a text written without quotes ("in the NetHack server row", "right of
# 97 - A Simple Plan", "next to Pause Folder"): the text runs to the end (or to a comma or a
# bracket), a row's up to its row word; it is looked for on the screen, and when it is not
# there the description is read as plain words
_UNQUOTED_PATTERNS: list[tuple[str, str]] = [
    # a row's text ends at its row word, so it may hold a comma or a bracket ("in the February
    # 15, 2020 row", "in the Wi-Fi (IPv4 LAN) row"); a card is a row of its own ("the copy icon
    # of the Facebook card")
    ("row", r"\b(?:in|on)\s+the\s+(?P<x>[^;]+?)\s+(?:row|line|entry|card)\b"),
    ("row", r"\bof\s+the\s+(?P<x>[^,;()]+?)\s+card\b"),
    ("row", r"\b(?:in|on)\s+the\s+(?:row|line|entry)\s+(?:of|with|for|named|labell?ed|that\s+says)\s+(?P<x>[^,;()]+)"),
    ("left", r"\b(?:to\s+the\s+)?left\s+of\s+(?P<x>[^,;()]+)"),
    ("right", r"\b(?:to\s+the\s+)?right\s+of\s+(?P<x>[^,;()]+)"),
    ("next", r"\b(?:next\s+to|beside|nearest\s+to|close\s+to)\s+(?P<x>[^,;()]+)"),
    ("above", r"\babove\s+(?P<x>[^,;()]+)"),
    ("below", r"\b(?:below|under|underneath|beneath)\s+(?P<x>[^,;()]+)"),
]
# words around an unquoted text that are not part of it ("the Today button": Today)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
# (and a control the text labels: "next to the CDR switch" is next to the text CDR)
_KIND_OF_TEXT = re.compile(r"\s+(?:row|button|text|label|item|entry|line|post|tab|field|title|heading|option|card"
                           r"|switch|toggle|checkbox|check\s+box|slider|setting)$",
                           re.IGNORECASE)  # fmt: skip
# "in the second row" counts, "in the top row" is a position: neither names a text
_NOT_A_TEXT = {"top", "bottom", "middle", "center", "centre", "same", "next", "this", "that", "other", "left", "right"}
RELATIONS = ("row", "next", "above", "below", "left", "right")
_RELATION_WORDS = re.compile(r"\b(?:next\s+to|beside|to\s+the\s+(?:left|right)\s+of|above|below|underneath|beneath)\b")
# "from the bottom" counts up, "from the right" counts leftwards
_ORIGIN = re.compile(r"\bfrom\s+(?:the\s+)?(top|bottom|left|right)\b")
_ROW_COUNT = re.compile(r"\b(?:in|on)\s+the\s+(\w+)\s+(row|line|column)\b")
_FILLER = {"the", "a", "an", "one", "icon"}
HOW = ("say which one by count (the second play button, the last star, the play button in the third row) "
       "or by a quoted text beside it (the play button in the 'News' row, the gear next to 'Settings', "
       "the check left of 'Wi-Fi')")  # fmt: skip


class WhichError(ValueError):
    pass


@dataclass(frozen=True)
class Which:
    look: str  # the description without the which-words: what the ranker judges
    ordinal: int | None = None  # 1-based; -1 = the last
    origin: str = "reading"  # where counting starts: reading order, or top / bottom / left / right
    relation: str | None = None  # one of RELATIONS when an anchor text is given
    anchor: str | None = None  # the quoted text
    quoted: bool = True  # False: the anchor was written without quotes, a plain look when not on the screen

    @property
    def picks(self) -> bool:
        return self.ordinal is not None or self.anchor is not None


def _ordinal(word: str) -> int | None:
    if word in ORDINAL_WORDS:
        return ORDINAL_WORDS[word]
    numbered = _NUMBERED.fullmatch(word)
    return int(numbered.group(1)) if numbered and int(numbered.group(1)) >= 1 else None


def read_which(description: str) -> Which:
    """The look and the which-words of ``description``; ``WhichError`` when the which-words
    are half-said. A description with none is ``Which(description)``."""
    # a chevron written as the character it looks like ("> right of John 3", "the '<' button")
    # is its words: the look is what the ranker reads, and a bare symbol is no word
    text = re.sub(r"(?<![\w<>=-])[>\u203a](?![\w<>=-])", "right chevron", " ".join(description.split()))
    text = re.sub(r"(?<![\w<>=-])[<\u2039](?![\w<>=-])", "left chevron", text)
    relation: str | None = None
    anchor: str | None = None
    for name, pattern in _RELATION_PATTERNS:
        found = re.search(pattern, text, flags=re.IGNORECASE)
        if found:
            relation = name
            anchor = next(g for g in found.group("q1", "q2", "q3", "q4") if g is not None).strip()
            text = (text[: found.start()] + " " + text[found.end():]).strip()
            break
    if anchor is not None and re.search(_QUOTED, text):
        raise WhichError(f"{description!r} quotes more than one text: name one, {HOW}")
    if anchor is None and re.search(_QUOTED, text):
        # a quoted text with no relation is part of the look ("the '+' button"), as it was
        # before which-words: the quotes go, the words stay
        text = re.sub(_QUOTED, lambda m: next(g for g in m.group("q1", "q2", "q3", "q4") if g is not None), text)
    quoted = True
    if anchor is None and not re.search(_QUOTED, description):
        for name, pattern in _UNQUOTED_PATTERNS:
            found = re.search(pattern, text, flags=re.IGNORECASE)
            said = _unquoted_text(found.group("x")) if found else ""
            if found and said:
                before = text[: found.start()].strip()
                if not [w for w in re.findall(r"[\w'-]+", before.lower()) if w not in _FILLER and _ordinal(w) is None]:
                    raise WhichError(f"{description!r} says where the icon is from a text without quoting that "
                                     f"text, and not what it looks like: {HOW}")  # fmt: skip
                relation, anchor, quoted = name, said, False
                text = before
                break
    loose = _RELATION_WORDS.search(text.lower()) if anchor is None else None
    if loose is not None:
        # where it is from something unquoted ("the send button next to the text box"): not a
        # text to find, and its words are no part of the look ("photo" would be a picture).
        # The look is what comes before: a unique icon is still tapped, look-alikes are
        # candidates, as they were before which-words; only a look with nothing left is an error
        before = text[: loose.start()].strip()
        if not [w for w in re.findall(r"[\w'-]+", before.lower()) if w not in _FILLER and _ordinal(w) is None]:
            raise WhichError(f"{description!r} says where the icon is from a text without quoting that text, "
                             f"and not what it looks like: {HOW}")
        text = before
    if anchor is not None and not anchor:
        raise WhichError(f"{description!r} quotes an empty text: {HOW}")
    ordinal: int | None = None
    origin = "reading"
    lowered = text.lower()
    counted = _ROW_COUNT.search(lowered)
    if counted and _ordinal(counted.group(1)) is not None:
        ordinal = _ordinal(counted.group(1))
        origin = "left" if counted.group(2) == "column" else "top"
        lowered = (lowered[: counted.start()] + " " + lowered[counted.end():]).strip()
    came_from = _ORIGIN.search(lowered)
    if came_from:
        origin = came_from.group(1)
        lowered = (lowered[: came_from.start()] + " " + lowered[came_from.end():]).strip()
    words = re.findall(r"[\w'-]+", lowered)
    kept = []
    for word in words:
        count = _ordinal(word)
        if count is not None and ordinal is None:
            ordinal = count
            continue
        if count is not None:
            raise WhichError(f"{description!r} counts twice: {HOW}")
        kept.append(word)
    if came_from and ordinal is None:
        raise WhichError(f"{description!r} says where to count from but not which one: {HOW}")
    if ordinal is not None and anchor is not None and not quoted:
        # a count and an unquoted text ("the second play button next to Settings"): the count
        # is what was said of which one, the rest is where, as before texts were read unquoted
        anchor = relation = None
        quoted = True
    if ordinal is not None and anchor is not None:
        raise WhichError(f"{description!r} both counts and names a text: say one of them ({HOW})")
    look_words = [w for w in kept if w not in _FILLER or ordinal is None and anchor is None]
    if (ordinal is not None or anchor is not None) and not look_words:
        raise WhichError(f"{description!r} says which one but not what the icon looks like (its colour and shape)")
    if ordinal is None and anchor is None:
        return Which(description if text == " ".join(description.split()) else text)
    # the look keeps the description's own casing for the ranker's words
    return Which(" ".join(look_words), ordinal, origin, relation, anchor, quoted)


def _unquoted_text(said: str) -> str:
    """The text an unquoted relation names, without its article and the kind of thing it is
    ("the Today button": Today); "" when it names no text (an ordinal, a position word)."""
    said = _KIND_OF_TEXT.sub("", _ARTICLE.sub("", said.strip().rstrip(".!?:"))).strip()
    words = said.lower().split()
    if not words or (len(words) == 1 and (_ordinal(words[0]) is not None or words[0] in _NOT_A_TEXT)):
        return ""
    return said


def reading_order(boxes: list[Box], origin: str = "reading") -> list[int]:
    """Indices of ``boxes`` in the order a person counts them: rows top to bottom, each
    left to right (a row is boxes whose centres are within half a box's height), or
    from the named edge."""
    if origin == "top":
        return sorted(range(len(boxes)), key=lambda i: (boxes[i].center[1], boxes[i].center[0]))
    if origin == "bottom":
        return sorted(range(len(boxes)), key=lambda i: (-boxes[i].center[1], boxes[i].center[0]))
    if origin == "left":
        return sorted(range(len(boxes)), key=lambda i: (boxes[i].center[0], boxes[i].center[1]))
    if origin == "right":
        return sorted(range(len(boxes)), key=lambda i: (-boxes[i].center[0], boxes[i].center[1]))
    by_y = sorted(range(len(boxes)), key=lambda i: boxes[i].center[1])
    rows: list[list[int]] = []
    for i in by_y:
        if rows and abs(boxes[i].center[1] - boxes[rows[-1][0]].center[1]) <= 0.5 * max(
            boxes[i].height, boxes[rows[-1][0]].height
        ):
            rows[-1].append(i)
        else:
            rows.append([i])
    return [i for row in rows for i in sorted(row, key=lambda j: boxes[j].center[0])]


def in_relation(icon: Box, anchor: Box, relation: str) -> float | None:
    """How far ``icon`` is from the ``anchor`` text's box in the named relation (pixels,
    smaller is nearer), or None when it is not in that relation at all."""
    (ix, iy), ay = icon.center, anchor.center[1]
    same_row = abs(iy - ay) <= max(icon.height, anchor.height)
    gap_x = max(0.0, max(anchor.left - icon.right, icon.left - anchor.right))
    gap_y = max(0.0, max(anchor.top - icon.bottom, icon.top - anchor.bottom))
    size = max(icon.width, icon.height)
    overlaps_columns = icon.left < anchor.right + size and icon.right > anchor.left - size
    if relation == "row":
        # "in the X row" says the row, not which end of it: every icon in it is as near (the
        # look decides; icons that tie on it are all offered, never the one nearest the text)
        return 0.0 if same_row else None
    if relation == "next":
        # within a few icons of the text, or in its row however far (a list row's star at the
        # row's far end, "next to 'February 13, 2020'"): the nearest such wins among look-alikes
        near = gap_x <= 4 * size and gap_y <= 2 * size
        return float((gap_x**2 + gap_y**2) ** 0.5) if near or same_row else None
    # left / right of a text: on that side in its row, however far (a toolbar's edit pencil at
    # the row's end, "right of Pinned"); the nearest wins among icons that look alike
    if relation == "left":
        return anchor.left - icon.right if same_row and ix < anchor.left else None
    if relation == "right":
        return icon.left - anchor.right if same_row and ix > anchor.right else None
    # above / below / beside: within a few icons of the text, not anywhere on that side
    if relation == "above":
        return anchor.top - icon.bottom if overlaps_columns and iy < anchor.top and gap_y <= 3 * size else None
    if relation == "below":
        return icon.top - anchor.bottom if overlaps_columns and iy > anchor.bottom and gap_y <= 3 * size else None
    raise ValueError(f"not a relation: {relation}")
