"""Text localization by the paper's rules: where on the screen is the text X?

Matching goes in tiers and the first tier with a hit wins:

1. exact — the OCR line is the target (also after folding: Unicode NFKC, full/half
   width, case, whitespace and punctuation; accents and vowel signs stay with their
   letter, composed or not);
2. span — the target is a run of whole words inside a longer OCR line (OCR often merges
   neighbours: "Wi-Fi  On"; in CJK, Thai, Lao, Khmer and Myanmar any run of characters,
   as they put no spaces between words); its sub-box is cut from the line's box in proportion to
   character widths;
3. joined — the target runs over neighbouring OCR lines (OCR split "WhatsApp Messenger"
   into two lines, side by side or stacked); the box is their union;
4. fuzzy — OCR misreads: rapidfuzz similarity over the folded text, with a threshold that
   tightens for short targets (3 characters or fewer must match exactly).

OCR boxes larger than ``max_box_fraction`` of the image are ignored (banners, paragraphs).
Then: 0 hits -> ``NOT_FOUND`` with the closest texts seen; 1 -> ``FOUND`` at the box
centre; 2..N -> ``CANDIDATES`` with crops numbered 1..k; more -> ``TOO_MANY``.

May import: numpy, rapidfuzz, the standard library, ``perception.*``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process

from perception.crops import numbered_candidates
from perception.text_layout import merge_tile_pairs, without_status_bar
from perception.types import Box, LocateStatus, Location, TextLine

__all__ = ["TIER_PARTIAL", "TextMatch", "fold", "locate_text", "match_text"]

TIER_EXACT, TIER_SPAN, TIER_JOINED, TIER_FUZZY, TIER_PARTIAL = 0, 1, 2, 3, 4
# Ellipses an app draws where it cut a text ("Best of 2023 (Tay…").
_ELLIPSES = ("…", "...", "..", "⋯")


@dataclass(frozen=True)
class TextMatch:
    line: TextLine
    box: Box  # the matched part of the line (the whole line unless a span)
    tier: int
    score: float  # 0..1


@dataclass(frozen=True)
class _Folded:
    spaced: str  # words of folded characters separated by single spaces
    index: tuple[int, ...]  # spaced[i] came from original[index[i]:ends[i]] (spaces: the next char's)
    ends: tuple[int, ...]

    @property
    def compact(self) -> str:
        return self.spaced.replace(" ", "")


# Scripts written without spaces between words: a target may start or end anywhere in a line.
_UNSPACED_RANGES = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF))  # Thai, Lao, Myanmar, Khmer


def _unspaced_script(ch: str) -> bool:
    if unicodedata.east_asian_width(ch) in ("W", "F") and ch.isalnum():
        return True  # CJK, kana, Hangul
    return any(low <= ord(ch) <= high for low, high in _UNSPACED_RANGES)


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


def _clusters(text: str) -> list[tuple[int, int]]:
    """[start, end) runs that normalize together: a base and what composes onto it
    (e + combining acute, half-width ｶ + ﾞ, Hangul jamo, Devanagari vowel signs)."""
    runs: list[tuple[int, int]] = []
    for i, ch in enumerate(text):
        if runs:
            start = runs[-1][0]
            run = text[start:i]
            if _is_mark(ch) or unicodedata.normalize("NFKC", run + ch) != unicodedata.normalize(
                "NFKC", run
            ) + unicodedata.normalize("NFKC", ch):
                runs[-1] = (start, i + 1)
                continue
        runs.append((i, i + 1))
    return runs


def _fold_full(text: str) -> _Folded:
    out: list[str] = []
    index: list[int] = []
    ends: list[int] = []
    for start, end in _clusters(text):
        for c in unicodedata.normalize("NFKC", text[start:end]).casefold():
            if c.isalnum() or (_is_mark(c) and out and out[-1] != " "):  # a mark belongs to its letter
                out.append(c)
            elif out and out[-1] != " ":
                out.append(" ")
            else:
                continue
            index.append(start)
            ends.append(end)
    while out and out[-1] == " ":
        out.pop()
        index.pop()
        ends.pop()
    return _Folded("".join(out), tuple(index), tuple(ends))


def fold(text: str) -> str:
    """Case-, width-, whitespace- and punctuation-insensitive form of ``text``."""
    return _fold_full(text).spaced


def _char_width(ch: str) -> float:
    if _is_mark(ch):
        return 0.0  # drawn on the letter before it
    return 2.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 1.0


def _sub_box(line: TextLine, start: int, end: int) -> Box:
    """The part of ``line.box`` holding original characters [start, end)."""
    widths = [_char_width(c) for c in line.text]
    total = sum(widths) or 1.0
    before = sum(widths[:start])
    inside = sum(widths[start:end])
    left = line.box.left + line.box.width * before / total
    right = left + line.box.width * inside / total
    return Box(left, line.box.top, right, line.box.bottom)


def _fuzzy_threshold(length: int) -> float | None:
    if length <= 3:
        return None  # too short for fuzzy matching: "On" must not match "Or"
    if length <= 7:
        return 85.0
    return 80.0


def _span_matches(target: _Folded, line: TextLine, folded: _Folded) -> list[TextMatch]:
    """Whole-word occurrences of the target inside a longer line."""
    t = target.compact
    compact = folded.compact
    if not t or len(t) >= len(compact):
        return []
    # compact position -> spaced position, to check word boundaries and map back
    spaced_pos = [i for i, c in enumerate(folded.spaced) if c != " "]
    word_start = {0} | {k for k in range(1, len(spaced_pos)) if spaced_pos[k] - spaced_pos[k - 1] > 1}
    word_end = {len(spaced_pos)} | {k for k in word_start if k > 0}
    unspaced = any(_unspaced_script(c) for c in t)
    matches = []
    pos = compact.find(t)
    while pos >= 0:
        end = pos + len(t)
        if unspaced or (pos in word_start and end in word_end):
            first = folded.index[spaced_pos[pos]]
            last = folded.ends[spaced_pos[end - 1]]
            matches.append(TextMatch(line, _sub_box(line, first, last), TIER_SPAN, 1.0))
        pos = compact.find(t, pos + 1)
    return matches


def match_text(lines: list[TextLine], target: str, image_size: tuple[int, int], max_box_fraction: float) -> list[TextMatch]:
    """Every place ``target`` is on screen, from the best tier that has any."""
    width, height = image_size
    limit = max_box_fraction * width * height
    wanted = _fold_full(target)
    t = wanted.compact
    lines = [line for line in lines if line.box.area <= limit]
    literal = _literal(target)
    if not t:  # only symbols ("+", "...", "？"): folding would erase them, so compare them as they are
        return _dedupe([TextMatch(ln, ln.box, TIER_EXACT, 1.0) for ln in lines if _literal(ln.text) == literal])
    threshold = _fuzzy_threshold(len(t))
    tiers: dict[int, list[TextMatch]] = {TIER_EXACT: [], TIER_SPAN: [], TIER_JOINED: [], TIER_FUZZY: [], TIER_PARTIAL: []}
    tiers[TIER_JOINED] = _joined_matches(lines, t)
    for line in lines:
        folded = _fold_full(line.text)
        compact = folded.compact
        if line.text.strip() == target.strip() or compact == t:
            tiers[TIER_EXACT].append(TextMatch(line, line.box, TIER_EXACT, 1.0))
            continue
        spans = _span_matches(wanted, line, folded)
        if spans:
            tiers[TIER_SPAN].extend(spans)
            continue
        if threshold is None or not compact:
            continue
        whole = fuzz.ratio(t, compact)
        if whole >= threshold:
            tiers[TIER_FUZZY].append(TextMatch(line, line.box, TIER_FUZZY, whole / 100))
        elif len(compact) > len(t):
            part = fuzz.partial_ratio_alignment(t, compact)
            if part is not None and part.score >= max(threshold, 90.0):
                spaced_pos = [i for i, c in enumerate(folded.spaced) if c != " "]
                first = folded.index[spaced_pos[part.dest_start]]
                last = folded.ends[spaced_pos[max(part.dest_end - 1, part.dest_start)]]
                tiers[TIER_FUZZY].append(TextMatch(line, _sub_box(line, first, last), TIER_FUZZY, part.score / 100))
    if not tiers[TIER_FUZZY]:
        tiers[TIER_FUZZY] = _cut_matches(lines, t) + _wrapped_matches(lines, t, threshold)
    if threshold is not None:
        tiers[TIER_PARTIAL] = _partial_matches(lines, wanted)
    # "C++" is on screen as "C++" and as "C": the line that keeps the target's symbols wins
    same_symbols = [m for m in tiers[TIER_EXACT] if _literal(m.line.text) == literal]
    if same_symbols:
        tiers[TIER_EXACT] = same_symbols
    for tier in (TIER_EXACT, TIER_SPAN, TIER_JOINED, TIER_FUZZY, TIER_PARTIAL):
        if tiers[tier]:
            return _dedupe(tiers[tier])
    return []


def _cut_matches(lines: list[TextLine], target: str) -> list[TextMatch]:
    """Lines the app cut with an ellipsis whose kept part starts the target."""
    found = []
    for line in lines:
        text = line.text.strip()
        cut = next((e for e in _ELLIPSES if text.endswith(e)), None)
        if cut is None:
            continue
        kept = _fold_full(text[: -len(cut)]).compact
        if len(kept) < 3 or len(kept) >= len(target):
            continue
        head = target[: len(kept)]
        if head == kept or (len(kept) >= 6 and fuzz.ratio(head, kept) >= 85):
            found.append(TextMatch(line, line.box, TIER_FUZZY, 0.8 + 0.2 * len(kept) / len(target)))
            continue
        # a title wrapped over two lines and cut on the second ("Frankieiz12" / "Black Ho...")
        for upper in lines:
            a, b = upper.box, line.box
            above = 0 < b.top - a.top and -0.3 * a.height <= b.top - a.bottom <= 1.2 * a.height
            if upper is line or not above or min(a.right, b.right) - max(a.left, b.left) <= 0:
                continue
            both = _fold_full(upper.text).compact + kept
            if len(both) < len(target) and target.startswith(both) and len(_fold_full(upper.text).compact) >= 2:
                union = Box(min(a.left, b.left), a.top, max(a.right, b.right), b.bottom)
                joined = TextLine(f"{upper.text} {line.text}", union, min(upper.score, line.score))
                found.append(TextMatch(joined, union, TIER_FUZZY, 0.8 + 0.2 * len(both) / len(target)))
    return found


def _wrapped_matches(lines: list[TextLine], target: str, threshold: float | None) -> list[TextMatch]:
    """A label wrapped over two lines, read with OCR slips: the two stacked lines together
    are close to the target (the exact case is the joined tier)."""
    if threshold is None:
        return []
    compact = [_fold_full(line.text).compact for line in lines]
    found = []
    for i, upper in enumerate(lines):
        if not compact[i] or len(compact[i]) >= len(target):
            continue
        for j, lower in enumerate(lines):
            a, b = upper.box, lower.box
            if i == j or not compact[j] or not (0 < b.top - a.top and -0.2 * a.height <= b.top - a.bottom <= 1.2 * a.height):
                continue
            if min(a.right, b.right) - max(a.left, b.left) <= 0:
                continue
            score = fuzz.ratio(target, compact[i] + compact[j])
            if score >= threshold:
                union = Box(min(a.left, b.left), a.top, max(a.right, b.right), b.bottom)
                joined = TextLine(f"{upper.text} {lower.text}", union, min(upper.score, lower.score))
                found.append(TextMatch(joined, union, TIER_FUZZY, score / 100))
    return found


def _partial_matches(lines: list[TextLine], wanted: _Folded) -> list[TextMatch]:
    """A target the planner paraphrased or extended: a line whose words all belong to the
    target (or that starts it) and covers at least half of it. Only ever offered as
    candidates: the planner confirms by choosing."""
    t = wanted.compact
    words = set(wanted.spaced.split())
    found = []
    for line in lines:
        folded = _fold_full(line.text)
        compact = folded.compact
        if len(compact) < 4 or len(compact) >= len(t):
            continue
        # a long field cut by its own edge (a URL bar shows the URL's start): a prefix of
        # a dozen characters is telling even when it is under half of the target
        if len(compact) >= 12 and t.startswith(compact):
            found.append(TextMatch(line, line.box, TIER_PARTIAL, len(compact) / len(t)))
            continue
        if len(compact) < 0.5 * len(t):
            continue
        inside = set(folded.spaced.split()) <= words or t.startswith(compact)
        if inside or fuzz.token_set_ratio(wanted.spaced, folded.spaced) >= 90:
            found.append(TextMatch(line, line.box, TIER_PARTIAL, len(compact) / len(t)))
    return found


def _literal(text: str) -> str:
    """``text`` with width and case folded and white space removed, symbols kept."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def _neighbours(a: Box, b: Box) -> bool:
    """b follows a on the same row (right of it) or on the next row (below, overlapping columns)."""
    height = max(a.height, b.height, 1.0)
    rows_overlap = min(a.bottom, b.bottom) - max(a.top, b.top) > 0.5 * min(a.height, b.height)
    if rows_overlap and 0 <= b.left - a.right + 0.2 * height <= 2.0 * height:
        return True
    columns_overlap = min(a.right, b.right) - max(a.left, b.left) > 0
    return columns_overlap and -0.2 * height <= b.top - a.bottom <= 1.2 * height


def _joined_matches(lines: list[TextLine], target: str) -> list[TextMatch]:
    """Chains of neighbouring lines whose folded texts concatenate to the target."""
    compact = [_fold_full(line.text).compact for line in lines]
    found = []
    for i, first in enumerate(compact):
        if not first or first == target or not target.startswith(first):
            continue
        chain, rest = [i], target[len(first):]
        while rest:
            nexts = [
                j for j, text in enumerate(compact)
                if j not in chain and text and rest.startswith(text) and _neighbours(lines[chain[-1]].box, lines[j].box)
            ]  # fmt: skip
            if not nexts:
                break
            j = max(nexts, key=lambda k: len(compact[k]))
            chain.append(j)
            rest = rest[len(compact[j]):]
        if not rest:
            boxes = [lines[k].box for k in chain]
            union = Box(
                min(b.left for b in boxes), min(b.top for b in boxes),
                max(b.right for b in boxes), max(b.bottom for b in boxes),
            )  # fmt: skip
            joined = TextLine(" ".join(lines[k].text for k in chain), union, min(lines[k].score for k in chain))
            found.append(TextMatch(joined, union, TIER_JOINED, 1.0))
    return found


def _dedupe(matches: list[TextMatch]) -> list[TextMatch]:
    kept: list[TextMatch] = []
    for m in sorted(matches, key=lambda m: -m.score):
        if all(m.box.iou(k.box) < 0.5 for k in kept):
            kept.append(m)
    # numbered for the planner in reading order
    return sorted(kept, key=lambda m: (round(m.box.top / 8), m.box.left))


def closest_texts(lines: list[TextLine], target: str, limit: int = 3) -> tuple[str, ...]:
    choices = [line.text for line in lines]
    if not choices:
        return ()
    best = process.extract(fold(target), choices, scorer=fuzz.WRatio, processor=fold, limit=limit * 2)
    seen: list[str] = []
    for text, _score, _ in best:
        if text not in seen:
            seen.append(text)
    return tuple(seen[:limit])


def locate_text(
    image: np.ndarray,
    lines: list[TextLine],
    target: str,
    *,
    max_candidates: int,
    max_box_fraction: float,
    crop_margin: float,
    backend: str = "",
    max_listed: int | None = None,
) -> Location:
    """Where ``target`` is: one point, numbered candidates, or a refusal with the closest
    texts. ``max_listed``: above ``max_candidates`` hits the first ``max_listed`` in reading
    order are still offered (None: the paper's rule, "too many")."""
    height, width = image.shape[:2]
    lines = without_status_bar(lines, height, target)
    matches = match_text(lines, target, (width, height), max_box_fraction)
    if len(matches) > 1:
        keep = merge_tile_pairs([m.box for m in matches])
        matches = [matches[k] for k in keep]
    if not matches:
        closest = closest_texts(lines, target)
        seen = ", ".join(f'"{c}"' for c in closest) if closest else "no text at all"
        return Location(
            LocateStatus.NOT_FOUND,
            target,
            closest=closest,
            feedback=f'The text "{target}" is not on the current screen. Closest texts seen: {seen}.',
            backend=backend,
        )
    partial = matches[0].tier == TIER_PARTIAL
    if len(matches) == 1 and not partial:
        box = matches[0].box
        return Location(LocateStatus.FOUND, target, point=box.center, box=box, backend=backend)
    if len(matches) > max_candidates and (max_listed is None or len(matches) > max_listed):
        return Location(
            LocateStatus.TOO_MANY,
            target,
            feedback=(
                f'The text "{target}" appears {len(matches)} times on the screen; too many to choose from. '
                "Choose other text (a nearby unique label) or another operation."
            ),
            backend=backend,
        )
    candidates = numbered_candidates(image, [(m.box, m.line.text, m.score) for m in matches], crop_margin)
    if partial:
        seen = ", ".join(f'{c.index}: "{c.text}"' for c in candidates)
        feedback = (f'The text "{target}" is not on the screen exactly; the nearest texts are {seen}. '
                    "Choose one by number if it is what you meant.")  # fmt: skip
    else:
        feedback = f'The text "{target}" appears {len(matches)} times; choose one by number (1..{len(matches)}).'
    return Location(LocateStatus.CANDIDATES, target, candidates=candidates, feedback=feedback, backend=backend)
