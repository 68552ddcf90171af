"""Measure the heuristic ranker's shape features on Material glyphs rendered at phone sizes,
and how each shape word's prototype scores each glyph (issue 30, round 4: prototypes from
more than one source glyph).

Source: Google's Material Icons, filled and outlined, as the font files of the npm packages
@fontsource/material-icons and @fontsource/material-icons-outlined 5.3.0 (SIL Open Font
Licence 1.1 as those packages state; Google publishes the icons under Apache 2.0). The fonts
are not in this repository: fetch them with ``npm pack`` and pass their folder.

Each glyph is drawn at 42, 63 and 84 px (16, 24 and 32 dp at 2.625 px/dp), grey on white
and white on a dark bar, anti-aliased, with the box a proposer gives it, and read through
the ranker's own mask (``heuristic_ranker._patch_around`` + ``_background_and_mask``).

The simulated phone's glyphs of the same words (simphone/ui/icons.py) are a third source.

Run: ``python benchmarks/icon_prototypes.py FONT_DIR [--features]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from perception.heuristic_ranker import (  # noqa: E402
    _PROTOTYPES,
    ShapeFeatures,
    _background_and_mask,
    _glyph_mask,
    _patch_around,
    _shape_score,
    shape_features,
)
from perception.types import Box  # noqa: E402

# the shape word -> Material Icons code points of glyphs a planner would call by that word
GLYPHS: dict[str, dict[str, int]] = {
    "picture": {"image": 0xE3F4, "photo": 0xE410, "insert_photo": 0xE251},
    "wrench": {"build": 0xE869},
    "folder": {"folder": 0xE2C7, "folder_open": 0xE2C8},
    "cast": {"cast": 0xE307},
    "check": {"check": 0xE5CA},
    "heart": {"favorite": 0xE87D, "favorite_border": 0xE87E},
    "star": {"star": 0xE838, "star_border": 0xE83A},
    "bell": {"notifications": 0xE7F4, "notifications_none": 0xE7F5},
    "trash": {"delete": 0xE872},
    "pencil": {"edit": 0xE3C9, "create": 0xE150},
    "share": {"share": 0xE80D},
    "download": {"file_download": 0xE2C4},
    "camera": {"photo_camera": 0xE412},
    "mic": {"mic": 0xE029},
    "house": {"home": 0xE88A},
    "magnifier": {"search": 0xE8B6},
    "gear": {"settings": 0xE8B8},
    "person": {"person": 0xE7FD, "person_outline": 0xE7FF},
    "pause": {"pause": 0xE034},
    "bookmark": {"bookmark": 0xE866, "bookmark_border": 0xE867},
    "phone": {"call": 0xE0B0, "phone": 0xE0CD},
    "calendar": {"event": 0xE878, "calendar_today": 0xE935},
}
# the simulated phone's own glyphs (simphone/ui/icons.py) of the same words: a third source
SIM_GLYPHS = {"picture": "photo", "folder": "folder", "check": "check", "heart": "heart", "star": "star",
              "trash": "trash", "gear": "gear", "magnifier": "magnifier", "person": "person", "bell": "bell",
              "house": "home", "share": "share", "pencil": "pencil", "camera": "camera", "mic": "mic"}
SIZES = (42, 63, 84)
FONTS = ("material-icons-latin-400-normal.woff", "material-icons-outlined-latin-400-normal.woff")


def render(font_path: Path, codepoint: int, size: int, dark: bool) -> tuple[np.ndarray, Box] | None:
    scale = 4
    side = size * 3
    ground, ink = ((33, 33, 33), (255, 255, 255)) if dark else ((250, 250, 250), (117, 117, 117))
    image = Image.new("RGB", (side * scale, side * scale), ground)
    font = ImageFont.truetype(str(font_path), size * scale)
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = draw.textbbox((0, 0), chr(codepoint), font=font)
    x = (side * scale - (right - left)) / 2 - left
    y = (side * scale - (bottom - top)) / 2 - top
    draw.text((x, y), chr(codepoint), font=font, fill=ink)
    image = image.resize((side, side), Image.LANCZOS)
    pixels = np.asarray(image)
    ys, xs = np.nonzero(np.abs(pixels.astype(int) - np.array(ground)).max(axis=2) > 40)
    if len(xs) == 0:  # the font has no glyph at that code point
        return None
    return pixels, Box(float(xs.min()) - 1, float(ys.min()) - 1, float(xs.max()) + 2, float(ys.max()) + 2)


def render_sim(name: str, size: int, dark: bool) -> tuple[np.ndarray, Box]:
    from simphone.ui.icons import draw_icon

    scale = 4
    side = size * 3
    ground, ink = ((33, 33, 33), (255, 255, 255)) if dark else ((250, 250, 250), (117, 117, 117))
    image = Image.new("RGB", (side * scale, side * scale), ground)
    draw_icon(ImageDraw.Draw(image), name, (size * scale, size * scale, 2 * size * scale, 2 * size * scale), ink)
    pixels = np.asarray(image.resize((side, side), Image.LANCZOS))
    ys, xs = np.nonzero(np.abs(pixels.astype(int) - np.array(ground)).max(axis=2) > 40)
    return pixels, Box(float(xs.min()) - 1, float(ys.min()) - 1, float(xs.max()) + 2, float(ys.max()) + 2)


def masks(pixels: np.ndarray, box: Box) -> list[np.ndarray]:
    patch, inner = _patch_around(pixels, box)
    mask = _background_and_mask(patch, inner)
    region = patch[inner[1]: inner[3], inner[0]: inner[2]]
    glyph = _glyph_mask(region, mask)
    return [mask] if glyph is None else [mask, glyph]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fonts", type=Path, help="folder holding the two .woff files")
    parser.add_argument("--features", action="store_true", help="print each render's features")
    args = parser.parse_args(argv)
    words = [w for w in GLYPHS if w in {n.split("/")[0] for n in _PROTOTYPES}]
    print("| glyph (font) -> best word | " + " | ".join(words) + " |")
    right = total = 0
    measured: dict[str, list[ShapeFeatures]] = {}
    for word, glyphs in GLYPHS.items():
        for name, codepoint in glyphs.items():
            for font in FONTS:
                path = next(args.fonts.rglob(font))
                renders: list[dict[str, float]] = []
                for size in SIZES:
                    for dark in (False, True):
                        rendered = render(path, codepoint, size, dark)
                        if rendered is None:
                            continue
                        pixels, box = rendered
                        found = [f for f in (shape_features(m) for m in masks(pixels, box)) if f is not None]
                        measured.setdefault(word, []).extend(found[:1])
                        if args.features:
                            print(f"  {name} {font[:22]} {size} {'dark' if dark else 'light'}: {found[:1]}")
                        renders.append({w: max((_shape_score(w, f) for f in found), default=0.0) for w in words})
                if not renders:
                    continue
                scores = {w: float(np.mean([r[w] for r in renders])) for w in words}
                best = max(scores, key=lambda w: scores[w])
                total += 1
                right += best == word
                row = [f"{scores[w]:.2f}" for w in words]
                print(f"| {name} ({'outlined' if 'outlined' in font else 'filled'}) -> {best} | " + " | ".join(row) + " |")
    from simphone.ui.icons import ICONS

    for word, name in SIM_GLYPHS.items():
        if name not in ICONS:
            continue
        renders = []
        for size in SIZES:
            for dark in (False, True):
                pixels, box = render_sim(name, size, dark)
                found = [f for f in (shape_features(m) for m in masks(pixels, box)) if f is not None]
                measured.setdefault(word, []).extend(found[:1])
                if args.features:
                    print(f"  sim {name} {size} {'dark' if dark else 'light'}: {found[:1]}")
                renders.append({w: max((_shape_score(w, f) for f in found), default=0.0) for w in words})
        scores = {w: float(np.mean([r[w] for r in renders])) for w in words}
        best = max(scores, key=lambda w: scores[w])
        total += 1
        right += best == word
        print(f"| {name} (simulated phone) -> {best} | " + " | ".join(f"{scores[w]:.2f}" for w in words) + " |")
    print("\nsuggested prototypes (mean; tolerance max(3 std, floor)) for words with no prototype:")
    floors = {"circularity": 0.06, "vertices": 1.0, "solidity": 0.04, "extent": 0.06, "aspect": 0.1, "defects": 0.8,
              "pieces": 0.6, "hollow": 0.12}
    for word, found in measured.items():
        if any(n.split("/")[0] == word for n in _PROTOTYPES):
            continue
        proto = {f: (round(float(np.mean([getattr(x, f) for x in found])), 2),
                     round(max(3 * float(np.std([getattr(x, f) for x in found])), floors[f]), 2)) for f in floors}
        print(f"  {word!r}: {proto},")
    print("\nfeatures per word (mean +- std over glyphs, both fonts, 3 sizes, light and dark):")
    for word, found in measured.items():
        parts = []
        for feature in ("circularity", "vertices", "solidity", "extent", "aspect", "defects", "pieces", "hollow"):
            values = [float(getattr(f, feature)) for f in found]
            parts.append(f"{feature} {np.mean(values):.2f}+-{np.std(values):.2f}")
        print(f"  {word}: " + ", ".join(parts))
    print(f"best shape word is the glyph's own: {right}/{total}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
