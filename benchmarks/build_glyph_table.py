"""Build ``perception/data/material_icons.npz``, the glyph table ``perception.glyph_match``
reads: every glyph of Google's Material Icons in two styles, drawn and normalised as a
screenshot crop is (``perception.glyph_match.normalise``), packed one bit a pixel, each row
with its name and style.

Sources (both Apache-2.0, Google's Material Icons; the licence is copied beside the table):

- filled ("Regular"): Debian's ``fonts-material-design-icons-iconfont`` 6.7.0 (the font as
  repackaged by jossef/material-design-icons-iconfont), which ships the TrueType font and a
  SCSS map from each icon's name to its codepoint;
- outlined: the npm package ``material-icons`` 1.13.14 (marella/material-icons), which ships
  every style's font (``iconfont/material-icons-outlined.woff``) and one name -> codepoint map
  for all of them (``css/_codepoints.scss``; the styles share codepoints). An outlined glyph
  drawn exactly as its filled twin (``add``, ``close``) is not stored again, nor one the font
  does not have (it draws nothing or the font's missing-glyph box).

Run after ``apt-get install fonts-material-design-icons-iconfont`` and
``npm install --prefix /tmp/glyphs material-icons@1.13.14``::

    .venv/bin/python benchmarks/build_glyph_table.py --outlined /tmp/glyphs/node_modules/material-icons

A rebuild from the same package versions writes a byte-identical table. No test runs this (it
needs both packages); the table it writes is committed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perception.glyph_match import SIDE, TABLE_PATH, normalise  # noqa: E402

_PACKAGE = Path("/usr/share")
FONT = _PACKAGE / "fonts/truetype/material-design-icons-iconfont/MaterialIcons-Regular.ttf"
CODEPOINTS = _PACKAGE / "fonts-material-design-icons-iconfont/scss/_variables.scss"
# inside the npm package material-icons (its root is --outlined)
OUTLINED_FONT = Path("iconfont/material-icons-outlined.woff")
OUTLINED_CODEPOINTS = Path("css/_codepoints.scss")
_ENTRY = re.compile(r'^\s*"(?P<name>[a-z0-9_]+)":\s*(?P<code>[0-9a-f]{4,5}),?\s*$')
# drawn at this size (px a 24 dp em), then normalised to SIDE x SIDE
_DRAWN = 96
# a codepoint no icon font maps: what the font draws for a glyph it lacks
_MISSING = 0x10FFFD


def codepoints(path: Path) -> dict[str, int]:
    """Name -> codepoint from a SCSS map (``"undo": e166,`` lines)."""
    found: dict[str, int] = {}
    for line in path.read_text().splitlines():
        if m := _ENTRY.match(line):
            found[m.group("name")] = int(m.group("code"), 16)
    return found


def draw(font: ImageFont.FreeTypeFont, code: int) -> np.ndarray:
    canvas = Image.new("L", (2 * _DRAWN, 2 * _DRAWN), 0)
    ImageDraw.Draw(canvas).text((_DRAWN // 2, _DRAWN // 2), chr(code), fill=255, font=font)
    return (np.asarray(canvas) >= 128).astype(np.uint8)


def glyphs(font_path: Path, codes_path: Path) -> dict[str, np.ndarray]:
    """Each name's normalised glyph in one font (none for a glyph it draws as nothing or as
    its missing-glyph box)."""
    font = ImageFont.truetype(str(font_path), _DRAWN)
    missing = normalise(draw(font, _MISSING))
    found: dict[str, np.ndarray] = {}
    for name, code in sorted(codepoints(codes_path).items()):
        glyph = normalise(draw(font, code))
        if glyph is None or (missing is not None and np.array_equal(glyph, missing)):
            print(f"skipped {name} in {font_path.name}: draws nothing", file=sys.stderr)
            continue
        found[name] = glyph
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--font", type=Path, default=FONT)
    parser.add_argument("--codepoints", type=Path, default=CODEPOINTS)
    parser.add_argument("--outlined", type=Path, required=True, help="the npm package material-icons' folder")
    parser.add_argument("--out", type=Path, default=TABLE_PATH)
    args = parser.parse_args(argv)
    filled = glyphs(args.font, args.codepoints)
    outlined = glyphs(args.outlined / OUTLINED_FONT, args.outlined / OUTLINED_CODEPOINTS)
    rows = [(name, "filled", glyph) for name, glyph in filled.items()]
    rows += [(name, "outlined", glyph) for name, glyph in outlined.items()
             if name not in filled or not np.array_equal(glyph, filled[name])]
    bits = np.stack([np.packbits(glyph.reshape(-1)) for _, _, glyph in rows])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, names=np.array([r[0] for r in rows]), styles=np.array([r[1] for r in rows]),
                        bits=bits, side=np.array(SIDE))
    distinct = len({b.tobytes() for b in bits})
    print(f"{len(rows)} glyphs ({len(filled)} filled, {len(rows) - len(filled)} outlined; {distinct} distinct)"
          f" -> {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
